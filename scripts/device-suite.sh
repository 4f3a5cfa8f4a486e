#!/usr/bin/env bash
# Runs on the GPU machine (no cargo, no network), from the repository root, with the binaries
# scripts/build-device.sh staged in .devbin/ (and peer/build-device.sh's in .devbin-peer/,
# for `c2`). Logs go to $OUT (or ./device-out), as logs.txz. Each part is one device-tool
# call's worth:
#
#   scripts/device-suite.sh tests      the GPU tests, then every Filecoin kind's tests on the GPU
#   scripts/device-suite.sh only T,... some of the GPU test binaries (T:FILTER: one binary's tests
#                                      whose names contain FILTER)
#   scripts/device-suite.sh c2 [SIZE]  the PoRep C2 backlog (filecoin_bench) at SIZE (2KiB):
#                                      against filecoin-proofs with supraseal-c2 when the peer
#                                      build is there, else with --no-peer
#   scripts/device-suite.sh scale [SIZE] [COUNTS]
#                                      one backlog of Filecoin proofs (SCALE_SECTORS PoRep C2s of
#                                      SIZE, default 2KiB and 16, plus SCALE_POSTS WindowPoSts,
#                                      default 4) on engines of COUNTS devices (default 1,2,4):
#                                      the GPUs, or 4 logical devices on the one GPU where
#                                      there are fewer than 4 (filecoin_bench --device-counts)
#   scripts/device-suite.sh engine [C,...]
#                                      engine_bench's backlog (partitions of C constraints;
#                                      default 250000,4000000) with nvidia-smi sampling the
#                                      GPU's utilization beside it (the device's own kernel
#                                      time against what the driver reports, both over the
#                                      bench's second half; ENGINE_SECONDS, default 40)
#   scripts/device-suite.sh synth      the synthesis bench (cuzk's witness against bellperson's
#                                      synthesis, every 2KiB kind) on the machine's cores
#   scripts/device-suite.sh synth32 [NAME ...]
#                                      the synthesis bench's 32GiB partitions (random values in
#                                      each circuit's shape), by default snap-32GiB-random and
#                                      window-post-32GiB-random (porep-32GiB-random: ~3.5 min)
#   scripts/device-suite.sh partition [KIND] [SIZE] [--staged]
#                                      one partition (default porep 32GiB) through every stage
#                                      on the GPU (partition_bench: timing-only params; with
#                                      --staged, each proof's inputs staged on the device
#                                      before its start phase, as the engine does)
#   scripts/device-suite.sh soak [N]   the mixed-job soak (every kind, injected faults, cancels,
#                                      bad inputs) of N jobs (default 1000) on every GPU
#   scripts/device-suite.sh kernels    gpu_bench: the NTT with each tile build (radix 4, radix 8)
#                                      at 2^20..2^27 and the G1 MSM at 2^24, 2^26
#   scripts/device-suite.sh ab ARCHIVE [NTT_LOGS] [MSM_LOGS]
#                                      two builds' kernels on the same card in one call: gpu_bench
#                                      ntt (NTT_LOGS, default 26,27) and msm (MSM_LOGS, default 24)
#                                      from ARCHIVE (an earlier build's bin.txz, or an archive
#                                      holding its gpu_bench and COMMIT) and from .devbin,
#                                      alternating, AB_ROUNDS rounds (default 2) of AB_RUNS
#                                      runs (default 5)
#   scripts/device-suite.sh windowed [LOGS] [BITS]
#                                      gpu_bench windowed: the G1 MSM over window points for
#                                      window sizes BITS (default 20,22,23,24) beside the plain
#                                      MSM over the same resident points, at LOGS (default 24)
#   scripts/device-suite.sh sweep [LOGS] CONFIGS [FLAGS]
#                                      gpu_bench sweep: the G1 MSM (points resident) under each
#                                      `;`-separated tuning configuration at LOGS (default 24),
#                                      results checked equal; FLAGS (one word starting with
#                                      --, e.g. "--device-scalars" or "--scalars bits";
#                                      else SWEEP_ARGS) more of its flags, SWEEP_RUNS runs
#                                      (5); several sweeps may follow each other in one call
#   scripts/device-suite.sh ntt-peer [LOGS]
#                                      cuzk's NTT (gpu_bench ntt) and sppark's (sppark_ntt,
#                                      peer/sppark_ntt/build.sh's, in .devbin-sppark/) at LOGS
#                                      (default 24,26,27), 5 runs each
#   scripts/device-suite.sh field-forms [THREADS [PRODUCTS]]
#                                      cuda/bench/field_forms.cu, compiled here with the
#                                      machine's nvcc: the field products in 32-bit limbs
#                                      (the kernels'), 52-bit limbs on the FP64 pipe and
#                                      29-bit limbs, alone and sharing the SMs
#   scripts/device-suite.sh peer [LOGS]
#                                      peer_bench (peer/build-device.sh's): cuzk against
#                                      supraseal-c2 on the same assignment, timing-only params,
#                                      at LOGS (default 24,26), PEER_RUNS timed runs a size
#                                      (default 3), PEER_ARGS more of its flags
#   scripts/device-suite.sh peer-sanitize [TOOL ...]
#                                      peer_bench under compute-sanitizer (TOOL: initcheck,
#                                      memcheck, racecheck, synccheck; default initcheck
#                                      memcheck) at PEER_SANITIZE_LOGS (default 14), 2 runs,
#                                      PEER_ARGS its flags (default --overlap-uploads): which
#                                      kernels of either prover read what nobody wrote, or
#                                      reach outside their buffers
#
# Several parts may be given in one call: `scripts/device-suite.sh tests c2 2KiB engine`.
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$repo/scripts/devbin.sh"
devbin_open cuzk_fixtures
[ -f "$repo/.devbin-peer/peer.txz" ] &&
    unpack_devbin "$repo/.devbin-peer/peer.txz" /tmp/peer filecoin_bench_supraseal
# The Filecoin tests and benches look for their params and scratch here; filecoin-proofs
# writes its parents' cache under FIL_PROOFS_PARENT_CACHE.
export CUZK_TEST_PARAMS=/tmp/cuzk-params
export CUZK_TEST_SCRATCH=/tmp/cuzk-scratch
export FIL_PROOFS_PARAMETER_CACHE=$CUZK_TEST_PARAMS
export FIL_PROOFS_PARENT_CACHE=/tmp/cuzk-parents
mkdir -p "$CUZK_TEST_SCRATCH" "$FIL_PROOFS_PARENT_CACHE"
echo "cuzk $(cat "$bin/COMMIT" | tr '\n' ' ')" | tee "$out/commit.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"

# Every 2KiB kind's test params, made once per machine (cuzk's generator on all cores).
params() {
    [ -e "$CUZK_TEST_PARAMS/.made-2kib" ] && return 0
    /usr/bin/time -v "$bin/cuzk_fixtures" filecoin-inputs /tmp/cuzk-fixtures "$CUZK_TEST_PARAMS" \
        >"$out/params.log" 2>&1 && touch "$CUZK_TEST_PARAMS/.made-2kib"
    tail -n 20 "$out/params.log"
}

run_test() { # name, args...
    local t="$1"
    shift
    echo "== $t"
    "$bin/$t" --test-threads 1 "$@" >"$out/$t.log" 2>&1
    local rc=$?
    grep -E "^test result|SKIP|panicked|FAILED" "$out/$t.log" | head -n 20
    echo "$t rc=$rc"
}

while [ $# -gt 0 ]; do
    part="$1"
    shift
    case "$part" in
    tests)
        for t in gpu_msm gpu_msm_g2 gpu_ntt gpu_density gpu_r1cs gpu_prove gpu_memory gpu_processes; do run_test "$t"; done
        params
        for t in filecoin_post filecoin_porep; do run_test "$t"; done
        ;;
    only)
        # Some of the GPU tests: `only gpu_ntt,gpu_prove` (each binary's own filter after a
        # colon: `only gpu_ntt:overlapped`).
        IFS=, read -r -a names <<<"${1:?only needs test names}"
        shift
        # The Filecoin tests read the 2KiB params.
        case ",${names[*]}" in *filecoin_*) params ;; esac
        for t in "${names[@]}"; do
            case "$t" in
            *:*) run_test "${t%%:*}" "${t#*:}" ;;
            *) run_test "$t" ;;
            esac
        done
        ;;
    synth)
        # cuzk's witness (+ CPU mat-vec) against bellperson's synthesis, every 2KiB kind, all
        # cores; then where the PoRep witness time goes.
        params
        echo "== synth"
        CUZK_TEST_PARAMS="$CUZK_TEST_PARAMS" "$bin/synth" 2>&1 | tee "$out/synth.log"
        "$bin/synth" --profile=2 porep-2KiB 2>&1 | head -n 30 | tee "$out/synth-profile.log"
        ;;
    synth32)
        names=()
        while [ $# -gt 0 ] && [[ "$1" == *-32GiB-random ]]; do names+=("$1") && shift; done
        [ ${#names[@]} -gt 0 ] || names=(snap-32GiB-random window-post-32GiB-random)
        echo "== synth ${names[*]}"
        /usr/bin/time -v "$bin/synth" "${names[@]}" >"$out/synth32.log" 2>&1
        grep -E "^synthesis|^  |Maximum resident|Elapsed" "$out/synth32.log"
        ;;
    partition)
        kind=porep
        size=32GiB
        case "${1:-}" in porep | snap | window-post | winning-post) kind="$1" && shift ;; esac
        case "${1:-}" in *iB) size="$1" && shift ;; esac
        staged=()
        [ "${1:-}" = --staged ] && staged=(--staged) && shift
        echo "== partition_bench --kind $kind --sector-size $size ${staged[*]}"
        "$bin/partition_bench" --kind "$kind" --sector-size "$size" "${staged[@]}" 2>&1 |
            tee "$out/partition-$kind-$size${staged[*]:+-staged}.log"
        ;;
    c2)
        params
        size=2KiB
        case "${1:-}" in 2KiB | 8MiB | 512MiB) size="$1" && shift ;; esac
        n="${C2_SECTORS:-4}"
        if [ -x /tmp/peer/filecoin_bench_supraseal ]; then
            echo "== filecoin_bench_supraseal --sectors $n --sector-size $size"
            LD_LIBRARY_PATH=/tmp/peer /tmp/peer/filecoin_bench_supraseal --sectors "$n" \
                --sector-size "$size" --params "$CUZK_TEST_PARAMS" 2>&1 | tee "$out/c2-$size-supraseal.log"
        fi
        echo "== filecoin_bench --sectors $n --sector-size $size --no-peer"
        "$bin/filecoin_bench" --sectors "$n" --sector-size "$size" --no-peer \
            --params "$CUZK_TEST_PARAMS" 2>&1 | tee "$out/c2-$size.log"
        ;;
    scale)
        params
        size=2KiB
        case "${1:-}" in 2KiB | 8MiB | 512MiB) size="$1" && shift ;; esac
        counts=1,2,4
        case "${1:-}" in [0-9]*) counts="$1" && shift ;; esac
        most=$(tr , '\n' <<<"$counts" | sort -n | tail -n 1)
        gpus=$(nvidia-smi -L | grep -c '^GPU')
        logical=$(((most + gpus - 1) / gpus))
        posts="${SCALE_POSTS:-4}"
        [ "$size" = 2KiB ] || posts=0
        echo "== filecoin_bench --device-counts $counts on $gpus GPUs, $logical logical devices each"
        "$bin/filecoin_bench" --sectors "${SCALE_SECTORS:-16}" --sector-size "$size" \
            --window-posts "$posts" --device-counts "$counts" --logical "$logical" --no-peer \
            --params "$CUZK_TEST_PARAMS" 2>&1 | tee "$out/scale-$size-$counts.log"
        ;;
    engine)
        sizes=(250000 4000000)
        case "${1:-}" in [0-9]*) IFS=, read -r -a sizes <<<"$1" && shift ;; esac
        # Long enough that the second half holds dozens of start phases (the kernel time is
        # counted when a start phase ends).
        secs="${ENGINE_SECONDS:-40}"
        for c in "${sizes[@]}"; do
            nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits \
                -lms 100 >"$out/smi-$c.csv" &
            smi=$!
            echo "== engine_bench --gpu 1 --seconds $secs --constraints $c"
            "$bin/engine_bench" --gpu 1 --seconds "$secs" --constraints "$c" --partitions 2 \
                --backlog 6 --finalizers 4 2>&1 | tee "$out/engine-$c.log"
            kill "$smi"
            # The whole process's mean includes the bench's set-up (SRS generation on the CPU,
            # seconds to minutes with the GPU idle).
            awk -F', ' '{s += $2; n++} END {if (n) printf "nvidia-smi utilization.gpu mean %.1f%% over %d samples (100 ms, whole process)\n", s / n, n}' \
                "$out/smi-$c.csv" | tee -a "$out/engine-$c.log"
            # The samples inside the bench's second half (its "window unix" line), the
            # window its "kernels running" figure covers.
            window="$(grep -o 'window unix [0-9.]* [0-9.]*' "$out/engine-$c.log" | cut -d' ' -f3-4)"
            [ -n "$window" ] || continue # the bench failed before its deadline
            # shellcheck disable=SC2086 # the window is two numbers
            python3 - "$out/smi-$c.csv" $window <<'PY' | tee -a "$out/engine-$c.log"
import sys, datetime
path, t0, t1 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
u = []
for line in open(path):
    ts, val = [f.strip() for f in line.split(",")[:2]]
    t = datetime.datetime.strptime(ts, "%Y/%m/%d %H:%M:%S.%f").timestamp()
    if t0 <= t <= t1:
        u.append(float(val))
if u:
    print(f"nvidia-smi utilization.gpu mean {sum(u) / len(u):.1f}% over the bench's second half ({len(u)} samples)")
PY
            # With CUZK_LOG=cuzk::gpu_timing=debug: where each start phase's hold went (the
            # device's kernels, the span from its first kernel to its last, the copies).
            python3 - "$out/engine-$c.log" <<'PY' | tee -a "$out/engine-$c.log"
import re, statistics, sys
keys = ["compute_us", "kernels_us", "kernel_span_us", "ntt_us", "msm_us", "h2d_us", "d2h_us"]
rows = []
for line in open(sys.argv[1]):
    line = re.sub(r"\x1b\[[0-9;]*m", "", line)  # the formatter's colours
    if "start phase" not in line or "ok=true" not in line:
        continue
    f = dict(re.findall(r"(\w+)=(\d+)", line))
    if all(k in f for k in keys[:3]):
        rows.append({k: int(f[k]) / 1e3 for k in keys if k in f})
if rows:
    rows = rows[len(rows) // 2:]  # the second half, as the bench's own figures
    med = lambda k: statistics.median(r[k] for r in rows if k in r)
    print(f"start phases (second half of the log, {len(rows)}), median ms: " +
          ", ".join(f"{k[:-3]} {med(k):.1f}" for k in keys if any(k in r for r in rows)))
    hold = sum(r["compute_us"] for r in rows)
    print(f"  of the holds' sum: kernels {100 * sum(r['kernels_us'] for r in rows) / hold:.1f}%, "
          f"kernel span {100 * sum(r['kernel_span_us'] for r in rows) / hold:.1f}%")
# The host's parts of each start phase (GpuStart::run's "start phase host parts").
parts = ["lock_us", "prepare_us", "h_us", "aux_us", "msms_us", "kernel_clock_us", "release_us"]
host = []
for line in open(sys.argv[1]):
    line = re.sub(r"\x1b\[[0-9;]*m", "", line)
    if "start phase host parts" in line:
        f = dict(re.findall(r"(\w+)=(\d+)", line))
        host.append({k: int(f[k]) / 1e3 for k in parts if k in f})
if host:
    host = host[len(host) // 2:]
    print(f"  host parts ({len(host)}), median ms: " + ", ".join(
        f"{k[:-3]} {statistics.median(r[k] for r in host if k in r):.2f}" for k in parts))
PY
        done
        ;;
    kernels)
        for r in 4 8; do
            echo "== CUZK_NTT_RADIX=$r gpu_bench ntt --ntt-logs 20,24,26,27 --runs 5"
            CUZK_NTT_RADIX=$r "$bin/gpu_bench" ntt --ntt-logs 20,24,26,27 --runs 5 2>&1 |
                tee "$out/ntt-r$r.log"
        done
        echo "== gpu_bench msm --msm-logs 24,26 --runs 3"
        "$bin/gpu_bench" msm --msm-logs 24,26 --runs 3 2>&1 | tee "$out/msm.log"
        ;;
    ab)
        base="${1:?ab needs the archive of the baseline build}"
        shift
        ntt_logs=26,27 msm_logs=24
        case "${1:-}" in [0-9]*) ntt_logs="$1" && shift ;; esac
        case "${1:-}" in [0-9]*) msm_logs="$1" && shift ;; esac
        # A folder per archive: unpack_devbin skips a folder that has its gpu_bench already,
        # and a second `ab` on the same warm machine may name another baseline.
        base_dir="/tmp/cuzk-base-$(cksum <"$base" | cut -d' ' -f1)"
        unpack_devbin "$base" "$base_dir" gpu_bench
        echo "base cuzk $(tr '\n' ' ' <"$base_dir/COMMIT")" | tee "$out/ab-base.txt"
        # Alternating, so that a drift of the card's clocks shows as a gap between rounds
        # rather than as a difference between the builds.
        for round in $(seq "${AB_ROUNDS:-2}"); do
            for v in base new; do
                b="$bin"
                [ "$v" = base ] && b="$base_dir"
                log="$out/ab-$v-$round.log"
                echo "== $v, round $round: gpu_bench ntt --ntt-logs $ntt_logs; msm --msm-logs $msm_logs (--runs ${AB_RUNS:-5})"
                { "$b/gpu_bench" ntt --ntt-logs "$ntt_logs" --runs "${AB_RUNS:-5}" &&
                    "$b/gpu_bench" msm --msm-logs "$msm_logs" --runs "${AB_RUNS:-5}"; } >"$log" 2>&1
                echo "rc=$?"
                grep -E "^ +[0-9]+ " "$log"
            done
        done
        ;;
    windowed)
        logs=24 bits=20,22,23,24
        case "${1:-}" in [0-9]*) logs="$1" && shift ;; esac
        case "${1:-}" in [0-9]*) bits="$1" && shift ;; esac
        echo "== gpu_bench windowed --msm-logs $logs --window-bits $bits --runs 5"
        "$bin/gpu_bench" windowed --msm-logs "$logs" --window-bits "$bits" --runs 5 2>&1 |
            tee "$out/windowed.log"
        ;;
    sweep)
        logs=24
        case "${1:-}" in [0-9]*) logs="$1" && shift ;; esac
        configs="${1:?sweep needs its configurations}"
        shift
        flags="${SWEEP_ARGS:-}"
        case "${1:-}" in --*) flags="$1" && shift ;; esac
        echo "== gpu_bench sweep --msm-logs $logs --configs '$configs' --runs ${SWEEP_RUNS:-5} $flags"
        # shellcheck disable=SC2086 # flags is a list of flags
        "$bin/gpu_bench" sweep --msm-logs "$logs" --configs "$configs" --runs "${SWEEP_RUNS:-5}" \
            $flags 2>&1 | tee -a "$out/sweep.log"
        ;;
    ntt-peer)
        logs=24,26,27
        case "${1:-}" in [0-9]*) logs="$1" && shift ;; esac
        unpack_devbin "$repo/.devbin-sppark/sppark.txz" /tmp/sppark sppark_ntt
        echo "== gpu_bench ntt --ntt-logs $logs --runs 5"
        "$bin/gpu_bench" ntt --ntt-logs "$logs" --runs 5 2>&1 | tee "$out/ntt-cuzk.log"
        echo "== sppark_ntt --logs $logs --runs 5"
        /tmp/sppark/sppark_ntt --logs "$logs" --runs 5 2>&1 | tee "$out/ntt-sppark.log"
        echo "sppark_ntt rc=${PIPESTATUS[0]}"
        ;;
    field-forms)
        args=()
        while [ $# -gt 0 ] && case "$1" in [0-9]*) true ;; *) false ;; esac; do args+=("$1") && shift; done
        nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/field_forms "$repo/cuda/bench/field_forms.cu" &&
            /tmp/field_forms "${args[@]}" 2>&1 | tee "$out/field-forms.log"
        echo "field_forms rc=${PIPESTATUS[0]}"
        ;;
    peer)
        logs=24,26
        case "${1:-}" in [0-9]*) logs="$1" && shift ;; esac
        # supraseal reads its params from a file: a 2^26 one is ~40 GB, /tmp has the room.
        runs="${PEER_RUNS:-3}"
        # PEER_ARGS: more of peer_bench's flags (--overlap-uploads: the H step's copies under its kernels).
        echo "== peer_bench --logs $logs --runs $runs --srs timing --no-create-proof ${PEER_ARGS:-}"
        TMPDIR=/tmp LD_LIBRARY_PATH=/tmp/peer /tmp/peer/peer_bench --logs "$logs" --runs "$runs" \
            --srs timing --no-create-proof ${PEER_ARGS:-} 2>"$out/peer-progress.log" | tee "$out/peer.log"
        echo "peer_bench rc=${PIPESTATUS[0]}"
        tail -n 5 "$out/peer-progress.log"
        ;;
    peer-sanitize)
        tools=()
        while [ $# -gt 0 ] && case "$1" in initcheck | memcheck | racecheck | synccheck) true ;; *) false ;; esac; do
            tools+=("$1") && shift
        done
        [ ${#tools[@]} -gt 0 ] || tools=(initcheck memcheck)
        logs="${PEER_SANITIZE_LOGS:-14}"
        for tool in "${tools[@]}"; do
            log="$out/peer-sanitize-$tool.log"
            echo "== compute-sanitizer --tool $tool peer_bench --logs $logs --runs 2 ${PEER_ARGS:---overlap-uploads}"
            TMPDIR=/tmp LD_LIBRARY_PATH=/tmp/peer timeout "${CUZK_SANITIZE_LIMIT:-300}" \
                compute-sanitizer --tool "$tool" --print-limit 200 /tmp/peer/peer_bench --logs "$logs" \
                --runs 2 --srs timing --no-create-proof ${PEER_ARGS:---overlap-uploads} >"$log" 2>&1
            echo "peer-sanitize $tool rc=$?: $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -n 1)"
            # What the reports are, and the kernels (or API calls) they name.
            grep -E "^========= [A-Z]" "$log" | grep -vE "SUMMARY|COMPUTE-SANITIZER" |
                sed -E 's/ at 0x[0-9a-f]+//; s/of size [0-9]+ bytes//' | sort | uniq -c | sort -rn | head -n 10
            grep -E "^=========     at " "$log" | sed -E 's/^=========     at //; s/\+0x[0-9a-f]+$//' |
                cut -c1-160 | sort | uniq -c | sort -rn | head -n 10
            grep -E "proof bytes differ|rejects" "$log" | head -n 5
        done
        ;;
    soak)
        params
        n=1000
        case "${1:-}" in [0-9]*) n="$1" && shift ;; esac
        echo "== soak --jobs $n"
        "$bin/soak" --jobs "$n" --params "$CUZK_TEST_PARAMS" 2>&1 | tee "$out/soak-$n.log" |
            grep -v "^progress"
        echo "soak rc=${PIPESTATUS[0]}"
        ;;
    *)
        echo "device-suite: unknown part $part" >&2
        exit 2
        ;;
    esac
done
