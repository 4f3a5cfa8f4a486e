//! The device worker: pops partitions in order and runs their start phase on its device.
//!
//! Between two partitions a worker takes only the queue's lock (never taken by a finalizer
//! or the trimmer) and its device's mutex (taken only by the device's workers). Everything
//! else it does there is an atomic (budget release, freed-bytes report, stats) or a channel
//! send to the finalizers.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::Sender;

use blstrs::G1Projective;
use group::Group;

use super::faults::{is_device_fault, on_fault, FaultInjector, Retry};
use super::finalizer::Finalize;
use super::{panic_message, Device, DeviceMutex, PartitionHook, Shared, Work};
use crate::error::{Error, ErrorKind};
use crate::groth16::{Assignment, StartTimings};

pub(crate) struct Worker {
    pub(crate) device_index: usize,
    pub(crate) device: Device,
    pub(crate) mutex: Arc<DeviceMutex>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) to_finalizers: Sender<Finalize>,
    pub(crate) on_device_start: Option<PartitionHook>,
    pub(crate) faults: Option<Arc<FaultInjector>>,
}

impl Worker {
    pub(crate) fn run(self) {
        let shared = &*self.shared;
        let d = self.device_index;
        let rotation = &shared.rotation;
        loop {
            // A device out of rotation pops nothing until its probe delay is over.
            rotation.wait_in_rotation(d, || shared.queue.is_closed());
            // Partitions of failed jobs the finalizers asked the queue to drop; freed
            // outside the queue's lock. A retried partition goes to a device that has not
            // failed it yet, while one in rotation has not.
            let popped = shared.queue.pop_eligible(
                |purged| shared.drop_work(purged.into_iter().map(|(_, w)| w)),
                |w| !w.tried_on(d) || !rotation.another(d, |o| !w.tried_on(o)),
            );
            let Some((key, work)) = popped else { return };
            if work.job.is_dead() {
                shared.drop_work([work]);
                continue;
            }
            if !rotation.in_rotation(d) {
                // The other worker's fault took the device out while this one waited.
                if let Err(items) = shared.queue.push_all(vec![(key, work)]) {
                    shared.drop_work(items.into_iter().map(|(_, w)| w));
                }
                continue;
            }
            let queue_wait = work.queued_at.elapsed();
            shared.stats.queue_wait.record(queue_wait);
            work.job.timings.add_queue_wait(queue_wait);
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
            // Host staging (pinned copies for a GPU) belongs here, before the lock.

            // What a retry would start from (faults.rs says why a copy): a recorded
            // partition needs only its witness; otherwise the start phase gets a copy of the
            // evaluations, if a retry is still possible and the budget has room for it now.
            let may_retry = (faults.len() as u32 + 1) < rotation.policy().max_attempts;
            let (evaluations, kept, copy_res) = match &deferred {
                Some(_) => (evaluations, None, None),
                None if may_retry => match shared.budget.try_reserve(eval_res.bytes()) {
                    Ok(r) => (evaluations.clone(), Some(evaluations), Some(r)),
                    Err(_) => (evaluations, None, None),
                },
                None => (evaluations, None, None),
            };
            let retry_from = deferred.is_some() || kept.is_some();

            let (guard, acquired) = self.mutex.lock(|| !shared.queue.is_empty());
            // Only the start phase runs under the device mutex. A panic in the backend fails
            // this attempt and nothing else; the mutex is released normally.
            let result = catch_unwind(AssertUnwindSafe(|| {
                if let Some(h) = &self.on_device_start {
                    h(job.seq, index);
                }
                if let Some(inj) = &self.faults {
                    if inj.take_fail(d) {
                        return Err(Error::new(
                            ErrorKind::Gpu,
                            "injected fault (FaultInjector::fail_starts)",
                        ));
                    }
                }
                let mut r = match &deferred {
                    Some(rec) => self
                        .device
                        .backend
                        .start_deferred(&job.srs, &**rec, &witness),
                    None => self.device.backend.start(&job.srs, evaluations, &witness),
                };
                if let (Some(inj), Ok((p, _))) = (&self.faults, &mut r) {
                    if inj.take_corrupt(d) {
                        p.a += G1Projective::generator();
                    }
                }
                r
            }));
            let compute = guard.held();
            drop(guard);
            job.timings.add_device(compute);

            // The start phase consumed the evaluations it was given: their share of the
            // budget goes back (the copy's, when the original is kept for a retry).
            let (consumed, kept) = match (kept, copy_res) {
                (Some(e), Some(copy)) => (copy, Some((e, eval_res))),
                _ => (eval_res, None),
            };
            let eval_bytes = consumed.bytes();
            drop(consumed);
            shared.report_freed(eval_bytes);
            let result = result.unwrap_or_else(|p| {
                Err(Error::internal(format!(
                    "device {} backend panicked: {}",
                    self.device.name,
                    panic_message(&*p)
                )))
            });
            let stages = result.as_ref().ok().map(|(_, t)| *t);
            if let Some(t) = &stages {
                shared.stats.stages.record(t);
                // The device's own measure of its work, next to the mutex hold above.
                shared
                    .stats
                    .record_kernel_active(self.device_index, t.kernels.as_nanos() as u64);
            }
            let us = |f: fn(&StartTimings) -> Duration| stages.map(|t| f(&t).as_micros() as u64);
            tracing::debug!(
                target: "cuzk::gpu_timing",
                device = %self.device.name,
                job = job.seq,
                partition = index,
                queue_wait_us = queue_wait.as_micros() as u64,
                mutex_wait_us = acquired.wait.as_micros() as u64,
                compute_us = compute.as_micros() as u64,
                gap_us = acquired.gap.map(|g| g.as_micros() as u64),
                ntt_us = us(|t| t.ntt),
                msm_us = us(|t| t.msm),
                h2d_us = us(|t| t.host_to_device),
                d2h_us = us(|t| t.device_to_host),
                kernels_us = us(|t| t.kernels),
                attempt = faults.len() + 1,
                ok = result.is_ok(),
                "start phase"
            );
            let mut retry = Retry {
                kept,
                deferred,
                faults,
            };
            match &result {
                Err(e) if is_device_fault(e) => {
                    let work = retry.into_work(job, index, witness, rest_res);
                    on_fault(shared, work, retry_from, d, e.clone());
                    continue;
                }
                // Only a verification failure could still send it back.
                Ok(_) if job.verify.is_some() => {}
                _ => retry.release(shared),
            }
            let msg = Finalize {
                job,
                index,
                device_index: self.device_index,
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
    }
}
