//! Device faults: which failures are retried, the rotation of failing devices, and the test
//! hook that injects faults.
//!
//! A start phase that returns a device error (`Gpu`, `Internal`), a backend that panics, or
//! a proof that fails its own verification in a finalizer is a device fault: the partition
//! (not its job) goes back into the queue for another device, at most
//! [`FaultPolicy::max_attempts`] start phases in all, then its job fails with every attempt's
//! error named. Anything else (an invalid assignment, a cancelled job) is the input's or the
//! host's doing and fails the job at once.
//!
//! The evaluations (a, b, c) a retry needs: a partition with a recording
//! (`Work::deferred`) is retried from its witness alone. Otherwise the start phase consumes
//! its evaluations (the CPU transforms them in place), so the worker hands the start phase a
//! copy and keeps the original, but only while a retry is still possible and only if the
//! budget takes the copy at once (`try_reserve`): memory is never waited for, nor overdrawn,
//! for a retry that may never be needed. Without that room the partition has no retry. The
//! copy costs a host memcpy of a, b, c outside the device mutex; changing `StartPhase` to
//! hand the evaluations back on failure would avoid it for the GPU, which only reads them,
//! but not for the CPU, and a verification failure comes after the start phase anyway.
//!
//! Rotation: a device whose start phases fault [`FaultPolicy::out_of_rotation_after`] times
//! in a row leaves rotation. Its workers stop popping work and, after
//! [`FaultPolicy::probe_delay`], pop again: the next result is the probe (a success resets
//! the count, a fault sends the device out again). Work waits while every device is out.
//! The state is atomics read by the workers on their way to the queue; only a resting
//! worker takes a lock (its own condvar's, shared with shutdown).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::job::JobShared;
use super::queue::QueueKey;
use super::{Reservation, Shared, Work};
use crate::error::{Error, ErrorKind};
use crate::groth16::{Assignment, DeferredEvaluations, Evaluations, Witness};
use crate::stats::{Stats, MAX_DEVICES};

/// How the engine treats device faults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultPolicy {
    /// Start phases a partition gets in all, the first included (`1`: no retries).
    pub max_attempts: u32,
    /// Device faults in a row that take a device out of rotation (`0`: never).
    pub out_of_rotation_after: u32,
    /// How long a device stays out of rotation before its workers probe it again.
    pub probe_delay: Duration,
}

impl Default for FaultPolicy {
    fn default() -> Self {
        FaultPolicy {
            max_attempts: 3,
            out_of_rotation_after: 3,
            probe_delay: Duration::from_secs(30),
        }
    }
}

/// Whether `e`, from a start phase or a verification, is the device's fault (retried) rather
/// than the input's (not retried).
pub(crate) fn is_device_fault(e: &Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::Gpu | ErrorKind::Internal | ErrorKind::VerificationFailed
    )
}

/// One failed attempt of a partition.
#[derive(Clone, Debug)]
pub(crate) struct Fault {
    pub(crate) device_index: usize,
    pub(crate) device: String,
    pub(crate) error: Error,
}

/// The error a partition's job fails with after its last attempt: the last error's kind,
/// and every attempt's device and error.
pub(crate) fn exhausted(faults: &[Fault]) -> Error {
    let last = &faults[faults.len() - 1];
    if faults.len() == 1 {
        return last
            .error
            .clone()
            .context(format!("device {}", last.device));
    }
    let each: Vec<String> = faults
        .iter()
        .enumerate()
        .map(|(i, f)| format!("attempt {} on device {}: {}", i + 1, f.device, f.error))
        .collect();
    Error::new(
        last.error.kind(),
        format!(
            "failed on all {} attempts ({})",
            faults.len(),
            each.join("; ")
        ),
    )
}

/// A test hook that makes devices fail: set in [`Hooks::faults`](super::Hooks::faults).
#[derive(Debug, Default)]
pub struct FaultInjector {
    fail: [AtomicU32; MAX_DEVICES],
    corrupt: [AtomicU32; MAX_DEVICES],
}

impl FaultInjector {
    /// An injector that injects nothing yet.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// Device `device`'s next `n` start phases fail with a `Gpu` error (`u32::MAX`: all of
    /// them, until [`FaultInjector::heal`]).
    pub fn fail_starts(&self, device: usize, n: u32) {
        Self::add(&self.fail[device], n);
    }

    /// Device `device`'s next `n` start phases return a result that no verifier accepts
    /// (A off by one generator); only a job that verifies its proofs catches it.
    pub fn corrupt_results(&self, device: usize, n: u32) {
        Self::add(&self.corrupt[device], n);
    }

    /// Device `device` injects nothing more.
    pub fn heal(&self, device: usize) {
        self.fail[device].store(0, Relaxed);
        self.corrupt[device].store(0, Relaxed);
    }

    fn add(counter: &AtomicU32, n: u32) {
        let _ = counter.fetch_update(Relaxed, Relaxed, |c| Some(c.saturating_add(n)));
    }

    fn take(counter: &AtomicU32) -> bool {
        counter
            .fetch_update(Relaxed, Relaxed, |n| n.checked_sub(1))
            .is_ok()
    }

    /// Whether device `device`'s start phase now is to fail.
    pub(crate) fn take_fail(&self, device: usize) -> bool {
        self.fail.get(device).is_some_and(Self::take)
    }

    /// Whether device `device`'s result now is to be corrupted.
    pub(crate) fn take_corrupt(&self, device: usize) -> bool {
        self.corrupt.get(device).is_some_and(Self::take)
    }
}

/// Which devices are in rotation, and each one's faults in a row.
pub(crate) struct Rotation {
    policy: FaultPolicy,
    stats: Arc<Stats>,
    names: Vec<String>,
    in_a_row: Vec<AtomicU32>,
    /// When the device may be probed again, in ns since the stats epoch; 0 in rotation.
    out_until: Vec<AtomicU64>,
    /// Resting workers wait here; shutdown wakes them.
    rest: Mutex<()>,
    wake: Condvar,
}

impl Rotation {
    pub(crate) fn new(policy: FaultPolicy, names: Vec<String>, stats: Arc<Stats>) -> Self {
        let devices = names.len();
        Rotation {
            policy,
            stats,
            names,
            in_a_row: (0..devices).map(|_| AtomicU32::new(0)).collect(),
            out_until: (0..devices).map(|_| AtomicU64::new(0)).collect(),
            rest: Mutex::new(()),
            wake: Condvar::new(),
        }
    }

    pub(crate) fn policy(&self) -> &FaultPolicy {
        &self.policy
    }

    /// Device `device`'s name.
    pub(crate) fn name(&self, device: usize) -> &str {
        &self.names[device]
    }

    fn now_ns(&self) -> u64 {
        // Never 0, which means "in rotation".
        (self.stats.epoch.elapsed().as_nanos() as u64).max(1)
    }

    /// Whether `device` is in rotation now (a device whose probe delay is over counts as in).
    pub(crate) fn in_rotation(&self, device: usize) -> bool {
        let until = self.out_until[device].load(Relaxed);
        until == 0 || self.now_ns() >= until
    }

    /// Whether a device other than `device` is in rotation and passes `usable`.
    pub(crate) fn another(&self, device: usize, usable: impl Fn(usize) -> bool) -> bool {
        (0..self.out_until.len()).any(|d| d != device && self.in_rotation(d) && usable(d))
    }

    /// Waits while `device` is out of rotation (until its probe delay is over, or `stop`
    /// says so), then puts it back in rotation for its probe.
    pub(crate) fn wait_in_rotation(&self, device: usize, stop: impl Fn() -> bool) {
        let until = self.out_until[device].load(Relaxed);
        if until == 0 {
            return;
        }
        let mut g = self.rest.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let now = self.now_ns();
            if stop() || now >= until {
                break;
            }
            g = self
                .wake
                .wait_timeout(g, Duration::from_nanos(until - now))
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        drop(g);
        if self.out_until[device]
            .compare_exchange(until, 0, Relaxed, Relaxed)
            .is_ok()
        {
            self.stats.devices_out_of_rotation.fetch_sub(1, Relaxed);
            tracing::info!(target: "cuzk::engine", device = %self.names[device], "device back in rotation: probing");
        }
    }

    /// Wakes every resting worker (shutdown).
    pub(crate) fn wake_all(&self) {
        let _g = self.rest.lock().unwrap_or_else(|p| p.into_inner());
        self.wake.notify_all();
    }

    /// A start phase on `device` succeeded.
    pub(crate) fn success(&self, device: usize) {
        if self.in_a_row[device].load(Relaxed) != 0 {
            self.in_a_row[device].store(0, Relaxed);
        }
    }

    /// A device fault on `device`; returns whether it took the device out of rotation.
    pub(crate) fn fault(&self, device: usize) -> bool {
        self.stats.record_device_fault(device);
        let n = self.in_a_row[device].fetch_add(1, Relaxed) + 1;
        let k = self.policy.out_of_rotation_after;
        if k == 0 || n < k {
            return false;
        }
        // Saturating: a host may ask for a delay past the u64 nanoseconds (never probed).
        let delay = u64::try_from(self.policy.probe_delay.as_nanos()).unwrap_or(u64::MAX);
        let until = self.now_ns().saturating_add(delay);
        if self.out_until[device]
            .compare_exchange(0, until, Relaxed, Relaxed)
            .is_err()
        {
            return false;
        }
        self.stats.devices_out_of_rotation.fetch_add(1, Relaxed);
        tracing::warn!(
            target: "cuzk::engine",
            device = %self.names[device],
            faults_in_a_row = n,
            probe_in_ms = self.policy.probe_delay.as_millis() as u64,
            "device out of rotation"
        );
        true
    }
}

/// What a started partition keeps so that it can be started again.
pub(crate) struct Retry {
    /// The evaluations kept back from the start phase, and their reservation.
    pub(crate) kept: Option<(Evaluations, Reservation)>,
    /// The recording a deferred partition is started from (its witness is all it needs).
    pub(crate) deferred: Option<Arc<dyn DeferredEvaluations>>,
    /// The faults of its earlier attempts.
    pub(crate) faults: Vec<Fault>,
}

impl Retry {
    /// Whether the partition could be started again from what is kept.
    pub(crate) fn possible(&self) -> bool {
        self.deferred.is_some() || self.kept.is_some()
    }

    /// Frees the kept evaluations: the partition will not be started again.
    pub(crate) fn release(&mut self, shared: &Shared) {
        if let Some((e, r)) = self.kept.take() {
            let bytes = r.bytes();
            drop((e, r));
            shared.report_freed(bytes);
        }
    }

    /// The partition as it is queued again.
    pub(crate) fn into_work(
        self,
        job: Arc<JobShared>,
        index: usize,
        witness: Witness,
        mut rest_res: Reservation,
    ) -> Work {
        let (evaluations, eval_res) = match self.kept {
            Some((e, r)) => (e, r),
            None => (Evaluations::default(), rest_res.split(0)),
        };
        Work {
            job,
            index,
            assignment: Assignment {
                evaluations,
                witness,
            },
            deferred: self.deferred,
            eval_res,
            rest_res,
            queued_at: Instant::now(),
            ready_slot: None,
            faults: self.faults,
        }
    }
}

/// A device fault ended `work`'s attempt on device `device`: counts it, then queues the
/// partition again if it may be retried, or fails its job naming every attempt's error.
/// Takes the queue's lock for one push (a finalizer too: faults are rare, and it holds no
/// other lock then).
pub(crate) fn on_fault(
    shared: &Shared,
    mut work: Work,
    retry_from: bool,
    device: usize,
    error: Error,
) {
    let rotation = &shared.rotation;
    let name = rotation.name(device).to_string();
    rotation.fault(device);
    work.faults.push(Fault {
        device_index: device,
        device: name.clone(),
        error: error.clone(),
    });
    let attempts = work.faults.len() as u32;
    let max = rotation.policy().max_attempts;
    let retry = retry_from && attempts < max && !work.job.is_dead();
    tracing::warn!(
        target: "cuzk::engine",
        device = %name,
        job = work.job.seq,
        partition = work.index,
        attempt = attempts,
        error = %error,
        retry,
        "device fault"
    );
    if work.job.is_dead() {
        shared.drop_work([work]);
        return;
    }
    if retry {
        shared.stats.partition_retries.fetch_add(1, Relaxed);
        let key = QueueKey {
            priority: work.job.priority,
            job_seq: work.job.seq,
            partition: work.index,
        };
        shared.push_partition(key, work);
        return;
    }
    let mut e = exhausted(&work.faults);
    if attempts < max {
        e = e.context(format!(
            "not retried ({})",
            if retry_from {
                "its job ended"
            } else {
                "no room in the memory budget to keep its evaluations for a retry"
            }
        ));
    } else if attempts > 1 {
        shared
            .stats
            .partitions_failed_after_retries
            .fetch_add(1, Relaxed);
    }
    shared.stats.partitions_failed.fetch_add(1, Relaxed);
    let job = work.job.clone();
    if job.end(shared, e.context(format!("partition {}", work.index))) {
        shared.queue.purge_later(job.seq);
    }
    let bytes = work.eval_res.bytes() + work.rest_res.bytes();
    drop(work);
    shared.report_freed(bytes);
}
