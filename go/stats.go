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

// Stats, DeviceStats, KindStats, StartStages and statsFromC are generated from the
// figures table into stats_gen.go, which also checks sizeof(cuzk_stats).

// The job timings copy cuzk_job_timings field by field: 1 size_t and 6 durations. These two
// lines stop the build when the C struct changes size.
const jobTimingsBytes = 8 + 6*8

var (
	_ [C.sizeof_cuzk_job_timings - jobTimingsBytes]byte
	_ [jobTimingsBytes - C.sizeof_cuzk_job_timings]byte
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

// gpuOrdinal is a device's GPU ordinal, -1 for a CPU device.
func gpuOrdinal(v C.uint32_t) int {
	if v == C.CUZK_NO_GPU_ORDINAL {
		return -1
	}
	return int(v)
}
