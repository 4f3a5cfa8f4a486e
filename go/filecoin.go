package cuzk

// #include "cuzk.h"
import "C"

import (
	"context"
	"math"
	"runtime"
	"time"
	"unsafe"
)

// The Filecoin proof kinds, shaped like filecoin-ffi's calls so that a Curio or Lotus task
// swaps one call for the other: the same inputs (a C1 output, vanilla proofs, randomness,
// a miner id), the same output bytes (each partition's 192-byte proof, in partition order).
// The library decodes the inputs with Filecoin's own types, builds the circuits with
// storage-proofs' own code, loads the params from the Filecoin parameter cache (or
// WithParamsDir) once per engine, synthesizes and proves on the engine, and verifies each
// proof before returning it (unless WithoutVerification).
//
// Every input buffer is read only during the Start call, which decodes and copies it: the
// caller may reuse it as soon as the call returns. The output is a new Go slice the caller
// owns.

// RegisteredSealProof is a seal proof type, numbered as go-state-types' abi package
// numbers it (abi.RegisteredSealProof). SealCommitPhase2 reads it from the C1 output.
type RegisteredSealProof int64

// A few seal proof types; any other go-state-types number works as well.
const (
	RegisteredSealProof_StackedDrg2KiBV1_1  RegisteredSealProof = 5
	RegisteredSealProof_StackedDrg32GiBV1_1 RegisteredSealProof = 8
	RegisteredSealProof_StackedDrg64GiBV1_1 RegisteredSealProof = 9
)

// RegisteredPoStProof is a PoSt proof type, numbered as go-state-types' abi package numbers
// it (abi.RegisteredPoStProof): 0–4 WinningPoSt, 10–14 WindowPoSt V1_1.
type RegisteredPoStProof int64

// A few PoSt proof types; any other go-state-types number works as well.
const (
	RegisteredPoStProof_StackedDrgWinning2KiBV1   RegisteredPoStProof = 0
	RegisteredPoStProof_StackedDrgWinning32GiBV1  RegisteredPoStProof = 3
	RegisteredPoStProof_StackedDrgWinning64GiBV1  RegisteredPoStProof = 4
	RegisteredPoStProof_StackedDrgWindow2KiBV1_1  RegisteredPoStProof = 10
	RegisteredPoStProof_StackedDrgWindow32GiBV1_1 RegisteredPoStProof = 13
	RegisteredPoStProof_StackedDrgWindow64GiBV1_1 RegisteredPoStProof = 14
)

// RegisteredUpdateProof is a SnapDeals update proof type, numbered as go-state-types' abi
// package numbers it (abi.RegisteredUpdateProof): 0 is 2KiB … 4 is 64GiB.
type RegisteredUpdateProof int64

// A few update proof types; any other go-state-types number works as well.
const (
	RegisteredUpdateProof_StackedDrg2KiBV1  RegisteredUpdateProof = 0
	RegisteredUpdateProof_StackedDrg32GiBV1 RegisteredUpdateProof = 3
	RegisteredUpdateProof_StackedDrg64GiBV1 RegisteredUpdateProof = 4
)

// ProverID is the prover id filecoin-ffi derives from a miner's actor id: the id as an
// unsigned LEB128 varint, zero-padded to 32 bytes.
func ProverID(minerID uint64) [32]byte {
	var id [32]byte
	i := 0
	for minerID >= 0x80 {
		id[i] = byte(minerID) | 0x80
		minerID >>= 7
		i++
	}
	id[i] = byte(minerID)
	return id
}

// SealCommitPhase2 proves a PoRep (its C2) from phase1Output, the C1 output exactly as
// filecoin-ffi's SealCommitPhase2 takes it (the JSON of filecoin-proofs-api's
// SealCommitPhase1Output), and returns the proof bytes filecoin-ffi returns: 192 per
// partition (1920 for a 32GiB sector), for interactive and synthetic PoRep. For NI-PoRep
// they are the 126 (13 at 2KiB) circuit proofs, which filecoin-ffi's SealCommitPhase2
// aggregates: pass them to filecoin-ffi's AggregateSealProofs (SnarkPack v2, this one
// sector) for what VerifySeal takes. It is SealCommitPhase2Start, FinishBytes and Close.
func (e *Engine) SealCommitPhase2(ctx context.Context, phase1Output []byte, sectorNum uint64, minerID uint64, opts ...Option) ([]byte, error) {
	return finishBytes(ctx)(e.SealCommitPhase2Start(ctx, phase1Output, sectorNum, minerID, opts...))
}

// SealCommitPhase2Start decodes phase1Output, checks it is the C1 of sector sectorNum of
// miner minerID (ErrInvalidInput when its replica id says otherwise, or when the JSON does
// not parse; ErrSectorSizeMismatch when its vanilla proofs are of another sector size than
// its registered proof), finds the params (ErrParamsNotFound, naming the path), waits for
// the memory budget, queues the partitions for synthesis and returns. Collect the proof
// with FinishBytes; ctx is used as ProveStart uses it.
func (e *Engine) SealCommitPhase2Start(ctx context.Context, phase1Output []byte, sectorNum uint64, minerID uint64, opts ...Option) (*Job, error) {
	c1 := bytesPtr(phase1Output)
	id := ProverID(minerID)
	j, err := e.startFilecoin(ctx, opts, nil, func(ep *C.cuzk_engine, _ *C.cuzk_bytes, co *C.cuzk_prove_options, jp **C.cuzk_job) C.cuzk_status {
		return C.cuzk_prove_porep_c2_start(ep, c1, C.size_t(len(phase1Output)), C.uint64_t(sectorNum),
			(*C.uint8_t)(unsafe.Pointer(&id[0])), co, jp)
	})
	runtime.KeepAlive(phase1Output)
	return j, err
}

// GenerateWinningPoStWithVanilla proves a WinningPoSt from the challenged sectors' vanilla
// proofs (bincode FallbackPoStSectorProofs, as filecoin-ffi's GenerateSingleVanillaProof
// gives them, in challenge order) and the 32-byte randomness, as filecoin-ffi's
// GenerateWinningPoStWithVanilla does: 192 bytes. Vanilla proofs of another kind or size
// fail with ErrInvalidInput.
func (e *Engine) GenerateWinningPoStWithVanilla(ctx context.Context, proofType RegisteredPoStProof, minerID uint64, randomness []byte, vanillas [][]byte, opts ...Option) ([]byte, error) {
	return finishBytes(ctx)(e.GenerateWinningPoStWithVanillaStart(ctx, proofType, minerID, randomness, vanillas, opts...))
}

// GenerateWinningPoStWithVanillaStart is the start of GenerateWinningPoStWithVanilla;
// collect the proof with FinishBytes.
func (e *Engine) GenerateWinningPoStWithVanillaStart(ctx context.Context, proofType RegisteredPoStProof, minerID uint64, randomness []byte, vanillas [][]byte, opts ...Option) (*Job, error) {
	pt, err := registered(int64(proofType), "RegisteredPoStProof")
	if err != nil {
		return nil, err
	}
	rp, id := bytesPtr(randomness), ProverID(minerID)
	j, err := e.startFilecoin(ctx, opts, vanillas, func(ep *C.cuzk_engine, vs *C.cuzk_bytes, co *C.cuzk_prove_options, jp **C.cuzk_job) C.cuzk_status {
		return C.cuzk_prove_winning_post_start(ep, pt, rp, C.size_t(len(randomness)),
			(*C.uint8_t)(unsafe.Pointer(&id[0])), vs, C.size_t(len(vanillas)), co, jp)
	})
	runtime.KeepAlive(randomness)
	return j, err
}

// GenerateWindowPoStWithVanilla proves a whole WindowPoSt from its sectors' vanilla proofs
// (one bincode FallbackPoStSectorProof per sector, in ascending sector number order), as
// filecoin-ffi's GenerateWindowPoStWithVanilla does: every partition's 192 bytes,
// concatenated in partition order.
func (e *Engine) GenerateWindowPoStWithVanilla(ctx context.Context, proofType RegisteredPoStProof, minerID uint64, randomness []byte, vanillas [][]byte, opts ...Option) ([]byte, error) {
	return finishBytes(ctx)(e.GenerateWindowPoStWithVanillaStart(ctx, proofType, minerID, randomness, vanillas, opts...))
}

// GenerateWindowPoStWithVanillaStart is the start of GenerateWindowPoStWithVanilla; collect
// the proofs with FinishBytes.
func (e *Engine) GenerateWindowPoStWithVanillaStart(ctx context.Context, proofType RegisteredPoStProof, minerID uint64, randomness []byte, vanillas [][]byte, opts ...Option) (*Job, error) {
	return e.windowPoStStart(ctx, proofType, minerID, randomness, vanillas, C.CUZK_WHOLE_WINDOW, opts)
}

// GenerateSinglePartitionWindowPoStWithVanilla proves partition partitionIndex of a
// WindowPoSt from that partition's sectors' vanilla proofs, as filecoin-ffi's
// GenerateSinglePartitionWindowPoStWithVanilla does: 192 bytes (filecoin-ffi wraps them in
// a PartitionProof), the same as that partition's bytes in the whole window's proof.
func (e *Engine) GenerateSinglePartitionWindowPoStWithVanilla(ctx context.Context, proofType RegisteredPoStProof, minerID uint64, randomness []byte, vanillas [][]byte, partitionIndex uint, opts ...Option) ([]byte, error) {
	return finishBytes(ctx)(e.GenerateSinglePartitionWindowPoStWithVanillaStart(ctx, proofType, minerID, randomness, vanillas, partitionIndex, opts...))
}

// GenerateSinglePartitionWindowPoStWithVanillaStart is the start of
// GenerateSinglePartitionWindowPoStWithVanilla; collect the proof with FinishBytes.
func (e *Engine) GenerateSinglePartitionWindowPoStWithVanillaStart(ctx context.Context, proofType RegisteredPoStProof, minerID uint64, randomness []byte, vanillas [][]byte, partitionIndex uint, opts ...Option) (*Job, error) {
	if uint64(partitionIndex) == math.MaxUint64 {
		// CUZK_WHOLE_WINDOW: the C ABI would prove every partition instead.
		return nil, argError("partitionIndex %d is too large", partitionIndex)
	}
	return e.windowPoStStart(ctx, proofType, minerID, randomness, vanillas, C.uint64_t(partitionIndex), opts)
}

func (e *Engine) windowPoStStart(ctx context.Context, proofType RegisteredPoStProof, minerID uint64, randomness []byte, vanillas [][]byte, partition C.uint64_t, opts []Option) (*Job, error) {
	pt, err := registered(int64(proofType), "RegisteredPoStProof")
	if err != nil {
		return nil, err
	}
	rp, id := bytesPtr(randomness), ProverID(minerID)
	j, err := e.startFilecoin(ctx, opts, vanillas, func(ep *C.cuzk_engine, vs *C.cuzk_bytes, co *C.cuzk_prove_options, jp **C.cuzk_job) C.cuzk_status {
		return C.cuzk_prove_window_post_start(ep, pt, rp, C.size_t(len(randomness)),
			(*C.uint8_t)(unsafe.Pointer(&id[0])), vs, C.size_t(len(vanillas)), partition, co, jp)
	})
	runtime.KeepAlive(randomness)
	return j, err
}

// GenerateUpdateProofWithVanilla proves a SnapDeals update from its partitions' vanilla
// proofs (bincode PartitionProofs, as filecoin-ffi's GenerateUpdateVanillaProofs gives
// them) and the three commitments, each the 32-byte digest of its CID (what
// commcid.CIDToReplicaCommitmentV1 / CIDToDataCommitmentV1 return), as filecoin-ffi's
// GenerateUpdateProofWithVanilla does: every partition's 192 bytes, concatenated.
func (e *Engine) GenerateUpdateProofWithVanilla(ctx context.Context, proofType RegisteredUpdateProof, commROld, commRNew, commDNew []byte, vanillas [][]byte, opts ...Option) ([]byte, error) {
	return finishBytes(ctx)(e.GenerateUpdateProofWithVanillaStart(ctx, proofType, commROld, commRNew, commDNew, vanillas, opts...))
}

// GenerateUpdateProofWithVanillaStart is the start of GenerateUpdateProofWithVanilla;
// collect the proofs with FinishBytes. A commitment that is not 32 bytes fails with
// ErrInvalidArgument, one that is not a field element with ErrInvalidInput.
func (e *Engine) GenerateUpdateProofWithVanillaStart(ctx context.Context, proofType RegisteredUpdateProof, commROld, commRNew, commDNew []byte, vanillas [][]byte, opts ...Option) (*Job, error) {
	pt, err := registered(int64(proofType), "RegisteredUpdateProof")
	if err != nil {
		return nil, err
	}
	// The ABI reads 32 bytes from each: a shorter slice would be read past its end.
	for _, c := range []struct {
		b    []byte
		name string
	}{{commROld, "commROld"}, {commRNew, "commRNew"}, {commDNew, "commDNew"}} {
		if len(c.b) != 32 {
			return nil, argError("%s holds %d bytes, not 32", c.name, len(c.b))
		}
	}
	ro, rn, dn := bytesPtr(commROld), bytesPtr(commRNew), bytesPtr(commDNew)
	j, err := e.startFilecoin(ctx, opts, vanillas, func(ep *C.cuzk_engine, vs *C.cuzk_bytes, co *C.cuzk_prove_options, jp **C.cuzk_job) C.cuzk_status {
		return C.cuzk_prove_snap_start(ep, pt, vs, C.size_t(len(vanillas)), ro, rn, dn, co, jp)
	})
	runtime.KeepAlive(commROld)
	runtime.KeepAlive(commRNew)
	runtime.KeepAlive(commDNew)
	return j, err
}

// registered is a registered proof number for the ABI, which takes it unsigned.
func registered(n int64, what string) (C.uint64_t, error) {
	if n < 0 {
		return 0, argError("%s %d is negative", what, n)
	}
	return C.uint64_t(n), nil
}

// startFilecoin runs one Filecoin start call: the options laid out as ProveStart lays
// them out, the vanilla proofs as an array of cuzk_bytes. That array is Go memory whose
// data pointers point into the caller's slices, each pinned for the call (cgo lets C read
// Go memory holding Go pointers only when those are pinned); the library copies every
// vanilla proof before it returns, so nothing is copied here.
func (e *Engine) startFilecoin(ctx context.Context, opts []Option, vanillas [][]byte,
	start func(ep *C.cuzk_engine, vs *C.cuzk_bytes, co *C.cuzk_prove_options, jp **C.cuzk_job) C.cuzk_status) (*Job, error) {
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
	var vs *C.cuzk_bytes
	if len(vanillas) > 0 {
		cv := make([]C.cuzk_bytes, len(vanillas))
		for i, v := range vanillas {
			cv[i] = C.cuzk_bytes{data: pin.bytes(v), len: C.size_t(len(v))}
		}
		vs = &cv[0]
		defer runtime.KeepAlive(cv)
	}
	ep, done, err := e.ptr()
	if err != nil {
		return nil, err
	}
	defer done()
	var jp *C.cuzk_job
	err = call(func() C.cuzk_status { return start(ep, vs, &co, &jp) })
	runtime.KeepAlive(e)
	runtime.KeepAlive(vanillas)
	if err != nil {
		return nil, startError(ctx, deadlineCut, err)
	}
	var n C.size_t
	if err := call(func() C.cuzk_status { return C.cuzk_job_partitions(jp, &n) }); err != nil {
		C.cuzk_job_free(jp)
		return nil, err
	}
	return newJob(jp, int(n)), nil
}

// finishBytes turns a Start call's result into its proof bytes, closing the job: the
// synchronous form of each Filecoin call.
func finishBytes(ctx context.Context) func(*Job, error) ([]byte, error) {
	return func(j *Job, err error) ([]byte, error) {
		if err != nil {
			return nil, err
		}
		defer j.Close()
		return j.FinishBytes(ctx)
	}
}

// FinishBytes waits for the job to end and returns its proof bytes as filecoin-ffi lays
// them out: each partition's 192-byte proof, in partition order (cuzk_job_proof_bytes
// says how many). The context and the errors are as Finish's; a Filecoin job that failed
// returns its failure (ErrVerificationFailed: a proof did not verify, so none is
// returned). It works for ProveStart's jobs too: their proofs concatenated.
func (j *Job) FinishBytes(ctx context.Context) ([]byte, error) {
	p, done, err := j.ptr()
	if err != nil {
		return nil, err
	}
	var n C.size_t
	err = call(func() C.cuzk_status { return C.cuzk_job_proof_bytes(p, &n) })
	runtime.KeepAlive(j)
	done()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, int(n))
	if err := j.finish(ctx, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// JobTimings says where one job's time went (cuzk_job_timings), summed over its
// partitions: with several partitions in flight at once a stage can exceed Total.
type JobTimings struct {
	// QueueWait is the time spent waiting in the engine's queues (for synthesis and its
	// memory, then for a device).
	QueueWait time.Duration
	// ParamsLoad is the time spent loading the params, when this job loaded them (0 when
	// the engine had them already).
	ParamsLoad time.Duration
	// Synthesis is the time spent synthesizing the circuits (0 for ProveStart's jobs,
	// whose partitions come synthesized).
	Synthesis time.Duration
	// Device is the time on a device, its mutex held.
	Device time.Duration
	// Finalize is the time on the finalizers: assembly and verification.
	Finalize time.Duration
	// Total is the time from submission to the job's end (so far, while it runs).
	Total time.Duration
}

// Timings says where the job's time went so far; final once the job has ended.
func (j *Job) Timings() (JobTimings, error) {
	p, done, err := j.ptr()
	if err != nil {
		return JobTimings{}, err
	}
	defer done()
	// A Go struct without Go pointers, written by the library during the call only.
	var ct C.cuzk_job_timings
	ct.size = C.sizeof_cuzk_job_timings
	err = call(func() C.cuzk_status { return C.cuzk_job_get_timings(p, &ct) })
	runtime.KeepAlive(j)
	if err != nil {
		return JobTimings{}, err
	}
	return JobTimings{
		QueueWait:  ns(ct.queue_wait_ns),
		ParamsLoad: ns(ct.params_load_ns),
		Synthesis:  ns(ct.synthesis_ns),
		Device:     ns(ct.device_ns),
		Finalize:   ns(ct.finalize_ns),
		Total:      ns(ct.total_ns),
	}, nil
}
