#!/usr/bin/env bash
# include/cuzk.h is generated from src/ffi by a pinned cbindgen and committed. This script
# regenerates it and fails when the committed header differs (a change to src/ffi whose
# header was not regenerated). `--write` updates the committed header instead.
#
# The cbindgen version is pinned because its output changes between releases; a machine
# without it gets it installed (cargo install, into target/tools so nothing global changes).
set -euo pipefail
CBINDGEN_VERSION=0.27.0
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

cbindgen=""
for c in cbindgen "$repo/target/tools/bin/cbindgen"; do
    if command -v "$c" >/dev/null 2>&1 && [ "$("$c" --version)" = "cbindgen $CBINDGEN_VERSION" ]; then
        cbindgen="$c"
        break
    fi
done
if [ -z "$cbindgen" ]; then
    echo "installing cbindgen $CBINDGEN_VERSION into target/tools" >&2
    cargo install cbindgen --version "=$CBINDGEN_VERSION" --locked --root "$repo/target/tools" >&2
    cbindgen="$repo/target/tools/bin/cbindgen"
fi

tmp="$(mktemp)"
log="$(mktemp)"
trap 'rm -f "$tmp" "$log"' EXIT
# The module is parsed on its own (the crate's other public items are not C API).
if ! "$cbindgen" --config cbindgen.toml --output "$tmp" src/ffi/mod.rs 2>"$log"; then
    cat "$log" >&2
    echo "cbindgen failed" >&2
    exit 1
fi

if [ "${1:-}" = "--write" ]; then
    cp "$tmp" include/cuzk.h
    echo "wrote include/cuzk.h"
    exit 0
fi
if ! diff -u include/cuzk.h "$tmp"; then
    echo "include/cuzk.h is stale: run scripts/check-header.sh --write and commit it" >&2
    exit 1
fi
echo "include/cuzk.h is up to date (cbindgen $CBINDGEN_VERSION)"
