package cuzk

// #include <stdlib.h>
// #include "cuzk.h"
import "C"

import (
	"math"
	"runtime"
	"time"
	"unsafe"
)

// Config says how to build an engine. The zero Config is the default engine: every CUDA
// GPU (one CPU device where there is none), two workers per device, two finalizers, a
// synthesis thread per core, a share of the machine's memory as the budget, ten minutes
// of admission wait.
type Config struct {
	// CPUDevices, when above 0, proves on the CPU with that many logical devices (they
	// share the machine's cores; more than one only spreads the scheduling). 0: every
	// CUDA GPU, or one CPU device where there is none.
	CPUDevices int
	// WorkersPerDevice (0: 2, so one stages its next partition while the other computes).
	WorkersPerDevice int
	// Finalizers is the number of threads for B_g2 MSMs and proof assembly (0: 2).
	Finalizers int
	// MemoryBudgetBytes is the host memory the engine may reserve for jobs (0: a share of
	// the machine's memory).
	MemoryBudgetBytes uint64
	// AdmissionTimeout is how long ProveStart waits for the memory budget by default
	// (0: ten minutes; WaitForever: no limit). Rounded up to whole milliseconds.
	AdmissionTimeout time.Duration
	// AdmissionFailFast makes ProveStart fail at once with ErrResourceExhausted when the
	// budget cannot take a job yet, instead of waiting.
	AdmissionFailFast bool
	// TrimInterval is the shortest time between two malloc_trim(0) calls (0: 10 s).
	TrimInterval time.Duration
	// TrimMinFreedBytes is how many bytes freed since the last trim make a trim worth its
	// cost (0: 1 GiB).
	TrimMinFreedBytes uint64
	// TrimDisabled turns malloc_trim(0) off.
	TrimDisabled bool
	// TrimArenaTops fixes glibc's trim and mmap thresholds when the engine starts, so that
	// the free tops of the per-thread arenas are given back too and the process's resident
	// memory returns to about where it was once the engine's jobs are done (malloc_trim(0)
	// shrinks only the main heap's top). Process-wide and permanent: it also applies to
	// the Go runtime's cgo allocations.
	TrimArenaTops bool
	// SynthesisThreads is the number of threads of the synthesis stage, which synthesizes
	// the Filecoin calls' circuits (0: one per core).
	SynthesisThreads int
	// MaxReady is the most synthesized PoRep/SnapDeals partitions waiting for a device at
	// once (0: one per device worker); each holds a whole synthesized circuit in host
	// memory.
	MaxReady int
	// FaultMaxAttempts is how many start phases a partition gets in all, its first
	// included, when devices fail it (a GPU error, a backend panic, a proof that fails its
	// verification); then its job fails naming every attempt (0: 3; 1: no retries).
	FaultMaxAttempts int
	// FaultOutOfRotationAfter is how many device faults in a row take a device out of
	// rotation for FaultProbeDelay (0: 3).
	FaultOutOfRotationAfter int
	// FaultNeverOutOfRotation keeps every device in rotation however many faults it has in
	// a row (its partitions are still retried elsewhere); FaultOutOfRotationAfter must
	// then be 0.
	FaultNeverOutOfRotation bool
	// FaultProbeDelay is how long a device out of rotation rests before its next start
	// phase probes it (0: 30 s; WaitForever: it is never probed). Rounded up to whole
	// milliseconds.
	FaultProbeDelay time.Duration
	// FaultStartDeadline is how long a start phase may run before its device counts as
	// hung (0 or WaitForever: no deadline). A hung device's partition is retried on another
	// device, and the device takes no work until its stuck call returns (it cannot be
	// interrupted); that result is discarded and the device is probed after
	// FaultProbeDelay. Rounded up to whole milliseconds.
	FaultStartDeadline time.Duration
	// CPUFallback proves on the host's CPU, instead of failing or waiting, a partition
	// whose device attempts are used up (or whose devices are all hung), and every
	// partition while no device is in rotation. Slow for large circuits (minutes per 32 GiB
	// PoRep partition, every core busy).
	CPUFallback bool
	// DeferEvaluations says whether partitions whose circuit has a recorded R1CS reach the
	// devices as a witness only, the device computing a, b and c from the recording
	// (DeferAuto: when any device is a GPU).
	DeferEvaluations DeferMode
	// RecordingsDir is an existing folder where recorded R1CS matrices are saved and
	// loaded between engines ("": in memory only). One that cannot be written fails no
	// proof: each engine records again.
	RecordingsDir string
}

// DeferMode is Config.DeferEvaluations.
type DeferMode int

const (
	// DeferAuto defers the evaluations when any device is a GPU.
	DeferAuto DeferMode = iota
	// DeferOn hands the devices a witness only wherever a recording exists.
	DeferOn
	// DeferOff computes a, b and c on the host during synthesis, for every partition.
	DeferOff
)

// WaitForever, as a timeout, waits as long as it takes.
const WaitForever time.Duration = math.MaxInt64

// millis converts a timeout for the C ABI, where 0 means "the default" and UINT64_MAX
// "no limit": a positive duration rounds up so that it never becomes 0.
func millis(d time.Duration) C.uint64_t {
	if d == WaitForever {
		return C.CUZK_WAIT_FOREVER
	}
	return C.uint64_t((d + time.Millisecond - 1) / time.Millisecond)
}

func count(n int, what string) (C.uint32_t, error) {
	if n < 0 || n > math.MaxUint32 {
		return 0, argError("Config.%s is %d", what, n)
	}
	return C.uint32_t(n), nil
}

// toC is the C config, and the function that frees its C memory (the recordings
// folder's path) once the call that reads it has returned.
func (c *Config) toC() (C.cuzk_config, func(), error) {
	cc := C.cuzk_config{size: C.sizeof_cuzk_config}
	none := func() {}
	fields := []struct {
		n    int
		name string
		to   *C.uint32_t
	}{
		{c.CPUDevices, "CPUDevices", &cc.cpu_devices},
		{c.WorkersPerDevice, "WorkersPerDevice", &cc.workers_per_device},
		{c.Finalizers, "Finalizers", &cc.finalizers},
		{c.SynthesisThreads, "SynthesisThreads", &cc.synthesis_threads},
		{c.MaxReady, "MaxReady", &cc.max_ready},
		{c.FaultMaxAttempts, "FaultMaxAttempts", &cc.fault_max_attempts},
		{c.FaultOutOfRotationAfter, "FaultOutOfRotationAfter", &cc.fault_out_of_rotation_after},
	}
	for _, f := range fields {
		n, err := count(f.n, f.name)
		if err != nil {
			return cc, none, err
		}
		*f.to = n
	}
	durations := []struct {
		d    time.Duration
		name string
		to   *C.uint64_t
	}{
		{c.AdmissionTimeout, "AdmissionTimeout", &cc.admission_timeout_ms},
		{c.TrimInterval, "TrimInterval", &cc.trim_interval_ms},
		{c.FaultProbeDelay, "FaultProbeDelay", &cc.fault_probe_delay_ms},
		{c.FaultStartDeadline, "FaultStartDeadline", &cc.fault_start_deadline_ms},
	}
	for _, d := range durations {
		if d.d < 0 {
			return cc, none, argError("Config.%s is negative (%v)", d.name, d.d)
		}
		*d.to = millis(d.d)
	}
	if c.AdmissionFailFast {
		cc.flags |= C.CUZK_CONFIG_ADMISSION_FAIL_FAST
	}
	if c.TrimDisabled {
		cc.flags |= C.CUZK_CONFIG_TRIM_DISABLED
	}
	if c.TrimArenaTops {
		cc.flags |= C.CUZK_CONFIG_TRIM_ARENA_TOPS
	}
	if c.FaultNeverOutOfRotation {
		cc.flags |= C.CUZK_CONFIG_NEVER_OUT_OF_ROTATION
	}
	if c.CPUFallback {
		cc.flags |= C.CUZK_CONFIG_CPU_FALLBACK
	}
	switch c.DeferEvaluations {
	case DeferAuto:
	case DeferOn:
		cc.flags |= C.CUZK_CONFIG_DEFER_EVALUATIONS_ON
	case DeferOff:
		cc.flags |= C.CUZK_CONFIG_DEFER_EVALUATIONS_OFF
	default:
		return cc, none, argError("Config.DeferEvaluations is %d, not a DeferMode", c.DeferEvaluations)
	}
	cc.memory_budget_bytes = C.uint64_t(c.MemoryBudgetBytes)
	cc.trim_min_freed_bytes = C.uint64_t(c.TrimMinFreedBytes)
	// Last, so that no error above leaves it allocated.
	if c.RecordingsDir != "" {
		dir, err := cString(c.RecordingsDir, "Config.RecordingsDir")
		if err != nil {
			return cc, none, err
		}
		cc.recordings_dir = dir
		return cc, func() { C.free(unsafe.Pointer(dir)) }, nil
	}
	return cc, none, nil
}

// Engine is a proving engine: its device workers, finalizers, trimmer and memory budget.
// One engine per process is the intended use; it is safe for concurrent use.
type Engine struct {
	h handle[*C.cuzk_engine]
}

// NewEngine starts an engine and its threads.
func NewEngine(cfg Config) (*Engine, error) {
	cc, free, err := cfg.toC()
	defer free()
	if err != nil {
		return nil, err
	}
	var p *C.cuzk_engine
	if err := call(func() C.cuzk_status { return C.cuzk_engine_new(&cc, &p) }); err != nil {
		return nil, err
	}
	e := &Engine{h: handle[*C.cuzk_engine]{p: p, kind: "Engine"}}
	// The safety net for an engine nobody closed; Close is the way.
	runtime.SetFinalizer(e, (*Engine).Close)
	return e, nil
}

// ptr is the live C handle, guarded against Close until done is called.
func (e *Engine) ptr() (p *C.cuzk_engine, done func(), err error) {
	if e == nil {
		return nil, nil, argError("Engine is nil")
	}
	if p, err = e.h.acquire(); err != nil {
		return nil, nil, err
	}
	return p, e.h.release, nil
}

// Close shuts the engine down: jobs still queued end with ErrShuttingDown, partitions on
// a device or finalizer complete first, so Close blocks until they have. It also waits
// for calls in flight on the engine (a ProveStart waiting for admission). Jobs and SRS
// handles stay valid and must still be closed. Calling Close again does nothing.
func (e *Engine) Close() {
	if e == nil {
		return
	}
	runtime.SetFinalizer(e, nil)
	e.h.close(func(p *C.cuzk_engine) { C.cuzk_engine_free(p) })
}

// Stats snapshots every figure of the engine's statistics. It takes no lock in the
// library, so a monitoring loop may call it as often as it likes.
func (e *Engine) Stats() (Stats, error) {
	p, done, err := e.ptr()
	if err != nil {
		return Stats{}, err
	}
	defer done()
	// C memory would work too; a Go struct without Go pointers may be passed as is.
	var cs C.cuzk_stats
	cs.size = C.sizeof_cuzk_stats
	err = call(func() C.cuzk_status { return C.cuzk_get_stats(p, &cs) })
	runtime.KeepAlive(e)
	if err != nil {
		return Stats{}, err
	}
	return statsFromC(&cs), nil
}

// Prometheus renders the engine's statistics in the Prometheus text exposition format
// (0.0.4), ready to serve on a /metrics endpoint.
func (e *Engine) Prometheus() (string, error) {
	p, done, err := e.ptr()
	if err != nil {
		return "", err
	}
	defer done()
	defer runtime.KeepAlive(e)
	var needed C.size_t
	err = call(func() C.cuzk_status { return C.cuzk_stats_prometheus(p, nil, 0, &needed) })
	for {
		if err != nil && !isStatus(err, StatusBufferTooSmall) {
			return "", err
		}
		// The text grows between calls (uptime, counts): leave room, and retry if even
		// that was not enough.
		buf := make([]byte, int(needed)+256)
		err = call(func() C.cuzk_status {
			return C.cuzk_stats_prometheus(p, (*C.char)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &needed)
		})
		if err == nil {
			return string(buf[:needed-1]), nil // without the NUL
		}
	}
}

func isStatus(err error, s Status) bool {
	e, ok := err.(*Error)
	return ok && e.Status == s
}
