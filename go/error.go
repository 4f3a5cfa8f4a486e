package cuzk

// #include "cuzk.h"
import "C"

import "fmt"

// Status is the library's status code (cuzk_status). The numbers are stable.
type Status uint32

// The status codes; each failure's meaning is documented in include/cuzk.h.
const (
	StatusOK                Status = C.CUZK_STATUS_OK
	StatusPanic             Status = C.CUZK_STATUS_PANIC
	StatusInvalidArgument   Status = C.CUZK_STATUS_INVALID_ARGUMENT
	StatusInvalidParams     Status = C.CUZK_STATUS_INVALID_PARAMS
	StatusInvalidAssignment Status = C.CUZK_STATUS_INVALID_ASSIGNMENT
	StatusEmptyCircuit      Status = C.CUZK_STATUS_EMPTY_CIRCUIT
	StatusSynthesis         Status = C.CUZK_STATUS_SYNTHESIS
	StatusInvalidProof      Status = C.CUZK_STATUS_INVALID_PROOF
	StatusIO                Status = C.CUZK_STATUS_IO
	StatusCancelled         Status = C.CUZK_STATUS_CANCELLED
	StatusTimeout           Status = C.CUZK_STATUS_TIMEOUT
	StatusResourceExhausted Status = C.CUZK_STATUS_RESOURCE_EXHAUSTED
	StatusShuttingDown      Status = C.CUZK_STATUS_SHUTTING_DOWN
	StatusGPU               Status = C.CUZK_STATUS_GPU
	StatusInternal          Status = C.CUZK_STATUS_INTERNAL
	StatusBufferTooSmall    Status = C.CUZK_STATUS_BUFFER_TOO_SMALL
	// The Filecoin calls' failures (filecoin.go).
	StatusInvalidInput       Status = C.CUZK_STATUS_INVALID_INPUT
	StatusParamsNotFound     Status = C.CUZK_STATUS_PARAMS_NOT_FOUND
	StatusSectorSizeMismatch Status = C.CUZK_STATUS_SECTOR_SIZE_MISMATCH
	StatusVerificationFailed Status = C.CUZK_STATUS_VERIFICATION_FAILED
)

// String is the status's C name, e.g. "CUZK_STATUS_TIMEOUT".
func (s Status) String() string {
	// A static string in the library: copied, never freed.
	return C.GoString(C.cuzk_status_name(C.uint32_t(s)))
}

// Error is a failed call: its status and the library's message, which names the function
// and the argument or problem. Compare with errors.Is against the Err* values, which
// match any Error of their status:
//
//	if errors.Is(err, cuzk.ErrInvalidAssignment) { ... }
type Error struct {
	Status  Status
	Message string
}

func (e *Error) Error() string {
	if e.Message == "" {
		return "cuzk: " + e.Status.String()
	}
	return fmt.Sprintf("cuzk: %s (%s)", e.Message, e.Status)
}

// Is reports whether target is an *Error of the same status whose message is empty (one
// of the Err* values) or equal to e's.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok || t == nil {
		return false
	}
	return t.Status == e.Status && (t.Message == "" || t.Message == e.Message)
}

// Values to test errors against with errors.Is; each matches every *Error of its status.
var (
	ErrPanic             = &Error{Status: StatusPanic}
	ErrInvalidArgument   = &Error{Status: StatusInvalidArgument}
	ErrInvalidParams     = &Error{Status: StatusInvalidParams}
	ErrInvalidAssignment = &Error{Status: StatusInvalidAssignment}
	ErrEmptyCircuit      = &Error{Status: StatusEmptyCircuit}
	ErrSynthesis         = &Error{Status: StatusSynthesis}
	ErrInvalidProof      = &Error{Status: StatusInvalidProof}
	ErrIO                = &Error{Status: StatusIO}
	ErrCancelled         = &Error{Status: StatusCancelled}
	ErrTimeout           = &Error{Status: StatusTimeout}
	ErrResourceExhausted = &Error{Status: StatusResourceExhausted}
	ErrShuttingDown      = &Error{Status: StatusShuttingDown}
	ErrGPU               = &Error{Status: StatusGPU}
	ErrInternal          = &Error{Status: StatusInternal}
	ErrBufferTooSmall    = &Error{Status: StatusBufferTooSmall}
	// A Filecoin input is malformed or of the wrong kind: a C1 output that does not parse
	// or is another sector's, vanilla proofs that do not decode or are of another kind or
	// count, a commitment that is not a field element, randomness that is not 32 bytes.
	ErrInvalidInput = &Error{Status: StatusInvalidInput}
	// A params file the proof needs is missing; the message names the path expected.
	ErrParamsNotFound = &Error{Status: StatusParamsNotFound}
	// The input is for another sector size than its registered proof.
	ErrSectorSizeMismatch = &Error{Status: StatusSectorSizeMismatch}
	// A computed proof failed its own verification, so it was not returned.
	ErrVerificationFailed = &Error{Status: StatusVerificationFailed}
)

// argError is a bad argument caught on the Go side, before any call: a length the C ABI
// cannot express (bytes not a whole number of scalars), a negative count, a closed handle.
// It carries the status the library gives bad arguments, so callers test one way.
func argError(format string, args ...any) error {
	return &Error{Status: StatusInvalidArgument, Message: "cuzk (Go): " + fmt.Sprintf(format, args...)}
}
