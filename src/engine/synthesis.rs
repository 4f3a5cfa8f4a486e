//! The synthesis stage: its own threads turn queued circuits into assignments and hand them
//! to the device queue, in priority order.
//!
//! A synthesis thread takes a circuit from the synthesis queue (its own lock, shared with
//! submitters and `Job::cancel`), reserves the partition's memory from the shape its SRS
//! gives (waiting on the budget, which is atomics and a channel), synthesizes with no lock
//! held (a partition with a shape key from its recorded R1CS, only its witness and a
//! mat-vec; the key's first partition records it, holding only that key's slot lock), then
//! waits for a place among the synthesized partitions waiting for a device (the
//! [`ReadyGate`], a lock of its own that a device worker takes only to give a place back)
//! and pushes the partition into the device queue. A WinningPoSt or WindowPoSt partition
//! does not wait for a place: it goes straight to the devices, ahead of any PoRep there.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::job::JobShared;
use super::queue::{Priority, QueueKey};
use super::request::{srs_shape, PartitionCircuit};
use super::{panic_message, Reservation, Shared, Work};
use crate::error::{Error, ErrorKind};
use crate::groth16::{DeferredEvaluations, Proof};

/// A partition waiting for a synthesis thread.
pub(crate) struct SynthWork {
    pub(crate) job: Arc<JobShared>,
    pub(crate) index: usize,
    pub(crate) circuit: PartitionCircuit,
    pub(crate) queued_at: Instant,
}

/// How often a thread waiting on the budget or the gate looks whether its job died or the
/// engine is shutting down.
const POLL: Duration = Duration::from_millis(50);

/// Bounds the synthesized partitions waiting for a device: enough to keep every device's
/// workers supplied, no more (each one holds a whole assignment in host memory).
pub(crate) struct ReadyGate {
    waiting: Mutex<usize>,
    freed: Condvar,
    max: usize,
}

/// A place among the synthesized partitions waiting for a device; given back on drop.
pub(crate) struct ReadySlot {
    gate: Arc<ReadyGate>,
}

impl Drop for ReadySlot {
    fn drop(&mut self) {
        let mut n = self.gate.waiting.lock().unwrap_or_else(|p| p.into_inner());
        *n -= 1;
        drop(n);
        self.gate.freed.notify_one();
    }
}

impl ReadyGate {
    pub(crate) fn new(max: usize) -> Arc<Self> {
        Arc::new(ReadyGate {
            waiting: Mutex::new(0),
            freed: Condvar::new(),
            max: max.max(1),
        })
    }

    /// Synthesized partitions waiting for a device now.
    pub(crate) fn waiting(&self) -> usize {
        *self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a place, waiting while the gate is full; `None` once `give_up` says so.
    fn acquire(self: &Arc<Self>, bypass: bool, give_up: impl Fn() -> bool) -> Option<ReadySlot> {
        let mut n = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        while !bypass && *n >= self.max {
            if give_up() {
                return None;
            }
            n = self
                .freed
                .wait_timeout(n, POLL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        *n += 1;
        Some(ReadySlot { gate: self.clone() })
    }
}

/// One synthesis thread's loop; returns once the synthesis queue is closed and empty.
pub(crate) fn run(shared: Arc<Shared>) {
    loop {
        let popped = shared
            .synth_queue
            .pop(|purged| shared.drop_synth_work(purged.into_iter().map(|(_, w)| w)));
        let Some((key, work)) = popped else { return };
        synthesize_one(&shared, key, work);
    }
}

fn synthesize_one(shared: &Shared, key: QueueKey, work: SynthWork) {
    let SynthWork {
        job,
        index,
        circuit,
        queued_at,
    } = work;
    let stats = &shared.stats;
    let give_up = || job.is_dead() || shared.synth_queue.is_closed();
    if give_up() {
        stats.partitions_dropped.fetch_add(1, Relaxed);
        return;
    }
    // Reserve before synthesizing, so the budget covers the assignment while it is built.
    // A partition whose shape is recorded and whose a, b and c the devices make off the
    // host needs only its witness; the first partition of a shape reserves a, b and c too,
    // for the recording it makes (charged to the budget below, out of that share).
    let shape = srs_shape(&job.srs);
    // Held until the partition is synthesized: a recording in use is never evicted, so a
    // partition that reserved only its witness does not find its shape to record again.
    let recorded = circuit.shape_key().and_then(|k| shared.r1cs.get(k));
    let witness_only = shared.witness_only && recorded.is_some();
    let (eval, rest) = (
        if witness_only {
            0
        } else {
            shape.evaluation_bytes() as u64
        },
        (shape.witness_bytes() + std::mem::size_of::<Proof>()) as u64,
    );
    let mut reservation: Reservation = loop {
        match shared.budget.reserve(eval + rest, POLL) {
            Ok(r) => break r,
            Err(e) if e.kind() == ErrorKind::Timeout && !give_up() => {
                shared.make_room(eval + rest, circuit.shape_key());
                continue;
            }
            Err(e) if e.kind() == ErrorKind::Timeout => {
                stats.partitions_dropped.fetch_add(1, Relaxed);
                return;
            }
            Err(e) => return fail(shared, &job, index, e),
        }
    };
    let waited = queued_at.elapsed();
    job.timings.add_queue_wait(waited);

    let circuit_key = circuit.shape_key().cloned();
    let started = Instant::now();
    stats.synthesis_active.fetch_add(1, Relaxed);
    let r1cs = &shared.r1cs;
    let result = catch_unwind(AssertUnwindSafe(|| {
        if let Some(h) = &shared.on_synthesis_start {
            h(job.seq, index);
        }
        if shared.defer_evaluations {
            circuit.synthesize_deferred(r1cs, Some(&job.srs))
        } else {
            circuit
                .synthesize_recorded_for(r1cs, Some(&job.srs))
                .map(|a| (a, None))
        }
    }))
    .unwrap_or_else(|p| {
        Err(Error::new(
            ErrorKind::Synthesis,
            format!("synthesis panicked: {}", panic_message(&*p)),
        ))
    })
    .and_then(|(a, deferred)| {
        match &deferred {
            Some(d) => a.witness.validate(d.rows(), &job.srs)?,
            None => a.validate(&job.srs)?,
        }
        Ok((a, deferred))
    });
    stats.synthesis_active.fetch_sub(1, Relaxed);
    let took = started.elapsed();
    stats.synthesis.record(took);
    stats
        .synthesis_busy_ns
        .fetch_add(took.as_nanos() as u64, Relaxed);
    job.timings.add_synthesis(took);
    tracing::debug!(
        target: "cuzk::synthesis",
        job = job.seq,
        partition = index,
        synthesis_us = took.as_micros() as u64,
        ok = result.is_ok(),
        "synthesized"
    );
    let (assignment, deferred) = match result {
        Ok((a, d)) => (a, d.map(|d| d as Arc<dyn DeferredEvaluations>)),
        Err(e) => {
            drop(reservation);
            shared.report_freed(eval + rest);
            return fail(shared, &job, index, e);
        }
    };
    drop(recorded);
    if let Some(key) = circuit_key.as_ref() {
        shared.recordings.charge(
            &shared.r1cs,
            &shared.budget,
            key,
            &mut reservation,
            eval,
            eval + rest,
        );
    }
    // A deferred partition's a, b and c are made off the host: its share for them goes.
    let eval = if shared.witness_only && deferred.is_some() {
        let unneeded = reservation.split(eval).bytes();
        if unneeded > 0 {
            shared.report_freed(unneeded);
        }
        0
    } else {
        eval
    };

    let bypass = key.priority <= Priority::WindowPost;
    let Some(slot) = shared.ready_gate.acquire(bypass, give_up) else {
        stats.partitions_dropped.fetch_add(1, Relaxed);
        drop((assignment, reservation));
        shared.report_freed(eval + rest);
        return;
    };
    let work = Work {
        job,
        index,
        assignment,
        deferred,
        eval_res: reservation.split(eval),
        rest_res: reservation.split(rest),
        queued_at: Instant::now(),
        ready_slot: Some(slot),
        faults: Vec::new(),
        cpu_fallback: false,
    };
    shared.push_partition(key, work);
}

/// Fails `job` because partition `index` could not be synthesized, and drops its other
/// partitions still waiting for synthesis or a device.
fn fail(shared: &Shared, job: &JobShared, index: usize, e: Error) {
    shared.stats.partitions_failed.fetch_add(1, Relaxed);
    if job.end(shared, e.context(format!("partition {index}"))) {
        let removed = shared.synth_queue.remove_job(job.seq);
        shared.drop_synth_work(removed.into_iter().map(|(_, w)| w));
        shared.queue.purge_later(job.seq);
    }
}
