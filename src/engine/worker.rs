//! The device worker: pops partitions in order and runs their start phase on its device, or
//! on the CPU fallback when the fault policy says so (`faults.rs`).
//!
//! Between two partitions a worker takes only the queue's lock (never taken by a finalizer
//! or the trimmer) and its device's mutex (taken only by the device's workers), or instead
//! of the device's mutex the CPU fallback's lock (taken only by workers). Everything else
//! it does there is an atomic (budget release, freed-bytes report, stats) or a channel send
//! to the finalizers.

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use blstrs::G1Projective;
use group::Group;

use super::budget::Reservation;
use super::device::{Acquired, DeviceGuard};
use super::faults::{is_device_fault, on_fault, on_stranded, FaultInjector, Retry};
use super::finalizer::Finalize;
use super::hang::{StartCall, StartOutput};
use super::lock::TrackedGuard;
use super::queue::QueueKey;
use super::{panic_message, Device, DeviceMutex, PartitionHook, Shared, Work};
use crate::cpu::CpuStart;
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{
    Assignment, DeferredEvaluations, Evaluations, PartialProof, Srs, Staged, StartPhase,
    StartTimings, Witness,
};

pub(crate) struct Worker {
    pub(crate) device_index: usize,
    pub(crate) device: Device,
    pub(crate) mutex: Arc<DeviceMutex>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) to_finalizers: Sender<Finalize>,
    pub(crate) on_device_start: Option<PartitionHook>,
    pub(crate) faults: Option<Arc<FaultInjector>>,
}

/// Where a popped partition's start phase runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Seat {
    /// This worker's device.
    Device,
    /// The host's CPU backend (`FaultPolicy::cpu_fallback`).
    CpuFallback,
}

/// The lock a start phase runs under.
enum Held<'a> {
    Device(DeviceGuard<'a>),
    CpuFallback {
        _lock: TrackedGuard<'a, ()>,
        since: Instant,
    },
}

impl Held<'_> {
    fn held(&self) -> Duration {
        match self {
            Held::Device(g) => g.held(),
            Held::CpuFallback { since, .. } => since.elapsed(),
        }
    }
}

/// Where a start phase runs, for the test hook: the device, the job, the partition.
#[derive(Clone, Copy)]
struct At {
    device: usize,
    job: u64,
    partition: usize,
}

/// The start phase itself (from what was staged for it, if anything), with the test hook's
/// injected faults on a device.
#[allow(clippy::too_many_arguments)]
fn call_start(
    backend: &dyn StartPhase,
    srs: &Srs,
    deferred: Option<&dyn DeferredEvaluations>,
    evaluations: Evaluations,
    witness: &Witness,
    staged: Option<Staged>,
    injector: Option<&FaultInjector>,
    at: At,
) -> Result<(PartialProof, StartTimings)> {
    let At {
        device,
        job,
        partition,
    } = at;
    // A start phase that hung returns normally once released: it takes no other injection.
    let hung = injector.is_some_and(|inj| inj.hang_if_asked(device, job, partition));
    let injector = injector.filter(|_| !hung);
    if let Some(inj) = injector {
        if inj.take_fail(device, job, partition) {
            return Err(Error::new(
                ErrorKind::Gpu,
                "injected fault (FaultInjector::fail_starts)",
            ));
        }
    }
    let mut r = match (deferred, staged) {
        (Some(rec), Some(st)) => backend.start_deferred_staged(srs, rec, witness, st),
        (Some(rec), None) => backend.start_deferred(srs, rec, witness),
        (None, Some(st)) => backend.start_staged(srs, evaluations, witness, st),
        (None, None) => backend.start(srs, evaluations, witness),
    };
    if let (Some(inj), Ok((p, _))) = (injector, &mut r) {
        if inj.take_corrupt(device, job, partition) {
            p.a += G1Projective::generator();
        }
    }
    r
}

/// Once a start phase has taken its evaluations: the reservation of what it took (the
/// copy's, when the original was kept for a retry), and the kept original with its own.
fn consumed_and_kept(
    kept: Option<Evaluations>,
    copy_res: Option<Reservation>,
    eval_res: Reservation,
) -> (Reservation, Option<(Evaluations, Reservation)>) {
    match (kept, copy_res) {
        (Some(e), Some(copy)) => (copy, Some((e, eval_res))),
        _ => (eval_res, None),
    }
}

impl Worker {
    pub(crate) fn run(self) {
        let shared = &*self.shared;
        let d = self.device_index;
        let rotation = &shared.rotation;
        let fallback = rotation.policy().cpu_fallback;
        // No device will start anything for a while: with the CPU fallback this worker
        // proves on the host meanwhile; with every device hung, it fails what is queued
        // (nothing else would ever end those jobs).
        let stranded = || {
            !rotation.in_rotation(d)
                && rotation.none_in_rotation()
                && (fallback || rotation.all_hung())
        };
        loop {
            // A device out of rotation pops nothing until its probe delay is over (a hung
            // one, until its stuck call has returned and then its probe delay is over).
            rotation.wait_in_rotation(d, || shared.queue.is_closed() || stranded());
            // Partitions of failed jobs the finalizers asked the queue to drop; freed
            // outside the queue's lock. A retried partition goes to a device that has not
            // failed it yet, while one in rotation has not. A partition bound for the CPU
            // fallback is popped only with the fallback's lock, taken if free: one at a
            // time leaves the queue for it, and the rest stay queued (in priority order,
            // removed at once by a cancel, and there for a device that comes back) rather
            // than pile up in workers waiting for that lock, which would also keep a device
            // in rotation short of its workers.
            let fallback_lock = RefCell::new(None);
            let popped = shared.queue.pop_eligible(
                |purged| shared.drop_work(purged.into_iter().map(|(_, w)| w)),
                |w| {
                    if fallback && (w.cpu_fallback || rotation.none_in_rotation()) {
                        let mut lock = fallback_lock.borrow_mut();
                        if lock.is_none() {
                            *lock = shared.cpu_fallback.try_lock();
                        }
                        return lock.is_some();
                    }
                    stranded() || !w.tried_on(d) || !rotation.another(d, |o| !w.tried_on(o))
                },
            );
            // Taken only for the partition popped (the first one the closure accepts).
            let fallback_lock = fallback_lock.into_inner();
            let Some((key, work)) = popped else { return };
            if work.job.is_dead() {
                drop(fallback_lock);
                shared.drop_work([work]);
                continue;
            }
            let seat = if fallback_lock.is_some() {
                Seat::CpuFallback
            } else if rotation.in_rotation(d) {
                Seat::Device
            } else if !fallback && rotation.all_hung() {
                on_stranded(shared, work);
                continue;
            } else {
                // The other worker's fault took the device out while this one waited (or,
                // with the fallback, no device is left and another worker holds it).
                self.requeue(key, work);
                continue;
            };
            self.start(seat, fallback_lock, key, work);
        }
    }

    /// Stages a partition's inputs on this worker's device (`StartPhase::stage`), timed into
    /// the stats. A device that cannot stage (no room, an error) starts the partition
    /// unstaged: staging only moves copies out of the mutex, it never decides an outcome.
    fn stage(
        &self,
        srs: &Srs,
        deferred: bool,
        evaluations: &Evaluations,
        witness: &Witness,
    ) -> Option<Staged> {
        let shared = &*self.shared;
        let t = Instant::now();
        let host = (!deferred).then_some(evaluations);
        let staged = catch_unwind(AssertUnwindSafe(|| {
            self.device.backend.stage(srs, host, witness)
        }));
        let staged = match staged {
            Ok(Ok(s)) => s,
            Ok(Err(e)) => {
                tracing::warn!(target: "cuzk::gpu_timing", device = %self.device.name, error = %e,
                    "staging failed; the partition starts unstaged");
                None
            }
            Err(p) => {
                tracing::warn!(target: "cuzk::gpu_timing", device = %self.device.name,
                    panic = %panic_message(&*p), "staging panicked; the partition starts unstaged");
                None
            }
        };
        if staged.is_some() {
            shared.stats.staging.record(t.elapsed());
            shared.stats.partitions_staged.fetch_add(1, Relaxed);
        }
        staged
    }

    fn requeue(&self, key: QueueKey, work: Work) {
        if let Err(items) = self.shared.queue.push_all(vec![(key, work)]) {
            self.shared.drop_work(items.into_iter().map(|(_, w)| w));
        }
    }

    /// Runs `work`'s start phase at `seat` (the CPU fallback: under `fallback_lock`, taken
    /// with the pop) and hands the result to a finalizer (or, on a device fault, to
    /// `on_fault`).
    fn start(
        &self,
        seat: Seat,
        fallback_lock: Option<TrackedGuard<'_, ()>>,
        key: QueueKey,
        work: Work,
    ) {
        let shared = &*self.shared;
        let d = self.device_index;
        let rotation = &shared.rotation;
        let policy = *rotation.policy();
        // Recorded once the partition has its seat (below): one whose device leaves rotation
        // while it waits for the mutex goes back to the queue, its wait still running.
        let queued_at = work.queued_at;
        let queue_wait = queued_at.elapsed();
        let Work {
            job,
            index,
            assignment:
                Assignment {
                    evaluations,
                    witness,
                },
            deferred,
            eval_res,
            rest_res,
            ready_slot,
            faults,
            ..
        } = work;
        // The partition has left the ready queue: a synthesis thread may queue another.
        drop(ready_slot);

        // What a retry (or the CPU fallback) would start from (faults.rs says why a copy):
        // a recorded partition needs only its witness; otherwise the start phase gets a
        // copy of the evaluations, if another attempt is still possible and the budget has
        // room for it now. The fallback is the last attempt.
        let may_retry = seat == Seat::Device
            && ((faults.len() as u32 + 1) < policy.max_attempts || policy.cpu_fallback);
        let (evaluations, kept, copy_res) = match &deferred {
            Some(_) => (evaluations, None, None),
            None if may_retry => match shared.budget.try_reserve(eval_res.bytes()) {
                Ok(r) => (evaluations.par_clone(), Some(evaluations), Some(r)),
                Err(_) => (evaluations, None, None),
            },
            None => (evaluations, None, None),
        };
        let retry_from = deferred.is_some() || kept.is_some();
        // Its inputs go to the device now, before the device's mutex: the copies overlap the
        // kernels of the partition the device's other worker runs, and the mutex then
        // covers this partition's kernels, not its uploads.
        let staged = match seat {
            Seat::Device => self.stage(&job.srs, deferred.is_some(), &evaluations, &witness),
            Seat::CpuFallback => None,
        };

        let held = match seat {
            Seat::Device => {
                match self
                    .mutex
                    .lock_if(|| !shared.queue.is_empty(), || rotation.in_rotation(d))
                {
                    Some((g, acquired)) => (Held::Device(g), acquired),
                    None => {
                        // The device left rotation (or hung) while this worker waited for
                        // it: the partition goes back as it came.
                        drop(staged);
                        let (evaluations, eval_res) = match (kept, copy_res) {
                            (Some(original), Some(copy)) => {
                                drop((evaluations, copy));
                                (original, eval_res)
                            }
                            _ => (evaluations, eval_res),
                        };
                        let work = Work {
                            job,
                            index,
                            assignment: Assignment {
                                evaluations,
                                witness,
                            },
                            deferred,
                            eval_res,
                            rest_res,
                            queued_at,
                            ready_slot: None,
                            faults,
                            cpu_fallback: false,
                        };
                        self.requeue(key, work);
                        return;
                    }
                }
            }
            Seat::CpuFallback => {
                shared.stats.cpu_fallbacks.fetch_add(1, Relaxed);
                let held = Held::CpuFallback {
                    _lock: fallback_lock.expect("taken with the pop"),
                    since: Instant::now(),
                };
                (held, Acquired::default())
            }
        };
        let (guard, acquired) = held;
        shared.stats.queue_wait.record(queue_wait);
        job.timings.add_queue_wait(queue_wait);
        let (backend, injector): (&dyn StartPhase, _) = match seat {
            Seat::Device => (&*self.device.backend, self.faults.as_deref()),
            // Injected faults are the devices'; the fallback is the host.
            Seat::CpuFallback => (&CpuStart, None),
        };
        let seat_name = match seat {
            Seat::Device => self.device.name.as_str(),
            Seat::CpuFallback => "cpu-fallback",
        };
        // The hook, then the start phase: only these run under the device mutex (or the
        // fallback's lock). A panic in either fails this attempt and nothing else; the
        // lock is released normally.
        let hook = catch_unwind(AssertUnwindSafe(|| {
            if let Some(h) = &self.on_device_start {
                h(job.seq, index);
            }
        }));
        let deadline = policy.start_deadline.filter(|_| seat == Seat::Device);
        let at = At {
            device: d,
            job: job.seq,
            partition: index,
        };
        let (result, witness): (StartOutput, Witness) = match (hook, deadline) {
            (Err(p), _) => (Err(p), witness),
            (Ok(()), None) => {
                let r = catch_unwind(AssertUnwindSafe(|| {
                    call_start(
                        backend,
                        &job.srs,
                        deferred.as_deref(),
                        evaluations,
                        &witness,
                        staged,
                        injector,
                        at,
                    )
                }));
                (r, witness)
            }
            (Ok(()), Some(deadline)) => {
                let witness = Arc::new(witness);
                let call = {
                    let (backend, srs, rec, w, inj) = (
                        self.device.backend.clone(),
                        job.srs.clone(),
                        deferred.clone(),
                        witness.clone(),
                        self.faults.clone(),
                    );
                    // The closure's captures (this witness among them) are dropped when it
                    // returns, before the caller hears of it.
                    StartCall::spawn(format!("cuzk-{}-call", self.device.name), move || {
                        catch_unwind(AssertUnwindSafe(move || {
                            call_start(
                                &*backend,
                                &srs,
                                rec.as_deref(),
                                evaluations,
                                &w,
                                staged,
                                inj.as_deref(),
                                at,
                            )
                        }))
                    })
                };
                let out = match call {
                    Err(e) => Some(Ok(Err(e))),
                    Ok(call) => match call.wait(deadline) {
                        Some(out) => Some(out),
                        None => {
                            self.on_hang(
                                call, guard, deadline, job, index, witness, deferred, kept,
                                copy_res, eval_res, rest_res, faults,
                            );
                            return;
                        }
                    },
                };
                let witness = Arc::try_unwrap(witness).unwrap_or_else(|w| (*w).clone());
                (out.expect("set in every arm"), witness)
            }
        };
        let compute = guard.held();
        drop(guard);
        job.timings.add_device(compute);

        // The start phase consumed the evaluations it was given: their share of the
        // budget goes back (the copy's, when the original is kept for a retry).
        let (consumed, kept) = consumed_and_kept(kept, copy_res, eval_res);
        let eval_bytes = consumed.bytes();
        drop(consumed);
        shared.report_freed(eval_bytes);
        let result = result.unwrap_or_else(|p| {
            Err(Error::internal(format!(
                "device {seat_name} backend panicked: {}",
                panic_message(&*p)
            )))
        });
        let stages = result.as_ref().ok().map(|(_, t)| *t);
        if let Some(t) = &stages {
            shared.stats.stages.record(t);
            shared.stats.start_matvec.record(t.matvec);
            // The device's own measure of its work, next to the mutex hold above.
            if seat == Seat::Device {
                shared
                    .stats
                    .record_kernel_active(self.device_index, t.kernels.as_nanos() as u64);
            }
        }
        let us = |f: fn(&StartTimings) -> Duration| stages.map(|t| f(&t).as_micros() as u64);
        tracing::debug!(
            target: "cuzk::gpu_timing",
            device = %seat_name,
            job = job.seq,
            partition = index,
            queue_wait_us = queue_wait.as_micros() as u64,
            mutex_wait_us = acquired.wait.as_micros() as u64,
            compute_us = compute.as_micros() as u64,
            gap_us = acquired.gap.map(|g| g.as_micros() as u64),
            matvec_us = us(|t| t.matvec),
            ntt_us = us(|t| t.ntt),
            msm_us = us(|t| t.msm),
            h2d_us = us(|t| t.host_to_device),
            d2h_us = us(|t| t.device_to_host),
            kernels_us = us(|t| t.kernels),
            kernel_span_us = us(|t| t.kernel_span),
            attempt = faults.len() + 1,
            ok = result.is_ok(),
            "start phase"
        );
        let mut retry = Retry {
            kept,
            deferred,
            faults,
        };
        let result = match (seat, result) {
            (Seat::Device, Err(e)) if is_device_fault(&e) => {
                let work = retry.into_work(job, index, witness, rest_res);
                on_fault(shared, work, retry_from, d, e);
                return;
            }
            (Seat::CpuFallback, Err(e)) => Err(e.context(format!(
                "on the CPU fallback after {} device attempts",
                retry.faults.len()
            ))),
            (_, r) => r,
        };
        match &result {
            // Only a verification failure could still send it back.
            Ok(_) if job.verify.is_some() && seat == Seat::Device => {}
            _ => retry.release(shared),
        }
        let msg = Finalize {
            job,
            index,
            device_index: (seat == Seat::Device).then_some(self.device_index),
            witness,
            result,
            rest_res,
            retry,
        };
        if let Err(crossbeam_channel::SendError(msg)) = self.to_finalizers.send(msg) {
            // The finalizers outlive the workers, so this means an engine bug; still,
            // the job must not hang.
            msg.job.end(
                shared,
                Error::internal("no finalizer left to finish the partition"),
            );
            shared.stats.partitions_dropped.fetch_add(1, Relaxed);
            let mut retry = msg.retry;
            retry.release(shared);
            shared.drop_work_parts(msg.rest_res, msg.witness);
        }
    }

    /// The start phase on this worker's device missed its deadline: the device is hung
    /// until the call returns. The call keeps what it reads (the evaluations it was given
    /// and the witness) reserved until then; the partition is retried from its kept
    /// evaluations (or recording) and a copy of the witness, if the budget takes the copy
    /// at once.
    #[allow(clippy::too_many_arguments)]
    fn on_hang(
        &self,
        call: StartCall,
        guard: Held<'_>,
        deadline: Duration,
        job: Arc<super::job::JobShared>,
        index: usize,
        witness: Arc<Witness>,
        deferred: Option<Arc<dyn DeferredEvaluations>>,
        kept: Option<Evaluations>,
        copy_res: Option<super::Reservation>,
        eval_res: super::Reservation,
        mut rest_res: super::Reservation,
        faults: Vec<super::faults::Fault>,
    ) {
        let shared = &*self.shared;
        let d = self.device_index;
        // Before the mutex is released: the device's other worker, waiting for it, must
        // find the device out of rotation.
        shared.rotation.hang(d);
        let compute = guard.held();
        drop(guard);
        job.timings.add_device(compute);
        let (in_call, kept) = consumed_and_kept(kept, copy_res, eval_res);
        let copy = match deferred.is_some() || kept.is_some() {
            true => shared.budget.try_reserve(rest_res.bytes()).ok(),
            false => None,
        };
        let retry_from = copy.is_some();
        let (witness_copy, retry_rest) = match copy {
            Some(r) => ((*witness).clone(), r),
            None => (Witness::default(), rest_res.split(0)),
        };
        drop(witness);
        shared.stuck_calls.fetch_add(1, Relaxed);
        let on_return = {
            let shared = self.shared.clone();
            Box::new(move || {
                let bytes = in_call.bytes() + rest_res.bytes();
                drop((in_call, rest_res));
                shared.report_freed(bytes);
                shared.rotation.hang_ended(d);
                shared.stuck_calls.fetch_sub(1, Relaxed);
            })
        };
        call.abandon(on_return);
        tracing::debug!(
            target: "cuzk::gpu_timing",
            device = %self.device.name,
            job = job.seq,
            partition = index,
            compute_us = compute.as_micros() as u64,
            attempt = faults.len() + 1,
            ok = false,
            hung = true,
            "start phase"
        );
        let error = Error::new(
            ErrorKind::Gpu,
            format!(
                "the start phase did not return within {deadline:?} (faults.start_deadline): \
                 device hung"
            ),
        );
        let retry = Retry {
            kept,
            deferred,
            faults,
        };
        let work = retry.into_work(job, index, witness_copy, retry_rest);
        on_fault(shared, work, retry_from, d, error);
    }
}
