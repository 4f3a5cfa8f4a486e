// Package cuzk is the Go binding of cuzk, a library that computes Filecoin Groth16 proofs
// (BLS12-381) on GPUs, or on the CPU where no GPU is present.
//
// The binding is hand-written cgo over include/cuzk.h. It links the static library
// libcuzk.a through pkg-config (package cuzk), as filecoin-ffi's users link
// filcrypto: install the library, its header and cuzk.pc once, then point
// PKG_CONFIG_PATH at the prefix:
//
//	scripts/install.sh /opt/cuzk        # in the repository root: cargo build --release, install
//	export PKG_CONFIG_PATH=/opt/cuzk/lib/pkgconfig
//	go build ./...                      # in any module that requires github.com/cuzk/cuzk/go
//
// The library is linked statically, so a binary needs no cuzk file (and no rpath or
// LD_LIBRARY_PATH) where it runs.
//
// Every handle (Engine, SRS, Job) is safe to use from many goroutines, has an idempotent
// Close, and a finalizer as a safety net. Close waits for calls in flight on that handle;
// a call after Close fails with an *Error of StatusInvalidArgument. Nothing the library
// keeps points into Go memory: every buffer passed in is read only during the call.
//
// Two ways to prove: ProveStart proves circuits a host synthesized itself under params it
// loaded (LoadSRS); the Filecoin calls (SealCommitPhase2, GenerateWinningPoStWithVanilla,
// GenerateWindowPoStWithVanilla, GenerateSinglePartitionWindowPoStWithVanilla,
// GenerateUpdateProofWithVanilla) take filecoin-ffi's inputs and return its output bytes.
package cuzk

/*
// cuzk.pc (scripts/install.sh) gives -I for cuzk.h and the link line: libcuzk.a by its
// path and the system libraries Rust's std needs (cargo rustc --print native-static-libs).
#cgo pkg-config: cuzk
#include <stdlib.h>
#include "cuzk.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// ProofBytes is the size of one encoded proof: compressed A ‖ B ‖ C, bellperson's layout.
const ProofBytes = C.CUZK_PROOF_BYTES

// ScalarBytes is the size of one scalar in every buffer the library takes: a 32-byte
// little-endian integer below the BLS12-381 scalar field modulus r.
const ScalarBytes = C.CUZK_SCALAR_BYTES

// VersionMajor, VersionMinor and VersionPatch are the version of the header this package
// was compiled against; Version reports the library's at run time.
const (
	VersionMajor = C.CUZK_VERSION_MAJOR
	VersionMinor = C.CUZK_VERSION_MINOR
	VersionPatch = C.CUZK_VERSION_PATCH
)

// Proof is one Groth16 proof as bellperson and the Filecoin chain encode it.
type Proof [ProofBytes]byte

// Version names the library's version and the backend in use, e.g.
// "cuzk 0.1.0 (backend in use: cpu; gpu kernels not compiled)".
func Version() string {
	// The string is static in the library: copy it, never free it.
	return C.GoString(C.cuzk_version())
}

// InitTracing turns on the library's log output (to stderr), filtered in RUST_LOG syntax
// ("info", "cuzk=debug"); an empty filter uses the RUST_LOG environment variable.
func InitTracing(filter string) error {
	var cs *C.char
	if filter != "" {
		var err error
		if cs, err = cString(filter, "filter"); err != nil {
			return err
		}
		defer C.free(unsafe.Pointer(cs))
	}
	return call(func() C.cuzk_status { return C.cuzk_tracing_init(cs) })
}

// call runs one library call and turns its status into an error. The failure's message
// lives in a thread-local slot of the library, and a goroutine may move to another OS
// thread between two cgo calls, so the thread stays locked from the call until the
// message is read.
func call(f func() C.cuzk_status) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	st := f()
	if st == C.CUZK_STATUS_OK {
		return nil
	}
	return &Error{Status: Status(st), Message: C.GoString(C.cuzk_last_error())}
}

// cString copies s into C memory (free it with C.free). A NUL inside s would silently
// cut the string short in C, so it is refused.
func cString(s, arg string) (*C.char, error) {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return nil, argError("%s contains a NUL byte at %d", arg, i)
		}
	}
	return C.CString(s), nil
}

// bytesPtr is the address of b's first byte, or nil for an empty slice (the library
// takes NULL with a zero length).
func bytesPtr(b []byte) *C.uint8_t {
	if len(b) == 0 {
		return nil
	}
	return (*C.uint8_t)(unsafe.Pointer(&b[0]))
}
