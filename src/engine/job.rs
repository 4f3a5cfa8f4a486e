//! A proving job: the host's handle and the state the finalizers complete.
//!
//! A job's state lock is taken by finalizers (to store a proof or a failure), by the host
//! (`finish`, `poll`, `cancel`) and at shutdown; never by a device worker. Workers read only
//! the job's `dead` flag, an atomic, to skip partitions of a cancelled or failed job.

use std::sync::atomic::{
    AtomicBool, AtomicU64, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};
use std::sync::{Arc, Condvar};
use std::time::{Duration, Instant};

use super::lock::TrackedMutex;
use super::queue::Priority;
use super::request::JobKind;
use super::Shared;
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{PreparedVerifyingKey, Proof, Randomness, Srs};

/// Where one job's time went, summed over its partitions (so with several partitions in
/// flight at once a stage's sum can exceed the job's wall time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobTimings {
    /// Waiting in the engine's queues: for a synthesis thread and its memory (synthesized
    /// jobs), then for a device.
    pub queue_wait: Duration,
    /// Loading the job's params, if this job had to (zero when they were already loaded).
    pub params_load: Duration,
    /// Synthesis on the engine's synthesis threads.
    pub synthesis: Duration,
    /// On the device: the start phases (the device mutex held).
    pub device: Duration,
    /// On the finalizers: assembly, B_g2 on the host where the device left it, verification.
    pub finalize: Duration,
    /// From submission to the job's end (so far, while it runs).
    pub total: Duration,
}

/// [`JobTimings`] as the engine's threads add to them: atomics, no lock.
pub(crate) struct TimingCounters {
    submitted: Instant,
    ended_ns: AtomicU64,
    params_load: Duration,
    queue_wait_ns: AtomicU64,
    synthesis_ns: AtomicU64,
    device_ns: AtomicU64,
    finalize_ns: AtomicU64,
}

fn ns(d: Duration) -> u64 {
    d.as_nanos().min(u64::MAX as u128) as u64
}

impl TimingCounters {
    fn new(params_load: Duration) -> Self {
        TimingCounters {
            submitted: Instant::now(),
            ended_ns: AtomicU64::new(0),
            params_load,
            queue_wait_ns: AtomicU64::new(0),
            synthesis_ns: AtomicU64::new(0),
            device_ns: AtomicU64::new(0),
            finalize_ns: AtomicU64::new(0),
        }
    }
    pub(crate) fn add_queue_wait(&self, d: Duration) {
        self.queue_wait_ns.fetch_add(ns(d), Relaxed);
    }
    pub(crate) fn add_synthesis(&self, d: Duration) {
        self.synthesis_ns.fetch_add(ns(d), Relaxed);
    }
    pub(crate) fn add_device(&self, d: Duration) {
        self.device_ns.fetch_add(ns(d), Relaxed);
    }
    pub(crate) fn add_finalize(&self, d: Duration) {
        self.finalize_ns.fetch_add(ns(d), Relaxed);
    }
    fn mark_end(&self) {
        // +1 so that 0 keeps meaning "still running".
        let t = ns(self.submitted.elapsed()) + 1;
        let _ = self.ended_ns.compare_exchange(0, t, Relaxed, Relaxed);
    }
    fn snapshot(&self) -> JobTimings {
        let d = |a: &AtomicU64| Duration::from_nanos(a.load(Relaxed));
        let total = match self.ended_ns.load(Relaxed) {
            0 => self.submitted.elapsed(),
            t => Duration::from_nanos(t - 1),
        };
        JobTimings {
            queue_wait: d(&self.queue_wait_ns),
            params_load: self.params_load,
            synthesis: d(&self.synthesis_ns),
            device: d(&self.device_ns),
            finalize: d(&self.finalize_ns),
            total,
        }
    }
}

/// Where a job stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobStatus {
    /// Still running: `proved` of `total` partitions have their proof.
    Pending {
        /// Partitions proved so far.
        proved: usize,
        /// Partitions in the job.
        total: usize,
    },
    /// Every proof is ready; `finish` returns them.
    Done,
    /// The job failed; `finish` returns this error.
    Failed(Error),
    /// The job was cancelled.
    Cancelled,
}

enum Outcome {
    Pending,
    Done,
    Failed(Error),
    Cancelled,
}

struct State {
    proofs: Vec<Option<Proof>>,
    remaining: usize,
    outcome: Outcome,
}

/// A job as the engine's threads see it.
pub(crate) struct JobShared {
    pub(crate) seq: u64,
    pub(crate) priority: Priority,
    pub(crate) kind: JobKind,
    pub(crate) srs: Arc<Srs>,
    pub(crate) rs: Vec<Randomness>,
    /// Present when every proof is verified before it is returned.
    pub(crate) verify: Option<PreparedVerifyingKey>,
    pub(crate) timings: TimingCounters,
    /// Set once the job can no longer succeed (cancelled, failed, shut down); workers and
    /// finalizers skip its remaining partitions.
    dead: AtomicBool,
    state: TrackedMutex<State>,
    changed: Condvar,
}

impl JobShared {
    pub(crate) fn new(
        seq: u64,
        priority: Priority,
        kind: JobKind,
        srs: Arc<Srs>,
        rs: Vec<Randomness>,
        verify: bool,
        params_load: Duration,
    ) -> Self {
        let n = rs.len();
        JobShared {
            seq,
            priority,
            kind,
            verify: verify.then(|| srs.vk.prepare()),
            srs,
            rs,
            timings: TimingCounters::new(params_load),
            dead: AtomicBool::new(false),
            state: TrackedMutex::new(State {
                proofs: vec![None; n],
                remaining: n,
                outcome: Outcome::Pending,
            }),
            changed: Condvar::new(),
        }
    }

    pub(crate) fn is_dead(&self) -> bool {
        self.dead.load(Acquire)
    }

    /// Stores partition `index`'s proof; completes the job with its last one.
    pub(crate) fn complete(&self, shared: &Shared, index: usize, proof: Proof) {
        let mut s = self.state.lock();
        if !matches!(s.outcome, Outcome::Pending) || s.proofs[index].is_some() {
            return;
        }
        s.proofs[index] = Some(proof);
        s.remaining -= 1;
        if s.remaining == 0 {
            s.outcome = Outcome::Done;
            self.timings.mark_end();
            shared.stats.jobs_finished.fetch_add(1, Relaxed);
            shared.stats.jobs_finished_by_kind[self.kind.index()].fetch_add(1, Relaxed);
            drop(s);
            self.changed.notify_all();
        }
    }

    /// Ends the job as failed or cancelled unless it has already ended. Returns whether this
    /// call ended it.
    pub(crate) fn end(&self, shared: &Shared, error: Error) -> bool {
        let mut s = self.state.lock();
        if !matches!(s.outcome, Outcome::Pending) {
            return false;
        }
        self.dead.store(true, Release);
        self.timings.mark_end();
        if error.kind() == ErrorKind::Cancelled {
            s.outcome = Outcome::Cancelled;
            shared.stats.jobs_cancelled.fetch_add(1, Relaxed);
        } else {
            s.outcome = Outcome::Failed(error);
            shared.stats.jobs_failed.fetch_add(1, Relaxed);
            shared.stats.jobs_failed_by_kind[self.kind.index()].fetch_add(1, Relaxed);
        }
        // Proofs of a job that will never finish are of no use to anyone.
        s.proofs = Vec::new();
        drop(s);
        self.changed.notify_all();
        true
    }

    fn status(&self) -> JobStatus {
        let s = self.state.lock();
        match &s.outcome {
            Outcome::Pending => JobStatus::Pending {
                proved: s.proofs.len() - s.remaining,
                total: s.proofs.len(),
            },
            Outcome::Done => JobStatus::Done,
            Outcome::Failed(e) => JobStatus::Failed(e.clone()),
            Outcome::Cancelled => JobStatus::Cancelled,
        }
    }
}

/// The host's handle on a job. Dropping it before the job is done cancels the job: nobody
/// could collect its proofs any more, so its memory and queue places are given back.
pub struct Job {
    pub(crate) job: Arc<JobShared>,
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job")
            .field("seq", &self.job.seq)
            .field("priority", &self.job.priority)
            .field("partitions", &self.job.rs.len())
            .finish()
    }
}

impl Job {
    /// The job's sequence number (admission order; the queue's tie-breaker within a class).
    pub fn seq(&self) -> u64 {
        self.job.seq
    }

    /// The job's class.
    pub fn priority(&self) -> Priority {
        self.job.priority
    }

    /// Partitions in the job.
    pub fn partitions(&self) -> usize {
        self.job.rs.len()
    }

    /// What the job proves.
    pub fn kind(&self) -> JobKind {
        self.job.kind
    }

    /// Where the job's time went so far (final once it has ended).
    pub fn timings(&self) -> JobTimings {
        self.job.timings.snapshot()
    }

    /// Where the job stands, without waiting.
    pub fn poll(&self) -> JobStatus {
        self.job.status()
    }

    /// Waits up to `timeout` for the job to end and returns its proofs, in partition order.
    /// A [`ErrorKind::Timeout`] here leaves the job running; call again to keep waiting.
    pub fn finish(&self, timeout: Duration) -> Result<Vec<Proof>> {
        // A timeout too large to add to now means no deadline (a host may pass u64::MAX).
        let deadline = Instant::now().checked_add(timeout);
        let mut s = self.job.state.lock();
        loop {
            match &s.outcome {
                Outcome::Done => {
                    return s
                        .proofs
                        .iter()
                        .map(|p| p.ok_or_else(|| Error::internal("a done job lacks a proof")))
                        .collect()
                }
                Outcome::Failed(e) => return Err(e.clone()),
                Outcome::Cancelled => {
                    return Err(Error::new(
                        ErrorKind::Cancelled,
                        format!("job {} was cancelled", self.job.seq),
                    ))
                }
                Outcome::Pending => {}
            }
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            if left.is_zero() {
                return Err(Error::new(
                    ErrorKind::Timeout,
                    format!(
                        "job {} not finished after {timeout:?} ({} of {} partitions proved)",
                        self.job.seq,
                        s.proofs.len() - s.remaining,
                        s.proofs.len()
                    ),
                ));
            }
            s = match deadline {
                Some(_) => s.wait_timeout(&self.job.changed, left),
                None => s.wait(&self.job.changed),
            };
        }
    }

    /// Cancels the job unless it has already ended. Its queued partitions leave the queue and
    /// give their memory back now; a partition on a device or a finalizer is discarded when
    /// that step ends. Returns whether this call cancelled it.
    pub fn cancel(&self) -> bool {
        let cancelled = self.job.end(
            &self.shared,
            Error::new(
                ErrorKind::Cancelled,
                format!("job {} was cancelled", self.job.seq),
            ),
        );
        if cancelled {
            self.shared.drop_queued(self.job.seq);
        }
        cancelled
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.cancel();
    }
}
