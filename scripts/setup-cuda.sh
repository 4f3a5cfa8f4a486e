#!/usr/bin/env bash
# Installs the pinned CUDA 13.0 toolkit (nvcc, runtime headers, CCCL, NVVM, CRT headers) from
# PyPI wheels into <repo>/.cuda-toolkit, so that `cargo build --features cuda` finds an nvcc
# without a system-wide CUDA install. Idempotent: does nothing when the pinned nvcc is present.
#
# Layout after install (what the wheels really unpack to):
#   .cuda-toolkit/nvidia/cu13/bin/nvcc        compiler driver
#   .cuda-toolkit/nvidia/cu13/include/        cuda_runtime.h, crt/, cub/, thrust/ ...
#   .cuda-toolkit/nvidia/cu13/nvvm/           cicc and libdevice
#   .cuda-toolkit/nvidia/cu13/lib             libcudart; lib64 -> lib (nvcc's default search dir)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="$repo/.cuda-toolkit"
root="$dest/nvidia/cu13"
want="13.0.88"

if [ -x "$root/bin/nvcc" ] && "$root/bin/nvcc" --version 2>/dev/null | grep -q "V$want"; then
    echo "setup-cuda: nvcc $want already in $root"
else
    python3 -m pip install --disable-pip-version-check --no-warn-script-location --upgrade \
        --target "$dest" \
        "nvidia-cuda-nvcc==$want" 'nvidia-cuda-runtime==13.0.*' 'nvidia-cuda-cccl==13.0.*' \
        'nvidia-nvvm==13.0.*' 'nvidia-cuda-crt==13.0.*'
fi

# nvcc's host-side defaults look for libraries in lib64.
if [ -d "$root/lib" ] && [ ! -e "$root/lib64" ]; then
    ln -s lib "$root/lib64"
fi

# Some wheels ship the tools without the executable bit.
for f in "$root"/bin/* "$root"/nvvm/bin/*; do
    [ -f "$f" ] && [ ! -x "$f" ] && chmod +x "$f"
done

"$root/bin/nvcc" --version | tail -n 2
echo "setup-cuda: export NVCC=$root/bin/nvcc (build.rs also finds it there by itself)"
