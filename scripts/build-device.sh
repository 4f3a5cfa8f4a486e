#!/usr/bin/env bash
# Builds cuzk's GPU test binaries and benchmarks on a machine without a GPU and stages them,
# stripped and compressed, in <repo>/.devbin/ for the GPU machine, which has no cargo, no Go
# and no network (pass `.devbin` in the device tool's `carry`). On the GPU machine:
#
#   tar -xf .devbin/bin.txz -C /tmp/cuzk && /tmp/cuzk/filecoin_post ...
#
# Kernels get SASS for CUZK_CUDA_ARCHS (default 90 here: the H200); the binaries load the
# driver at run time and need nothing else from the toolkit. A target folder of its own
# (target/device) keeps this release+cuda build from invalidating the development builds.
#
#   scripts/build-device.sh                 the working tree as it is
#   scripts/build-device.sh --commit REV    as committed at REV, from a temporary git worktree
#                                           (figures that name a commit, whatever is being
#                                           edited meanwhile)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
src="$repo"
if [ "${1:-}" = "--commit" ]; then
    rev="$(git -C "$repo" rev-parse --verify "${2:?--commit needs a revision}^{commit}")"
    src="$(mktemp -d)/cuzk"
    git -C "$repo" worktree add --detach "$src" "$rev" >/dev/null
    cleanup="git -C '$repo' worktree remove --force '$src'"
    trap 'eval "$cleanup"' EXIT
fi
cd "$src"
tk="$repo/.cuda-toolkit/nvidia/cu13"
[ -x "$tk/bin/nvcc" ] || scripts/setup-cuda.sh
export PATH="$tk/bin:$PATH"
export CUDA_PATH="$tk"
export CUZK_CUDA_ARCHS="${CUZK_CUDA_ARCHS:-90}"
export CUZK_REQUIRE_CUDA=1
export CARGO_TARGET_DIR="$repo/target/device"

# The build script's run is shared by every checkout that builds into target/device (its
# rerun-if-changed=cuda is resolved against whichever checkout builds next and compared with the
# last run's time), so kernels compiled from a --commit worktree could be embedded in a later
# build of the working tree whose cuda/ edits are older than that run. A fresh build.rs mtime
# makes every build compile its own cuda/.
touch build.rs
tests=(gpu_msm gpu_msm_g2 gpu_ntt gpu_density gpu_r1cs gpu_prove gpu_memory gpu_processes filecoin_post filecoin_porep)
args=()
for t in "${tests[@]}"; do args+=(--test "$t"); done
# The synthesis bench (CPU only) rides along: on the GPU machine it has 16 cores.
cargo test --release --locked --features cuda --no-run "${args[@]}" --bench synth 2>&1 | tee /tmp/build-device.log
cargo build --release --locked --features cuda,test-fixtures \
    --bin gpu_bench --bin engine_bench --bin filecoin_bench --bin cuzk_fixtures --bin soak \
    --bin partition_bench

out="$repo/.devbin"
stage="$(mktemp -d)"
cleanup="rm -rf '$stage'; ${cleanup:-:}"
trap 'eval "$cleanup"' EXIT
for t in "${tests[@]}" synth; do
    # cargo names test binaries <name>-<hash>; the newest one is this build's.
    exe="$(ls -t "$CARGO_TARGET_DIR"/release/deps/"$t"-* | grep -v '\.d$' | head -n 1)"
    strip -o "$stage/$t" "$exe"
done
for b in gpu_bench engine_bench filecoin_bench cuzk_fixtures soak partition_bench; do
    strip -o "$stage/$b" "$CARGO_TARGET_DIR/release/$b"
done
git rev-parse --short HEAD >"$stage/COMMIT"
[ -z "$(git status --porcelain -- src cuda build.rs Cargo.toml tests)" ] ||
    echo "+ uncommitted changes" >>"$stage/COMMIT"
mkdir -p "$out"
# xz, not gzip: the binaries share most of their code, which xz's large window finds
# (the set is 10 MB instead of 67, under what one device call carries).
rm -f "$out/bin.tgz"
tar -cf - -C "$stage" . | xz -9 -T2 >"$out/bin.txz"
grep -qx '/.devbin/' "$repo/.git/info/exclude" 2>/dev/null || {
    mkdir -p "$repo/.git/info"
    echo '/.devbin/' >>"$repo/.git/info/exclude"
}
ls -l "$out"
