package cuzk

// #include <stdlib.h>
// #include "cuzk.h"
import "C"

import (
	"context"
	"fmt"
	"runtime"
	"time"
	"unsafe"
)

// Partition is one partition's synthesized circuit. Scalars are 32-byte little-endian
// integers below the field modulus r (or blstrs' Montgomery form, WithMontgomery), laid
// end to end; each slice's length must be a whole number of them. The buffers are read
// only during ProveStart, which copies them: they may be reused as soon as it returns.
type Partition struct {
	// A, B, C are the constraint evaluations, one scalar per constraint each.
	A, B, C []byte
	// Input is the input assignment, the constant ONE first; Aux the aux assignment.
	Input, Aux []byte
	// AAuxDensity marks the aux variables that appear in some A, BInputDensity the
	// inputs and BAuxDensity the aux variables that appear in some B.
	AAuxDensity, BInputDensity, BAuxDensity Bitmap
}

// Bitmap is a density bitmap: bit i in Words[i/64] at position i%64, least significant
// first. Words must hold exactly ceil(Bits/64) words, with no bit set past Bits.
type Bitmap struct {
	Words []uint64
	Bits  int
}

// Priority is a job's class: the engine runs queued partitions of a higher class first.
type Priority uint32

// The priority classes, highest first. PriorityDefault is PriorityOther for ProveStart
// (so that a job without options never jumps the queue) and the proof kind's class for the
// Filecoin calls (filecoin.go): WinningPoSt, WindowPoSt, PoRep and SnapDeals.
const (
	PriorityDefault     Priority = C.CUZK_PRIORITY_DEFAULT
	PriorityWinningPoSt Priority = C.CUZK_PRIORITY_WINNING_POST
	PriorityWindowPoSt  Priority = C.CUZK_PRIORITY_WINDOW_POST
	PriorityPoRepSnap   Priority = C.CUZK_PRIORITY_POREP_SNAP
	PriorityOther       Priority = C.CUZK_PRIORITY_OTHER
)

// Option adjusts one job; see the With* functions.
type Option func(*proveOptions)

type proveOptions struct {
	priority  Priority
	r, s      []byte
	admission *time.Duration
	flags     C.uint32_t
	paramsDir string
}

// WithPriority sets the job's class.
func WithPriority(p Priority) Option { return func(o *proveOptions) { o.priority = p } }

// WithRandomness gives the randomizers r and s, one 32-byte scalar per partition each,
// instead of fresh ones from the OS RNG. Fixed r and s make proofs reproducible (tests);
// production proofs must use fresh ones. For the Filecoin calls the partitions are those
// of the proof the inputs make (a 32GiB PoRep has 10, a WinningPoSt one); a count that
// differs fails with ErrInvalidArgument.
func WithRandomness(r, s []byte) Option {
	return func(o *proveOptions) { o.r, o.s = r, s }
}

// WithAdmissionTimeout sets how long ProveStart waits for the memory budget: 0 fails at
// once with ErrResourceExhausted when the budget cannot take the job yet, WaitForever
// waits without limit. A longer wait than the context's deadline is cut to the deadline.
func WithAdmissionTimeout(d time.Duration) Option {
	return func(o *proveOptions) { o.admission = &d }
}

// WithMontgomery says that every scalar of the job (partitions and randomizers) is in
// blstrs' in-memory Montgomery form (four little-endian u64 limbs of x·2^256 mod r), as
// a Rust or blst-based host holds them, rather than a canonical integer.
func WithMontgomery() Option {
	return func(o *proveOptions) { o.flags |= C.CUZK_PROVE_MONTGOMERY }
}

// WithParamsDir, for the Filecoin calls, names the folder holding the params
// (v28-<circuit id>.params, as storage-proofs names them) instead of the Filecoin parameter
// cache ($FIL_PROOFS_PARAMETER_CACHE, by default /var/tmp/filecoin-proof-parameters). The
// empty string means that cache. ProveStart takes its params as an SRS and refuses it
// (ErrInvalidArgument).
func WithParamsDir(dir string) Option { return func(o *proveOptions) { o.paramsDir = dir } }

// WithoutVerification, for the Filecoin calls, returns the proofs without verifying them
// first. By default each proof is verified against its public inputs, and one that fails
// is never returned (the job fails with ErrVerificationFailed). ProveStart never
// verifies: it knows no public inputs.
func WithoutVerification() Option {
	return func(o *proveOptions) { o.flags |= C.CUZK_PROVE_NO_VERIFY }
}

// pinned lays Go buffers out for one C call. The C structs hold pointers into Go memory;
// cgo lets C read Go memory that holds Go pointers only when those are pinned, and the
// library reads them only during the call, so pinning for the call is enough (and avoids
// copying gigabytes of PoRep witness into C memory).
type pinned struct {
	pin runtime.Pinner
}

func (p *pinned) bytes(b []byte) *C.uint8_t {
	if len(b) == 0 {
		return nil
	}
	p.pin.Pin(&b[0])
	return (*C.uint8_t)(unsafe.Pointer(&b[0]))
}

func (p *pinned) words(w []uint64) *C.uint64_t {
	if len(w) == 0 {
		return nil
	}
	p.pin.Pin(&w[0])
	return (*C.uint64_t)(unsafe.Pointer(&w[0]))
}

func (p *pinned) partition(i int, in *Partition, out *C.cuzk_partition) error {
	// Lengths first, so that nothing is pinned for a partition the ABI cannot express.
	for _, f := range []struct {
		b    []byte
		name string
	}{{in.A, "A"}, {in.B, "B"}, {in.C, "C"}, {in.Input, "Input"}, {in.Aux, "Aux"}} {
		if _, err := scalarCount(f.b, fmt.Sprintf("partitions[%d].%s", i, f.name)); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		b    Bitmap
		name string
	}{{in.AAuxDensity, "AAuxDensity"}, {in.BInputDensity, "BInputDensity"}, {in.BAuxDensity, "BAuxDensity"}} {
		if f.b.Bits < 0 {
			return argError("partitions[%d].%s.Bits is %d", i, f.name, f.b.Bits)
		}
	}
	scalars := func(b []byte) (*C.uint8_t, C.size_t) { return p.bytes(b), C.size_t(len(b) / ScalarBytes) }
	out.a, out.a_len = scalars(in.A)
	out.b, out.b_len = scalars(in.B)
	out.c, out.c_len = scalars(in.C)
	out.input, out.input_len = scalars(in.Input)
	out.aux, out.aux_len = scalars(in.Aux)
	out.a_aux_density, out.a_aux_density_words, out.a_aux_density_bits =
		p.words(in.AAuxDensity.Words), C.size_t(len(in.AAuxDensity.Words)), C.size_t(in.AAuxDensity.Bits)
	out.b_input_density, out.b_input_density_words, out.b_input_density_bits =
		p.words(in.BInputDensity.Words), C.size_t(len(in.BInputDensity.Words)), C.size_t(in.BInputDensity.Bits)
	out.b_aux_density, out.b_aux_density_words, out.b_aux_density_bits =
		p.words(in.BAuxDensity.Words), C.size_t(len(in.BAuxDensity.Words)), C.size_t(in.BAuxDensity.Bits)
	return nil
}

// Job is a started job (ProveStart, or one of the Filecoin Start calls): its partitions
// queued, being synthesized or being proved. The caller owns it: Close it when done with
// it; closing a job that has not ended cancels it.
type Job struct {
	h handle[*C.cuzk_job]
	n int
}

// ProveStart validates the partitions against srs (one bad partition fails the whole job,
// and the error names it), waits for the engine's memory budget, queues the partitions
// and returns. Collect the proofs with Finish.
//
// ctx bounds the admission wait only through its deadline (a cgo call cannot be
// interrupted): the wait is cut to the time left, and a wait cut so that runs out returns
// the context's error. A ctx already done returns its error without starting anything.
func (e *Engine) ProveStart(ctx context.Context, srs *SRS, partitions []Partition, opts ...Option) (*Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var pin pinned
	defer pin.pin.Unpin()
	co, deadlineCut, freeOpts, err := cOptions(ctx, opts, &pin)
	if err != nil {
		return nil, err
	}
	defer freeOpts()
	var parts *C.cuzk_partition
	if len(partitions) > 0 {
		// Go memory, so nothing to free; it holds only pinned pointers.
		cp := make([]C.cuzk_partition, len(partitions))
		for i := range partitions {
			if err := pin.partition(i, &partitions[i], &cp[i]); err != nil {
				return nil, err
			}
		}
		parts = &cp[0]
		defer runtime.KeepAlive(cp)
	}
	ep, done, err := e.ptr()
	if err != nil {
		return nil, err
	}
	defer done()
	sp, sdone, err := srs.ptr()
	if err != nil {
		return nil, err
	}
	defer sdone()
	var jp *C.cuzk_job
	err = call(func() C.cuzk_status {
		return C.cuzk_prove_start(ep, sp, parts, C.size_t(len(partitions)), &co, &jp)
	})
	runtime.KeepAlive(e)
	runtime.KeepAlive(srs)
	runtime.KeepAlive(partitions)
	if err != nil {
		return nil, startError(ctx, deadlineCut, err)
	}
	return newJob(jp, len(partitions)), nil
}

// cOptions lays opts out as the C options of one start call. The randomizers stay Go
// memory, pinned in pin (the caller unpins after the call); the params folder is copied
// to C memory, which free releases (after the call: the library reads it only during it).
// The admission wait is cut to ctx's deadline; deadlineCut says whether it was.
func cOptions(ctx context.Context, opts []Option, pin *pinned) (co C.cuzk_prove_options, deadlineCut bool, free func(), err error) {
	free = func() {}
	var o proveOptions
	for _, opt := range opts {
		opt(&o)
	}
	co = C.cuzk_prove_options{
		size:     C.sizeof_cuzk_prove_options,
		priority: C.uint32_t(o.priority),
		flags:    o.flags,
	}
	if o.r != nil || o.s != nil {
		nr, err := scalarCount(o.r, "WithRandomness r")
		if err != nil {
			return co, false, free, err
		}
		ns, err := scalarCount(o.s, "WithRandomness s")
		if err != nil {
			return co, false, free, err
		}
		if nr != ns || nr == 0 {
			// Empty slices would reach C as NULL with a count of 0, which means "draw
			// them from the OS RNG": not what a caller who gave randomizers meant.
			return co, false, free, argError("WithRandomness gives %d r and %d s scalars", nr, ns)
		}
		co.r, co.s, co.rs_len = pin.bytes(o.r), pin.bytes(o.s), nr
	}
	if o.admission != nil {
		switch d := *o.admission; {
		case d < 0:
			return co, false, free, argError("WithAdmissionTimeout(%v) is negative", d)
		case d == 0:
			co.flags |= C.CUZK_PROVE_FAIL_FAST
		default:
			co.admission_timeout_ms = millis(d)
		}
	}
	if dl, ok := ctx.Deadline(); ok && co.flags&C.CUZK_PROVE_FAIL_FAST == 0 {
		left := millis(max(time.Until(dl), time.Millisecond))
		// 0 is "the engine's policy", which may wait longer than the deadline.
		if co.admission_timeout_ms == 0 || left < co.admission_timeout_ms {
			co.admission_timeout_ms, deadlineCut = left, true
		}
	}
	if o.paramsDir != "" {
		dir, err := cString(o.paramsDir, "WithParamsDir")
		if err != nil {
			return co, false, free, err
		}
		co.params_dir = dir
		free = func() { C.free(unsafe.Pointer(dir)) }
	}
	return co, deadlineCut, free, nil
}

// startError is a start call's failure; an admission wait that the context's deadline cut
// short also wraps ctx.Err().
func startError(ctx context.Context, deadlineCut bool, err error) error {
	if deadlineCut && isStatus(err, StatusTimeout) && ctx.Err() != nil {
		return fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return err
}

// newJob wraps a started job of n partitions, with a finalizer as the safety net.
func newJob(p *C.cuzk_job, n int) *Job {
	j := &Job{h: handle[*C.cuzk_job]{p: p, kind: "Job"}, n: n}
	runtime.SetFinalizer(j, (*Job).Close)
	return j
}

// ptr is the live C handle, guarded against Close until done is called.
func (j *Job) ptr() (p *C.cuzk_job, done func(), err error) {
	if j == nil {
		return nil, nil, argError("Job is nil")
	}
	if p, err = j.h.acquire(); err != nil {
		return nil, nil, err
	}
	return p, j.h.release, nil
}

// Partitions is the number of partitions in the job (for a Filecoin job, those of the
// proof its inputs make: one per 192 bytes FinishBytes returns).
func (j *Job) Partitions() int { return j.n }

// Finish waits for the job to end and returns its proofs in partition order. When ctx is
// done first the job is cancelled (its queued partitions leave the queue at once) and the
// error wraps both ctx.Err() and ErrCancelled. A job that failed returns its failure.
// Finish may be called again after success, and from several goroutines.
func (j *Job) Finish(ctx context.Context) ([]Proof, error) {
	var proofs []Proof
	var buf []byte
	if j != nil && j.n > 0 { // a nil job: finish says so
		proofs = make([]Proof, j.n)
		buf = unsafe.Slice(&proofs[0][0], j.n*ProofBytes)
	}
	if err := j.finish(ctx, buf); err != nil {
		return nil, err
	}
	return proofs, nil
}

// finish waits for the job to end and has the library write its proofs into buf (Go
// memory without pointers, written during the call only); see Finish.
func (j *Job) finish(ctx context.Context, buf []byte) error {
	p, done, err := j.ptr()
	if err != nil {
		return err
	}
	defer done()
	// The wait below blocks in C without a deadline; the context reaches it through
	// cancel, which the library allows concurrently with a finish in progress and which
	// makes that finish return CUZK_STATUS_CANCELLED at once.
	stop := context.AfterFunc(ctx, func() { _, _ = j.Cancel() })
	defer stop()
	err = call(func() C.cuzk_status {
		return C.cuzk_prove_finish(p, C.CUZK_WAIT_FOREVER, bytesPtr(buf), C.size_t(len(buf)))
	})
	runtime.KeepAlive(j)
	runtime.KeepAlive(buf)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && isStatus(err, StatusCancelled) {
			return fmt.Errorf("%w: %w", cerr, err)
		}
		return err
	}
	return nil
}

// JobState is where a job stands.
type JobState uint32

// The job states.
const (
	JobPending   JobState = C.CUZK_JOB_STATE_PENDING
	JobDone      JobState = C.CUZK_JOB_STATE_DONE
	JobFailed    JobState = C.CUZK_JOB_STATE_FAILED
	JobCancelled JobState = C.CUZK_JOB_STATE_CANCELLED
)

func (s JobState) String() string {
	switch s {
	case JobPending:
		return "pending"
	case JobDone:
		return "done"
	case JobFailed:
		return "failed"
	case JobCancelled:
		return "cancelled"
	}
	return fmt.Sprintf("JobState(%d)", uint32(s))
}

// Poll says, without waiting, where the job stands and how many of its partitions are
// proved.
func (j *Job) Poll() (state JobState, proved int, err error) {
	p, done, err := j.ptr()
	if err != nil {
		return 0, 0, err
	}
	defer done()
	var st C.cuzk_job_state
	var n C.size_t
	err = call(func() C.cuzk_status { return C.cuzk_job_poll(p, &st, &n, nil) })
	runtime.KeepAlive(j)
	return JobState(st), int(n), err
}

// Cancel cancels the job unless it has already ended; it reports whether this call
// cancelled it. Finish then returns ErrCancelled.
func (j *Job) Cancel() (bool, error) {
	p, done, err := j.ptr()
	if err != nil {
		return false, err
	}
	defer done()
	var did C.bool
	err = call(func() C.cuzk_status { return C.cuzk_job_cancel(p, &did) })
	runtime.KeepAlive(j)
	return bool(did), err
}

// Close frees the job, cancelling it first if it has not ended, so that a Finish in
// progress returns (ErrCancelled) rather than holding Close up until the job ends.
// Calling Close again does nothing.
func (j *Job) Close() {
	if j == nil {
		return
	}
	runtime.SetFinalizer(j, nil)
	// Cancel before taking the write lock: a Finish holds the read lock while it waits.
	_, _ = j.Cancel()
	j.h.close(func(p *C.cuzk_job) { C.cuzk_job_free(p) })
}
