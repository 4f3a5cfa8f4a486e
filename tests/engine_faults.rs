//! Device faults: a failed start phase or a result that fails verification is retried on
//! another device (the same one when it is the only one), at most `max_attempts` times, then
//! its job fails naming each attempt's error; input errors are not retried; a device that
//! keeps failing leaves rotation and is probed again after the delay. Faults come from the
//! engine's `FaultInjector` hook and the `FaultyStart` backend.

mod engine_common;

use std::sync::Arc;
use std::time::Duration;

use cuzk::engine::{
    Device, FaultInjector, FaultPolicy, Hooks, Job, JobInput, JobKind, JobRequest, PartitionCircuit,
};
use cuzk::fixtures::SampleCircuit;
use cuzk::groth16::Assignment;
use cuzk::r1cs::ShapeKey;
use cuzk::{Engine, EngineConfig, ErrorKind, Priority, RandomnessChoice, StatsSnapshot};
use engine_common::*;

/// The default policy, with a probe delay short enough for tests.
fn quick() -> FaultPolicy {
    FaultPolicy {
        probe_delay: Duration::from_millis(50),
        ..FaultPolicy::default()
    }
}

fn engine(devices: Vec<Device>, faults: FaultPolicy, inj: &Arc<FaultInjector>) -> Engine {
    Engine::new(EngineConfig {
        faults,
        hooks: Hooks {
            faults: Some(inj.clone()),
            ..Hooks::default()
        },
        ..config(devices, 1)
    })
    .expect("engine")
}

/// Submits `parts` as a job whose proofs are verified before they are returned.
fn submit(engine: &Engine, f: &Fixture, parts: Vec<Assignment>) -> Job {
    engine
        .submit(JobRequest {
            priority: Some(Priority::Other),
            ..JobRequest::new(f.srs.clone(), JobInput::Ready(parts), JobKind::Other)
        })
        .expect("admitted")
}

/// Proves `n` fresh partitions from `seed` and checks every proof against its own inputs.
fn prove_ok(engine: &Engine, f: &Fixture, seed: &mut u64, n: usize) {
    let (parts, publics) = partitions(*seed, n);
    *seed += n as u64;
    let proofs = submit(engine, f, parts)
        .finish(PATIENCE)
        .expect("a device fault is retried, not returned");
    assert!(proofs.iter().zip(&publics).all(|(p, x)| verifies(f, p, x)));
}

fn faults(s: &StatsSnapshot) -> Vec<u64> {
    s.devices().iter().map(|d| d.faults).collect()
}

fn started(s: &StatsSnapshot) -> u64 {
    s.devices().iter().map(|d| d.partitions).sum()
}

#[test]
fn a_fault_on_one_of_two_devices_is_retried_on_the_other() {
    let f = fixture();
    let inj = FaultInjector::new();
    // Device 0 fails every start phase and never leaves rotation; with two attempts in
    // all, a job fails unless every retry goes to device 1.
    inj.fail_starts(0, u32::MAX);
    let policy = FaultPolicy {
        max_attempts: 2,
        out_of_rotation_after: 0,
        ..FaultPolicy::default()
    };
    let engine = engine(Device::cpu(2), policy, &inj);
    let mut seed = 100;
    for _ in 0..200 {
        if engine.stats().devices()[0].faults >= 3 {
            break;
        }
        prove_ok(&engine, &f, &mut seed, 4);
    }
    let s = engine.shutdown();
    let n = s.devices()[0].faults;
    assert!(n >= 3, "device 0 ran only {n} start phases in 200 jobs");
    assert_eq!(faults(&s), vec![n, 0]);
    assert_eq!(s.partition_retries, n);
    assert_eq!((s.jobs_failed, s.partitions_failed), (0, 0));
    assert_eq!(s.partitions_proved, s.partitions_admitted);
    // Every start phase either proved a partition or failed on device 0 and was retried.
    assert_eq!(started(&s), s.partitions_proved + n);
    assert_eq!(s.devices_out_of_rotation, 0);
    assert_eq!(s.memory_reserved_bytes, 0);
}

#[test]
fn a_corrupted_result_is_caught_by_verification_and_retried() {
    let f = fixture();
    let inj = FaultInjector::new();
    let engine = engine(Device::cpu(1), quick(), &inj);
    let mut seed = 200;
    // One device: the retry runs on it again.
    inj.corrupt_results(0, 1);
    prove_ok(&engine, &f, &mut seed, 3);
    let s = engine.stats();
    assert_eq!((faults(&s), s.partition_retries), (vec![1], 1));
    assert_eq!(started(&s), 4);

    // Without verification the same corruption reaches the host: the check is what stops it.
    inj.corrupt_results(0, 1);
    let (parts, publics) = partitions(seed, 1);
    let proofs = engine
        .prove_start(
            f.srs.clone(),
            parts,
            RandomnessChoice::Random,
            Priority::Other,
        )
        .unwrap()
        .finish(PATIENCE)
        .unwrap();
    assert!(!verifies(&f, &proofs[0], &publics[0]));
    let s = engine.shutdown();
    assert_eq!((s.partition_retries, s.jobs_failed), (1, 0));
    assert_eq!(s.memory_reserved_bytes, 0);
}

#[test]
fn a_recorded_partition_is_retried_from_its_witness() {
    let f = fixture();
    let inj = FaultInjector::new();
    let engine = Engine::new(EngineConfig {
        // The partitions reach the device as witness and recording only: nothing of a, b, c
        // is kept for the retry, the start phase computes them again.
        defer_evaluations: Some(true),
        hooks: Hooks {
            faults: Some(inj.clone()),
            ..Hooks::default()
        },
        ..config(Device::cpu(1), 1)
    })
    .unwrap();
    inj.fail_starts(0, 1);
    inj.corrupt_results(0, 1);
    let key = ShapeKey::new("one-constraint");
    let circuits: Vec<_> = (300..304)
        .map(|seed| {
            PartitionCircuit::new(SampleCircuit::OneConstraint { seed }).with_shape_key(key.clone())
        })
        .collect();
    let publics: Vec<_> = (300..304).map(|seed| partition(seed).1).collect();
    let proofs = engine
        .submit(JobRequest::new(
            f.srs.clone(),
            JobInput::Synthesize(circuits),
            JobKind::Other,
        ))
        .unwrap()
        .finish(PATIENCE)
        .expect("retried");
    assert!(proofs.iter().zip(&publics).all(|(p, x)| verifies(&f, p, x)));
    let s = engine.shutdown();
    assert_eq!((faults(&s), s.partition_retries), (vec![2], 2));
    assert_eq!(s.memory_reserved_bytes, 0);
}

#[test]
fn a_partition_failing_everywhere_fails_its_job_after_max_attempts_naming_each_error() {
    let f = fixture();
    // FaultyStart fails this partition on every device: the fault follows the partition.
    let engine = Engine::new(config(faulty_devices(2), 1)).unwrap();
    let (mut parts, _) = partitions(400, 3);
    parts[1] = poisoned(ERROR_INPUT);
    let failing = submit(&engine, &f, parts);
    let others: Vec<_> = (0..4)
        .map(|i| {
            let (parts, publics) = partitions(410 + 3 * i, 3);
            (submit(&engine, &f, parts), publics)
        })
        .collect();
    let e = failing.finish(PATIENCE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Gpu, "{e}");
    let m = e.message();
    assert!(
        m.starts_with("partition 1: failed on all 3 attempts"),
        "{e}"
    );
    for attempt in ["attempt 1 on device faulty", "attempt 2", "attempt 3"] {
        assert!(m.contains(attempt), "{e}");
    }
    assert_eq!(m.matches("deliberate device fault").count(), 3, "{e}");
    // The first retry goes to the device that has not failed it yet.
    assert!(m.contains("faulty0") && m.contains("faulty1"), "{e}");
    for (job, publics) in others {
        let proofs = job.finish(PATIENCE).expect("other jobs are unaffected");
        assert!(proofs.iter().zip(&publics).all(|(p, x)| verifies(&f, p, x)));
    }
    let s = engine.shutdown();
    assert_eq!(faults(&s).iter().sum::<u64>(), 3);
    assert_eq!(s.partition_retries, 2);
    assert_eq!(s.partitions_failed_after_retries, 1);
    assert_eq!((s.jobs_failed, s.jobs_finished), (1, 4));
    assert_eq!(s.partitions_failed, 1);
    assert_eq!(
        s.partitions_admitted,
        s.partitions_proved + s.partitions_failed + s.partitions_dropped
    );
    assert_eq!(s.memory_reserved_bytes, 0);
}

#[test]
fn errors_that_are_the_inputs_fault_are_not_retried() {
    let f = fixture();
    let engine = Engine::new(config(faulty_devices(2), 1)).unwrap();
    let (mut parts, _) = partitions(500, 2);
    parts[0] = poisoned(INVALID_INPUT);
    let e = submit(&engine, &f, parts).finish(PATIENCE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidAssignment, "{e}");
    assert!(e.message().starts_with("partition 0: "), "{e}");
    assert!(!e.message().contains("attempt"), "{e}");
    let s = engine.shutdown();
    assert_eq!(faults(&s), vec![0, 0]);
    assert_eq!((s.partition_retries, s.partitions_failed), (0, 1));
}

#[test]
fn a_device_that_keeps_failing_leaves_rotation_and_comes_back_after_the_probe_delay() {
    let f = fixture();
    let inj = FaultInjector::new();
    // Long enough that the checks below run while device 0 is out (a loaded machine gets
    // seconds of slack); the second phase waits for it to pass.
    let probe_delay = Duration::from_secs(3);
    let policy = FaultPolicy {
        max_attempts: 3,
        out_of_rotation_after: 2,
        probe_delay,
    };
    let engine = engine(Device::cpu(2), policy, &inj);
    inj.fail_starts(0, 2);
    let mut seed = 600;
    for _ in 0..200 {
        if engine.stats().devices()[0].faults >= 2 {
            break;
        }
        prove_ok(&engine, &f, &mut seed, 4);
    }
    let s = engine.stats();
    assert_eq!(faults(&s), vec![2, 0], "device 0 ran too few start phases");
    assert_eq!(s.devices_out_of_rotation, 1);
    // While it is out, device 1 proves everything.
    let before = s.devices()[0].partitions;
    prove_ok(&engine, &f, &mut seed, 4);
    assert_eq!(engine.stats().devices()[0].partitions, before);

    // After the delay it is back, and proves again.
    assert!(eventually(|| engine.stats().devices_out_of_rotation == 0));
    for _ in 0..200 {
        if engine.stats().devices()[0].partitions > before {
            break;
        }
        prove_ok(&engine, &f, &mut seed, 4);
    }
    let s = engine.shutdown();
    assert!(
        s.devices()[0].partitions > before,
        "device 0 never came back"
    );
    assert_eq!(faults(&s), vec![2, 0]);
    assert_eq!((s.jobs_failed, s.devices_out_of_rotation), (0, 0));
}

#[test]
fn with_every_device_out_of_rotation_work_waits_for_the_probe() {
    let f = fixture();
    let inj = FaultInjector::new();
    let probe_delay = Duration::from_millis(200);
    let policy = FaultPolicy {
        max_attempts: 2,
        out_of_rotation_after: 1,
        probe_delay,
    };
    let engine = engine(Device::cpu(1), policy, &inj);
    inj.fail_starts(0, 1);
    let (parts, publics) = partitions(700, 1);
    let job = submit(&engine, &f, parts);
    let proofs = job.finish(PATIENCE).expect("the probe proves it");
    assert!(verifies(&f, &proofs[0], &publics[0]));
    // The retry could only start once the device was probed again.
    assert!(job.timings().total >= probe_delay);
    let s = engine.shutdown();
    assert_eq!((faults(&s), s.partition_retries), (vec![1], 1));
    assert_eq!(s.devices_out_of_rotation, 0);

    // Dropping an engine whose only device rests for a minute does not wait it out.
    let policy = FaultPolicy {
        max_attempts: 1,
        out_of_rotation_after: 1,
        probe_delay: Duration::from_secs(60),
    };
    let engine = self::engine(Device::cpu(1), policy, &inj);
    inj.fail_starts(0, 1);
    let (parts, _) = partitions(710, 1);
    let e = submit(&engine, &f, parts).finish(PATIENCE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Gpu, "{e}");
    assert!(
        e.message()
            .starts_with("partition 0: device cpu0: injected fault"),
        "{e}"
    );
    assert!(eventually(|| engine.stats().devices_out_of_rotation == 1));
    let t = std::time::Instant::now();
    let s = engine.shutdown();
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "shutdown waited for the probe"
    );
    assert_eq!(
        (s.partition_retries, s.partitions_failed_after_retries),
        (0, 0)
    );
}

#[test]
fn without_room_for_a_copy_a_partition_is_not_retried() {
    let f = fixture();
    let inj = FaultInjector::new();
    let (parts, _) = partitions(800, 1);
    // A budget of exactly one partition: no room to keep its evaluations for a retry.
    let shape = parts[0].shape();
    let one = (shape.evaluation_bytes()
        + shape.witness_bytes()
        + std::mem::size_of::<cuzk::groth16::Proof>()) as u64;
    let engine = Engine::new(EngineConfig {
        memory_budget: Some(one),
        hooks: Hooks {
            faults: Some(inj.clone()),
            ..Hooks::default()
        },
        ..config(Device::cpu(1), 1)
    })
    .unwrap();
    inj.fail_starts(0, 1);
    let e = submit(&engine, &f, parts).finish(PATIENCE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Gpu, "{e}");
    assert!(e.message().contains("no room in the memory budget"), "{e}");
    let s = engine.shutdown();
    assert_eq!((s.partition_retries, s.memory_peak_bytes), (0, one));
}
