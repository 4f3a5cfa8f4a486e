package cuzk

// #include "cuzk.h"
import "C"

import "time"

// PriorityClasses is the number of priority classes Stats.QueueDepth reports.
const PriorityClasses = C.CUZK_PRIORITY_CLASSES

// MaxDevices is the most devices Stats reports individually.
const MaxDevices = C.CUZK_MAX_DEVICES

// The Go struct below copies cuzk_stats field by field. These two lines stop the build
// when the C struct changes size (a field added to the header), so that the binding
// cannot silently miss a new figure: 1 size_t, 19 counters, 7 latencies of 5 figures,
// the device count and 16 devices of 5 figures, all 8 bytes.
const statsBytes = 8 + 19*8 + 7*5*8 + 8 + MaxDevices*5*8

var (
	_ [C.sizeof_cuzk_stats - statsBytes]byte
	_ [statsBytes - C.sizeof_cuzk_stats]byte
)

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

	// Devices holds one entry per device in use.
	Devices []DeviceStats
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
		d := &c.devices[i]
		s.Devices[i] = DeviceStats{
			Busy:       ns(d.busy_ns),
			Life:       ns(d.life_ns),
			WindowBusy: ns(d.window_busy_ns),
			Window:     ns(d.window_ns),
			Partitions: uint64(d.partitions),
		}
	}
	return s
}
