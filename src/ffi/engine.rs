//! `cuzk_engine`: the proving engine handle, its configuration and its statistics.

use std::time::Duration;

use super::args::{c_path, handle, out, read_sized, write_sized, write_sized_struct};
use super::boundary::{boundary, Failure};
use super::stats_layout::cuzk_stats;
use super::status::cuzk_status;
use crate::engine::{AdmissionPolicy, Device, Engine, EngineConfig, FaultPolicy, TrimPolicy};
use crate::groth16::BackendKind;
use crate::stats::HistogramSnapshot;

/// A proving engine: its device workers, finalizers and trimmer threads, and its memory
/// budget. Created by `cuzk_engine_new`, owned by the host, freed by `cuzk_engine_free`.
/// Safe to use from many threads at once (every call but `cuzk_engine_free`).
#[allow(non_camel_case_types)]
pub struct cuzk_engine {
    pub(crate) engine: Engine,
}

/// `cuzk_config.flags`: `cuzk_prove_start` fails at once with
/// `CUZK_STATUS_RESOURCE_EXHAUSTED` when the memory budget cannot take a job yet, instead
/// of waiting up to `admission_timeout_ms`.
pub const CUZK_CONFIG_ADMISSION_FAIL_FAST: u32 = 1;
/// `cuzk_config.flags`: never call `malloc_trim(0)`.
pub const CUZK_CONFIG_TRIM_DISABLED: u32 = 2;
/// `cuzk_config.flags`: partitions whose circuit has a recorded R1CS (the Filecoin kinds)
/// reach the devices as a witness only, and the start phase computes a, b and c from the
/// recording (a GPU on the device, so they never exist on the host). With neither this flag
/// nor `CUZK_CONFIG_DEFER_EVALUATIONS_OFF`: on when any device is a GPU. Setting both is an
/// invalid argument.
pub const CUZK_CONFIG_DEFER_EVALUATIONS_ON: u32 = 4;
/// `cuzk_config.flags`: the synthesis stage computes a, b and c on the host for every
/// partition (see `CUZK_CONFIG_DEFER_EVALUATIONS_ON`).
pub const CUZK_CONFIG_DEFER_EVALUATIONS_OFF: u32 = 8;
/// `cuzk_config.flags`: a device stays in rotation however many faults it has in a row
/// (its partitions are still retried elsewhere). Not with a non-zero
/// `fault_out_of_rotation_after`.
pub const CUZK_CONFIG_NEVER_OUT_OF_ROTATION: u32 = 16;
/// `cuzk_config.flags`: a partition whose device attempts are used up (or whose devices are
/// all hung), and every partition while no device is in rotation, is proved on the host's
/// CPU backend instead of failing or waiting (slow on a large circuit: minutes per 32 GiB
/// PoRep partition, every core busy). Off by default.
pub const CUZK_CONFIG_CPU_FALLBACK: u32 = 32;
/// `cuzk_config.flags`: the engine fixes glibc's trim and mmap thresholds when it starts
/// (`mallopt`), so that the free tops of the per-thread arenas are given back too and the
/// process's resident memory returns to about where it was once the engine's jobs are done
/// (`malloc_trim(0)` shrinks only the main heap's top). Process-wide and permanent for the
/// host's allocator. Off by default.
pub const CUZK_CONFIG_TRIM_ARENA_TOPS: u32 = 64;

/// A timeout meaning "wait as long as it takes" (`admission_timeout_ms`, `timeout_ms`).
pub const CUZK_WAIT_FOREVER: u64 = u64::MAX;

/// How to build an engine. Every field's zero means its default, so a zeroed struct (or a
/// NULL pointer) gives the default engine.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cuzk_config {
    /// `sizeof(cuzk_config)` as the host was compiled with (0: all defaults). Lets the
    /// struct grow without breaking hosts built against an older header.
    pub size: usize,
    /// 0: every CUDA GPU, or one CPU device where there is none. N > 0: prove on the CPU
    /// with N logical devices (they share the machine's cores; more than one only spreads
    /// the scheduling).
    pub cpu_devices: u32,
    /// Workers per device (0: 2, so one stages its next partition while the other computes).
    pub workers_per_device: u32,
    /// Finalizer threads: B_g2 MSM and proof assembly (0: 2).
    pub finalizers: u32,
    /// `CUZK_CONFIG_*` flags, or-ed.
    pub flags: u32,
    /// Host memory the engine may reserve for jobs, in bytes (0: a share of the machine's
    /// memory).
    pub memory_budget_bytes: u64,
    /// How long `cuzk_prove_start` waits for the memory budget by default, in milliseconds
    /// (0: 600000; `CUZK_WAIT_FOREVER`: no limit).
    pub admission_timeout_ms: u64,
    /// Shortest time between two `malloc_trim(0)` calls, in milliseconds (0: 10000).
    pub trim_interval_ms: u64,
    /// Bytes freed since the last trim that make a trim worth its cost (0: 1 GiB).
    pub trim_min_freed_bytes: u64,
    // Added later; fields only ever go at the end.
    /// Threads of the synthesis stage, which synthesizes the Filecoin kinds' circuits
    /// (0: one per core).
    pub synthesis_threads: u32,
    /// Most synthesized PoRep/SnapDeals partitions waiting for a device (0: one per device
    /// worker). Each holds a whole synthesized circuit in host memory.
    pub max_ready: u32,
    /// Start phases a partition gets in all, its first included, when devices fail it (a
    /// GPU error, a backend panic, a proof that fails its verification); then its job fails
    /// naming every attempt (0: 3; 1: no retries).
    pub fault_max_attempts: u32,
    /// Device faults in a row that take a device out of rotation for
    /// `fault_probe_delay_ms` (0: 3; `CUZK_CONFIG_NEVER_OUT_OF_ROTATION`: never).
    pub fault_out_of_rotation_after: u32,
    /// How long a device out of rotation rests before its next start phase probes it, in
    /// milliseconds (0: 30000; `CUZK_WAIT_FOREVER`: it is never probed).
    pub fault_probe_delay_ms: u64,
    /// A folder where recorded R1CS matrices are saved and loaded between engines
    /// (`<shape key>.cuzk-r1cs`), a NUL-terminated UTF-8 path, or NULL to keep recordings
    /// in memory only. Read only during `cuzk_engine_new`. The folder must exist; one that
    /// cannot be written fails no proof (each engine records again, and logs a warning).
    pub recordings_dir: *const std::ffi::c_char,
    /// How long a start phase may run before its device counts as hung, in milliseconds
    /// (0 or `CUZK_WAIT_FOREVER`: no deadline). A hung device's partition is retried on
    /// another device, and the device takes no work until its stuck call returns (it
    /// cannot be interrupted); its result is then discarded and the device is probed after
    /// `fault_probe_delay_ms`.
    pub fault_start_deadline_ms: u64,
}

impl Default for cuzk_config {
    /// All zero: every field at its default.
    fn default() -> Self {
        cuzk_config {
            size: 0,
            cpu_devices: 0,
            workers_per_device: 0,
            finalizers: 0,
            flags: 0,
            memory_budget_bytes: 0,
            admission_timeout_ms: 0,
            trim_interval_ms: 0,
            trim_min_freed_bytes: 0,
            synthesis_threads: 0,
            max_ready: 0,
            fault_max_attempts: 0,
            fault_out_of_rotation_after: 0,
            fault_probe_delay_ms: 0,
            recordings_dir: std::ptr::null(),
            fault_start_deadline_ms: 0,
        }
    }
}

const KNOWN_CONFIG_FLAGS: u32 = CUZK_CONFIG_ADMISSION_FAIL_FAST
    | CUZK_CONFIG_TRIM_DISABLED
    | CUZK_CONFIG_DEFER_EVALUATIONS_ON
    | CUZK_CONFIG_DEFER_EVALUATIONS_OFF
    | CUZK_CONFIG_NEVER_OUT_OF_ROTATION
    | CUZK_CONFIG_CPU_FALLBACK
    | CUZK_CONFIG_TRIM_ARENA_TOPS;

/// A duration in milliseconds; `CUZK_WAIT_FOREVER` and anything too large to represent
/// waits without a deadline (the engine treats an unrepresentable deadline so).
pub(crate) fn millis(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// The engine configuration `c` asks for.
///
/// # Safety
/// `c.recordings_dir` NULL or a NUL-terminated string.
unsafe fn engine_config(c: &cuzk_config) -> Result<EngineConfig, Failure> {
    if c.flags & !KNOWN_CONFIG_FLAGS != 0 {
        return Err(Failure::arg(
            "config",
            format!("has unknown flags {:#x}", c.flags & !KNOWN_CONFIG_FLAGS),
        ));
    }
    let defer_on = c.flags & CUZK_CONFIG_DEFER_EVALUATIONS_ON != 0;
    let defer_off = c.flags & CUZK_CONFIG_DEFER_EVALUATIONS_OFF != 0;
    if defer_on && defer_off {
        return Err(Failure::arg(
            "config.flags",
            "sets both CUZK_CONFIG_DEFER_EVALUATIONS_ON and CUZK_CONFIG_DEFER_EVALUATIONS_OFF",
        ));
    }
    let never_out = c.flags & CUZK_CONFIG_NEVER_OUT_OF_ROTATION != 0;
    if never_out && c.fault_out_of_rotation_after != 0 {
        return Err(Failure::arg(
            "config.fault_out_of_rotation_after",
            format!(
                "is {} but config.flags sets CUZK_CONFIG_NEVER_OUT_OF_ROTATION",
                c.fault_out_of_rotation_after
            ),
        ));
    }
    let recordings_dir = c_path(c.recordings_dir, "config.recordings_dir")?;
    if recordings_dir
        .as_ref()
        .is_some_and(|d| d.as_os_str().is_empty())
    {
        return Err(Failure::arg(
            "config.recordings_dir",
            "is empty (NULL: recordings in memory only)",
        ));
    }
    let defaults = EngineConfig::default();
    let or = |v: u32, d: usize| if v == 0 { d } else { v as usize };
    let trim = if c.flags & CUZK_CONFIG_TRIM_DISABLED != 0 {
        TrimPolicy::Disabled
    } else {
        let (d_interval, d_min) = match TrimPolicy::default() {
            TrimPolicy::Every {
                interval,
                min_freed_bytes,
            } => (interval, min_freed_bytes),
            TrimPolicy::Disabled => (Duration::from_secs(10), 1 << 30),
        };
        TrimPolicy::Every {
            interval: if c.trim_interval_ms == 0 {
                d_interval
            } else {
                millis(c.trim_interval_ms)
            },
            min_freed_bytes: if c.trim_min_freed_bytes == 0 {
                d_min
            } else {
                c.trim_min_freed_bytes
            },
        }
    };
    let admission = if c.flags & CUZK_CONFIG_ADMISSION_FAIL_FAST != 0 {
        AdmissionPolicy::FailFast
    } else if c.admission_timeout_ms == 0 {
        defaults.admission
    } else {
        AdmissionPolicy::Wait(millis(c.admission_timeout_ms))
    };
    Ok(EngineConfig {
        devices: if c.cpu_devices == 0 {
            Device::detect()
        } else {
            Device::cpu(c.cpu_devices as usize)
        },
        workers_per_device: or(c.workers_per_device, defaults.workers_per_device),
        finalizers: or(c.finalizers, defaults.finalizers),
        memory_budget: (c.memory_budget_bytes != 0).then_some(c.memory_budget_bytes),
        trim,
        trim_arena_tops: c.flags & CUZK_CONFIG_TRIM_ARENA_TOPS != 0,
        admission,
        synthesis_threads: c.synthesis_threads as usize,
        max_ready: c.max_ready as usize,
        defer_evaluations: if defer_on {
            Some(true)
        } else if defer_off {
            Some(false)
        } else {
            defaults.defer_evaluations
        },
        recordings_dir,
        faults: FaultPolicy {
            max_attempts: match c.fault_max_attempts {
                0 => defaults.faults.max_attempts,
                n => n,
            },
            out_of_rotation_after: match c.fault_out_of_rotation_after {
                // The engine's 0 is "never".
                _ if never_out => 0,
                0 => defaults.faults.out_of_rotation_after,
                n => n,
            },
            probe_delay: match c.fault_probe_delay_ms {
                0 => defaults.faults.probe_delay,
                ms => millis(ms),
            },
            start_deadline: match c.fault_start_deadline_ms {
                0 => defaults.faults.start_deadline,
                CUZK_WAIT_FOREVER => None,
                ms => Some(millis(ms)),
            },
            cpu_fallback: c.flags & CUZK_CONFIG_CPU_FALLBACK != 0,
        },
        hooks: Default::default(),
    })
}

/// Starts an engine and its threads.
///
/// `config` may be NULL (defaults); it is read only during the call. On success `*engine`
/// is a new handle the host owns and must free with `cuzk_engine_free`; on failure it is
/// set to NULL.
///
/// # Safety
/// `config` NULL or a valid `cuzk_config` of at least `config->size` bytes, its
/// `recordings_dir` NULL or NUL-terminated; `engine` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_new(
    config: *const cuzk_config,
    engine: *mut *mut cuzk_engine,
) -> cuzk_status {
    boundary("cuzk_engine_new", || {
        let slot = out(engine, "engine")?;
        slot.write(std::ptr::null_mut());
        let config = engine_config(&read_sized(config, "config")?)?;
        let e = Engine::new(config)?;
        tracing::info!(engine = ?e, "engine started");
        slot.write(Box::into_raw(Box::new(cuzk_engine { engine: e })));
        Ok(())
    })
}

/// Shuts an engine down and frees it; NULL is accepted and does nothing.
///
/// Jobs still queued end with `CUZK_STATUS_SHUTTING_DOWN`; partitions already on a device
/// or a finalizer complete first, so this call blocks until they have. Job handles stay
/// valid (their owner still frees them with `cuzk_job_free`), as do params handles. No
/// other call may use `engine` during or after this one.
///
/// # Safety
/// `engine` NULL or a handle from `cuzk_engine_new` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn cuzk_engine_free(engine: *mut cuzk_engine) {
    let _ = boundary("cuzk_engine_free", || {
        if !engine.is_null() {
            drop(Box::from_raw(engine));
        }
        Ok(())
    });
}

/// Priority classes reported in `cuzk_stats.queue_depth`, highest first: WinningPoSt,
/// WindowPoSt, PoRep/SnapDeals, other.
pub const CUZK_PRIORITY_CLASSES: usize = 4;
/// Devices `cuzk_stats` reports individually.
pub const CUZK_MAX_DEVICES: usize = 16;
/// Proof kinds `cuzk_stats.kinds` reports, in `cuzk_job_kind` order: PoRep, SnapDeals,
/// WindowPoSt, WinningPoSt, other.
pub const CUZK_JOB_KINDS: usize = 5;

const _: () = assert!(CUZK_JOB_KINDS == crate::engine::JOB_KINDS);

const _: () = assert!(CUZK_PRIORITY_CLASSES == crate::stats::PRIORITY_CLASSES);
const _: () = assert!(CUZK_MAX_DEVICES == crate::stats::MAX_DEVICES);

/// A latency distribution's summary (all times in nanoseconds). Quantiles are at most 1/8
/// above the true value.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cuzk_latency {
    /// Observations.
    pub count: u64,
    /// Their sum.
    pub sum_ns: u64,
    /// Median.
    pub p50_ns: u64,
    /// 99th percentile.
    pub p99_ns: u64,
    /// Largest.
    pub max_ns: u64,
}

/// What a device is (`cuzk_device_backend.backend`). The numbers are stable.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum cuzk_backend {
    /// The host's CPUs (also what a `cuzk_stats.device_backends` entry past
    /// `device_count` reads as: it is all zero).
    #[default]
    Cpu = 0,
    /// A CUDA GPU.
    Cuda = 1,
}

/// `cuzk_device_backend.gpu_ordinal` of a device that is not a GPU.
pub const CUZK_NO_GPU_ORDINAL: u32 = u32::MAX;

const _: () = assert!(CUZK_NO_GPU_ORDINAL == crate::stats::NO_GPU_ORDINAL);
const _: () = assert!(cuzk_backend::Cpu as u32 == BackendKind::Cpu as u32);
const _: () = assert!(cuzk_backend::Cuda as u32 == BackendKind::Cuda as u32);

impl From<HistogramSnapshot> for cuzk_latency {
    fn from(h: HistogramSnapshot) -> Self {
        let HistogramSnapshot {
            count,
            sum_ns,
            p50_ns,
            p99_ns,
            max_ns,
        } = h;
        cuzk_latency {
            count,
            sum_ns,
            p50_ns,
            p99_ns,
            max_ns,
        }
    }
}

impl From<BackendKind> for cuzk_backend {
    fn from(b: BackendKind) -> Self {
        match b {
            BackendKind::Cpu => cuzk_backend::Cpu,
            BackendKind::Cuda => cuzk_backend::Cuda,
        }
    }
}

// `cuzk_stats`, `cuzk_device_stats`, `cuzk_device_backend` and `cuzk_kind_stats` are
// generated from the figures table into `stats_layout.rs`.

/// Copies a snapshot of the engine's statistics into `*stats`.
///
/// The host owns `stats` and sets `stats->size = sizeof(cuzk_stats)` first; the library
/// writes that many bytes at most (a host built against an older header gets the fields it
/// knows) and sets `stats->size` to the bytes written. Lock-free: safe to call as often as
/// a monitoring loop likes, while jobs run.
///
/// # Safety
/// `engine` NULL or a live engine handle; `stats` NULL or writable for `stats->size` bytes.
#[no_mangle]
pub unsafe extern "C" fn cuzk_get_stats(
    engine: *const cuzk_engine,
    stats: *mut cuzk_stats,
) -> cuzk_status {
    boundary("cuzk_get_stats", || {
        let e = handle(engine, "engine")?;
        let snapshot = cuzk_stats::from(e.engine.stats());
        write_sized_struct(&snapshot, stats, "stats")
    })
}

/// Renders the engine's statistics in the Prometheus text exposition format (0.0.4),
/// NUL-terminated, into the host's buffer `buf` of `len` bytes.
///
/// `*needed` is always set to the bytes the text takes, its NUL included. When `len` is
/// smaller the call fails with `CUZK_STATUS_BUFFER_TOO_SMALL` and writes nothing into
/// `buf`; `buf` may be NULL when `len` is 0, to ask for the size. The text changes from
/// call to call (uptime, counts), so allocate some room beyond `*needed` when retrying.
///
/// # Safety
/// `engine` NULL or a live engine handle; `buf` NULL or writable for `len` bytes; `needed`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_stats_prometheus(
    engine: *const cuzk_engine,
    buf: *mut std::ffi::c_char,
    len: usize,
    needed: *mut usize,
) -> cuzk_status {
    boundary("cuzk_stats_prometheus", || {
        let e = handle(engine, "engine")?;
        let mut text = e.engine.stats().prometheus().into_bytes();
        text.push(0);
        write_sized(&text, buf.cast(), len, needed, "buf")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> cuzk_config {
        cuzk_config {
            size: std::mem::size_of::<cuzk_config>(),
            cpu_devices: 1,
            ..Default::default()
        }
    }

    fn parse(c: &cuzk_config) -> Result<EngineConfig, Failure> {
        // SAFETY: the tests' recordings_dir is NULL or a CStr's.
        unsafe { engine_config(c) }
    }

    #[track_caller]
    fn refused(c: &cuzk_config, arg: &str, what: &str) {
        let f = parse(c).expect_err("refused");
        assert_eq!(f.status, cuzk_status::InvalidArgument, "{}", f.message);
        assert!(f.message.contains(&format!("`{arg}`")), "{}", f.message);
        assert!(f.message.contains(what), "{}", f.message);
    }

    #[test]
    fn zero_fields_give_the_engines_defaults() {
        let e = parse(&config()).unwrap();
        let d = EngineConfig::default();
        assert_eq!(e.faults, d.faults);
        assert_eq!(e.faults, FaultPolicy::default());
        assert_eq!(e.defer_evaluations, None);
        assert_eq!(e.recordings_dir, None);
        assert!(!e.trim_arena_tops);
    }

    #[test]
    fn fault_policy_deferral_and_recordings_dir_map_to_the_engine_config() {
        let dir = c"/var/tmp/cuzk recordings";
        let c = cuzk_config {
            fault_max_attempts: 1,
            fault_out_of_rotation_after: 7,
            fault_probe_delay_ms: 250,
            fault_start_deadline_ms: 90_000,
            flags: CUZK_CONFIG_DEFER_EVALUATIONS_ON
                | CUZK_CONFIG_CPU_FALLBACK
                | CUZK_CONFIG_TRIM_ARENA_TOPS,
            recordings_dir: dir.as_ptr(),
            ..config()
        };
        let e = parse(&c).unwrap();
        assert!(e.trim_arena_tops);
        assert_eq!(
            e.faults,
            FaultPolicy {
                max_attempts: 1,
                out_of_rotation_after: 7,
                probe_delay: Duration::from_millis(250),
                start_deadline: Some(Duration::from_secs(90)),
                cpu_fallback: true,
            }
        );
        assert_eq!(e.defer_evaluations, Some(true));
        assert_eq!(
            e.recordings_dir.as_deref(),
            Some(std::path::Path::new("/var/tmp/cuzk recordings"))
        );

        let c = cuzk_config {
            flags: CUZK_CONFIG_DEFER_EVALUATIONS_OFF | CUZK_CONFIG_NEVER_OUT_OF_ROTATION,
            fault_probe_delay_ms: CUZK_WAIT_FOREVER,
            fault_start_deadline_ms: CUZK_WAIT_FOREVER,
            ..config()
        };
        let e = parse(&c).unwrap();
        assert_eq!(e.defer_evaluations, Some(false));
        assert_eq!(e.faults.out_of_rotation_after, 0, "the engine's never");
        assert_eq!(e.faults.max_attempts, FaultPolicy::default().max_attempts);
        assert_eq!(e.faults.probe_delay, Duration::from_millis(u64::MAX));
        assert_eq!(
            (e.faults.start_deadline, e.faults.cpu_fallback),
            (None, false)
        );
    }

    #[test]
    fn contradictory_or_malformed_fields_are_refused_by_name() {
        refused(
            &cuzk_config {
                flags: CUZK_CONFIG_DEFER_EVALUATIONS_ON | CUZK_CONFIG_DEFER_EVALUATIONS_OFF,
                ..config()
            },
            "config.flags",
            "CUZK_CONFIG_DEFER_EVALUATIONS_OFF",
        );
        refused(
            &cuzk_config {
                flags: CUZK_CONFIG_NEVER_OUT_OF_ROTATION,
                fault_out_of_rotation_after: 2,
                ..config()
            },
            "config.fault_out_of_rotation_after",
            "CUZK_CONFIG_NEVER_OUT_OF_ROTATION",
        );
        let latin1 = c"/tmp/r\xe9cordings";
        refused(
            &cuzk_config {
                recordings_dir: latin1.as_ptr(),
                ..config()
            },
            "config.recordings_dir",
            "not UTF-8",
        );
        refused(
            &cuzk_config {
                recordings_dir: c"".as_ptr(),
                ..config()
            },
            "config.recordings_dir",
            "empty",
        );
        refused(
            &cuzk_config {
                flags: 1 << 31,
                ..config()
            },
            "config",
            "unknown flags 0x80000000",
        );
    }
}
