//! 1,000+ proofs from 8 threads through one engine: mixed priorities, cancellations, inputs
//! that fail validation and partitions that make the backend panic or fail. Every good proof
//! must verify against its own job's public inputs, every bad job must get its error, the
//! budget must never be exceeded and the stats must add up exactly.

mod engine_common;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use blstrs::Scalar;
use cuzk::engine::{Hooks, Job};
use cuzk::{Engine, ErrorKind, Priority, RandomnessChoice, TrimPolicy};
use engine_common::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const THREADS: u64 = 8;
const GOOD_PROOFS_PER_THREAD: usize = 125;
const IN_FLIGHT_PER_THREAD: usize = 6;

enum Expect {
    /// Every proof verifies against these inputs, one list per partition.
    Good(Vec<Vec<Scalar>>),
    /// Cancelled right after submission: either cancelled, or it won the race and is good.
    Cancelled(Vec<Vec<Scalar>>),
    /// A partition makes the backend fail; the error names it.
    Fails { partition: usize, kind: ErrorKind },
}

#[derive(Default)]
struct Tally {
    good_proofs: AtomicU64,
    finished: AtomicU64,
    failed: AtomicU64,
    cancelled: AtomicU64,
    rejected: AtomicU64,
}

#[test]
fn thousand_proofs_from_eight_threads() {
    let f = fixture();
    let one_partition = {
        let s = partition(0).0.shape();
        (s.evaluation_bytes() + s.witness_bytes() + std::mem::size_of::<cuzk::groth16::Proof>())
            as u64
    };
    // Room for 24 partitions while the threads keep up to 8 × 6 jobs of 1–4 partitions in
    // flight: admission has to wait, and the budget is what holds the line.
    let budget = 24 * one_partition;
    let trims = Arc::new(AtomicU64::new(0));
    let mut cfg = config(faulty_devices(2), 2);
    cfg.memory_budget = Some(budget);
    cfg.trim = TrimPolicy::Every {
        interval: std::time::Duration::from_millis(1),
        min_freed_bytes: 1,
    };
    cfg.hooks = Hooks {
        trim: Some({
            let trims = trims.clone();
            Arc::new(move || {
                trims.fetch_add(1, Relaxed);
            })
        }),
        ..Hooks::default()
    };
    let engine = Engine::new(cfg).expect("engine");
    let tally = Tally::default();

    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (engine, f, tally) = (&engine, &f, &tally);
            s.spawn(move || run_client(t, engine, f, tally));
        }
    });

    let reserved_drained = eventually(|| engine.memory_budget().reserved() == 0);
    let stats = engine.shutdown();
    assert!(reserved_drained, "reservations left after every job ended");
    let good = tally.good_proofs.load(Relaxed);
    assert!(
        good >= THREADS * GOOD_PROOFS_PER_THREAD as u64,
        "{good} good proofs"
    );

    assert!(
        stats.memory_peak_bytes <= budget,
        "peak {} > budget {budget}",
        stats.memory_peak_bytes
    );
    assert!(stats.memory_peak_bytes > 0);
    assert_eq!(stats.memory_reserved_bytes, 0);
    assert_eq!(stats.admission_wait.count, stats.jobs_admitted);

    assert_eq!(stats.jobs_finished, tally.finished.load(Relaxed));
    assert_eq!(stats.jobs_failed, tally.failed.load(Relaxed));
    assert_eq!(stats.jobs_cancelled, tally.cancelled.load(Relaxed));
    assert_eq!(stats.jobs_rejected, tally.rejected.load(Relaxed));
    assert_eq!(
        stats.jobs_admitted,
        stats.jobs_finished + stats.jobs_failed + stats.jobs_cancelled
    );
    assert_eq!(
        stats.partitions_admitted,
        stats.partitions_proved + stats.partitions_failed + stats.partitions_dropped
    );
    assert!(stats.partitions_proved >= good);
    // Each failed job fails on exactly one poisoned partition; others of its partitions
    // may be proved or dropped.
    assert_eq!(stats.partitions_failed, stats.jobs_failed);
    let started: u64 = stats.devices().iter().map(|d| d.partitions).sum();
    assert_eq!(started, stats.mutex_hold.count);
    assert_eq!(started, stats.mutex_wait.count);
    assert_eq!(started, stats.queue_wait.count);
    // Only the backend fails in this test, so every failed partition ran on a device, and
    // what ran but was neither proved nor failed was dropped by a finalizer (its job ended).
    // A poisoned partition fails on every attempt: its retries ran too.
    let ran_then_dropped =
        started - stats.partitions_proved - stats.partitions_failed - stats.partition_retries;
    assert!(ran_then_dropped <= stats.partitions_dropped);
    // `finish` never fails here: every finalize produced a proof.
    assert_eq!(stats.finalize.count, stats.partitions_proved);
    assert_eq!(stats.queue_depth, [0; 4]);
    assert_eq!(stats.trims, trims.load(Relaxed));
    assert!(stats.trims > 0);
    assert!(stats.bytes_freed_reported > 0);
}

fn run_client(t: u64, engine: &Engine, f: &Fixture, tally: &Tally) {
    let mut rng = ChaCha8Rng::seed_from_u64(t);
    let mut in_flight: VecDeque<(Job, Expect)> = VecDeque::new();
    let mut good = 0usize;
    let mut seed = 1_000_000 * (t + 1);
    while good < GOOD_PROOFS_PER_THREAD || !in_flight.is_empty() {
        if good < GOOD_PROOFS_PER_THREAD && in_flight.len() < IN_FLIGHT_PER_THREAD {
            let n = rng.gen_range(1..=4usize);
            let priority = Priority::ALL[rng.gen_range(0..4)];
            let (mut parts, publics) = partitions(seed, n);
            seed += n as u64;
            let rs = if rng.gen_bool(0.5) {
                RandomnessChoice::Random
            } else {
                RandomnessChoice::Given(
                    (0..n)
                        .map(|_| cuzk::groth16::Randomness::random())
                        .collect(),
                )
            };
            match rng.gen_range(0..10) {
                0 => {
                    let bad = rng.gen_range(0..n);
                    parts[bad] = malformed(seed);
                    let e = engine
                        .prove_start(f.srs.clone(), parts, rs, priority)
                        .expect_err("malformed partition admitted");
                    assert_eq!(e.kind(), ErrorKind::InvalidAssignment, "{e}");
                    assert!(e.message().contains(&format!("partition {bad}")), "{e}");
                    tally.rejected.fetch_add(1, Relaxed);
                }
                1 => {
                    let job = engine
                        .prove_start(f.srs.clone(), parts, rs, priority)
                        .expect("admitted");
                    job.cancel();
                    in_flight.push_back((job, Expect::Cancelled(publics)));
                }
                2 => {
                    let bad = rng.gen_range(0..n);
                    let (marker, kind) = if rng.gen_bool(0.5) {
                        (PANIC_INPUT, ErrorKind::Internal)
                    } else {
                        (ERROR_INPUT, ErrorKind::Gpu)
                    };
                    parts[bad] = poisoned(marker);
                    let job = engine
                        .prove_start(f.srs.clone(), parts, rs, priority)
                        .expect("admitted");
                    in_flight.push_back((
                        job,
                        Expect::Fails {
                            partition: bad,
                            kind,
                        },
                    ));
                }
                _ => {
                    let job = engine
                        .prove_start(f.srs.clone(), parts, rs, priority)
                        .expect("admitted");
                    in_flight.push_back((job, Expect::Good(publics)));
                }
            }
            continue;
        }
        let (job, expect) = in_flight.pop_front().expect("a job in flight");
        let result = job.finish(PATIENCE);
        match (expect, result) {
            (Expect::Good(publics), Ok(proofs)) | (Expect::Cancelled(publics), Ok(proofs)) => {
                assert_eq!(proofs.len(), publics.len());
                for (i, (p, public)) in proofs.iter().zip(&publics).enumerate() {
                    assert!(verifies(f, p, public), "job {} partition {i}", job.seq());
                }
                good += proofs.len();
                tally.good_proofs.fetch_add(proofs.len() as u64, Relaxed);
                tally.finished.fetch_add(1, Relaxed);
            }
            (Expect::Cancelled(_), Err(e)) => {
                assert_eq!(e.kind(), ErrorKind::Cancelled, "{e}");
                tally.cancelled.fetch_add(1, Relaxed);
            }
            (Expect::Fails { partition, kind }, Err(e)) => {
                assert_eq!(e.kind(), kind, "{e}");
                assert!(
                    e.message().contains(&format!("partition {partition}")),
                    "{e}"
                );
                tally.failed.fetch_add(1, Relaxed);
            }
            (Expect::Fails { partition, .. }, Ok(_)) => {
                panic!(
                    "job {} with poisoned partition {partition} succeeded",
                    job.seq()
                )
            }
            (Expect::Good(_), Err(e)) => panic!("good job {} failed: {e}", job.seq()),
        }
    }
}
