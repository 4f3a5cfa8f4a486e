#!/usr/bin/env bash
# Builds the release library and installs what a C or Go host links against:
#
#   PREFIX/lib/libcuzk.a              the static library
#   PREFIX/include/cuzk.h             its header
#   PREFIX/lib/pkgconfig/cuzk.pc      for pkg-config (the Go package's `#cgo pkg-config: cuzk`)
#
# Usage: scripts/install.sh [PREFIX]     (default: target/install in the repository)
# Then:  export PKG_CONFIG_PATH=PREFIX/lib/pkgconfig   (before go build / go test)
#
# Environment: CUZK_FEATURES, comma-separated cargo features of the build (e.g. "cuda" for
# the GPU backend; scripts/setup-cuda.sh installs nvcc). The library is static and loads
# the CUDA driver at run time, so the link line is the same with or without it.
# CUZK_INSTALL_BUILD=0 skips the build and installs target/release/libcuzk.a as it is (for
# a caller that has just built it together with other targets, as scripts/test-go.sh does).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

prefix="${1:-target/install}"
mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)" # cuzk.pc names absolute paths
case "$prefix" in
*[[:space:]]*)
    # pkg-config output is split at white space: a path with a space cannot be named.
    echo "install.sh: PREFIX must not contain white space: $prefix" >&2
    exit 2
    ;;
esac

if [ "${CUZK_INSTALL_BUILD:-1}" != 0 ]; then
    features=()
    [ -n "${CUZK_FEATURES:-}" ] && features=(--features "$CUZK_FEATURES")
    cargo build --release --locked "${features[@]}" --lib
fi

ver() { sed -n "s/^#define CUZK_VERSION_$1 \([0-9]*\)$/\1/p" include/cuzk.h; }
version="$(ver MAJOR).$(ver MINOR).$(ver PATCH)"

install -d "$prefix/lib/pkgconfig" "$prefix/include"
# Through a temporary name and a rename: a build linking against the prefix meanwhile
# sees the old archive or the new one, never half of one.
install -m 0644 target/release/libcuzk.a "$prefix/lib/.libcuzk.a.tmp"
mv -f "$prefix/lib/.libcuzk.a.tmp" "$prefix/lib/libcuzk.a"
install -m 0644 include/cuzk.h "$prefix/include/cuzk.h"
# The system libraries are those Rust's std needs on Linux (cargo rustc --print
# native-static-libs); the archive goes by its path so that the linker cannot pick a
# libcuzk.so instead.
cat >"$prefix/lib/pkgconfig/.cuzk.pc.tmp" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: cuzk
Description: Groth16 proofs for Filecoin (BLS12-381) on GPUs, with a C ABI
Version: $version
Cflags: -I\${includedir}
Libs: \${libdir}/libcuzk.a -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
EOF
mv -f "$prefix/lib/pkgconfig/.cuzk.pc.tmp" "$prefix/lib/pkgconfig/cuzk.pc"

echo "installed cuzk $version${CUZK_FEATURES:+ (features: $CUZK_FEATURES)} into $prefix"
echo "use it with: export PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:\$PKG_CONFIG_PATH}"
