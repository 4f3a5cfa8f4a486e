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

use super::finalizer::Finalize;
use super::{panic_message, Device, DeviceMutex, PartitionHook, Shared, Work};
use crate::error::Error;
use crate::groth16::{Assignment, StartTimings};

pub(crate) struct Worker {
    pub(crate) device_index: usize,
    pub(crate) device: Device,
    pub(crate) mutex: Arc<DeviceMutex>,
    pub(crate) shared: Arc<Shared>,
    pub(crate) to_finalizers: Sender<Finalize>,
    pub(crate) on_device_start: Option<PartitionHook>,
}

impl Worker {
    pub(crate) fn run(self) {
        let shared = &*self.shared;
        loop {
            // Partitions of failed jobs the finalizers asked the queue to drop; freed
            // outside the queue's lock.
            let popped = shared
                .queue
                .pop(|purged| shared.drop_work(purged.into_iter().map(|(_, w)| w)));
            let Some((_, work)) = popped else { return };
            if work.job.is_dead() {
                shared.drop_work([work]);
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
                ..
            } = work;
            // The partition has left the ready queue: a synthesis thread may queue another.
            drop(ready_slot);
            // Host staging (pinned copies for a GPU) belongs here, before the lock.

            let (guard, acquired) = self.mutex.lock(|| !shared.queue.is_empty());
            // Only the start phase runs under the device mutex. A panic in the backend fails
            // this partition's job and nothing else; the mutex is released normally.
            let result = catch_unwind(AssertUnwindSafe(|| {
                if let Some(h) = &self.on_device_start {
                    h(job.seq, index);
                }
                match &deferred {
                    Some(d) => self.device.backend.start_deferred(&job.srs, &**d, &witness),
                    None => self.device.backend.start(&job.srs, evaluations, &witness),
                }
            }));
            let compute = guard.held();
            drop(guard);
            job.timings.add_device(compute);

            // The start phase consumed the evaluations: their share of the budget goes back.
            let eval_bytes = eval_res.bytes();
            drop(eval_res);
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
                ok = result.is_ok(),
                "start phase"
            );
            let msg = Finalize {
                job,
                index,
                device_index: self.device_index,
                witness,
                result,
                rest_res,
            };
            if let Err(crossbeam_channel::SendError(msg)) = self.to_finalizers.send(msg) {
                // The finalizers outlive the workers, so this means an engine bug; still,
                // the job must not hang.
                msg.job.end(
                    shared,
                    Error::internal("no finalizer left to finish the partition"),
                );
                shared.stats.partitions_dropped.fetch_add(1, Relaxed);
                shared.drop_work_parts(msg.rest_res, msg.witness);
            }
        }
    }
}
