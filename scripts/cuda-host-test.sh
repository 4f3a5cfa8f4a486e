#!/usr/bin/env bash
# Checks the CUDA arithmetic and the MSM pipeline on the host (no GPU): compiles
# cuda/test/host_test.cpp with the system C++ compiler and runs it on vectors from
# cuda/test/gen_vectors.py; then the density gather (cuda/test/gather_test.cpp) and the NTT
# tiles (cuda/test/ntt_test.cpp) and the fields' other forms (cuda/test/field_forms_test.cpp),
# all self-contained.
# Needs python3 and g++ (or $CXX).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"${CXX:-g++}" -std=c++17 -O2 -Wall -Wno-unknown-pragmas -o "$tmp/host_test" "$repo/cuda/test/host_test.cpp"
for seed in 1 2; do
    python3 "$repo/cuda/test/gen_vectors.py" "$seed" > "$tmp/vectors.txt"
    "$tmp/host_test" "$tmp/vectors.txt"
done
# The density gather's per-thread function against a plain loop (self-contained).
"${CXX:-g++}" -std=c++17 -O2 -Wall -Wextra -Wno-unknown-pragmas -o "$tmp/gather_test" "$repo/cuda/test/gather_test.cpp"
"$tmp/gather_test"
# The NTT's tile passes (radix-4 and radix-8 steps) against a plain transform (self-contained).
"${CXX:-g++}" -std=c++17 -O2 -Wall -Wextra -Wno-unknown-pragmas -o "$tmp/ntt_test" "$repo/cuda/test/ntt_test.cpp"
"$tmp/ntt_test"
# The fields in 52-bit and 29-bit limbs (cuda/fe52.cuh, cuda/fe29.cuh) against field.cuh's products.
"${CXX:-g++}" -std=c++17 -O2 -Wall -Wextra -Wno-unknown-pragmas -o "$tmp/field_forms_test" "$repo/cuda/test/field_forms_test.cpp"
"$tmp/field_forms_test"
