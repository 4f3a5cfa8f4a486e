//! The finalizers: finish each partition on the CPU (B_g2 MSM, proof assembly with r and s),
//! release the partition's remaining memory (reported to the trimmer), then store the proof,
//! so that a host holding all its proofs finds their memory already released.
//!
//! A finalizer takes one lock, its job's state lock, briefly to store a proof or a failure.
//! It never touches the queue (a job it fails is purged by the next worker's pop, asked for
//! by channel) and never trims: it only adds the bytes it freed to the trimmer's counter.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Instant;

use crossbeam_channel::Receiver;

use super::faults::{on_fault, Retry};
use super::job::JobShared;
use super::{panic_message, PartitionHook, Reservation, Shared};
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{finish_timed, verify_proof, PartialProof, Proof, StartTimings, Witness};

/// A started partition on its way to a finalizer.
pub(crate) struct Finalize {
    pub(crate) job: Arc<JobShared>,
    pub(crate) index: usize,
    /// `None`: started on the CPU fallback.
    pub(crate) device_index: Option<usize>,
    pub(crate) witness: Witness,
    pub(crate) result: Result<(PartialProof, StartTimings)>,
    pub(crate) rest_res: Reservation,
    /// What a retry would start from, if the proof fails its verification.
    pub(crate) retry: Retry,
}

pub(crate) fn run(rx: Receiver<Finalize>, shared: Arc<Shared>, hook: Option<PartitionHook>) {
    for msg in rx.iter() {
        let Finalize {
            job,
            index,
            device_index,
            witness,
            result,
            rest_res,
            mut retry,
        } = msg;
        match result {
            Err(e) => fail(&shared, &job, index, e),
            Ok(_) if job.is_dead() => {
                shared.stats.partitions_dropped.fetch_add(1, Relaxed);
            }
            Ok((partial, _)) => {
                let t = Instant::now();
                let proof = catch_unwind(AssertUnwindSafe(|| {
                    if let Some(h) = &hook {
                        h(job.seq, index);
                    }
                    let (proof, b_g2) = finish_timed(&job.srs, &witness, &partial, job.rs[index])?;
                    if let Some(pvk) = &job.verify {
                        check(pvk, &proof, &witness)?;
                    }
                    Ok((proof, b_g2))
                }))
                .unwrap_or_else(|p| {
                    Err(Error::internal(format!(
                        "finalizer panicked: {}",
                        panic_message(&*p)
                    )))
                });
                let took = t.elapsed();
                shared.stats.finalize.record(took);
                job.timings.add_finalize(took);
                if let Ok((_, b_g2)) = &proof {
                    shared.stats.finalize_b_g2.record(*b_g2);
                }
                tracing::debug!(
                    target: "cuzk::fin_timing",
                    device = device_index.map_or(-1, |d| d as i64),
                    job = job.seq,
                    partition = index,
                    finalize_us = took.as_micros() as u64,
                    ok = proof.is_ok(),
                    "finalize"
                );
                match proof {
                    Ok((p, _)) => {
                        if let Some(d) = device_index {
                            shared.rotation.success(d);
                        }
                        shared.stats.partitions_proved.fetch_add(1, Relaxed);
                        shared.stats.partitions_proved_by_kind[job.kind.index()]
                            .fetch_add(1, Relaxed);
                        // The partition's memory goes before its proof is handed over: a
                        // host holding all its proofs finds their budget already released.
                        retry.release(&shared);
                        shared.drop_work_parts(rest_res, witness);
                        job.complete(&shared, index, p);
                        continue;
                    }
                    // The device's result was wrong: another device tries again. (The
                    // CPU fallback's is the last attempt.)
                    Err(e)
                        if e.kind() == ErrorKind::VerificationFailed && device_index.is_some() =>
                    {
                        let can = retry.possible();
                        let work = retry.into_work(job, index, witness, rest_res);
                        on_fault(&shared, work, can, device_index.expect("matched"), e);
                        continue;
                    }
                    Err(e) => fail(&shared, &job, index, e),
                }
            }
        }
        retry.release(&shared);
        shared.drop_work_parts(rest_res, witness);
    }
}

/// A proof that does not verify against its own partition's public inputs is a device or
/// prover fault: it must never reach the host.
fn check(
    pvk: &crate::groth16::PreparedVerifyingKey,
    proof: &Proof,
    witness: &Witness,
) -> Result<()> {
    let inputs = witness.input.get(1..).unwrap_or(&[]);
    if verify_proof(pvk, proof, inputs)? {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::VerificationFailed,
            "the proof does not verify against its own public inputs; it was not returned",
        ))
    }
}

fn fail(shared: &Shared, job: &JobShared, index: usize, e: Error) {
    shared.stats.partitions_failed.fetch_add(1, Relaxed);
    if job.end(shared, e.context(format!("partition {index}"))) {
        shared.queue.purge_later(job.seq);
    }
}
