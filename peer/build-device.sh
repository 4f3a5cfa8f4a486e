#!/usr/bin/env bash
# Builds peer_bench (cuzk on the GPU against bellperson 0.26 + supraseal-c2) on a machine
# without a GPU and stages it, stripped, in <repo>/.devbin-peer/ for the GPU machine, which has
# no cargo and no network. Run from anywhere: peer/build-device.sh
#
# supraseal-c2 is compiled by sppark's nvcc rules and links the CUDA runtime statically; cuzk's
# kernels get SASS for CUZK_CUDA_ARCHS (default 90 here) and load the driver at run time. Both
# need nothing from the toolkit at run time but the driver.
#
#   peer/build-device.sh                 cuzk as it is in the working tree
#   peer/build-device.sh --commit REV    cuzk (and peer/) as committed at REV, from a temporary
#                                        git worktree: figures that name a commit, whatever
#                                        is being edited meanwhile
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tk="$repo/.cuda-toolkit/nvidia/cu13"
[ -x "$tk/bin/nvcc" ] || "$repo/scripts/setup-cuda.sh"
[ -e "$tk/lib64" ] || ln -s lib "$tk/lib64"

export PATH="$tk/bin:$PATH"
export CUDA_PATH="$tk"
# filecoin-proofs' `cuda-supraseal` also turns on neptune's CUDA code (through
# filecoin-hashers), which links libcuda: the driver's library, which the toolkit's wheels do
# not carry and this machine has no driver for. A stub with the driver API's function names
# and the driver's soname satisfies the link; the GPU machine's driver provides the library.
stub="$repo/peer/target/cuda-stub"
if [ ! -e "$stub/libcuda.so" ]; then
    # The stub's names come from cuda-driver-sys's sources: on a fresh machine, fetch them.
    (cd "$repo/peer" && cargo fetch --locked >/dev/null)
    mkdir -p "$stub"
    sys="$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/cuda-driver-sys-0.3.* | head -n 1)"
    grep -oh 'pub fn cu[A-Za-z0-9_]*' -r "$sys/src" | sed 's/pub fn //' | sort -u |
        sed 's/.*/void &(void) {}/' >"$stub/libcuda.c"
    cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$stub/libcuda.so" "$stub/libcuda.c"
fi
export RUSTFLAGS="-L $tk/lib -L $stub"
export CUZK_CUDA_ARCHS="${CUZK_CUDA_ARCHS:-90}"
export CUZK_REQUIRE_CUDA=1
# sppark's rules give supraseal-c2 SASS for sm_75, sm_80 and sm_120 and PTX for compute_80 and
# compute_100, none of which an sm_90 device runs as it is: without SASS of its own the driver
# JIT-compiles the compute_80 PTX of groth16_cuda.cu at the first call. nvcc itself appends
# NVCC_APPEND_FLAGS to every command line; cc declares rerun-if-env-changed for it, so
# supraseal-c2 and sppark rebuild when it changes. CXXFLAGS cannot carry it: cc (1.11) passes
# CXXFLAGS of a `.cuda(true)` build to the host compiler behind -Xcompiler ("c++: error:
# unrecognized debug output level 'encode'"). cuzk's build.rs runs nvcc too and gets the same
# -gencode it already asks for (CUZK_CUDA_ARCHS), which nvcc keeps once. blst is C, no nvcc.
NVCC_APPEND_FLAGS=""
for a in ${CUZK_CUDA_ARCHS//,/ }; do
    NVCC_APPEND_FLAGS="$NVCC_APPEND_FLAGS -gencode arch=compute_$a,code=sm_$a"
done
export NVCC_APPEND_FLAGS="${NVCC_APPEND_FLAGS# }"
# The artifacts of registry crates (supraseal-c2 takes minutes) are shared by both kinds of
# build; cuzk and peer_bench are rebuilt per source folder.
export CARGO_TARGET_DIR="$repo/peer/target"

src="$repo"
if [ "${1:-}" = "--commit" ]; then
    rev="$(git -C "$repo" rev-parse --verify "${2:?--commit needs a revision}^{commit}")"
    src="$(mktemp -d)/cuzk"
    git -C "$repo" worktree add --detach "$src" "$rev" >/dev/null
    cleanup="git -C '$repo' worktree remove --force '$src'"
    trap 'eval "$cleanup"' EXIT
    # peer_bench prints which cuzk it carries.
    export CUZK_PEER_SOURCE="commit ${rev:0:7}"
else
    CUZK_PEER_SOURCE="commit $(git -C "$repo" rev-parse --short HEAD)"
    [ -z "$(git -C "$repo" status --porcelain -- src cuda build.rs Cargo.toml)" ] ||
        CUZK_PEER_SOURCE="$CUZK_PEER_SOURCE + uncommitted changes"
    export CUZK_PEER_SOURCE
fi

cd "$src/peer"
# supraseal-c2 is C++: link libstdc++ statically (a folder holding only libstdc++.a, searched
# before the system's), so the binary asks the GPU machine's image for glibc only.
cxx="$repo/peer/target/static-libstdcxx"
mkdir -p "$cxx"
ln -sf "$(c++ -print-file-name=libstdc++.a)" "$cxx/libstdc++.a"
cargo rustc --release --locked --bin peer_bench -- -L "native=$cxx"
CUZK_PEER_PROVER="bellperson 0.27 + supraseal-c2, GPU" \
    cargo rustc --release --locked --bin filecoin_bench_supraseal -- -L "native=$cxx"

out="$repo/.devbin-peer"
stage="$(mktemp -d)"
cleanup="rm -rf '$stage'; ${cleanup:-:}"
trap 'eval "$cleanup"' EXIT
bins=(peer_bench filecoin_bench_supraseal)
for b in "${bins[@]}"; do
    strip -o "$stage/$b" "$CARGO_TARGET_DIR/release/$b"
done

# Any CUDA runtime the binaries link dynamically goes next to them (the GPU machine has the
# driver but maybe not libcudart); run them with LD_LIBRARY_PATH set to their folder then.
for lib in $(cd "$stage" && ldd "${bins[@]}" | awk '/libcudart|libnvrtc|not found/ && !/libcuda\.so/ {print $1}'); do
    if [ -e "$tk/lib/$lib" ]; then
        cp -L "$tk/lib/$lib" "$stage/"
    else
        echo "build-device: $lib is needed but not in $tk/lib" >&2
        exit 1
    fi
done
(cd "$stage" && ldd "${bins[@]}")

# Compressed: the device tool carries 64 MiB at most. On the GPU machine:
#   mkdir -p /tmp/peer && tar -xf .devbin-peer/peer.txz -C /tmp/peer
mkdir -p "$out"
rm -f "$out"/*
rm -f "$out/peer.tgz"
tar -cf - -C "$stage" . | xz -9 -T2 >"$out/peer.txz"
grep -qx '/.devbin-peer/' "$repo/.git/info/exclude" 2>/dev/null || {
    mkdir -p "$repo/.git/info"
    echo '/.devbin-peer/' >>"$repo/.git/info/exclude"
}
ls -l "$out"
