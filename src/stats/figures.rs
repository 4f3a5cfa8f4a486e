//! The figures table: every figure of the engine's statistics, declared once.
//!
//! [`declare_figures!`](super::declare) generates from it [`StatsSnapshot`],
//! [`DeviceStatsSnapshot`], [`KindStatsSnapshot`], the recorders of [`Stats`], [`Gauges`],
//! [`StageHistograms`] and [`FIGURES`], from which the Prometheus text is rendered and the C
//! struct (`src/ffi/stats_layout.rs`) and the Go view (`go/stats_gen.go`) are generated. The
//! start-phase stages come from `with_start_stages!` (`src/groth16/stages.rs`) and sit where
//! the `stages` entry is.
//!
//! The order is `cuzk_stats`' order, which is append-only (hosts built against an older
//! header pass a smaller struct): a new figure goes at the end. The C structs of the blocks
//! (`cuzk_device_stats`, `cuzk_device_backend`, `cuzk_kind_stats`) are array elements and
//! never grow either: a new per-device figure is a `per_device` entry of its own at the end.
//!
//! An entry:
//!
//! ```text
//! /// Doc text: the field's doc in Rust, C and Go (kept as written, line by line).
//! name: shape [= source] [=> GoName] [, counter|gauge|summary "prometheus_name" [{label}] "HELP text" [= value]];
//! ```
//!
//! - shape: `count` (u64), `nanos` (u64 nanoseconds: Go `time.Duration`, Prometheus
//!   seconds), `latency` (a histogram's summary), `by_class` (per priority class), `stages`
//!   (the stage list), `per_device(field: count|nanos)` (an appended array; `field` of
//!   `DeviceStatsSnapshot`), or a block `device_block(c_struct, "doc") { fields }` /
//!   `kind_block(c_struct, "doc") { fields }`, whose fields are
//!   `name: count|nanos|backend|ordinal [= per-kind recorder] => GoName [, metric {label} ...];`.
//! - source (what `Stats::snapshot` reads): `atomic` (an `AtomicU64` recorder named as the
//!   figure; per device, one per device), `histogram` (a `Histogram`), `gauge` (a field of
//!   `Gauges`, which the engine passes), or `read(|stats, gauges, now| value)`. Device
//!   blocks are read by `Stats::device_block_snapshots` (`recorder.rs`).
//! - metric: a label for an array (`{device}`, `{class}`, `{kind}`, `{stage}`); the value
//!   is the figure (nanoseconds in seconds) unless `= |snapshot_or_element| value` says
//!   otherwise. A summary is named `*_seconds` and gets a `*_max_seconds` gauge.
//!
//! Adding a figure: an entry at the end, then the line that records it, then
//! `CUZK_REGENERATE=1 cargo test --lib stats::codegen` and `scripts/check-header.sh --write`.

use std::sync::atomic::Ordering::Relaxed;

use super::declare::declare_figures;
use super::MAX_DEVICES;
use crate::groth16::stages::with_start_stages;

with_start_stages! { declare_figures! {
    /// Nanoseconds since the engine started.
    uptime_ns: nanos = read(|s, _, now| now.duration_since(s.epoch).as_nanos() as u64)
        => Uptime, gauge "uptime_seconds" "Seconds since the engine started.";
    /// Jobs `cuzk_prove_start` accepted.
    jobs_admitted: count = atomic
        => JobsAdmitted, counter "jobs_admitted_total" "Jobs prove_start accepted.";
    /// Jobs `cuzk_prove_start` refused (validation, budget, admission timeout).
    jobs_rejected: count = atomic
        => JobsRejected, counter "jobs_rejected_total" "Jobs prove_start refused.";
    /// Admitted jobs that produced all their proofs.
    jobs_finished: count = atomic
        => JobsFinished, counter "jobs_finished_total" "Admitted jobs that produced all their proofs.";
    /// Admitted jobs that failed (a partition failed, or the engine shut down).
    jobs_failed: count = atomic
        => JobsFailed, counter "jobs_failed_total" "Admitted jobs that failed.";
    /// Admitted jobs cancelled.
    jobs_cancelled: count = atomic
        => JobsCancelled, counter "jobs_cancelled_total" "Admitted jobs cancelled.";
    /// Partitions queued by admitted jobs.
    partitions_admitted: count = atomic
        => PartitionsAdmitted, counter "partitions_admitted_total" "Partitions queued.";
    /// Partitions proved.
    partitions_proved: count = atomic
        => PartitionsProved, counter "partitions_proved_total" "Partitions proved.";
    /// Partitions whose start or finish failed.
    partitions_failed: count = atomic
        => PartitionsFailed, counter "partitions_failed_total" "Partitions whose start or finish failed.";
    /// Partitions dropped unproved (job cancelled, failed or shut down).
    partitions_dropped: count = atomic
        => PartitionsDropped, counter "partitions_dropped_total" "Partitions dropped unproved.";
    /// Partitions queued now, by priority class (see `CUZK_PRIORITY_CLASSES`).
    queue_depth: by_class = gauge
        => QueueDepth, gauge "queue_depth" {class} "Partitions queued, by priority class.";
    /// The memory budget, in bytes.
    memory_budget_bytes: count = read(|s, _, _| s.memory_budget.load(Relaxed))
        => MemoryBudgetBytes, gauge "memory_budget_bytes" "The host memory budget.";
    /// Bytes reserved now.
    memory_reserved_bytes: count = read(|s, _, _| s.memory_reserved.load(Relaxed))
        => MemoryReservedBytes, gauge "memory_reserved_bytes" "Bytes reserved now.";
    /// Most bytes ever reserved at once.
    memory_peak_bytes: count = read(|s, _, _| s.memory_peak.load(Relaxed))
        => MemoryPeakBytes, gauge "memory_reserved_peak_bytes" "Most bytes ever reserved at once.";
    /// Bytes reported freed to the trimmer.
    bytes_freed_reported: count = atomic
        => BytesFreedReported,
        counter "trim_freed_reported_bytes_total" "Bytes reported freed to the trimmer.";
    /// `malloc_trim(0)` calls.
    trims: count = read(|s, _, _| s.trim.count()) => Trims;
    /// Wait for the memory budget in `cuzk_prove_start`.
    admission_wait: latency = histogram
        => AdmissionWait, summary "admission_wait_seconds" "Wait for the memory budget.";
    /// Time a partition sat queued.
    queue_wait: latency = histogram
        => QueueWait, summary "queue_wait_seconds" "Time a partition sat queued.";
    /// Wait for a device mutex.
    mutex_wait: latency = histogram
        => MutexWait, summary "device_mutex_wait_seconds" "Wait for a device mutex.";
    /// Device mutex held: the start phase (compute).
    mutex_hold: latency = histogram
        => MutexHold, summary "device_mutex_hold_seconds" "Device mutex held (start phase compute).";
    /// Device idle between two start phases while work waited.
    gap: latency = histogram
        => Gap, summary "device_gap_seconds" "Device idle between start phases while work waited.";
    /// A finalizer's time per partition.
    finalize: latency = histogram
        => Finalize, summary "finalize_seconds" "Finalizer time per partition.";
    /// `malloc_trim(0)` durations.
    trim: latency = histogram => Trim, summary "trim_seconds" "malloc_trim(0) durations.";
    /// Entries of `devices` in use.
    device_count: count = read(|s, _, _| s.devices.len().min(MAX_DEVICES) as u64);
    /// Per device, the first `device_count` entries; the rest are zero.
    devices: device_block(cuzk_device_stats, "One device's figures (nanoseconds).") {
        /// Time the device mutex was held (the device computing) since the engine started.
        busy_ns: nanos => Busy, gauge "device_busy_ratio" {device}
            "Fraction of the engine's life each device's mutex was held."
            = |d| d.busy_fraction();
        /// Time since the engine started.
        life_ns: nanos => Life;
        /// Time held within the recent window.
        window_busy_ns: nanos => WindowBusy, gauge "device_busy_recent_ratio" {device}
            "Fraction of the recent window (last 10 whole seconds and the current one) each device's mutex was held."
            = |d| d.window_busy_fraction();
        /// The recent window's length: the last 10 whole seconds and the current one so far.
        window_ns: nanos => Window;
        /// Start phases run on this device.
        partitions: count => Partitions,
            counter "device_partitions_total" {device} "Start phases run on each device.";
    };
    /// Start-phase stages, one observation per successful start phase.
    start: stages => Stages, summary "start_stage_seconds" {stage}
        "Stages of the start phase, one observation per start phase: ntt (the H step, its transfers included), ntt_upload and ntt_download (of ntt), msm_h, msm_l, msm_a, msm_b_g1 (each G1 MSM, its transfers included), gather (density-selected scalar gathers), host_to_device and device_to_host (all copies of the start phase). Stages overlap; transfers and gathers are zero on the CPU.";
    /// A finalizer's B_g2 MSM (part of `finalize`).
    finalize_b_g2: latency = histogram => FinalizeBG2,
        summary "finalize_b_g2_seconds" "A finalizer's B_g2 MSM (part of cuzk_finalize_seconds).";
    /// Per device, in the order of `devices`: CPU or CUDA and the GPU ordinal; the first
    /// `device_count` entries, the rest zero.
    device_backends: device_block(cuzk_device_backend, "Where one device's start phases run.") {
        /// CPU or CUDA.
        backend: backend => Backend, gauge "device_info" {device}
            "Each device's backend (cpu or cuda) and, for a GPU, its driver ordinal; always 1."
            = |d| (d.backend_labels(), 1.0);
        /// The GPU's CUDA driver ordinal (among the devices `CUDA_VISIBLE_DEVICES` leaves
        /// visible, in the driver's order); `CUZK_NO_GPU_ORDINAL` for a CPU device.
        gpu_ordinal: ordinal => GPUOrdinal;
    };
    /// A synthesis thread's time per partition.
    synthesis: latency = histogram
        => Synthesis, summary "synthesis_seconds" "A synthesis thread's time per partition.";
    /// Loading one params file (once per file the engine loads).
    params_load: latency = histogram
        => ParamsLoad, summary "params_load_seconds" "Loading one params file.";
    /// Time the synthesis threads spent synthesizing, summed over the threads; divided by
    /// `synthesis_threads * uptime_ns`, the pool's busy fraction.
    synthesis_busy_ns: nanos = atomic => SynthesisBusy, gauge "synthesis_busy_ratio"
        "Fraction of the synthesis pool's capacity (threads x uptime) spent synthesizing."
        = |s| s.synthesis_busy_fraction();
    /// Threads in the synthesis pool.
    synthesis_threads: count = atomic
        => SynthesisThreads, gauge "synthesis_threads" "Threads in the synthesis pool.";
    /// Synthesis threads synthesizing now.
    synthesis_active: count = atomic
        => SynthesisActive, gauge "synthesis_active" "Synthesis threads synthesizing now.";
    /// Partitions waiting for a synthesis thread now.
    synthesis_queue_depth: count = gauge => SynthesisQueueDepth,
        gauge "synthesis_queue_depth" "Partitions waiting for a synthesis thread.";
    /// Synthesized partitions waiting for a device now.
    ready_waiting: count = gauge
        => ReadyWaiting, gauge "ready_waiting" "Synthesized partitions waiting for a device.";
    /// Per proof kind (see `CUZK_JOB_KINDS`).
    kinds: kind_block(cuzk_kind_stats, "One proof kind's counts (`cuzk_stats.kinds`).") {
        /// Jobs admitted.
        jobs_admitted: count = jobs_by_kind => JobsAdmitted,
            counter "kind_jobs_admitted_total" {kind} "Jobs admitted, by proof kind.";
        /// Jobs that produced all their proofs.
        jobs_finished: count = jobs_finished_by_kind => JobsFinished,
            counter "kind_jobs_finished_total" {kind} "Jobs that produced all their proofs, by proof kind.";
        /// Jobs that failed (cancelled ones not included).
        jobs_failed: count = jobs_failed_by_kind => JobsFailed,
            counter "kind_jobs_failed_total" {kind} "Jobs that failed, by proof kind.";
        /// Partitions admitted.
        partitions_admitted: count = partitions_by_kind => PartitionsAdmitted,
            counter "kind_partitions_admitted_total" {kind} "Partitions admitted, by proof kind.";
        /// Partitions proved.
        partitions_proved: count = partitions_proved_by_kind => PartitionsProved,
            counter "kind_partitions_proved_total" {kind} "Partitions proved, by proof kind.";
    };
    /// Time device i had kernels running, measured on the device by CUDA events around
    /// each start phase's kernels (0 for CPU devices, which have no kernels).
    device_kernel_active_ns: per_device(kernel_active_ns: nanos) = atomic => KernelActive,
        counter "device_kernel_active_seconds_total" {device}
        "Time each device had kernels running, by CUDA events around each start phase's kernels (0 on a CPU device).";
    /// Device faults on device i: start phases that failed with a device error or panicked,
    /// and results that failed their verification.
    device_faults: per_device(faults: count) = atomic => DeviceFaults,
        counter "device_faults_total" {device}
        "Device faults on each device (start phase errors and panics, results that failed verification).";
    /// Partitions queued again for another attempt after a device fault.
    partition_retries: count = atomic => PartitionRetries,
        counter "partition_retries_total" "Partitions queued again after a device fault.";
    /// Partitions that failed on every one of their attempts (more than one), failing their job.
    partitions_failed_after_retries: count = atomic => PartitionsFailedAfterRetries,
        counter "partitions_failed_after_retries_total" "Partitions that failed on every one of their attempts.";
    /// Devices out of rotation now (too many faults in a row; probed again after a delay).
    devices_out_of_rotation: count = atomic => DevicesOutOfRotation,
        gauge "devices_out_of_rotation" "Devices out of rotation after faults in a row.";
    /// Hangs on device i: start phases that had not returned when `faults.start_deadline`
    /// passed (each is also one of its `faults`).
    device_hangs: per_device(hangs: count) = atomic => DeviceHangs,
        counter "device_hangs_total" {device}
        "Start phases on each device that had not returned by their deadline (also counted as device faults).";
    /// Start phases run on the CPU fallback (partitions whose device attempts were used up,
    /// or proved while no device was in rotation).
    cpu_fallbacks: count = atomic => CPUFallbacks,
        counter "cpu_fallbacks_total" "Start phases run on the CPU fallback.";
    /// Time device workers spent moving a partition's inputs to their device before taking
    /// the device mutex (a GPU's staging: the copies overlap another partition's kernels).
    staging: latency = histogram
        => Staging, summary "staging_seconds" "Time spent staging a partition's inputs on its device, outside the device mutex.";
    /// Partitions whose inputs were staged on their device before their start phase.
    partitions_staged: count = atomic => PartitionsStaged,
        counter "partitions_staged_total" "Partitions whose inputs were staged on their device before their start phase.";
    /// Recorded circuits evicted to make room in the host memory budget (a partition of
    /// their shape later records them again, or reads them from the recordings folder).
    recordings_evicted: count = atomic => RecordingsEvicted,
        counter "recordings_evicted_total" "Recorded circuits evicted to make room in the host memory budget.";
    /// Partitions waiting for device i's mutex now: taken from the queue by one of the
    /// device's workers (staged, with two workers a device), not yet started. With
    /// `ready_waiting`, the synthesized partitions that wait for a device.
    device_waiting: per_device(waiting: count) = atomic => DeviceWaiting,
        gauge "device_waiting" {device}
        "Partitions waiting for each device's mutex (taken from the queue by one of its workers).";
    /// a, b and c from a recorded circuit's matrices and the witness (a deferred
    /// partition), one observation per successful start phase, before its H step and not
    /// part of `start_ntt`: on a GPU the mat-vec over the resident matrices (CUDA event
    /// time), on the CPU the host's; zero where the synthesis stage made a, b and c.
    start_matvec: latency = histogram
        => StartMatVec, summary "start_matvec_seconds" "The start phase's mat-vec (a, b and c of a deferred partition from its recorded matrices; not part of the ntt stage).";
}}
