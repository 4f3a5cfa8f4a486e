//! `cuzk_stats` and the structs of its arrays, as the C ABI lays them out, and the
//! conversion from `StatsSnapshot`.
//!
//! Generated from the figures table (`src/stats/figures.rs`) by `src/stats/codegen.rs`;
//! do not edit. Regenerate with `CUZK_REGENERATE=1 cargo test --lib stats::codegen`, then
//! `scripts/check-header.sh --write`.

use super::engine::{
    cuzk_backend, cuzk_latency, CUZK_JOB_KINDS, CUZK_MAX_DEVICES, CUZK_PRIORITY_CLASSES,
};
use crate::stats::StatsSnapshot;

/// One device's figures (nanoseconds).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cuzk_device_stats {
    /// Time the device mutex was held (the device computing) since the engine started.
    pub busy_ns: u64,
    /// Time since the engine started.
    pub life_ns: u64,
    /// Time held within the recent window.
    pub window_busy_ns: u64,
    /// The recent window's length: the last 10 whole seconds and the current one so far.
    pub window_ns: u64,
    /// Start phases run on this device.
    pub partitions: u64,
}

/// Where one device's start phases run.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cuzk_device_backend {
    /// CPU or CUDA.
    pub backend: cuzk_backend,
    /// The GPU's CUDA driver ordinal (among the devices `CUDA_VISIBLE_DEVICES` leaves
    /// visible, in the driver's order); `CUZK_NO_GPU_ORDINAL` for a CPU device.
    pub gpu_ordinal: u32,
}

/// One proof kind's counts (`cuzk_stats.kinds`).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cuzk_kind_stats {
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

/// Every figure of the engine's statistics: counts, bytes and nanoseconds. The host sets
/// `size` to `sizeof(cuzk_stats)` before calling `cuzk_get_stats`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cuzk_stats {
    // Fields only ever go at the end (and the structs of the arrays never grow), so that a
    // host built against an older header, which passes a smaller `size`, still reads every
    // field it knows at its place.
    /// In: `sizeof(cuzk_stats)` as the host knows it. Out: the bytes written.
    pub size: usize,
    /// Nanoseconds since the engine started.
    pub uptime_ns: u64,
    /// Jobs `cuzk_prove_start` accepted.
    pub jobs_admitted: u64,
    /// Jobs `cuzk_prove_start` refused (validation, budget, admission timeout).
    pub jobs_rejected: u64,
    /// Admitted jobs that produced all their proofs.
    pub jobs_finished: u64,
    /// Admitted jobs that failed (a partition failed, or the engine shut down).
    pub jobs_failed: u64,
    /// Admitted jobs cancelled.
    pub jobs_cancelled: u64,
    /// Partitions queued by admitted jobs.
    pub partitions_admitted: u64,
    /// Partitions proved.
    pub partitions_proved: u64,
    /// Partitions whose start or finish failed.
    pub partitions_failed: u64,
    /// Partitions dropped unproved (job cancelled, failed or shut down).
    pub partitions_dropped: u64,
    /// Partitions queued now, by priority class (see `CUZK_PRIORITY_CLASSES`).
    pub queue_depth: [u64; CUZK_PRIORITY_CLASSES],
    /// The memory budget, in bytes.
    pub memory_budget_bytes: u64,
    /// Bytes reserved now.
    pub memory_reserved_bytes: u64,
    /// Most bytes ever reserved at once.
    pub memory_peak_bytes: u64,
    /// Bytes reported freed to the trimmer.
    pub bytes_freed_reported: u64,
    /// `malloc_trim(0)` calls.
    pub trims: u64,
    /// Wait for the memory budget in `cuzk_prove_start`.
    pub admission_wait: cuzk_latency,
    /// Time a partition sat queued.
    pub queue_wait: cuzk_latency,
    /// Wait for a device mutex.
    pub mutex_wait: cuzk_latency,
    /// Device mutex held: the start phase (compute).
    pub mutex_hold: cuzk_latency,
    /// Device idle between two start phases while work waited.
    pub gap: cuzk_latency,
    /// A finalizer's time per partition.
    pub finalize: cuzk_latency,
    /// `malloc_trim(0)` durations.
    pub trim: cuzk_latency,
    /// Entries of `devices` in use.
    pub device_count: u64,
    /// Per device, the first `device_count` entries; the rest are zero.
    pub devices: [cuzk_device_stats; CUZK_MAX_DEVICES],
    /// Start-phase stages, one observation per successful start phase.
    /// The H step: the NTTs and (a·b − c)/Z (on a GPU its transfers included).
    pub start_ntt: cuzk_latency,
    /// Of the H step, the device's wait for a, b and c to reach the GPU (CUDA event time; 0 on
    /// the CPU): b and c go up under the transforms before them.
    pub start_ntt_upload: cuzk_latency,
    /// Of the H step, copying H back from the GPU (CUDA event time; 0 on the CPU, and
    /// on a GPU with resident params, where H stays on the device for its MSM).
    pub start_ntt_download: cuzk_latency,
    /// The H MSM (wall time, its transfers included).
    pub start_msm_h: cuzk_latency,
    /// The L MSM (wall time, its transfers included).
    pub start_msm_l: cuzk_latency,
    /// The A MSM (wall time, its transfers included, its gather not).
    pub start_msm_a: cuzk_latency,
    /// The B_g1 MSM (wall time, its transfers included, its gather not).
    pub start_msm_b_g1: cuzk_latency,
    /// Gathering the density-selected A and B scalars (GPU: on the host, or on the GPU
    /// when the params are resident there, with the small uploads that feed it; 0 on
    /// the CPU, whose MSMs read the selections in place).
    pub start_gather: cuzk_latency,
    /// All host → GPU copies of one start phase (a gather's excepted), summed: CUDA
    /// event times of the uploads, plus the wall time of those not event-timed (the
    /// aux values; making params resident on the GPU, on their first proof there).
    /// 0 on the CPU.
    pub start_host_to_device: cuzk_latency,
    /// All GPU → host copies of one start phase, summed (CUDA event times; 0 on the CPU).
    pub start_device_to_host: cuzk_latency,
    /// A finalizer's B_g2 MSM (part of `finalize`).
    pub finalize_b_g2: cuzk_latency,
    /// Per device, in the order of `devices`: CPU or CUDA and the GPU ordinal; the first
    /// `device_count` entries, the rest zero.
    pub device_backends: [cuzk_device_backend; CUZK_MAX_DEVICES],
    /// A synthesis thread's time per partition.
    pub synthesis: cuzk_latency,
    /// Loading one params file (once per file the engine loads).
    pub params_load: cuzk_latency,
    /// Time the synthesis threads spent synthesizing, summed over the threads; divided by
    /// `synthesis_threads * uptime_ns`, the pool's busy fraction.
    pub synthesis_busy_ns: u64,
    /// Threads in the synthesis pool.
    pub synthesis_threads: u64,
    /// Synthesis threads synthesizing now.
    pub synthesis_active: u64,
    /// Partitions waiting for a synthesis thread now.
    pub synthesis_queue_depth: u64,
    /// Synthesized partitions waiting for a device now.
    pub ready_waiting: u64,
    /// Per proof kind (see `CUZK_JOB_KINDS`).
    pub kinds: [cuzk_kind_stats; CUZK_JOB_KINDS],
    /// Time device i had kernels running, measured on the device by CUDA events around
    /// each start phase's kernels (0 for CPU devices, which have no kernels).
    pub device_kernel_active_ns: [u64; CUZK_MAX_DEVICES],
    /// Device faults on device i: start phases that failed with a device error or panicked,
    /// and results that failed their verification.
    pub device_faults: [u64; CUZK_MAX_DEVICES],
    /// Partitions queued again for another attempt after a device fault.
    pub partition_retries: u64,
    /// Partitions that failed on every one of their attempts (more than one), failing their job.
    pub partitions_failed_after_retries: u64,
    /// Devices out of rotation now (too many faults in a row; probed again after a delay).
    pub devices_out_of_rotation: u64,
    /// Hangs on device i: start phases that had not returned when `faults.start_deadline`
    /// passed (each is also one of its `faults`).
    pub device_hangs: [u64; CUZK_MAX_DEVICES],
    /// Start phases run on the CPU fallback (partitions whose device attempts were used up,
    /// or proved while no device was in rotation).
    pub cpu_fallbacks: u64,
    /// Time device workers spent moving a partition's inputs to their device before taking
    /// the device mutex (a GPU's staging: the copies overlap another partition's kernels).
    pub staging: cuzk_latency,
    /// Partitions whose inputs were staged on their device before their start phase.
    pub partitions_staged: u64,
    /// Recorded circuits evicted to make room in the host memory budget (a partition of
    /// their shape later records them again, or reads them from the recordings folder).
    pub recordings_evicted: u64,
    /// Partitions waiting for device i's mutex now: taken from the queue by one of the
    /// device's workers (staged, with two workers a device), not yet started. With
    /// `ready_waiting`, the synthesized partitions that wait for a device.
    pub device_waiting: [u64; CUZK_MAX_DEVICES],
    /// a, b and c from a recorded circuit's matrices and the witness (a deferred
    /// partition), one observation per successful start phase, before its H step and not
    /// part of `start_ntt`: on a GPU the mat-vec over the resident matrices (CUDA event
    /// time), on the CPU the host's; zero where the synthesis stage made a, b and c.
    pub start_matvec: cuzk_latency,
}

impl From<StatsSnapshot> for cuzk_stats {
    fn from(s: StatsSnapshot) -> Self {
        cuzk_stats {
            size: std::mem::size_of::<cuzk_stats>(),
            uptime_ns: s.uptime_ns,
            jobs_admitted: s.jobs_admitted,
            jobs_rejected: s.jobs_rejected,
            jobs_finished: s.jobs_finished,
            jobs_failed: s.jobs_failed,
            jobs_cancelled: s.jobs_cancelled,
            partitions_admitted: s.partitions_admitted,
            partitions_proved: s.partitions_proved,
            partitions_failed: s.partitions_failed,
            partitions_dropped: s.partitions_dropped,
            queue_depth: s.queue_depth,
            memory_budget_bytes: s.memory_budget_bytes,
            memory_reserved_bytes: s.memory_reserved_bytes,
            memory_peak_bytes: s.memory_peak_bytes,
            bytes_freed_reported: s.bytes_freed_reported,
            trims: s.trims,
            admission_wait: s.admission_wait.into(),
            queue_wait: s.queue_wait.into(),
            mutex_wait: s.mutex_wait.into(),
            mutex_hold: s.mutex_hold.into(),
            gap: s.gap.into(),
            finalize: s.finalize.into(),
            trim: s.trim.into(),
            device_count: s.device_count,
            devices: s.devices.map(|d| cuzk_device_stats {
                busy_ns: d.busy_ns,
                life_ns: d.life_ns,
                window_busy_ns: d.window_busy_ns,
                window_ns: d.window_ns,
                partitions: d.partitions,
            }),
            start_ntt: s.start_ntt.into(),
            start_ntt_upload: s.start_ntt_upload.into(),
            start_ntt_download: s.start_ntt_download.into(),
            start_msm_h: s.start_msm_h.into(),
            start_msm_l: s.start_msm_l.into(),
            start_msm_a: s.start_msm_a.into(),
            start_msm_b_g1: s.start_msm_b_g1.into(),
            start_gather: s.start_gather.into(),
            start_host_to_device: s.start_host_to_device.into(),
            start_device_to_host: s.start_device_to_host.into(),
            finalize_b_g2: s.finalize_b_g2.into(),
            device_backends: s.devices.map(|d| cuzk_device_backend {
                backend: d.backend.into(),
                gpu_ordinal: d.gpu_ordinal,
            }),
            synthesis: s.synthesis.into(),
            params_load: s.params_load.into(),
            synthesis_busy_ns: s.synthesis_busy_ns,
            synthesis_threads: s.synthesis_threads,
            synthesis_active: s.synthesis_active,
            synthesis_queue_depth: s.synthesis_queue_depth,
            ready_waiting: s.ready_waiting,
            kinds: s.kinds.map(|k| cuzk_kind_stats {
                jobs_admitted: k.jobs_admitted,
                jobs_finished: k.jobs_finished,
                jobs_failed: k.jobs_failed,
                partitions_admitted: k.partitions_admitted,
                partitions_proved: k.partitions_proved,
            }),
            device_kernel_active_ns: s.devices.map(|d| d.kernel_active_ns),
            device_faults: s.devices.map(|d| d.faults),
            partition_retries: s.partition_retries,
            partitions_failed_after_retries: s.partitions_failed_after_retries,
            devices_out_of_rotation: s.devices_out_of_rotation,
            device_hangs: s.devices.map(|d| d.hangs),
            cpu_fallbacks: s.cpu_fallbacks,
            staging: s.staging.into(),
            partitions_staged: s.partitions_staged,
            recordings_evicted: s.recordings_evicted,
            device_waiting: s.devices.map(|d| d.waiting),
            start_matvec: s.start_matvec.into(),
        }
    }
}

impl cuzk_stats {
    /// The start-phase stage figures with their names (Prometheus' `stage` label), in
    /// order.
    pub fn start_stages(&self) -> [(&'static str, cuzk_latency); crate::groth16::START_STAGES] {
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
}
