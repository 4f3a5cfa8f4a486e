#!/usr/bin/env bash
# Runs on the GPU machine: Nsight Compute over one launch of each hot kernel, driven by
# gpu_bench from scripts/build-device.sh's .devbin/. Says what bounds a kernel (its issue
# slots, its pipes, memory, or warps stalled on dependencies) before anyone rewrites it.
# Logs go to $OUT (or ./device-out): ncu-<part>.txt, in logs.txz.
#
#   scripts/gpu-profile.sh [PART...]   PART: msm (G1 accumulate, scatter, bucket reduce at
#                                      2^24), ntt (the radix-4 tile kernels at 2^26, or at
#                                      2^$PROFILE_NTT_LOG), g2 (the
#                                      G2 accumulation at 2^20); default all three
#
# --clock-control none leaves the clocks as the benchmarks see them (the device tool's
# METHOD.md); each profiled launch is replayed once per counter pass, so only the first
# matching launches are profiled.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$repo/scripts/devbin.sh"
devbin_open gpu_bench
sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats
    --section Occupancy --section LaunchStats --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis)
# Which pipe an arithmetic kernel fills (integer multiply-adds run on the FMA pipes): the
# candidates this ncu knows for this GPU, so that an unknown name cannot fail the whole run.
pipes=()
known="$(ncu --query-metrics 2>/dev/null | awk '{print $1}')"
for m in sm__pipe_fma_cycles_active sm__pipe_fmaheavy_cycles_active sm__pipe_alu_cycles_active \
    sm__inst_executed_pipe_fma sm__inst_executed_pipe_fmaheavy sm__inst_executed_pipe_alu \
    sm__inst_executed_pipe_lsu sm__pipe_shared_cycles_active; do
    grep -qx "$m" <<<"$known" && pipes+=("$m.avg.pct_of_peak_sustained_active")
done
# What the warps wait for, per issued instruction (barrier, shared-memory or L1 queue, memory
# latency, math pipe): names vary between ncu versions, so again only the known ones.
for r in barrier long_scoreboard short_scoreboard mio_throttle lg_throttle math_pipe_throttle wait; do
    m="smsp__average_warps_issue_stalled_${r}_per_issue_active"
    grep -qx "$m" <<<"$known" && pipes+=("$m.ratio")
done
[ ${#pipes[@]} -eq 0 ] || sections+=(--metrics "$(IFS=,; echo "${pipes[*]}")")

profile() { # part, kernel regex, launches, gpu_bench args...
    local part="$1" kernels="$2" count="$3"
    shift 3
    echo "== ncu $part: $kernels ($count launches) over gpu_bench $*"
    timeout 300 ncu --clock-control none -k "regex:$kernels" --launch-count "$count" \
        "${sections[@]}" "$bin/gpu_bench" "$@" >"$out/ncu-$part.txt" 2>&1
    echo "ncu $part rc=$?"
    # The figures that say what bounds each kernel.
    grep -E "^  cuzk_|Throughput|Mem Busy|Max Bandwidth|Hit Rate|Mem Pipes|Bank|issue_stalled|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Executed Ipc Active|No Eligible|Warp Cycles Per Issued|Stall|Theoretical Occupancy|Block Limit Registers|pipe" \
        "$out/ncu-$part.txt" | head -n 120
}

parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(msm ntt g2)
for part in "${parts[@]}"; do
    case "$part" in
    msm) profile msm 'cuzk_msm_(accumulate|scatter|bucket_reduce)$' 3 msm --msm-logs 24 --runs 1 ;;
    ntt) profile ntt 'cuzk_ntt_(first|mid)_stages_r4$' 4 ntt --ntt-logs "${PROFILE_NTT_LOG:-26}" --runs 1 ;;
    g2) profile g2 'cuzk_msm_accumulate_g2$' 1 g2 --g2-logs 20 --runs 1 ;;
    *)
        echo "gpu-profile: unknown part $part" >&2
        exit 2
        ;;
    esac
done
