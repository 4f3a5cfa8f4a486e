#!/usr/bin/env bash
# Builds sppark_ntt (main.cu: sppark's NTT timed on the device, the peer of `gpu_bench ntt`)
# on a machine without a GPU and stages it, stripped and compressed, in <repo>/.devbin-sppark/
# (pass that folder in the device tool's `carry`; scripts/device-suite.sh `ntt-peer` runs it).
# sppark and blst are the versions supraseal-c2 builds with (peer/Cargo.lock), taken from
# cargo's registry; nothing here is part of cuzk's build or CI.
# libstdc++ is linked statically: the GPU machine's image is asked for glibc only.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tk="$repo/.cuda-toolkit/nvidia/cu13"
[ -x "$tk/bin/nvcc" ] || "$repo/scripts/setup-cuda.sh"
(cd "$repo/peer" && cargo fetch --locked >/dev/null)
reg="${CARGO_HOME:-$HOME/.cargo}/registry/src"
ver() { grep -A1 "^name = \"$1\"$" "$repo/peer/Cargo.lock" | sed -n 's/^version = "\(.*\)"/\1/p' | head -n 1; }
sppark="$(ls -d "$reg"/*/sppark-"$(ver sppark)" | head -n 1)/sppark"
blst="$(ls -d "$reg"/*/blst-"$(ver blst)" | head -n 1)/blst"
archs="${CUZK_CUDA_ARCHS:-90}"
gencode=()
for a in ${archs//,/ }; do gencode+=(-gencode "arch=compute_$a,code=sm_$a"); done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# blst for the host side of sppark's field types (the check's sum), as supraseal-c2 links it.
cc -O2 -fPIC -D__ADX__ -c "$blst/src/server.c" -o "$work/server.o"
cc -O2 -fPIC -D__ADX__ -c "$blst/build/assembly.S" -o "$work/assembly.o"
"$tk/bin/nvcc" -O3 -std=c++17 -DFEATURE_BLS12_381 -D__ADX__ "${gencode[@]}" \
    -I "$sppark" -I "$blst/src" -Xcompiler -Wno-unused-function \
    -Xcompiler -static-libstdc++ -Xcompiler -static-libgcc \
    "$repo/peer/sppark_ntt/main.cu" "$sppark/util/all_gpus.cpp" "$work/server.o" "$work/assembly.o" \
    -o "$work/sppark_ntt"
strip "$work/sppark_ntt"
out="$repo/.devbin-sppark"
mkdir -p "$out"
rm -f "$out"/*
tar -cf - -C "$work" sppark_ntt | xz -9 >"$out/sppark.txz"
grep -qx '/.devbin-sppark/' "$repo/.git/info/exclude" 2>/dev/null || echo '/.devbin-sppark/' >>"$repo/.git/info/exclude"
ls -l "$out"
