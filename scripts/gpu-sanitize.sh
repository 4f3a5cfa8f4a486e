#!/usr/bin/env bash
# Runs on the GPU machine: the GPU test binaries that scripts/build-device.sh staged in
# .devbin/, under compute-sanitizer. Logs go to $OUT (or ./device-out), as logs.txz.
#
#   scripts/gpu-sanitize.sh [TOOL...]    TOOL: memcheck racecheck initcheck synccheck
#                                        (default: memcheck racecheck)
#   CUZK_SANITIZE_TESTS="gpu_ntt gpu_memory" scripts/gpu-sanitize.sh racecheck
#
# memcheck runs with --leak-check full: a test that frees its contexts (gpu_memory's
# give-back test drops every engine and context it made) must leave nothing allocated. The
# tests that keep one process-wide context (gpu_common) still hold its scratch at exit; their
# leak reports are printed but do not fail the run, their access errors do. Each binary runs
# under CUZK_SANITIZE_LIMIT seconds (default 240) per tool; the largest tests are skipped or
# capped (CUZK_TEST_MAX_LOG; they exist to cover sizes, not new code paths; under the
# sanitizers they take hours).
set -uo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
. "$repo/scripts/devbin.sh"
devbin_open gpu_msm
tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(memcheck racecheck)
limit="${CUZK_SANITIZE_LIMIT:-240}"
skip=(--skip 2_pow_20 --skip gather_large --skip gpu_msm_sizes_random --skip every_shape)
# The NTT tests' sizes, capped: up to 2^16 every tile kernel runs, and every later-pass width of
# the 2^10 tiles (the first pass alone to 2^10, one later pass of each width to 2^16); the 2^11
# tiles' later passes of 6 to 8 stages need 2^17..2^19 (CUZK_TEST_MAX_LOG=19).
export CUZK_TEST_MAX_LOG="${CUZK_TEST_MAX_LOG:-16}"
# CUZK_SANITIZE_TESTS (space-separated) picks binaries, e.g. to fit one device call.
read -r -a tests <<<"${CUZK_SANITIZE_TESTS:-gpu_memory gpu_ntt gpu_msm_g2 gpu_msm gpu_density gpu_r1cs gpu_prove}"
failed=0
for tool in "${tools[@]}"; do
    extra=()
    [ "$tool" = memcheck ] && extra=(--leak-check full)
    for t in "${tests[@]}"; do
        log="$out/sanitize-$tool-$t.log"
        timeout "$limit" compute-sanitizer --tool "$tool" "${extra[@]}" --error-exitcode 99 \
            --print-limit 20 "$bin/$t" --test-threads 1 "${skip[@]}" >"$log" 2>&1
        rc=$?
        summary="$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$log" | tail -n 1)"
        result="$(grep -E "^test result" "$log" | tail -n 1)"
        leaks="$(grep -c "Leaked" "$log")"
        # A leak in a binary with a process-wide context is expected; any other report fails.
        errors="$(grep -cE "^=========  *(Invalid|Race|Uninitialized|Barrier)" "$log")"
        # Reports beyond --print-limit are only counted: more errors than leaked
        # allocations means something other than a leak.
        total="$(grep -oE "ERROR SUMMARY: [0-9]+ error" "$log" | grep -oE "[0-9]+" | head -n 1)"
        leaked="$(grep -oE "LEAK SUMMARY: [0-9]+ bytes leaked in [0-9]+ alloc" "$log" | grep -oE "[0-9]+ alloc" | grep -oE "[0-9]+")"
        [ "${total:-0}" -gt "${leaked:-0}" ] && errors=$((errors + total - ${leaked:-0}))
        # CUDA API calls that returned an error (reported, not failed: tests provoke some).
        api="$(grep -c "Program hit" "$log")"
        verdict=clean
        if [ $rc -eq 124 ]; then
            verdict="timed out after ${limit}s"
        elif [ "$errors" -gt 0 ] || ! grep -q "^test result: ok" "$log"; then
            verdict="FAILED"
            failed=1
        elif [ "$leaks" -gt 0 ] && [ "$t" = gpu_memory ]; then
            verdict="FAILED (leaks)"
            failed=1
        elif [ "$leaks" -gt 0 ]; then
            verdict="clean (leaks: the process-wide test context's buffers)"
        fi
        echo "$tool $t rc=$rc: $verdict | $result | $summary | API errors $api"
    done
done
exit $failed
