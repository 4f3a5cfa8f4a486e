#!/usr/bin/env bash
# Tests the Go binding in go/ (called by scripts/test.sh). Builds the Rust static library
# the package links (target/release/libcuzk.a) and the fixture generator, writes a fixture
# into a temporary directory, then runs gofmt, go vet, the tests and the example with the
# strictest cgo pointer checks and a collector that runs constantly, so that a pointer-rule
# break or a missing runtime.KeepAlive fails loudly instead of corrupting memory one day.
#
# Environment: CUZK_GO_RACE=0 skips the race detector (its first build compiles the
# standard library again, a minute or two); CUZK_GO_FEATURES=cuda links the library with
# the GPU backend (nvcc needed: scripts/setup-cuda.sh), so the same tests prove on a GPU.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

step() { printf '\n==> %s\n' "$*"; }

# One build of the crate for both: the library with the test-fixtures feature only adds
# the test-only params generator, which the Go package never calls.
step "cargo build --release (libcuzk.a, cuzk_fixtures)"
cargo build --release --locked --features "test-fixtures${CUZK_GO_FEATURES:+,$CUZK_GO_FEATURES}" \
    --lib --bin cuzk_fixtures

fixture="$(mktemp -d "${TMPDIR:-/tmp}/cuzk-go-fixture.XXXXXX")"
trap 'rm -rf "$fixture"' EXIT
step "fixture into $fixture"
target/release/cuzk_fixtures "$fixture"
export CUZK_FIXTURE_DIR="$fixture"

# No network: the module has no dependencies, and the toolchain here is the one to use.
export GOPROXY=off GOTOOLCHAIN=local

# cgocheck2 checks every store of a pointer into memory C can see; toolchains without the
# experiment get the default call-time checks, made explicit.
if GOEXPERIMENT=cgocheck2 go env GOEXPERIMENT >/dev/null 2>&1; then
    export GOEXPERIMENT=cgocheck2
    checks="GOEXPERIMENT=cgocheck2"
else
    export GODEBUG="${GODEBUG:+$GODEBUG,}cgocheck=1"
    checks="GODEBUG=cgocheck=1"
fi
# A collection at every 1% of heap growth: a Go object the library still used after its
# last reference would be freed (and a finalizer run) almost at once.
export GOGC=1

race=(-race)
[ "${CUZK_GO_RACE:-1}" = 0 ] && race=()

cd go
step "gofmt"
unformatted="$(gofmt -l .)"
if [ -n "$unformatted" ]; then
    echo "not gofmt-ed: $unformatted" >&2
    exit 1
fi
step "go vet ./..."
go vet ./...
step "go test ./... ($checks, GOGC=1${race:+, -race})"
# -count=1: the Go build cache does not know libcuzk.a's content, so a cached result could
# belong to an older library.
go test -count=1 "${race[@]}" ./...
step "go run ./example"
go run ./example "$fixture"
