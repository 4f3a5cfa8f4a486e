#!/usr/bin/env bash
# Tests the Go binding in go/ (called by scripts/test.sh). Builds the Rust library and the
# fixture generator, installs the library with scripts/install.sh into a prefix that the
# package finds through pkg-config only (as a host module would), writes the fixtures
# (the synthetic one, and real 2KiB Filecoin inputs with their test params and expected
# proofs), then runs gofmt, go vet, the tests and the example with the strictest cgo
# pointer checks and a collector that runs constantly, so that a pointer-rule break or a
# missing runtime.KeepAlive fails loudly instead of corrupting memory one day. Last, a
# throwaway module outside the repository imports the package and proves a WinningPoSt.
#
# Environment: CUZK_GO_RACE=0 skips the race detector (its first build compiles the
# standard library again, a minute or two); CUZK_GO_FEATURES=cuda links the library with
# the GPU backend (nvcc needed: scripts/setup-cuda.sh), so the same tests prove on a GPU;
# CUZK_TEST_PARAMS is the Filecoin test parameter cache, shared with the Rust tests
# (default target/cuzk-test-params; making it the first time takes minutes);
# CUZK_GO_PREFIX is where the library is installed (default target/go-install).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

step() { printf '\n==> %s\n' "$*"; }

features="test-fixtures${CUZK_GO_FEATURES:+,$CUZK_GO_FEATURES}"
# One build of the crate for both: the library with the test-fixtures feature only adds
# the test-only params generator, which the Go package never calls.
step "cargo build --release (libcuzk.a, cuzk_fixtures)"
cargo build --release --locked --features "$features" --lib --bin cuzk_fixtures

# The Go package links through `#cgo pkg-config: cuzk`; a clean CI machine may have only
# the stock toolchains.
if ! command -v pkg-config >/dev/null 2>&1; then
    step "apt-get install pkg-config"
    sudo=()
    [ "$(id -u)" = 0 ] || sudo=(sudo)
    "${sudo[@]}" apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends pkg-config
fi

# A fixed prefix rather than a temporary one: Go's build cache does not hash pkg-config's
# output, so a cached package must keep naming a path that exists (see the stamp below).
prefix="${CUZK_GO_PREFIX:-$repo/target/go-install}"
step "scripts/install.sh $prefix"
# The archive just built, not a second build: the other files of the checkout may have
# changed since, and the fixture generator and the library must be of one source.
CUZK_INSTALL_BUILD=0 CUZK_FEATURES="$features" scripts/install.sh "$prefix"
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pkg-config --cflags --libs cuzk

# Go's build cache keys a cgo package on its sources and the CGO_* variables, not on the
# header or the archive that pkg-config names: without this stamp a rebuilt library could
# be linked as the old package (or an old cached executable run). A define nothing reads,
# named after the installed files' contents, makes every change of them a cache miss.
stamp="$(cat "$prefix/lib/libcuzk.a" "$prefix/include/cuzk.h" | sha256sum | cut -c1-16)"
export CGO_CPPFLAGS="${CGO_CPPFLAGS:+$CGO_CPPFLAGS }-DCUZK_INSTALL_STAMP=$stamp"

fixture="$(mktemp -d "${TMPDIR:-/tmp}/cuzk-go-fixture.XXXXXX")"
trap 'rm -rf "$fixture"' EXIT
step "fixture into $fixture/synthetic"
target/release/cuzk_fixtures "$fixture/synthetic"
export CUZK_FIXTURE_DIR="$fixture/synthetic"

export CUZK_TEST_PARAMS="${CUZK_TEST_PARAMS:-$repo/target/cuzk-test-params}"
mkdir -p "$CUZK_TEST_PARAMS"
step "Filecoin inputs into $fixture/filecoin (params in $CUZK_TEST_PARAMS)"
# Sealing writes the SDR parents cache; keep it out of /var/tmp and beside the sectors.
FIL_PROOFS_PARENT_CACHE="$fixture/parents" \
    target/release/cuzk_fixtures filecoin-inputs "$fixture/filecoin" "$CUZK_TEST_PARAMS"
export CUZK_FILECOIN_FIXTURE_DIR="$fixture/filecoin"
(cd "$fixture/filecoin" && ls -1 ./*.bin ./*.json ./*.txt | sed 's|^\./|  |')

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
# -count=1: a test result is cached by the test binary and its inputs, and the fixtures
# are new files each run.
go test -count=1 -timeout 30m "${race[@]}" ./...
step "go run ./example"
go run ./example "$fixture/synthetic"

# A module of its own outside the repository, as Curio's would be: it requires the
# package by its module path (replaced by this checkout; GOFLAGS=-mod=mod lets go.sum be
# written, GOPROXY=off keeps it offline) and finds the library only through
# PKG_CONFIG_PATH: no CUZK_* variable, nothing relative to the repository.
host="$fixture/host"
step "a host module ($host) builds against the installed library and proves a WinningPoSt"
mkdir -p "$host"
cat >"$host/main.go" <<'EOF'
// Command host is a module outside the cuzk repository that uses its Go package as a
// Curio task would: one engine, one WinningPoSt from vanilla proofs.
package main

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	cuzk "github.com/cuzk/cuzk/go"
)

func main() {
	if len(os.Args) != 3 {
		log.Fatal("usage: host FILECOIN_FIXTURE_DIR PARAMS_DIR")
	}
	dir, params := os.Args[1], os.Args[2]
	fmt.Println(cuzk.Version())
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			log.Fatal(err)
		}
		return b
	}
	kv := map[string]string{}
	for _, line := range strings.Split(string(read("winning.txt")), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			kv[k] = v
		}
	}
	num := func(k string) uint64 {
		n, err := strconv.ParseUint(kv[k], 10, 64)
		if err != nil {
			log.Fatalf("winning.txt %s: %v", k, err)
		}
		return n
	}
	var randomness []byte
	if _, err := fmt.Sscanf(kv["randomness"], "%x", &randomness); err != nil {
		log.Fatalf("winning.txt randomness: %v", err)
	}
	var vanillas [][]byte
	for i := uint64(0); i < num("vanilla_proofs"); i++ {
		vanillas = append(vanillas, read(fmt.Sprintf("winning_vanilla_%d.bin", i)))
	}

	engine, err := cuzk.NewEngine(cuzk.Config{CPUDevices: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer engine.Close()
	ctx := context.Background()
	proofType := cuzk.RegisteredPoStProof(num("registered_post_proof"))
	// Fresh randomness: the library verifies the proof before returning it.
	proof, err := engine.GenerateWinningPoStWithVanilla(ctx, proofType, num("miner"), randomness, vanillas,
		cuzk.WithParamsDir(params))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("WinningPoSt: %d bytes, verified by the library\n", len(proof))
	// With the fixture's r and s, the bytes filecoin-proofs' verifier accepted.
	proof, err = engine.GenerateWinningPoStWithVanilla(ctx, proofType, num("miner"), randomness, vanillas,
		cuzk.WithParamsDir(params), cuzk.WithRandomness(read("winning_r.bin"), read("winning_s.bin")))
	if err != nil {
		log.Fatal(err)
	}
	if !bytes.Equal(proof, read("winning_proof.bin")) {
		log.Fatal("WinningPoSt with the fixture's r and s differs from winning_proof.bin")
	}
	fmt.Println("WinningPoSt with fixed r and s: equal to winning_proof.bin")
}
EOF
params="$CUZK_TEST_PARAMS"
(
    cd "$host"
    export GOFLAGS=-mod=mod GOPROXY=off
    unset CUZK_FIXTURE_DIR CUZK_FILECOIN_FIXTURE_DIR CUZK_TEST_PARAMS
    go mod init example.com/host
    go mod edit -require github.com/cuzk/cuzk/go@v0.0.0 -replace "github.com/cuzk/cuzk/go=$repo/go"
    go run . "$fixture/filecoin" "$params"
)
