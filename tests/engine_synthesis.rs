//! The engine's synthesis stage: circuits submitted as `JobInput::Synthesize` prove to the
//! same bytes as their synthesized assignments submitted ready; a failing or panicking
//! circuit fails only its job; cancelling stops pending syntheses; the ready gate bounds
//! the synthesized partitions waiting for a device; each job reports its own timings.

mod engine_common;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use cuzk::engine::{Device, Hooks, JobInput, JobKind, JobRequest, PartitionCircuit, Priority};
use cuzk::fixtures::SampleCircuit;
use cuzk::groth16::Randomness;
use cuzk::{Engine, EngineConfig, ErrorKind, JobStatus, RandomnessChoice};
use engine_common::*;
use ff::Field;

fn rs(n: usize) -> Vec<Randomness> {
    (0..n)
        .map(|i| Randomness {
            r: Scalar::from(i as u64 + 3),
            s: Scalar::from(i as u64 + 7),
        })
        .collect()
}

fn circuits(first: u64, n: usize) -> Vec<PartitionCircuit> {
    (first..first + n as u64)
        .map(|seed| PartitionCircuit::new(SampleCircuit::OneConstraint { seed }))
        .collect()
}

#[test]
fn synthesized_in_the_engine_equals_synthesized_by_the_host() {
    let f = fixture();
    let engine = Engine::new(config(Device::cpu(1), 2)).unwrap();
    let (ready, publics) = partitions(10, 4);
    let a = engine
        .submit(JobRequest {
            randomness: RandomnessChoice::Given(rs(4)),
            ..JobRequest::new(f.srs.clone(), JobInput::Ready(ready), JobKind::Other)
        })
        .unwrap();
    let b = engine
        .submit(JobRequest {
            randomness: RandomnessChoice::Given(rs(4)),
            ..JobRequest::new(
                f.srs.clone(),
                JobInput::Synthesize(circuits(10, 4)),
                JobKind::PoRep,
            )
        })
        .unwrap();
    let (pa, pb) = (a.finish(PATIENCE).unwrap(), b.finish(PATIENCE).unwrap());
    assert_eq!(pa, pb, "same circuits, r and s: same proofs");
    for (p, public) in pb.iter().zip(&publics) {
        assert!(verifies(&f, p, public));
    }
    let t = b.timings();
    assert!(
        t.synthesis > Duration::ZERO && t.device > Duration::ZERO,
        "{t:?}"
    );
    assert_eq!(
        a.timings().synthesis,
        Duration::ZERO,
        "the host synthesized job a"
    );
    let s = engine.shutdown();
    assert_eq!(s.synthesis.count, 4);
    assert_eq!(s.kinds[JobKind::PoRep.index()].partitions_proved, 4);
    assert_eq!(s.kinds[JobKind::Other.index()].jobs_finished, 1);
    assert_eq!(s.synthesis_threads, 2);
    assert_eq!(s.memory_reserved_bytes, 0);
    assert!(s.synthesis_busy_ns > 0);
}

/// A circuit whose synthesis fails, or panics.
struct Broken {
    panic: bool,
}

impl Circuit<Scalar> for Broken {
    fn synthesize<CS: ConstraintSystem<Scalar>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        cs.alloc(|| "x", || Ok(Scalar::ONE))?;
        if self.panic {
            panic!("deliberate synthesis panic");
        }
        Err(SynthesisError::AssignmentMissing)
    }
}

#[test]
fn a_failing_synthesis_fails_its_job_only() {
    let f = fixture();
    let engine = Engine::new(config(Device::cpu(1), 2)).unwrap();
    let submit = |c: Vec<PartitionCircuit>| {
        engine
            .submit(JobRequest::new(
                f.srs.clone(),
                JobInput::Synthesize(c),
                JobKind::Other,
            ))
            .unwrap()
    };
    let mut bad = circuits(1, 2);
    bad.push(PartitionCircuit::new(Broken { panic: false }));
    let failing = submit(bad);
    let panicking = submit(vec![PartitionCircuit::new(Broken { panic: true })]);
    let good = submit(circuits(5, 3));
    let e = failing.finish(PATIENCE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Synthesis, "{e}");
    assert!(e.message().contains("partition 2"), "{e}");
    let e = panicking.finish(PATIENCE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Synthesis, "{e}");
    assert!(e.message().contains("deliberate synthesis panic"), "{e}");
    assert_eq!(good.finish(PATIENCE).unwrap().len(), 3);
    // A circuit that does not fit the SRS is caught by validation after synthesis.
    let wrong = submit(vec![PartitionCircuit::new(SampleCircuit::BooleanHeavy {
        bits: 64,
        seed: 1,
    })]);
    assert_eq!(
        wrong.finish(PATIENCE).unwrap_err().kind(),
        ErrorKind::InvalidAssignment
    );
    let s = engine.shutdown();
    assert_eq!(s.memory_reserved_bytes, 0);
    assert_eq!(s.jobs_failed, 3);
}

#[test]
fn cancelling_stops_pending_syntheses() {
    let f = fixture();
    let started = Arc::new(AtomicUsize::new(0));
    let n = 50;
    let engine = Engine::new(EngineConfig {
        synthesis_threads: 1,
        ..config(Device::cpu(1), 1)
    })
    .unwrap();
    let circuits: Vec<_> = (0..n as u64)
        .map(|seed| {
            let started = started.clone();
            PartitionCircuit::build(move || {
                started.fetch_add(1, SeqCst);
                std::thread::sleep(Duration::from_millis(20));
                Ok(SampleCircuit::OneConstraint { seed })
            })
        })
        .collect();
    let job = engine
        .submit(JobRequest::new(
            f.srs.clone(),
            JobInput::Synthesize(circuits),
            JobKind::PoRep,
        ))
        .unwrap();
    assert!(eventually(|| started.load(SeqCst) >= 2));
    assert!(job.cancel());
    let at_cancel = started.load(SeqCst);
    std::thread::sleep(Duration::from_millis(200));
    // At most the synthesis in progress at the cancel finishes; nothing new starts.
    assert!(
        started.load(SeqCst) <= at_cancel + 1,
        "{} > {at_cancel} + 1",
        started.load(SeqCst)
    );
    assert_eq!(job.poll(), JobStatus::Cancelled);
    let s = engine.shutdown();
    assert_eq!(s.partitions_admitted, n as u64);
    assert_eq!(
        s.partitions_proved + s.partitions_dropped,
        n as u64,
        "every partition accounted for"
    );
    assert!(s.partitions_dropped >= (n - at_cancel - 1) as u64);
    assert_eq!(s.memory_reserved_bytes, 0);
}

#[test]
fn the_ready_gate_bounds_partitions_waiting_for_a_device() {
    // One slow device and four fast synthesis threads: without the gate, every synthesized
    // partition would pile up in the device queue (each a whole assignment in memory).
    let f = fixture();
    let waiting_seen = Arc::new(AtomicUsize::new(0));
    let max_ready = 2;
    let engine = Arc::new(
        Engine::new(EngineConfig {
            synthesis_threads: 4,
            max_ready,
            hooks: Hooks {
                on_device_start: Some(Arc::new(|_, _| {
                    std::thread::sleep(Duration::from_millis(15))
                })),
                ..Hooks::default()
            },
            ..config(Device::cpu(1), 1)
        })
        .unwrap(),
    );
    let job = engine
        .submit(JobRequest::new(
            f.srs.clone(),
            JobInput::Synthesize(circuits(0, 30)),
            JobKind::PoRep,
        ))
        .unwrap();
    let watcher = {
        let (engine, seen) = (engine.clone(), waiting_seen.clone());
        std::thread::spawn(move || {
            for _ in 0..200 {
                let s = engine.stats();
                seen.fetch_max(s.ready_waiting as usize, SeqCst);
                let queued: u64 = s.queue_depth.iter().sum();
                seen.fetch_max(queued as usize, SeqCst);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    assert_eq!(job.finish(PATIENCE).unwrap().len(), 30);
    watcher.join().unwrap();
    let seen = waiting_seen.load(SeqCst);
    assert!(
        seen <= max_ready,
        "{seen} synthesized partitions waited for the device"
    );
    assert!(seen >= 1, "the gate was never used");
}

#[test]
fn winning_post_is_synthesized_ahead_of_a_porep_backlog() {
    let f = fixture();
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    // Every synthesis waits until the whole backlog and the WinningPoSt are submitted, so
    // the order does not depend on how fast this thread submits on a loaded machine.
    let submitted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let engine = Engine::new(EngineConfig {
        synthesis_threads: 1,
        ..config(Device::cpu(1), 1)
    })
    .unwrap();
    let tagged = |tag: &'static str, seed: u64| {
        let (order, submitted) = (order.clone(), submitted.clone());
        PartitionCircuit::build(move || {
            order.lock().unwrap().push(tag);
            while !submitted.load(SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(SampleCircuit::OneConstraint { seed })
        })
    };
    let porep: Vec<_> = (0..3)
        .map(|j| {
            engine
                .submit(JobRequest::new(
                    f.srs.clone(),
                    JobInput::Synthesize((0..4).map(|i| tagged("porep", j * 10 + i)).collect()),
                    JobKind::PoRep,
                ))
                .unwrap()
        })
        .collect();
    let winning = engine
        .submit(JobRequest::new(
            f.srs.clone(),
            JobInput::Synthesize(vec![tagged("winning", 99)]),
            JobKind::WinningPost,
        ))
        .unwrap();
    assert_eq!(winning.priority(), Priority::WinningPost);
    submitted.store(true, SeqCst);
    winning.finish(PATIENCE).unwrap();
    for j in &porep {
        j.finish(PATIENCE).unwrap();
    }
    let order = order.lock().unwrap();
    let at = order.iter().position(|t| *t == "winning").unwrap();
    // Only the partition the one synthesis thread had already taken, if it woke before the
    // WinningPoSt was submitted, comes before it.
    assert!(at <= 1, "the WinningPoSt was synthesized {at}th: {order:?}");
}

/// A shape's params, its partitions' budget share and its recording's size.
struct Shape {
    key: cuzk::r1cs::ShapeKey,
    circuit: SampleCircuit,
    srs: Arc<cuzk::groth16::Srs>,
    pvk: cuzk::groth16::PreparedVerifyingKey,
    need: u64,
    recording: u64,
}

fn shape(name: &str, constraints: usize) -> Shape {
    use cuzk::fixtures::{generate_srs, ToxicWaste};
    let circuit = SampleCircuit::Random {
        constraints,
        seed: 0,
    };
    let srs = generate_srs(circuit.clone(), &ToxicWaste::from_seed(5)).unwrap();
    let s = cuzk::groth16::synthesize(circuit.clone()).unwrap().shape();
    let need = (s.evaluation_bytes()
        + s.witness_bytes()
        + std::mem::size_of::<cuzk::groth16::Proof>()) as u64;
    let recording = cuzk::r1cs::record(circuit.clone()).unwrap().0.bytes() as u64;
    Shape {
        key: cuzk::r1cs::ShapeKey::new(name),
        circuit,
        pvk: srs.vk.prepare(),
        srs: Arc::new(srs),
        need,
        recording,
    }
}

/// Proves one partition of `s` (seed `seed`) through the synthesis stage and verifies it.
fn prove_keyed(engine: &Engine, s: &Shape, seed: u64) {
    let circuit = s.circuit.with_seed(seed);
    let public = cuzk::groth16::synthesize(circuit.clone())
        .unwrap()
        .witness
        .input[1..]
        .to_vec();
    let job = engine
        .submit(JobRequest::new(
            s.srs.clone(),
            JobInput::Synthesize(vec![
                PartitionCircuit::new(circuit).with_shape_key(s.key.clone())
            ]),
            JobKind::PoRep,
        ))
        .unwrap();
    let proofs = job.finish(PATIENCE).unwrap();
    assert!(cuzk::groth16::verify_proof(&s.pvk, &proofs[0], &public).unwrap());
}

/// A recorded shape whose charge leaves the budget too small for a larger shape's partition
/// is evicted for it (without eviction that partition would wait until cancelled); the
/// evicted shape is recorded again when it comes back. A fresh recording in the way of
/// nothing stays.
#[test]
fn a_recording_in_the_way_of_a_larger_shape_is_evicted() {
    let small = shape("evict-small", 2000);
    let large = shape("evict-large", 8000);
    // The small shape is charged (its partition still fits beside its recording), and the
    // large shape's partition fits the budget only without it.
    let limit = large.need + small.recording / 2;
    println!(
        "small: partition {} B, recording {} B; large: partition {} B; budget {limit} B",
        small.need, small.recording, large.need
    );
    assert!(small.need + small.recording <= limit && large.need + small.recording > limit);
    let engine = Engine::new(EngineConfig {
        memory_budget: Some(limit),
        synthesis_threads: 1,
        ..config(Device::cpu(1), 1)
    })
    .unwrap();
    let recorded = engine.recorded_circuits();

    prove_keyed(&engine, &small, 1);
    prove_keyed(&engine, &small, 2);
    assert_eq!(recorded.recordings(), 1);
    assert_eq!(
        engine.memory_budget().reserved(),
        small.recording,
        "the small shape is charged"
    );
    assert_eq!(
        engine.stats().recordings_evicted,
        0,
        "nothing in its way: kept"
    );

    prove_keyed(&engine, &large, 1);
    assert_eq!(engine.stats().recordings_evicted, 1);
    assert!(
        recorded.get(&small.key).is_none(),
        "the small shape's recording went"
    );
    assert!(recorded.get(&large.key).is_some());
    assert_eq!(
        engine.memory_budget().reserved(),
        0,
        "the large shape is not charged: it would leave no room"
    );

    // Back again: recorded anew and charged again.
    prove_keyed(&engine, &small, 3);
    assert_eq!(recorded.recordings(), 3);
    assert_eq!(engine.memory_budget().reserved(), small.recording);

    // A job of partitions the host synthesized, admitted only if it fits now (fail-fast),
    // gets the same room.
    let circuit = large.circuit.with_seed(2);
    let assignment = cuzk::groth16::synthesize(circuit).unwrap();
    let public = assignment.witness.input[1..].to_vec();
    let job = engine
        .submit(JobRequest {
            admission: Some(cuzk::AdmissionPolicy::FailFast),
            ..JobRequest::new(
                large.srs.clone(),
                JobInput::Ready(vec![assignment]),
                JobKind::PoRep,
            )
        })
        .expect("admitted once the small shape's recording is evicted");
    let proofs = job.finish(PATIENCE).unwrap();
    assert!(cuzk::groth16::verify_proof(&large.pvk, &proofs[0], &public).unwrap());
    assert_eq!(engine.stats().recordings_evicted, 2);
    assert!(recorded.get(&small.key).is_none());
}
