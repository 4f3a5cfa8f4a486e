package cuzk

// #include "cuzk.h"
import "C"

import (
	"fmt"
	"time"
)

// PriorityClasses is the number of priority classes Stats.QueueDepth reports.
const PriorityClasses = C.CUZK_PRIORITY_CLASSES

// MaxDevices is the most devices Stats reports individually.
const MaxDevices = C.CUZK_MAX_DEVICES

// JobKinds is the number of proof kinds Stats.Kinds reports.
const JobKinds = C.CUZK_JOB_KINDS

// The Go struct below copies cuzk_stats field by field. These two lines stop the build
// when the C struct changes size (a field added to the header), so that the binding
// cannot silently miss a new figure: 1 size_t, 19 counters, 7 latencies of 5 figures,
// the device count and 16 devices of 5 figures, all 8 bytes; then 11 latencies (the
// start-phase stages and B_g2) and 16 device backends of two 4-byte figures; then 2
// latencies (synthesis, params load), 5 synthesis-stage figures and 5 kinds of 5 counts.
const statsBytes = 8 + 19*8 + 7*5*8 + 8 + MaxDevices*5*8 + 11*5*8 + MaxDevices*2*4 +
	2*5*8 + 5*8 + JobKinds*5*8

// The same for the job timings: 1 size_t and 6 durations.
const jobTimingsBytes = 8 + 6*8

var (
	_ [C.sizeof_cuzk_job_timings - jobTimingsBytes]byte
	_ [jobTimingsBytes - C.sizeof_cuzk_job_timings]byte
)

var (
	_ [C.sizeof_cuzk_stats - statsBytes]byte
	_ [statsBytes - C.sizeof_cuzk_stats]byte
)

// Backend is what a device is (cuzk_backend).
type Backend uint32

// The backends a device can have.
const (
	BackendCPU  Backend = C.CUZK_BACKEND_CPU
	BackendCUDA Backend = C.CUZK_BACKEND_CUDA
)

func (b Backend) String() string {
	switch b {
	case BackendCPU:
		return "cpu"
	case BackendCUDA:
		return "cuda"
	}
	return fmt.Sprintf("Backend(%d)", uint32(b))
}

// Latency summarizes a latency distribution. Quantiles are at most 1/8 above the true
// value.
type Latency struct {
	Count uint64
	Sum   time.Duration
	P50   time.Duration
	P99   time.Duration
	Max   time.Duration
}

// DeviceStats are one device's figures.
type DeviceStats struct {
	// Busy is the time the device mutex was held (the device computing) since the engine
	// started; Life is the time since the engine started.
	Busy, Life time.Duration
	// WindowBusy is the time held within the recent window of length Window (the last
	// 10 whole seconds and the current one so far).
	WindowBusy, Window time.Duration
	// Partitions is the number of start phases run on the device.
	Partitions uint64
	// Backend says whether the device is the CPU or a CUDA GPU; GPUOrdinal is the GPU's
	// CUDA driver ordinal, -1 for a CPU device.
	Backend    Backend
	GPUOrdinal int
}

// StartStages times the stages of the start phase (the device's share of a proof), one
// observation per start phase. Stages overlap: the transfers are also inside the NTT and
// MSM stages. Transfers and gathers are zero on a CPU device.
type StartStages struct {
	NTT          Latency // the H step: the NTTs (on a GPU with its transfers)
	NTTUpload    Latency // of NTT: a, b and c to the GPU
	NTTDownload  Latency // of NTT: H back from the GPU
	MSMH         Latency // the H MSM, its transfers included
	MSML         Latency // the L MSM
	MSMA         Latency // the A MSM (its gather not included)
	MSMBG1       Latency // the B_g1 MSM (its gather not included)
	Gather       Latency // gathers of the density-selected A and B scalars (host or GPU)
	HostToDevice Latency // every host → GPU copy of the start phase, summed
	DeviceToHost Latency // every GPU → host copy of the start phase, summed
}

// JobKind is a proof kind, the index of its figures in Stats.Kinds.
type JobKind int

// The proof kinds, in cuzk_stats.kinds order. KindOther is ProveStart's jobs.
const (
	KindPoRep JobKind = iota
	KindSnapDeals
	KindWindowPoSt
	KindWinningPoSt
	KindOther
)

// A kind added to the header needs a name here.
var (
	_ [JobKinds - 1 - KindOther]byte
	_ [KindOther + 1 - JobKinds]byte
)

// String is the kind's label in the Prometheus text (cuzk_kind_*_total{kind="…"}):
// "porep", "snap_deals", "window_post", "winning_post" or "other".
func (k JobKind) String() string {
	switch k {
	case KindPoRep:
		return "porep"
	case KindSnapDeals:
		return "snap_deals"
	case KindWindowPoSt:
		return "window_post"
	case KindWinningPoSt:
		return "winning_post"
	case KindOther:
		return "other"
	}
	return fmt.Sprintf("JobKind(%d)", int(k))
}

// KindStats are one proof kind's counts.
type KindStats struct {
	JobsAdmitted       uint64
	JobsFinished       uint64 // produced all their proofs
	JobsFailed         uint64 // cancelled ones not included
	PartitionsAdmitted uint64
	PartitionsProved   uint64
}

// Stats is every figure of cuzk_stats (include/cuzk.h documents each).
type Stats struct {
	Uptime time.Duration

	JobsAdmitted  uint64 // accepted by ProveStart
	JobsRejected  uint64 // refused by ProveStart (validation, budget, admission timeout)
	JobsFinished  uint64 // produced all their proofs
	JobsFailed    uint64 // a partition failed, or the engine shut down
	JobsCancelled uint64

	PartitionsAdmitted uint64
	PartitionsProved   uint64
	PartitionsFailed   uint64
	PartitionsDropped  uint64 // unproved: their job was cancelled, failed or shut down

	// QueueDepth is the partitions queued now, by class: WinningPoSt, WindowPoSt,
	// PoRep/SnapDeals, other.
	QueueDepth [PriorityClasses]uint64

	MemoryBudgetBytes   uint64
	MemoryReservedBytes uint64
	MemoryPeakBytes     uint64
	BytesFreedReported  uint64 // reported freed to the trimmer
	Trims               uint64 // malloc_trim(0) calls

	AdmissionWait Latency // wait for the memory budget in ProveStart
	QueueWait     Latency // time a partition sat queued
	MutexWait     Latency // wait for a device mutex
	MutexHold     Latency // device mutex held: the start phase
	Gap           Latency // device idle between two start phases while work waited
	Finalize      Latency // a finalizer's time per partition
	Trim          Latency // malloc_trim(0) durations
	Stages        StartStages
	FinalizeBG2   Latency // a finalizer's B_g2 MSM (part of Finalize)

	// Devices holds one entry per device in use.
	Devices []DeviceStats

	// The synthesis stage, which synthesizes the Filecoin calls' circuits.
	Synthesis           Latency       // a synthesis thread's time per partition
	ParamsLoad          Latency       // loading one params file (once per file)
	SynthesisBusy       time.Duration // summed over the threads; / (SynthesisThreads × Uptime) is the pool's busy fraction
	SynthesisThreads    uint64        // threads in the pool
	SynthesisActive     uint64        // threads synthesizing now
	SynthesisQueueDepth uint64        // partitions waiting for a synthesis thread now
	ReadyWaiting        uint64        // synthesized partitions waiting for a device now

	// Kinds holds each proof kind's counts, indexed by JobKind.
	Kinds [JobKinds]KindStats
}

func ns(v C.uint64_t) time.Duration { return time.Duration(v) }

func latencyFromC(l *C.cuzk_latency) Latency {
	return Latency{
		Count: uint64(l.count),
		Sum:   ns(l.sum_ns),
		P50:   ns(l.p50_ns),
		P99:   ns(l.p99_ns),
		Max:   ns(l.max_ns),
	}
}

func statsFromC(c *C.cuzk_stats) Stats {
	s := Stats{
		Uptime:              ns(c.uptime_ns),
		JobsAdmitted:        uint64(c.jobs_admitted),
		JobsRejected:        uint64(c.jobs_rejected),
		JobsFinished:        uint64(c.jobs_finished),
		JobsFailed:          uint64(c.jobs_failed),
		JobsCancelled:       uint64(c.jobs_cancelled),
		PartitionsAdmitted:  uint64(c.partitions_admitted),
		PartitionsProved:    uint64(c.partitions_proved),
		PartitionsFailed:    uint64(c.partitions_failed),
		PartitionsDropped:   uint64(c.partitions_dropped),
		MemoryBudgetBytes:   uint64(c.memory_budget_bytes),
		MemoryReservedBytes: uint64(c.memory_reserved_bytes),
		MemoryPeakBytes:     uint64(c.memory_peak_bytes),
		BytesFreedReported:  uint64(c.bytes_freed_reported),
		Trims:               uint64(c.trims),
		AdmissionWait:       latencyFromC(&c.admission_wait),
		QueueWait:           latencyFromC(&c.queue_wait),
		MutexWait:           latencyFromC(&c.mutex_wait),
		MutexHold:           latencyFromC(&c.mutex_hold),
		Gap:                 latencyFromC(&c.gap),
		Finalize:            latencyFromC(&c.finalize),
		Trim:                latencyFromC(&c.trim),
		Stages: StartStages{
			NTT:          latencyFromC(&c.start_ntt),
			NTTUpload:    latencyFromC(&c.start_ntt_upload),
			NTTDownload:  latencyFromC(&c.start_ntt_download),
			MSMH:         latencyFromC(&c.start_msm_h),
			MSML:         latencyFromC(&c.start_msm_l),
			MSMA:         latencyFromC(&c.start_msm_a),
			MSMBG1:       latencyFromC(&c.start_msm_b_g1),
			Gather:       latencyFromC(&c.start_gather),
			HostToDevice: latencyFromC(&c.start_host_to_device),
			DeviceToHost: latencyFromC(&c.start_device_to_host),
		},
		FinalizeBG2:         latencyFromC(&c.finalize_b_g2),
		Synthesis:           latencyFromC(&c.synthesis),
		ParamsLoad:          latencyFromC(&c.params_load),
		SynthesisBusy:       ns(c.synthesis_busy_ns),
		SynthesisThreads:    uint64(c.synthesis_threads),
		SynthesisActive:     uint64(c.synthesis_active),
		SynthesisQueueDepth: uint64(c.synthesis_queue_depth),
		ReadyWaiting:        uint64(c.ready_waiting),
	}
	for i := range s.Kinds {
		k := &c.kinds[i]
		s.Kinds[i] = KindStats{
			JobsAdmitted:       uint64(k.jobs_admitted),
			JobsFinished:       uint64(k.jobs_finished),
			JobsFailed:         uint64(k.jobs_failed),
			PartitionsAdmitted: uint64(k.partitions_admitted),
			PartitionsProved:   uint64(k.partitions_proved),
		}
	}
	for i := range s.QueueDepth {
		s.QueueDepth[i] = uint64(c.queue_depth[i])
	}
	n := int(c.device_count)
	if n > MaxDevices {
		n = MaxDevices
	}
	s.Devices = make([]DeviceStats, n)
	for i := range s.Devices {
		d, b := &c.devices[i], &c.device_backends[i]
		ordinal := -1
		if b.gpu_ordinal != C.CUZK_NO_GPU_ORDINAL {
			ordinal = int(b.gpu_ordinal)
		}
		s.Devices[i] = DeviceStats{
			Busy:       ns(d.busy_ns),
			Life:       ns(d.life_ns),
			WindowBusy: ns(d.window_busy_ns),
			Window:     ns(d.window_ns),
			Partitions: uint64(d.partitions),
			Backend:    Backend(b.backend),
			GPUOrdinal: ordinal,
		}
	}
	return s
}
