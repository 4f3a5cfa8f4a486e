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
//! the count, a fault sends the device out again). Work waits while every device is out,
//! unless [`FaultPolicy::cpu_fallback`] proves it on the host meanwhile. The state is
//! atomics read by the workers on their way to the queue; only a resting worker takes a
//! lock (its own condvar's, shared with shutdown and with every change of rotation).
//!
//! Hangs: a start phase that has not returned after [`FaultPolicy::start_deadline`] is a
//! device fault like the others (`hang.rs` runs it on a thread of its own so that its worker
//! can stop waiting), except that the device is *hung*: out of rotation until the stuck
//! call returns, however long that is, and only then rested for `probe_delay` and probed.
//! While every device is hung nothing would ever run a queued partition, so the hung
//! devices' workers fail them (or hand them to the CPU fallback) instead of waiting.

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
    /// How long a start phase may run before its device counts as hung (`None`: no limit).
    /// A hung device's partition is retried elsewhere and the device leaves rotation until
    /// the stuck call returns (a thread inside a CUDA call cannot be stopped); what it
    /// returns then is discarded. Off by default: the engine cannot know ahead how long a
    /// device takes for a partition (a 32 GiB PoRep partition takes seconds on a GPU,
    /// minutes on the CPU), and a deadline too short takes a healthy device out of
    /// rotation. A host that knows its devices sets it well above their slowest partition.
    pub start_deadline: Option<Duration>,
    /// Prove on the host's CPU backend, rather than fail or wait, a partition that used up
    /// its `max_attempts` (or whose devices are all hung), and every partition while no
    /// device is in rotation. Off by default: on a GPU host a CPU start phase can take
    /// minutes and uses every core, which a host may prefer to an error or may not.
    pub cpu_fallback: bool,
}

impl Default for FaultPolicy {
    fn default() -> Self {
        FaultPolicy {
            max_attempts: 3,
            out_of_rotation_after: 3,
            probe_delay: Duration::from_secs(30),
            start_deadline: None,
            cpu_fallback: false,
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
    hang: [AtomicU32; MAX_DEVICES],
    /// Per device, whether a hung start phase stays blocked, and how many `release`s there
    /// were: a start blocked before the last release goes on even if `hang_starts` holds
    /// the device again before it wakes.
    held: Mutex<[(bool, u64); MAX_DEVICES]>,
    released: Condvar,
    /// Every injection a start phase took, in order.
    taken: Mutex<Vec<Injected>>,
}

/// What an injected fault did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InjectedFault {
    /// The start phase failed (`fail_starts`).
    Fail,
    /// Its result was corrupted (`corrupt_results`).
    Corrupt,
    /// It blocked until `release` (`hang_starts`), then returned normally: a hung start
    /// phase takes no other injection.
    Hang,
}

/// An injection a start phase took: which device, job and partition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Injected {
    /// The device's index.
    pub device: usize,
    /// The job's sequence number ([`Job::seq`](super::Job::seq)).
    pub job: u64,
    /// The partition's index in its job.
    pub partition: usize,
    /// What it did.
    pub fault: InjectedFault,
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

    /// Device `device`'s next `n` start phases block, as a device stuck in a call would,
    /// until [`FaultInjector::release`].
    pub fn hang_starts(&self, device: usize, n: u32) {
        self.held.lock().unwrap_or_else(|p| p.into_inner())[device].0 = true;
        Self::add(&self.hang[device], n);
    }

    /// Device `device`'s blocked start phases go on (and return normally); those still to
    /// hang no longer block, until `hang_starts` again.
    pub fn release(&self, device: usize) {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        held[device] = (false, held[device].1 + 1);
        drop(held);
        self.released.notify_all();
    }

    /// Device `device` injects nothing more (and a hung start phase there goes on).
    pub fn heal(&self, device: usize) {
        self.disarm(device);
        self.release(device);
    }

    /// Device `device` injects nothing more; a start phase blocked there stays blocked
    /// until [`FaultInjector::release`].
    pub fn disarm(&self, device: usize) {
        self.fail[device].store(0, Relaxed);
        self.corrupt[device].store(0, Relaxed);
        self.hang[device].store(0, Relaxed);
    }

    /// Every injection start phases have taken so far, in order.
    pub fn taken(&self) -> Vec<Injected> {
        self.taken.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn took(&self, device: usize, job: u64, partition: usize, fault: InjectedFault) {
        let at = Injected {
            device,
            job,
            partition,
            fault,
        };
        self.taken
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(at);
    }

    /// Blocks while device `device`'s start phase now is to hang; returns whether it was.
    pub(crate) fn hang_if_asked(&self, device: usize, job: u64, partition: usize) -> bool {
        if !self.hang.get(device).is_some_and(Self::take) {
            return false;
        }
        self.took(device, job, partition, InjectedFault::Hang);
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let releases = held[device].1;
        while held[device] == (true, releases) {
            held = self.released.wait(held).unwrap_or_else(|p| p.into_inner());
        }
        true
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
    pub(crate) fn take_fail(&self, device: usize, job: u64, partition: usize) -> bool {
        let yes = self.fail.get(device).is_some_and(Self::take);
        if yes {
            self.took(device, job, partition, InjectedFault::Fail);
        }
        yes
    }

    /// Whether device `device`'s result now is to be corrupted.
    pub(crate) fn take_corrupt(&self, device: usize, job: u64, partition: usize) -> bool {
        let yes = self.corrupt.get(device).is_some_and(Self::take);
        if yes {
            self.took(device, job, partition, InjectedFault::Corrupt);
        }
        yes
    }
}

/// Which devices are in rotation, and each one's faults in a row.
pub(crate) struct Rotation {
    policy: FaultPolicy,
    stats: Arc<Stats>,
    names: Vec<String>,
    in_a_row: Vec<AtomicU32>,
    /// When the device may be probed again, in ns since the stats epoch; 0 in rotation,
    /// [`HUNG`] while a start phase there has not returned past its deadline.
    out_until: Vec<AtomicU64>,
    /// Resting workers wait here; shutdown and every change of rotation wake them.
    rest: Mutex<()>,
    wake: Condvar,
}

/// `Rotation::out_until` of a hung device: never probed until its stuck call returns.
const HUNG: u64 = u64::MAX;

/// A resting worker looks again at least this often. Every change it waits for notifies
/// it; this only bounds the cost of a wake-up lost to a bug.
const REST_SLICE: Duration = Duration::from_secs(1);

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
        // Never 0, which means "in rotation", nor HUNG.
        (self.stats.epoch.elapsed().as_nanos() as u64).clamp(1, HUNG - 1)
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

    /// Whether no device is in rotation.
    pub(crate) fn none_in_rotation(&self) -> bool {
        !(0..self.out_until.len()).any(|d| self.in_rotation(d))
    }

    /// Whether a start phase on `device` has not returned past its deadline.
    pub(crate) fn is_hung(&self, device: usize) -> bool {
        self.out_until[device].load(Relaxed) == HUNG
    }

    /// Whether every device is hung: no queued partition would ever be started.
    pub(crate) fn all_hung(&self) -> bool {
        (0..self.out_until.len()).all(|d| self.is_hung(d))
    }

    /// The hung devices' names, for an error.
    pub(crate) fn hung_names(&self) -> String {
        let hung: Vec<&str> = (0..self.names.len())
            .filter(|&d| self.is_hung(d))
            .map(|d| self.name(d))
            .collect();
        hung.join(", ")
    }

    /// Waits while `device` is out of rotation (until its probe delay is over, or `stop`
    /// says so), then, unless stopped, puts it back in rotation for its probe. A hung device
    /// waits until its stuck call has returned and its probe delay is over.
    pub(crate) fn wait_in_rotation(&self, device: usize, stop: impl Fn() -> bool) {
        if self.out_until[device].load(Relaxed) == 0 {
            return;
        }
        let mut g = self.rest.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            // Read again on every wake-up: a hang's end moves it.
            let until = self.out_until[device].load(Relaxed);
            if until == 0 {
                return;
            }
            let now = self.now_ns();
            if now >= until {
                drop(g);
                if self.out_until[device]
                    .compare_exchange(until, 0, Relaxed, Relaxed)
                    .is_ok()
                {
                    self.stats.devices_out_of_rotation.fetch_sub(1, Relaxed);
                    tracing::info!(target: "cuzk::engine", device = %self.names[device], "device back in rotation: probing");
                }
                return;
            }
            if stop() {
                return;
            }
            let slice = Duration::from_nanos(until - now).min(REST_SLICE);
            g = self
                .wake
                .wait_timeout(g, slice)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Wakes every resting worker (shutdown, or a change of rotation).
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
        let until = self
            .now_ns()
            .saturating_add(self.probe_delay_ns())
            .min(HUNG - 1);
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
        self.wake_all();
        true
    }

    /// Saturating: a host may ask for a delay past the u64 nanoseconds (never probed).
    fn probe_delay_ns(&self) -> u64 {
        u64::try_from(self.policy.probe_delay.as_nanos()).unwrap_or(u64::MAX)
    }

    /// A start phase on `device` is past its deadline: the device is hung, out of rotation
    /// until [`Rotation::hang_ended`]. (The fault itself is counted by `on_fault`.)
    pub(crate) fn hang(&self, device: usize) {
        self.stats.record_device_hang(device);
        // Out already (a probe pending): the gauge counts it.
        if self.out_until[device].swap(HUNG, Relaxed) == 0 {
            self.stats.devices_out_of_rotation.fetch_add(1, Relaxed);
        }
        tracing::warn!(
            target: "cuzk::engine",
            device = %self.names[device],
            deadline_ms = self.policy.start_deadline.map_or(0, |d| d.as_millis() as u64),
            "device hung: out of rotation until its start phase returns"
        );
        self.wake_all();
    }

    /// The stuck call on hung `device` returned: the device rests `probe_delay` from now,
    /// then its next result is the probe.
    pub(crate) fn hang_ended(&self, device: usize) {
        let until = self
            .now_ns()
            .saturating_add(self.probe_delay_ns())
            .min(HUNG - 1);
        if self.out_until[device]
            .compare_exchange(HUNG, until, Relaxed, Relaxed)
            .is_ok()
        {
            tracing::info!(target: "cuzk::engine", device = %self.names[device], "hung device's start phase returned; its result is discarded");
        }
        self.wake_all();
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
            cpu_fallback: false,
        }
    }
}

/// A device fault ended `work`'s attempt on device `device`: counts it, then queues the
/// partition again if it may be retried (for the CPU fallback once its devices are used
/// up, when the policy has one), or fails its job naming every attempt's error. Takes the
/// queue's lock for one push (a finalizer too: faults are rare, and it holds no other lock
/// then).
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
    let alive = !work.job.is_dead();
    // With every device hung a retry would wait for a call that may never return.
    let all_hung = rotation.all_hung();
    let retry = retry_from && attempts < max && alive && !all_hung;
    let fallback = !retry && retry_from && alive && rotation.policy().cpu_fallback;
    tracing::warn!(
        target: "cuzk::engine",
        device = %name,
        job = work.job.seq,
        partition = work.index,
        attempt = attempts,
        error = %error,
        retry,
        cpu_fallback = fallback,
        "device fault"
    );
    if !alive {
        shared.drop_work([work]);
        return;
    }
    if retry || fallback {
        if retry {
            shared.stats.partition_retries.fetch_add(1, Relaxed);
        }
        work.cpu_fallback = fallback;
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
            if !retry_from {
                "no room in the memory budget for a copy to retry from"
            } else {
                "every device is hung"
            }
        ));
    } else if attempts > 1 {
        shared
            .stats
            .partitions_failed_after_retries
            .fetch_add(1, Relaxed);
    }
    fail_partition(shared, work, e);
}

/// A queued partition no device will ever start (every device is hung, and there is no CPU
/// fallback): its job fails rather than wait for a call that may never return.
pub(crate) fn on_stranded(shared: &Shared, work: Work) {
    if work.job.is_dead() {
        shared.drop_work([work]);
        return;
    }
    let e = Error::new(
        ErrorKind::Gpu,
        format!(
            "not started: every device is hung (a start phase past its deadline has not \
             returned on {})",
            shared.rotation.hung_names()
        ),
    );
    fail_partition(shared, work, e);
}

fn fail_partition(shared: &Shared, work: Work, e: Error) {
    shared.stats.partitions_failed.fetch_add(1, Relaxed);
    let job = work.job.clone();
    if job.end(shared, e.context(format!("partition {}", work.index))) {
        shared.queue.purge_later(job.seq);
    }
    let bytes = work.eval_res.bytes() + work.rest_res.bytes();
    drop(work);
    shared.report_freed(bytes);
}
