#!/usr/bin/env bash
# The project's test command (README: "Run the tests"). Runs every suite that this machine
# can run: the Rust unit and integration tests (bellperson oracle, engine, C ABI with the
# C/C++ hosts under AddressSanitizer), and, where the pieces exist, the header check, the
# CUDA kernel build and the Go binding tests. GPU tests skip cleanly without a GPU.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

step() { printf '\n==> %s\n' "$*"; }

step "cargo build (library: rlib, cdylib, staticlib)"
cargo build --locked

if [ -x scripts/check-header.sh ]; then
    step "include/cuzk.h is what cbindgen generates"
    scripts/check-header.sh
fi

if [ -f scripts/cuda-host-test.sh ]; then
    step "CUDA arithmetic and MSM pipeline on the host, against Python big integers"
    bash scripts/cuda-host-test.sh
fi

step "cargo test"
cargo test --locked ${CUZK_TEST_ARGS:-}

if [ -f scripts/setup-cuda.sh ] && [ "${CUZK_SKIP_CUDA:-0}" != 1 ]; then
    # One build with the kernels (the library and the GPU tests; the other test binaries
    # are the ones above, without CUDA): each test binary links every Filecoin crate, and
    # building them all twice would double the slowest part of the run.
    step "CUDA kernels compile (pinned nvcc 13.0 from PyPI); GPU tests (they skip without a GPU)"
    bash scripts/setup-cuda.sh
    CUZK_REQUIRE_CUDA=1 cargo test --locked --features cuda --test 'gpu_*'
fi

if [ -f go/go.mod ]; then
    step "go test (cgo binding)"
    scripts/test-go.sh
fi
