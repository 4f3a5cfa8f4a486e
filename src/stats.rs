//! Counters, latency histograms and device busy meters for the engine, and their snapshot.
//!
//! Everything here is recorded with relaxed atomics and no lock, because it is recorded on the
//! hot path (a device worker between two partitions) where the engine promises to take no
//! lock a finalizer or the trimmer can hold. [`StatsSnapshot`] is plain data: flat `u64`
//! counts and nanoseconds, so that it maps one to one onto the `cuzk_get_stats()` C struct.
//! [`StatsSnapshot::prometheus`] renders it in the Prometheus text exposition format.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use crate::engine::{JobKind, JOB_KINDS};
use crate::groth16::{Backend, BackendKind, StartTimings};

/// The most devices a snapshot reports individually (the C struct has a fixed array).
pub const MAX_DEVICES: usize = 16;

/// Number of priority classes, the length of [`StatsSnapshot::queue_depth`].
pub const PRIORITY_CLASSES: usize = 4;

/// [`DeviceStatsSnapshot::gpu_ordinal`] of a device that is not a GPU.
pub const NO_GPU_ORDINAL: u32 = u32::MAX;

/// Sub-buckets per power of two: 8 bounds a quantile's relative error by 1/8.
const SUB_BITS: u32 = 3;
const SUB: usize = 1 << SUB_BITS;
/// Values below `SUB` get one bucket each; above, `SUB` buckets per power of two up to 2^64.
const BUCKETS: usize = SUB + (64 - SUB_BITS as usize) * SUB;

/// A latency histogram over nanoseconds: fixed log-spaced buckets (8 per power of two), so
/// recording is a handful of relaxed atomic adds and never allocates or locks.
pub struct Histogram {
    buckets: Box<[AtomicU64]>,
    count: AtomicU64,
    sum: AtomicU64,
    max: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
            count: AtomicU64::new(0),
            sum: AtomicU64::new(0),
            max: AtomicU64::new(0),
        }
    }
}

fn bucket_of(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let log = 63 - v.leading_zeros(); // ≥ SUB_BITS
    let sub = ((v >> (log - SUB_BITS)) as usize) & (SUB - 1);
    SUB + (log - SUB_BITS) as usize * SUB + sub
}

/// The largest value that falls in bucket `b`.
fn bucket_upper(b: usize) -> u64 {
    if b < SUB {
        return b as u64;
    }
    let log = (b - SUB) / SUB + SUB_BITS as usize;
    let sub = ((b - SUB) % SUB) as u64;
    let low = (1u64 << log) | (sub << (log - SUB_BITS as usize));
    low.saturating_add((1u64 << (log - SUB_BITS as usize)) - 1)
}

impl Histogram {
    /// Records one observation.
    pub fn record(&self, d: Duration) {
        self.record_ns(d.as_nanos().min(u64::MAX as u128) as u64);
    }

    /// Records one observation in nanoseconds.
    pub fn record_ns(&self, ns: u64) {
        self.buckets[bucket_of(ns)].fetch_add(1, Relaxed);
        self.count.fetch_add(1, Relaxed);
        self.sum.fetch_add(ns, Relaxed);
        self.max.fetch_max(ns, Relaxed);
    }

    /// Count, sum, p50, p99 and max. Quantiles are the upper bound of their bucket (at most
    /// 1/8 above the true value), clamped to the maximum seen.
    pub fn snapshot(&self) -> HistogramSnapshot {
        let counts: Vec<u64> = self.buckets.iter().map(|b| b.load(Relaxed)).collect();
        // The bucket total, not `count`, so that a quantile is consistent with the buckets
        // even while another thread is between its two adds.
        let total: u64 = counts.iter().sum();
        let max = self.max.load(Relaxed);
        let quantile = |q: f64| -> u64 {
            if total == 0 {
                return 0;
            }
            let rank = ((q * total as f64).ceil() as u64).clamp(1, total);
            let mut seen = 0;
            for (b, &c) in counts.iter().enumerate() {
                seen += c;
                if seen >= rank {
                    return bucket_upper(b).min(max);
                }
            }
            max
        };
        HistogramSnapshot {
            count: self.count.load(Relaxed),
            sum_ns: self.sum.load(Relaxed),
            p50_ns: quantile(0.50),
            p99_ns: quantile(0.99),
            max_ns: max,
        }
    }
}

/// A histogram's summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct HistogramSnapshot {
    /// Observations.
    pub count: u64,
    /// Their sum, in nanoseconds.
    pub sum_ns: u64,
    /// Median, in nanoseconds.
    pub p50_ns: u64,
    /// 99th percentile, in nanoseconds.
    pub p99_ns: u64,
    /// Largest, in nanoseconds.
    pub max_ns: u64,
}

/// Seconds of history the recent busy fraction covers.
pub const BUSY_WINDOW_SECS: u64 = 10;
// > BUSY_WINDOW_SECS + 1, so the window never reads a bucket being reused.
const RING: usize = 16;

struct SecondBucket {
    second: AtomicU64,
    busy_ns: AtomicU64,
}

/// How long one device has been busy (its device mutex held), over the engine's life and
/// over the last [`BUSY_WINDOW_SECS`] seconds.
///
/// Only the holder of the device mutex writes, so writes never race one another; readers
/// may see a hold half-recorded, which costs a snapshot a few microseconds of accuracy.
pub struct BusyMeter {
    epoch: Instant,
    busy_ns: AtomicU64,
    /// Start of the hold in progress, in ns since `epoch`, plus one; 0 when idle.
    held_since: AtomicU64,
    ring: [SecondBucket; RING],
    partitions: AtomicU64,
}

impl BusyMeter {
    /// A meter whose life starts at `epoch`.
    pub fn new(epoch: Instant) -> Self {
        BusyMeter {
            epoch,
            busy_ns: AtomicU64::new(0),
            held_since: AtomicU64::new(0),
            ring: std::array::from_fn(|_| SecondBucket {
                second: AtomicU64::new(u64::MAX),
                busy_ns: AtomicU64::new(0),
            }),
            partitions: AtomicU64::new(0),
        }
    }

    fn ns(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.epoch).as_nanos() as u64
    }

    /// The device became busy at `t`.
    pub fn begin(&self, t: Instant) {
        self.held_since.store(self.ns(t) + 1, Relaxed);
    }

    /// The device, busy since `start`, became idle at `end`, having run one partition.
    pub fn end(&self, start: Instant, end: Instant) {
        let (s, e) = (self.ns(start), self.ns(end).max(self.ns(start)));
        self.busy_ns.fetch_add(e - s, Relaxed);
        self.partitions.fetch_add(1, Relaxed);
        // Spread the hold over the seconds it spans; older than the ring is never read.
        let first = (s / 1_000_000_000).max((e / 1_000_000_000).saturating_sub(RING as u64 - 1));
        for sec in first..=e / 1_000_000_000 {
            let lo = s.max(sec * 1_000_000_000);
            let hi = e.min((sec + 1) * 1_000_000_000);
            let b = &self.ring[sec as usize % RING];
            if b.second.load(Relaxed) != sec {
                b.busy_ns.store(0, Relaxed);
                b.second.store(sec, Relaxed);
            }
            b.busy_ns.fetch_add(hi.saturating_sub(lo), Relaxed);
        }
        self.held_since.store(0, Relaxed);
    }

    /// Busy and elapsed nanoseconds over the life and over the recent window, as of `now`.
    fn snapshot(&self, now: Instant) -> DeviceStatsSnapshot {
        let now = self.ns(now);
        let held = match self.held_since.load(Relaxed) {
            0 => None,
            s => Some(s - 1),
        };
        let in_progress = |from: u64| held.map_or(0, |h| now.saturating_sub(h.max(from)));
        let sec_now = now / 1_000_000_000;
        // The last BUSY_WINDOW_SECS whole seconds and the current, partial one.
        let first_sec = sec_now.saturating_sub(BUSY_WINDOW_SECS);
        let window_start = first_sec * 1_000_000_000;
        let window_busy: u64 = self
            .ring
            .iter()
            .filter(|b| {
                let s = b.second.load(Relaxed);
                s >= first_sec && s <= sec_now
            })
            .map(|b| b.busy_ns.load(Relaxed))
            .sum();
        DeviceStatsSnapshot {
            busy_ns: self.busy_ns.load(Relaxed) + in_progress(0),
            life_ns: now,
            window_busy_ns: (window_busy + in_progress(window_start)).min(now - window_start),
            window_ns: now - window_start,
            partitions: self.partitions.load(Relaxed),
            ..DeviceStatsSnapshot::default()
        }
    }
}

/// One device's figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct DeviceStatsSnapshot {
    /// Nanoseconds the device mutex was held (the device computing) since the engine started.
    pub busy_ns: u64,
    /// Nanoseconds since the engine started.
    pub life_ns: u64,
    /// Nanoseconds held within the recent window.
    pub window_busy_ns: u64,
    /// The recent window's length in nanoseconds: the last [`BUSY_WINDOW_SECS`] whole seconds
    /// and the current one so far (less while the engine is younger).
    pub window_ns: u64,
    /// Start phases run on this device.
    pub partitions: u64,
    /// What the device is.
    pub backend: BackendKind,
    /// The GPU's driver ordinal; [`NO_GPU_ORDINAL`] for a CPU device.
    pub gpu_ordinal: u32,
}

impl DeviceStatsSnapshot {
    /// Busy fraction over the engine's life.
    pub fn busy_fraction(&self) -> f64 {
        ratio(self.busy_ns, self.life_ns)
    }

    /// Busy fraction over the recent window.
    pub fn window_busy_fraction(&self) -> f64 {
        ratio(self.window_busy_ns, self.window_ns)
    }
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

/// The engine's live statistics. Owned by the engine; every field is recorded lock-free.
pub struct Stats {
    pub(crate) epoch: Instant,
    /// Time a `prove_start` waited for the memory budget.
    pub admission_wait: Histogram,
    /// Time a partition sat in the queue.
    pub queue_wait: Histogram,
    /// Time a worker waited for its device mutex.
    pub mutex_wait: Histogram,
    /// Time the device mutex was held: the start phase (compute).
    pub mutex_hold: Histogram,
    /// Device idle time between two start phases while work was waiting.
    pub gap: Histogram,
    /// A finalizer's time per partition (B_g2 MSM and assembly).
    pub finalize: Histogram,
    /// Time in `malloc_trim(0)`.
    pub trim: Histogram,
    /// The stages of each successful start phase ([`StartTimings`]).
    pub stages: StageHistograms,
    /// A finalizer's B_g2 MSM (part of `finalize`).
    pub finalize_b_g2: Histogram,
    /// A synthesis thread's time per partition.
    pub synthesis: Histogram,
    /// Loading a params file (decode, checks), once per file the engine loads.
    pub params_load: Histogram,
    /// Nanoseconds the synthesis threads spent synthesizing, summed over the threads.
    pub synthesis_busy_ns: AtomicU64,
    /// Synthesis threads synthesizing now.
    pub synthesis_active: AtomicU64,
    /// Threads in the synthesis pool.
    pub synthesis_threads: AtomicU64,
    /// Jobs admitted, by [`JobKind`].
    pub jobs_by_kind: [AtomicU64; JOB_KINDS],
    /// Jobs that produced all their proofs, by kind.
    pub jobs_finished_by_kind: [AtomicU64; JOB_KINDS],
    /// Jobs that failed, by kind.
    pub jobs_failed_by_kind: [AtomicU64; JOB_KINDS],
    /// Partitions admitted, by kind.
    pub partitions_by_kind: [AtomicU64; JOB_KINDS],
    /// Partitions proved, by kind.
    pub partitions_proved_by_kind: [AtomicU64; JOB_KINDS],
    pub(crate) devices: Vec<BusyMeter>,
    backends: Vec<Backend>,
    /// Jobs `prove_start` accepted.
    pub jobs_admitted: AtomicU64,
    /// Jobs `prove_start` refused (validation, budget, admission timeout).
    pub jobs_rejected: AtomicU64,
    /// Admitted jobs that produced all their proofs.
    pub jobs_finished: AtomicU64,
    /// Admitted jobs that failed (a partition failed, or the engine shut down).
    pub jobs_failed: AtomicU64,
    /// Admitted jobs cancelled before they finished.
    pub jobs_cancelled: AtomicU64,
    /// Partitions queued by admitted jobs.
    pub partitions_admitted: AtomicU64,
    /// Partitions whose proof was computed.
    pub partitions_proved: AtomicU64,
    /// Partitions whose start or finish failed.
    pub partitions_failed: AtomicU64,
    /// Partitions dropped unproved because their job was cancelled, failed or shut down.
    pub partitions_dropped: AtomicU64,
    /// Bytes finalizers and workers reported freed to the trimmer.
    pub bytes_freed_reported: AtomicU64,
    pub(crate) memory_budget: AtomicU64,
    pub(crate) memory_reserved: AtomicU64,
    pub(crate) memory_peak: AtomicU64,
}

/// One histogram per start-phase stage, each recorded once per successful start phase
/// (zero where the backend has no such stage, e.g. transfers on the CPU).
#[derive(Default)]
pub struct StageHistograms {
    /// [`StartTimings::ntt`]: the H step.
    pub ntt: Histogram,
    /// [`StartTimings::ntt_upload`].
    pub ntt_upload: Histogram,
    /// [`StartTimings::ntt_download`].
    pub ntt_download: Histogram,
    /// [`StartTimings::msm_h`].
    pub msm_h: Histogram,
    /// [`StartTimings::msm_l`].
    pub msm_l: Histogram,
    /// [`StartTimings::msm_a`].
    pub msm_a: Histogram,
    /// [`StartTimings::msm_b_g1`].
    pub msm_b_g1: Histogram,
    /// [`StartTimings::gather`].
    pub gather: Histogram,
    /// [`StartTimings::host_to_device`].
    pub host_to_device: Histogram,
    /// [`StartTimings::device_to_host`].
    pub device_to_host: Histogram,
}

impl StageHistograms {
    /// Records one start phase's stages.
    pub fn record(&self, t: &StartTimings) {
        let StartTimings {
            ntt,
            ntt_upload,
            ntt_download,
            msm: _, // the MSM stages below, plus the gathers
            msm_h,
            msm_l,
            msm_a,
            msm_b_g1,
            gather,
            host_to_device,
            device_to_host,
            kernels: _, // a per-device sum, not a stage (`record_kernel_active`)
        } = *t;
        self.ntt.record(ntt);
        self.ntt_upload.record(ntt_upload);
        self.ntt_download.record(ntt_download);
        self.msm_h.record(msm_h);
        self.msm_l.record(msm_l);
        self.msm_a.record(msm_a);
        self.msm_b_g1.record(msm_b_g1);
        self.gather.record(gather);
        self.host_to_device.record(host_to_device);
        self.device_to_host.record(device_to_host);
    }
}

impl Stats {
    /// Statistics for an engine whose devices run on `devices`, in device order, starting
    /// now.
    pub fn new(devices: &[Backend]) -> Self {
        let epoch = Instant::now();
        Stats {
            epoch,
            admission_wait: Histogram::default(),
            queue_wait: Histogram::default(),
            mutex_wait: Histogram::default(),
            mutex_hold: Histogram::default(),
            gap: Histogram::default(),
            finalize: Histogram::default(),
            trim: Histogram::default(),
            stages: StageHistograms::default(),
            finalize_b_g2: Histogram::default(),
            synthesis: Histogram::default(),
            params_load: Histogram::default(),
            synthesis_busy_ns: AtomicU64::new(0),
            synthesis_active: AtomicU64::new(0),
            synthesis_threads: AtomicU64::new(0),
            jobs_by_kind: Default::default(),
            jobs_finished_by_kind: Default::default(),
            jobs_failed_by_kind: Default::default(),
            partitions_by_kind: Default::default(),
            partitions_proved_by_kind: Default::default(),
            devices: devices.iter().map(|_| BusyMeter::new(epoch)).collect(),
            backends: devices.to_vec(),
            jobs_admitted: AtomicU64::new(0),
            jobs_rejected: AtomicU64::new(0),
            jobs_finished: AtomicU64::new(0),
            jobs_failed: AtomicU64::new(0),
            jobs_cancelled: AtomicU64::new(0),
            partitions_admitted: AtomicU64::new(0),
            partitions_proved: AtomicU64::new(0),
            partitions_failed: AtomicU64::new(0),
            partitions_dropped: AtomicU64::new(0),
            bytes_freed_reported: AtomicU64::new(0),
            memory_budget: AtomicU64::new(0),
            memory_reserved: AtomicU64::new(0),
            memory_peak: AtomicU64::new(0),
        }
    }

    /// Device `i`'s busy meter.
    pub fn device(&self, i: usize) -> &BusyMeter {
        &self.devices[i]
    }

    /// A copy of every figure as of now (each read on its own, so figures that change
    /// together may be a few events apart while work runs). The gauges are what the caller
    /// passes: the queues keep those counts.
    pub fn snapshot(&self, gauges: Gauges) -> StatsSnapshot {
        let Gauges {
            queue_depth,
            synthesis_queue_depth,
            ready_waiting,
        } = gauges;
        let load = |a: &[AtomicU64; JOB_KINDS], k: JobKind| a[k.index()].load(Relaxed);
        let kinds = JobKind::ALL.map(|k| KindStatsSnapshot {
            jobs_admitted: load(&self.jobs_by_kind, k),
            jobs_finished: load(&self.jobs_finished_by_kind, k),
            jobs_failed: load(&self.jobs_failed_by_kind, k),
            partitions_admitted: load(&self.partitions_by_kind, k),
            partitions_proved: load(&self.partitions_proved_by_kind, k),
        });
        let now = Instant::now();
        let mut devices = [DeviceStatsSnapshot::default(); MAX_DEVICES];
        for ((d, m), b) in devices.iter_mut().zip(&self.devices).zip(&self.backends) {
            *d = DeviceStatsSnapshot {
                backend: b.kind(),
                gpu_ordinal: b.gpu_ordinal().unwrap_or(NO_GPU_ORDINAL),
                ..m.snapshot(now)
            };
        }
        StatsSnapshot {
            uptime_ns: now.duration_since(self.epoch).as_nanos() as u64,
            jobs_admitted: self.jobs_admitted.load(Relaxed),
            jobs_rejected: self.jobs_rejected.load(Relaxed),
            jobs_finished: self.jobs_finished.load(Relaxed),
            jobs_failed: self.jobs_failed.load(Relaxed),
            jobs_cancelled: self.jobs_cancelled.load(Relaxed),
            partitions_admitted: self.partitions_admitted.load(Relaxed),
            partitions_proved: self.partitions_proved.load(Relaxed),
            partitions_failed: self.partitions_failed.load(Relaxed),
            partitions_dropped: self.partitions_dropped.load(Relaxed),
            queue_depth,
            memory_budget_bytes: self.memory_budget.load(Relaxed),
            memory_reserved_bytes: self.memory_reserved.load(Relaxed),
            memory_peak_bytes: self.memory_peak.load(Relaxed),
            bytes_freed_reported: self.bytes_freed_reported.load(Relaxed),
            trims: self.trim.count.load(Relaxed),
            admission_wait: self.admission_wait.snapshot(),
            queue_wait: self.queue_wait.snapshot(),
            mutex_wait: self.mutex_wait.snapshot(),
            mutex_hold: self.mutex_hold.snapshot(),
            gap: self.gap.snapshot(),
            finalize: self.finalize.snapshot(),
            trim: self.trim.snapshot(),
            start_ntt: self.stages.ntt.snapshot(),
            start_ntt_upload: self.stages.ntt_upload.snapshot(),
            start_ntt_download: self.stages.ntt_download.snapshot(),
            start_msm_h: self.stages.msm_h.snapshot(),
            start_msm_l: self.stages.msm_l.snapshot(),
            start_msm_a: self.stages.msm_a.snapshot(),
            start_msm_b_g1: self.stages.msm_b_g1.snapshot(),
            start_gather: self.stages.gather.snapshot(),
            start_host_to_device: self.stages.host_to_device.snapshot(),
            start_device_to_host: self.stages.device_to_host.snapshot(),
            finalize_b_g2: self.finalize_b_g2.snapshot(),
            device_count: self.devices.len().min(MAX_DEVICES) as u64,
            devices,
            synthesis: self.synthesis.snapshot(),
            params_load: self.params_load.snapshot(),
            synthesis_busy_ns: self.synthesis_busy_ns.load(Relaxed),
            synthesis_threads: self.synthesis_threads.load(Relaxed),
            synthesis_active: self.synthesis_active.load(Relaxed),
            synthesis_queue_depth,
            ready_waiting,
            kinds,
        }
    }
}

/// The figures the queues keep themselves, passed to [`Stats::snapshot`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Gauges {
    /// Partitions waiting for a device, by class.
    pub queue_depth: [u64; PRIORITY_CLASSES],
    /// Partitions waiting for a synthesis thread.
    pub synthesis_queue_depth: u64,
    /// Synthesized partitions waiting for a device (PoSt ones included).
    pub ready_waiting: u64,
}

/// One [`JobKind`]'s counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct KindStatsSnapshot {
    /// Jobs admitted.
    pub jobs_admitted: u64,
    /// Jobs that produced all their proofs.
    pub jobs_finished: u64,
    /// Jobs that failed (cancelled ones not included).
    pub jobs_failed: u64,
    /// Partitions admitted.
    pub partitions_admitted: u64,
    /// Partitions proved.
    pub partitions_proved: u64,
}

/// A copy of the engine's statistics: flat numbers only (counts, bytes, nanoseconds), laid
/// out as the C struct `cuzk_stats` will be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct StatsSnapshot {
    /// Nanoseconds since the engine started.
    pub uptime_ns: u64,
    /// Jobs `prove_start` accepted.
    pub jobs_admitted: u64,
    /// Jobs `prove_start` refused.
    pub jobs_rejected: u64,
    /// Admitted jobs that produced all their proofs.
    pub jobs_finished: u64,
    /// Admitted jobs that failed.
    pub jobs_failed: u64,
    /// Admitted jobs cancelled.
    pub jobs_cancelled: u64,
    /// Partitions queued.
    pub partitions_admitted: u64,
    /// Partitions proved.
    pub partitions_proved: u64,
    /// Partitions whose start or finish failed.
    pub partitions_failed: u64,
    /// Partitions dropped unproved (job cancelled, failed or shut down).
    pub partitions_dropped: u64,
    /// Partitions queued now, by class: WinningPoSt, WindowPoSt, PoRep/SnapDeals, other.
    pub queue_depth: [u64; PRIORITY_CLASSES],
    /// The memory budget.
    pub memory_budget_bytes: u64,
    /// Bytes reserved now.
    pub memory_reserved_bytes: u64,
    /// Most bytes ever reserved at once.
    pub memory_peak_bytes: u64,
    /// Bytes reported freed to the trimmer.
    pub bytes_freed_reported: u64,
    /// `malloc_trim(0)` calls.
    pub trims: u64,
    /// Wait for the memory budget in `prove_start`.
    pub admission_wait: HistogramSnapshot,
    /// Time a partition sat queued.
    pub queue_wait: HistogramSnapshot,
    /// Wait for a device mutex.
    pub mutex_wait: HistogramSnapshot,
    /// Device mutex held: the start phase.
    pub mutex_hold: HistogramSnapshot,
    /// Device idle between start phases while work waited.
    pub gap: HistogramSnapshot,
    /// Finalizer time per partition.
    pub finalize: HistogramSnapshot,
    /// `malloc_trim(0)` durations.
    pub trim: HistogramSnapshot,
    /// Start phase: the H step (NTTs; on a GPU with its transfers).
    pub start_ntt: HistogramSnapshot,
    /// Start phase: the H step's upload of a, b, c (GPU).
    pub start_ntt_upload: HistogramSnapshot,
    /// Start phase: the H step's download of H (GPU).
    pub start_ntt_download: HistogramSnapshot,
    /// Start phase: the H MSM.
    pub start_msm_h: HistogramSnapshot,
    /// Start phase: the L MSM.
    pub start_msm_l: HistogramSnapshot,
    /// Start phase: the A MSM.
    pub start_msm_a: HistogramSnapshot,
    /// Start phase: the B_g1 MSM.
    pub start_msm_b_g1: HistogramSnapshot,
    /// Start phase: gathers of the density-selected scalars (GPU).
    pub start_gather: HistogramSnapshot,
    /// Start phase: host → device copies, summed per start phase (GPU).
    pub start_host_to_device: HistogramSnapshot,
    /// Start phase: device → host copies, summed per start phase (GPU).
    pub start_device_to_host: HistogramSnapshot,
    /// A finalizer's B_g2 MSM (part of `finalize`).
    pub finalize_b_g2: HistogramSnapshot,
    /// Entries of `devices` in use.
    pub device_count: u64,
    /// Per device, the first `device_count` entries.
    pub devices: [DeviceStatsSnapshot; MAX_DEVICES],
    /// A synthesis thread's time per partition.
    pub synthesis: HistogramSnapshot,
    /// Loading one params file.
    pub params_load: HistogramSnapshot,
    /// Time the synthesis threads spent synthesizing, summed over the threads.
    pub synthesis_busy_ns: u64,
    /// Threads in the synthesis pool.
    pub synthesis_threads: u64,
    /// Synthesis threads synthesizing now.
    pub synthesis_active: u64,
    /// Partitions waiting for a synthesis thread now.
    pub synthesis_queue_depth: u64,
    /// Synthesized partitions waiting for a device now.
    pub ready_waiting: u64,
    /// Per [`JobKind`], in [`JobKind::ALL`] order.
    pub kinds: [KindStatsSnapshot; JOB_KINDS],
}

const CLASS_LABELS: [&str; PRIORITY_CLASSES] =
    ["winning_post", "window_post", "porep_snap", "other"];

impl StatsSnapshot {
    /// The start-phase stage histograms with the names the Prometheus text gives them.
    pub fn start_stages(&self) -> [(&'static str, HistogramSnapshot); 10] {
        [
            ("ntt", self.start_ntt),
            ("ntt_upload", self.start_ntt_upload),
            ("ntt_download", self.start_ntt_download),
            ("msm_h", self.start_msm_h),
            ("msm_l", self.start_msm_l),
            ("msm_a", self.start_msm_a),
            ("msm_b_g1", self.start_msm_b_g1),
            ("gather", self.start_gather),
            ("host_to_device", self.start_host_to_device),
            ("device_to_host", self.start_device_to_host),
        ]
    }

    /// Fraction of the synthesis pool's capacity (threads × uptime) spent synthesizing.
    pub fn synthesis_busy_fraction(&self) -> f64 {
        ratio(
            self.synthesis_busy_ns,
            self.synthesis_threads.saturating_mul(self.uptime_ns),
        )
    }

    /// The device entries in use.
    pub fn devices(&self) -> &[DeviceStatsSnapshot] {
        &self.devices[..self.device_count as usize]
    }

    /// The snapshot in the Prometheus text exposition format (version 0.0.4). Histograms
    /// are summaries (quantiles 0.5 and 0.99, `_sum`, `_count`) in seconds, each with a
    /// `_max_seconds` gauge beside it.
    pub fn prometheus(&self) -> String {
        let mut o = String::new();
        let mut metric = |name: &str, kind: &str, help: &str, samples: &[(String, f64)]| {
            let _ = writeln!(o, "# HELP cuzk_{name} {help}");
            let _ = writeln!(o, "# TYPE cuzk_{name} {kind}");
            for (suffix_labels, v) in samples {
                let _ = writeln!(o, "cuzk_{name}{suffix_labels} {v}");
            }
        };
        let one = |v: u64| vec![(String::new(), v as f64)];
        metric(
            "uptime_seconds",
            "gauge",
            "Seconds since the engine started.",
            &[(String::new(), secs(self.uptime_ns))],
        );
        for (name, help, v) in [
            (
                "jobs_admitted_total",
                "Jobs prove_start accepted.",
                self.jobs_admitted,
            ),
            (
                "jobs_rejected_total",
                "Jobs prove_start refused.",
                self.jobs_rejected,
            ),
            (
                "jobs_finished_total",
                "Admitted jobs that produced all their proofs.",
                self.jobs_finished,
            ),
            (
                "jobs_failed_total",
                "Admitted jobs that failed.",
                self.jobs_failed,
            ),
            (
                "jobs_cancelled_total",
                "Admitted jobs cancelled.",
                self.jobs_cancelled,
            ),
            (
                "partitions_admitted_total",
                "Partitions queued.",
                self.partitions_admitted,
            ),
            (
                "partitions_proved_total",
                "Partitions proved.",
                self.partitions_proved,
            ),
            (
                "partitions_failed_total",
                "Partitions whose start or finish failed.",
                self.partitions_failed,
            ),
            (
                "partitions_dropped_total",
                "Partitions dropped unproved.",
                self.partitions_dropped,
            ),
            (
                "trim_freed_reported_bytes_total",
                "Bytes reported freed to the trimmer.",
                self.bytes_freed_reported,
            ),
        ] {
            metric(name, "counter", help, &one(v));
        }
        for (name, help, v) in [
            (
                "memory_budget_bytes",
                "The host memory budget.",
                self.memory_budget_bytes,
            ),
            (
                "memory_reserved_bytes",
                "Bytes reserved now.",
                self.memory_reserved_bytes,
            ),
            (
                "memory_reserved_peak_bytes",
                "Most bytes ever reserved at once.",
                self.memory_peak_bytes,
            ),
        ] {
            metric(name, "gauge", help, &one(v));
        }
        let depth: Vec<_> = CLASS_LABELS
            .iter()
            .zip(self.queue_depth)
            .map(|(c, v)| (format!("{{class=\"{c}\"}}"), v as f64))
            .collect();
        metric(
            "queue_depth",
            "gauge",
            "Partitions queued, by priority class.",
            &depth,
        );
        for (name, help, h) in [
            (
                "admission_wait",
                "Wait for the memory budget.",
                &self.admission_wait,
            ),
            (
                "queue_wait",
                "Time a partition sat queued.",
                &self.queue_wait,
            ),
            (
                "device_mutex_wait",
                "Wait for a device mutex.",
                &self.mutex_wait,
            ),
            (
                "device_mutex_hold",
                "Device mutex held (start phase compute).",
                &self.mutex_hold,
            ),
            (
                "device_gap",
                "Device idle between start phases while work waited.",
                &self.gap,
            ),
            ("finalize", "Finalizer time per partition.", &self.finalize),
            ("trim", "malloc_trim(0) durations.", &self.trim),
            (
                "finalize_b_g2",
                "A finalizer's B_g2 MSM (part of cuzk_finalize_seconds).",
                &self.finalize_b_g2,
            ),
            (
                "synthesis",
                "A synthesis thread's time per partition.",
                &self.synthesis,
            ),
            ("params_load", "Loading one params file.", &self.params_load),
        ] {
            metric(
                &format!("{name}_seconds"),
                "summary",
                help,
                &[
                    ("{quantile=\"0.5\"}".into(), secs(h.p50_ns)),
                    ("{quantile=\"0.99\"}".into(), secs(h.p99_ns)),
                    ("_sum".into(), secs(h.sum_ns)),
                    ("_count".into(), h.count as f64),
                ],
            );
            metric(
                &format!("{name}_max_seconds"),
                "gauge",
                &format!("Largest observation of cuzk_{name}_seconds."),
                &[(String::new(), secs(h.max_ns))],
            );
        }
        let stages = self.start_stages();
        let mut samples = Vec::new();
        for (stage, h) in &stages {
            samples.extend([
                (
                    format!("{{stage=\"{stage}\",quantile=\"0.5\"}}"),
                    secs(h.p50_ns),
                ),
                (
                    format!("{{stage=\"{stage}\",quantile=\"0.99\"}}"),
                    secs(h.p99_ns),
                ),
                (format!("_sum{{stage=\"{stage}\"}}"), secs(h.sum_ns)),
                (format!("_count{{stage=\"{stage}\"}}"), h.count as f64),
            ]);
        }
        metric(
            "start_stage_seconds",
            "summary",
            "Stages of the start phase, one observation per start phase: ntt (the H step, its transfers included), ntt_upload and ntt_download (of ntt), msm_h, msm_l, msm_a, msm_b_g1 (each G1 MSM, its transfers included), gather (density-selected scalar gathers), host_to_device and device_to_host (all copies of the start phase). Stages overlap; transfers and gathers are zero on the CPU.",
            &samples,
        );
        let max: Vec<_> = stages
            .iter()
            .map(|(stage, h)| (format!("{{stage=\"{stage}\"}}"), secs(h.max_ns)))
            .collect();
        metric(
            "start_stage_max_seconds",
            "gauge",
            "Largest observation of cuzk_start_stage_seconds.",
            &max,
        );
        let info: Vec<_> = self
            .devices()
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let labels = match d.backend {
                    BackendKind::Cpu => format!("{{device=\"{i}\",backend=\"cpu\"}}"),
                    BackendKind::Cuda => format!(
                        "{{device=\"{i}\",backend=\"cuda\",gpu_ordinal=\"{}\"}}",
                        d.gpu_ordinal
                    ),
                };
                (labels, 1.0)
            })
            .collect();
        metric(
            "device_info",
            "gauge",
            "Each device's backend (cpu or cuda) and, for a GPU, its driver ordinal; always 1.",
            &info,
        );
        let per_device = |f: &dyn Fn(&DeviceStatsSnapshot) -> f64| -> Vec<(String, f64)> {
            self.devices()
                .iter()
                .enumerate()
                .map(|(i, d)| (format!("{{device=\"{i}\"}}"), f(d)))
                .collect()
        };
        metric(
            "device_busy_ratio",
            "gauge",
            "Fraction of the engine's life each device's mutex was held.",
            &per_device(&|d| d.busy_fraction()),
        );
        metric(
            "device_busy_recent_ratio",
            "gauge",
            "Fraction of the recent window (last 10 whole seconds and the current one) each device's mutex was held.",
            &per_device(&|d| d.window_busy_fraction()),
        );
        metric(
            "device_partitions_total",
            "counter",
            "Start phases run on each device.",
            &per_device(&|d| d.partitions as f64),
        );
        for (name, kind, help, v) in [
            (
                "synthesis_busy_ratio",
                "gauge",
                "Fraction of the synthesis pool's capacity (threads x uptime) spent synthesizing.",
                self.synthesis_busy_fraction(),
            ),
            (
                "synthesis_threads",
                "gauge",
                "Threads in the synthesis pool.",
                self.synthesis_threads as f64,
            ),
            (
                "synthesis_active",
                "gauge",
                "Synthesis threads synthesizing now.",
                self.synthesis_active as f64,
            ),
            (
                "synthesis_queue_depth",
                "gauge",
                "Partitions waiting for a synthesis thread.",
                self.synthesis_queue_depth as f64,
            ),
            (
                "ready_waiting",
                "gauge",
                "Synthesized partitions waiting for a device.",
                self.ready_waiting as f64,
            ),
        ] {
            metric(name, kind, help, &[(String::new(), v)]);
        }
        type KindField = fn(&KindStatsSnapshot) -> u64;
        let per_kind: [(&str, &str, KindField); 5] = [
            (
                "kind_jobs_admitted_total",
                "Jobs admitted, by proof kind.",
                |k| k.jobs_admitted,
            ),
            (
                "kind_jobs_finished_total",
                "Jobs that produced all their proofs, by proof kind.",
                |k| k.jobs_finished,
            ),
            (
                "kind_jobs_failed_total",
                "Jobs that failed, by proof kind.",
                |k| k.jobs_failed,
            ),
            (
                "kind_partitions_admitted_total",
                "Partitions admitted, by proof kind.",
                |k| k.partitions_admitted,
            ),
            (
                "kind_partitions_proved_total",
                "Partitions proved, by proof kind.",
                |k| k.partitions_proved,
            ),
        ];
        for (name, help, f) in per_kind {
            let samples: Vec<_> = JobKind::ALL
                .iter()
                .zip(&self.kinds)
                .map(|(k, s)| (format!("{{kind=\"{}\"}}", k.label()), f(s) as f64))
                .collect();
            metric(name, "counter", help, &samples);
        }
        o
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotone_and_cover_their_values() {
        let mut last = 0;
        for v in (0..5000u64).chain([1 << 20, (1 << 20) + 12345, u64::MAX / 3, u64::MAX]) {
            let b = bucket_of(v);
            assert!(b < BUCKETS);
            assert!(b >= last || v >= 5000, "bucket order at {v}");
            last = b;
            assert!(bucket_upper(b) >= v, "upper bound of {v}'s bucket");
            if b > 0 {
                assert!(bucket_upper(b - 1) < v, "{v} belongs to a lower bucket");
            }
        }
    }

    #[test]
    fn histogram_quantiles_within_an_eighth() {
        let h = Histogram::default();
        for v in 1..=1000u64 {
            h.record_ns(v * 1000);
        }
        let s = h.snapshot();
        assert_eq!(s.count, 1000);
        assert_eq!(s.sum_ns, 1000 * 1001 / 2 * 1000);
        assert_eq!(s.max_ns, 1_000_000);
        let near = |got: u64, want: u64| got >= want && got <= want + want / 8;
        assert!(near(s.p50_ns, 500_000), "p50 {}", s.p50_ns);
        assert!(near(s.p99_ns, 990_000), "p99 {}", s.p99_ns);
        assert_eq!(
            Histogram::default().snapshot(),
            HistogramSnapshot::default()
        );
    }

    #[test]
    fn busy_meter_spreads_holds_over_seconds() {
        let epoch = Instant::now();
        let m = BusyMeter::new(epoch);
        let at = |ms: u64| epoch + Duration::from_millis(ms);
        m.begin(at(500));
        m.end(at(500), at(2_500));
        m.begin(at(3_000));
        m.end(at(3_000), at(3_250));
        let s = m.snapshot(at(4_000));
        assert_eq!(s.busy_ns, 2_250_000_000);
        assert_eq!(s.partitions, 2);
        assert_eq!(s.life_ns, 4_000_000_000);
        // The window starts at second 0 (the engine is younger than the window).
        assert_eq!(s.window_ns, 4_000_000_000);
        assert_eq!(s.window_busy_ns, 2_250_000_000);
        // 20 s later only the in-progress hold counts in the window, which starts at the
        // beginning of second 14.
        m.begin(at(23_000));
        let s = m.snapshot(at(24_500));
        assert_eq!(s.window_ns, 10_500_000_000);
        assert_eq!(s.window_busy_ns, 1_500_000_000);
        assert_eq!(s.busy_ns, 3_750_000_000);
    }

    #[test]
    fn prometheus_has_help_type_and_quantiles() {
        let stats = Stats::new(&[Backend::Cpu, Backend::Cuda { ordinal: 3 }]);
        stats.mutex_hold.record_ns(2_000_000);
        stats.jobs_admitted.fetch_add(3, Relaxed);
        stats.stages.record(&StartTimings {
            msm_l: Duration::from_millis(3),
            host_to_device: Duration::from_millis(1),
            ..StartTimings::default()
        });
        stats.finalize_b_g2.record_ns(5);
        stats.jobs_by_kind[JobKind::WinningPost.index()].fetch_add(2, Relaxed);
        let snap = stats.snapshot(Gauges::default());
        assert_eq!(snap.kinds[JobKind::WinningPost.index()].jobs_admitted, 2);
        assert_eq!(snap.start_msm_l.sum_ns, 3_000_000);
        assert_eq!(snap.start_host_to_device.sum_ns, 1_000_000);
        assert_eq!(
            snap.start_stages().map(|(_, h)| h.count),
            [1; 10],
            "zero stages are observations too"
        );
        let d = snap.devices();
        assert_eq!(
            (d[0].backend, d[0].gpu_ordinal),
            (BackendKind::Cpu, NO_GPU_ORDINAL)
        );
        assert_eq!((d[1].backend, d[1].gpu_ordinal), (BackendKind::Cuda, 3));
        let text = snap.prometheus();
        assert!(text.contains("# TYPE cuzk_start_stage_seconds summary"));
        assert!(text.contains("cuzk_start_stage_seconds_sum{stage=\"msm_l\"} 0.003"));
        assert!(text.contains("cuzk_start_stage_seconds_count{stage=\"device_to_host\"} 1"));
        assert!(text.contains("cuzk_start_stage_max_seconds{stage=\"host_to_device\"} 0.001"));
        assert!(text.contains("cuzk_finalize_b_g2_seconds_count 1"));
        assert!(text.contains("cuzk_device_info{device=\"0\",backend=\"cpu\"} 1"));
        assert!(
            text.contains("cuzk_device_info{device=\"1\",backend=\"cuda\",gpu_ordinal=\"3\"} 1")
        );
        assert!(text.contains("# TYPE cuzk_device_mutex_hold_seconds summary"));
        assert!(text.contains("cuzk_device_mutex_hold_seconds_count 1"));
        assert!(text.contains("cuzk_device_mutex_hold_seconds{quantile=\"0.99\"}"));
        assert!(text.contains("cuzk_jobs_admitted_total 3"));
        assert!(text.contains("cuzk_device_busy_ratio{device=\"1\"}"));
        assert!(text.contains("cuzk_queue_depth{class=\"winning_post\"} 0"));
        assert!(text.contains("cuzk_kind_jobs_admitted_total{kind=\"winning_post\"} 2"));
        assert!(text.contains("cuzk_kind_jobs_admitted_total{kind=\"porep\"} 0"));
        assert!(text.contains("# TYPE cuzk_synthesis_seconds summary"));
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (name, value) = line.rsplit_once(' ').expect("name value");
            assert!(name.starts_with("cuzk_"), "{line}");
            value.parse::<f64>().expect("numeric value");
        }
    }
}
