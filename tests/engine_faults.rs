//! Device faults: a failed start phase or a result that fails verification is retried on
//! another device (the same one when it is the only one), at most `max_attempts` times, then
//! its job fails naming each attempt's error; input errors are not retried; a device that
//! keeps failing leaves rotation and is probed again after the delay. A start phase past its
//! deadline hangs its device until it returns; the CPU fallback proves what the devices
//! cannot. Faults come from the engine's `FaultInjector` hook and the `FaultyStart` backend.

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
        ..FaultPolicy::default()
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
        ..FaultPolicy::default()
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
        ..FaultPolicy::default()
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

/// A deadline no healthy start phase of the one-constraint circuit comes near (about a
/// millisecond), even on a loaded machine; each hang below waits it out once.
const DEADLINE: Duration = Duration::from_secs(4);

fn hangs(s: &StatsSnapshot) -> Vec<u64> {
    s.devices().iter().map(|d| d.hangs).collect()
}

#[test]
fn a_hung_device_s_partition_is_proved_on_the_other_device() {
    let f = fixture();
    let inj = FaultInjector::new();
    let policy = FaultPolicy {
        start_deadline: Some(DEADLINE),
        ..quick()
    };
    let engine = engine(Device::cpu(2), policy, &inj);
    inj.hang_starts(0, 1);
    let mut seed = 900;
    // Each job must prove and verify, the one whose partition hung on device 0 included.
    for _ in 0..200 {
        if engine.stats().devices()[0].hangs >= 1 {
            break;
        }
        prove_ok(&engine, &f, &mut seed, 4);
    }
    let s = engine.stats();
    assert_eq!(hangs(&s), vec![1, 0], "device 0 ran too few start phases");
    assert_eq!(faults(&s), vec![1, 0], "a hang is a device fault");
    assert_eq!((s.partition_retries, s.jobs_failed), (1, 0));
    assert_eq!(s.devices_out_of_rotation, 1);
    // Hung: no more work for device 0, however long (well past its probe delay), while its
    // stuck call keeps what it reads reserved.
    let before = s.devices()[0].partitions;
    for _ in 0..3 {
        prove_ok(&engine, &f, &mut seed, 4);
    }
    let s = engine.stats();
    assert_eq!(s.devices()[0].partitions, before);
    assert_eq!(s.devices_out_of_rotation, 1);
    assert!(eventually(|| engine.stats().memory_reserved_bytes > 0
        && engine.stats().partitions_proved
            == engine.stats().partitions_admitted));
    assert!(
        engine.stats().memory_reserved_bytes > 0,
        "the stuck call's memory"
    );

    // The call returns: its result is discarded (nothing more is proved), its memory goes
    // back, and after the probe delay device 0 proves again.
    let proved = engine.stats().partitions_proved;
    inj.release(0);
    assert!(eventually(|| engine.stats().memory_reserved_bytes == 0));
    assert_eq!(engine.stats().partitions_proved, proved);
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
    assert_eq!((hangs(&s), faults(&s)), (vec![1, 0], vec![1, 0]));
    assert_eq!((s.jobs_failed, s.devices_out_of_rotation), (0, 0));
    assert_eq!(s.partitions_proved, s.partitions_admitted);
    assert_eq!(s.memory_reserved_bytes, 0);
}

#[test]
fn the_only_device_hanging_fails_its_job_in_bounded_time() {
    let f = fixture();
    let inj = FaultInjector::new();
    let policy = FaultPolicy {
        start_deadline: Some(DEADLINE),
        ..quick()
    };
    // Two workers: the second, waiting for the device with a partition, must let it go.
    let starts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = starts.clone();
    let engine = Engine::new(EngineConfig {
        faults: policy,
        hooks: Hooks {
            faults: Some(inj.clone()),
            on_device_start: Some(Arc::new(move |_, _| {
                counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            })),
            ..Hooks::default()
        },
        ..config(Device::cpu(1), 2)
    })
    .unwrap();
    inj.hang_starts(0, 1);
    let (parts, _) = partitions(1000, 1);
    let hung = submit(&engine, &f, parts);
    assert!(eventually(|| starts
        .load(std::sync::atomic::Ordering::SeqCst)
        == 1));
    // Queued behind the hung start phase (one partition waits for the device, with the
    // second worker): it fails rather than wait for the stuck call.
    let (parts, _) = partitions(1010, 2);
    let behind = submit(&engine, &f, parts);
    let e = hung.finish(PATIENCE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Gpu, "{e}");
    for part in [
        "partition 0: ",
        "device cpu0",
        "did not return within 4s",
        "device hung",
        "not retried (every device is hung)",
    ] {
        assert!(e.message().contains(part), "{part:?} not in {e}");
    }
    let e = behind.finish(PATIENCE).unwrap_err();
    assert!(
        e.message().contains("not started: every device is hung"),
        "{e}"
    );
    assert!(e.message().contains("cpu0"), "{e}");
    // And so does new work, at once.
    let (parts, _) = partitions(1015, 1);
    let e = submit(&engine, &f, parts).finish(PATIENCE).unwrap_err();
    assert!(e.message().contains("every device is hung"), "{e}");
    assert_eq!(starts.load(std::sync::atomic::Ordering::SeqCst), 1);
    let s = engine.stats();
    assert_eq!((hangs(&s), faults(&s)), (vec![1], vec![1]));
    assert_eq!((s.jobs_failed, s.partition_retries), (3, 0));

    // Once the stuck call returns and the probe delay passes, the device proves again.
    inj.release(0);
    assert!(eventually(|| engine.stats().memory_reserved_bytes == 0));
    let mut proved = false;
    for seed in 1020..1220 {
        let (parts, publics) = partitions(seed, 1);
        if let Ok(p) = submit(&engine, &f, parts).finish(PATIENCE) {
            assert!(verifies(&f, &p[0], &publics[0]));
            proved = true;
            break;
        }
    }
    assert!(proved, "the device never came back");
    let s = engine.shutdown();
    assert_eq!(s.memory_reserved_bytes, 0);
    assert_eq!(s.devices_out_of_rotation, 0);
}

#[test]
fn a_partition_whose_device_attempts_are_used_up_is_proved_on_the_cpu_fallback() {
    let f = fixture();
    let inj = FaultInjector::new();
    // Both "GPUs" fail every start phase and never leave rotation.
    let policy = |cpu_fallback| FaultPolicy {
        max_attempts: 2,
        out_of_rotation_after: 0,
        cpu_fallback,
        ..quick()
    };
    inj.fail_starts(0, u32::MAX);
    inj.fail_starts(1, u32::MAX);

    // Without the fallback the job fails, each device's error named.
    let engine = engine(Device::cpu(2), policy(false), &inj);
    let (parts, _) = partitions(1100, 1);
    let e = submit(&engine, &f, parts).finish(PATIENCE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Gpu, "{e}");
    for part in [
        "failed on all 2 attempts",
        "on device cpu0: injected fault",
        "on device cpu1: injected fault",
    ] {
        assert!(e.message().contains(part), "{part:?} not in {e}");
    }
    assert_eq!(engine.shutdown().cpu_fallbacks, 0);

    // With it, the CPU proves every partition, and the proofs verify.
    let engine = self::engine(Device::cpu(2), policy(true), &inj);
    let mut seed = 1110;
    prove_ok(&engine, &f, &mut seed, 3);
    let s = engine.shutdown();
    assert_eq!(s.cpu_fallbacks, 3);
    assert_eq!(
        faults(&s).iter().sum::<u64>(),
        6,
        "two device attempts each"
    );
    assert_eq!((s.partition_retries, s.jobs_failed), (3, 0));
    assert_eq!(s.partitions_proved, 3);
    // Device start phases: the six that failed; the fallback is no device.
    assert_eq!(started(&s), 6);
    assert_eq!(s.memory_reserved_bytes, 0);
}

#[test]
fn while_no_device_is_in_rotation_the_cpu_fallback_proves() {
    let f = fixture();
    let inj = FaultInjector::new();
    // One fault sends the only device out for an hour: without the fallback its work would
    // wait that long.
    let policy = FaultPolicy {
        out_of_rotation_after: 1,
        probe_delay: Duration::from_secs(3600),
        cpu_fallback: true,
        ..FaultPolicy::default()
    };
    let engine = engine(Device::cpu(1), policy, &inj);
    inj.fail_starts(0, 1);
    let mut seed = 1200;
    prove_ok(&engine, &f, &mut seed, 1);
    prove_ok(&engine, &f, &mut seed, 2);
    let s = engine.shutdown();
    assert_eq!(s.cpu_fallbacks, 3);
    assert_eq!((faults(&s), started(&s)), (vec![1], 1));
    assert_eq!(s.partition_retries, 1);
    assert_eq!(s.devices_out_of_rotation, 1);
}

#[test]
fn a_partition_hung_on_the_only_device_is_proved_on_the_cpu_fallback() {
    let f = fixture();
    let inj = FaultInjector::new();
    let policy = FaultPolicy {
        start_deadline: Some(DEADLINE),
        cpu_fallback: true,
        ..quick()
    };
    let engine = engine(Device::cpu(1), policy, &inj);
    inj.hang_starts(0, 1);
    let mut seed = 1300;
    prove_ok(&engine, &f, &mut seed, 2);
    let s = engine.stats();
    assert_eq!(hangs(&s), vec![1]);
    assert_eq!(
        s.cpu_fallbacks, 2,
        "the hung partition and the one queued behind it"
    );
    inj.release(0);
    assert!(eventually(|| engine.stats().memory_reserved_bytes == 0));
    let s = engine.shutdown();
    assert_eq!(s.jobs_failed, 0);
}

/// A start hook that logs each call's (job, partition) and, while closed, blocks the calls
/// `blocks` picks (given the call's number for its partition: 1 on its first start).
struct Gate {
    closed: std::sync::Mutex<bool>,
    opened: std::sync::Condvar,
    log: std::sync::Mutex<Vec<(u64, usize)>>,
}

impl Gate {
    fn new() -> Arc<Gate> {
        Arc::new(Gate {
            closed: std::sync::Mutex::new(false),
            opened: std::sync::Condvar::new(),
            log: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// An engine of one device with two workers (the second must not take a partition to
    /// wait for the fallback's lock), with this gate as its start hook.
    fn engine(
        self: &Arc<Self>,
        faults: FaultPolicy,
        inj: &Arc<FaultInjector>,
        blocks: impl Fn(usize) -> bool + Send + Sync + 'static,
    ) -> Engine {
        let gate = self.clone();
        let hook: cuzk::engine::PartitionHook = Arc::new(move |job, partition| {
            let mut log = gate.log.lock().unwrap();
            log.push((job, partition));
            let nth = log.iter().filter(|&&c| c == (job, partition)).count();
            drop(log);
            if blocks(nth) {
                let mut closed = gate.closed.lock().unwrap();
                while *closed {
                    closed = gate.opened.wait(closed).unwrap();
                }
            }
        });
        Engine::new(EngineConfig {
            faults,
            hooks: Hooks {
                faults: Some(inj.clone()),
                on_device_start: Some(hook),
                ..Hooks::default()
            },
            ..config(Device::cpu(1), 2)
        })
        .unwrap()
    }

    fn close(&self) {
        *self.closed.lock().unwrap() = true;
    }

    fn open(&self) {
        *self.closed.lock().unwrap() = false;
        self.opened.notify_all();
    }

    fn calls(&self) -> Vec<(u64, usize)> {
        self.log.lock().unwrap().clone()
    }
}

fn submit_at(engine: &Engine, f: &Fixture, parts: Vec<Assignment>, priority: Priority) -> Job {
    engine
        .submit(JobRequest {
            priority: Some(priority),
            ..JobRequest::new(f.srs.clone(), JobInput::Ready(parts), JobKind::Other)
        })
        .expect("admitted")
}

fn finish_ok(f: &Fixture, job: Job, publics: &[Vec<blstrs::Scalar>]) {
    let proofs = job.finish(PATIENCE).expect("proved");
    assert!(proofs.iter().zip(publics).all(|(p, x)| verifies(f, p, x)));
}

/// Long enough for a worker that would take a second partition to the fallback's lock to
/// have popped it.
const SETTLE: Duration = Duration::from_millis(300);

#[test]
fn while_no_device_is_in_rotation_one_partition_at_a_time_leaves_the_queue_for_the_fallback() {
    let f = fixture();
    let inj = FaultInjector::new();
    let gate = Gate::new();
    // One fault sends the only device out for an hour: from then on the fallback proves.
    let policy = FaultPolicy {
        out_of_rotation_after: 1,
        probe_delay: Duration::from_secs(3600),
        cpu_fallback: true,
        ..FaultPolicy::default()
    };
    let engine = gate.engine(policy, &inj, |_| true);
    inj.fail_starts(0, 1);
    let mut seed = 1400;
    prove_ok(&engine, &f, &mut seed, 1);
    assert_eq!(engine.stats().devices_out_of_rotation, 1);
    let before = gate.calls().len();

    gate.close();
    let (parts, low_publics) = partitions(1410, 2);
    let low = submit_at(&engine, &f, parts, Priority::Other);
    assert!(eventually(|| gate.calls().len() == before + 1));
    std::thread::sleep(SETTLE);
    // The fallback proves partition 0; partition 1 waits in the queue, not in a worker.
    assert_eq!(
        engine.stats().queue_depth[Priority::Other.index()],
        1,
        "a second partition left the queue to wait for the fallback"
    );
    // So a WinningPoSt partition submitted now goes before it.
    let (parts, high_publics) = partitions(1420, 1);
    let high = submit_at(&engine, &f, parts, Priority::WinningPost);
    assert!(eventually(|| engine.stats().queue_depth
        [Priority::WinningPost.index()]
        == 1));
    gate.open();
    let order = [(low.seq(), 0), (high.seq(), 0), (low.seq(), 1)];
    finish_ok(&f, low, &low_publics);
    finish_ok(&f, high, &high_publics);
    assert_eq!(gate.calls()[before..], order, "fallback start order");
    let s = engine.shutdown();
    assert_eq!((s.cpu_fallbacks, s.jobs_failed), (4, 0));
    assert_eq!(started(&s), 1);
}

#[test]
fn a_partition_waiting_for_the_fallback_leaves_the_device_s_workers_free() {
    let f = fixture();
    let inj = FaultInjector::new();
    let gate = Gate::new();
    // One attempt on the device, then the fallback; the device never leaves rotation.
    let policy = FaultPolicy {
        max_attempts: 1,
        out_of_rotation_after: 0,
        cpu_fallback: true,
        ..FaultPolicy::default()
    };
    // A partition's second start is its fallback one: that one blocks while the gate is
    // closed.
    let engine = gate.engine(policy, &inj, |nth| nth == 2);
    gate.close();
    inj.fail_starts(0, 2);
    let (parts, failing_publics) = partitions(1500, 2);
    let failing = submit_at(&engine, &f, parts, Priority::Other);
    // Both partitions failed on the device; one is on the fallback, blocked.
    assert!(eventually(|| gate.calls().len() == 3));
    std::thread::sleep(SETTLE);
    assert_eq!(
        engine.stats().queue_depth[Priority::Other.index()],
        1,
        "the second partition left the queue to wait for the fallback"
    );
    // The device has a worker free for a job that needs no fallback (it would wait for
    // the gate if the other worker sat on the fallback's lock).
    let (parts, publics) = partitions(1510, 1);
    let proofs = submit_at(&engine, &f, parts, Priority::Other)
        .finish(Duration::from_secs(30))
        .expect("proved on the device while the fallback is busy");
    assert!(verifies(&f, &proofs[0], &publics[0]));
    gate.open();
    finish_ok(&f, failing, &failing_publics);
    let s = engine.shutdown();
    assert_eq!(s.cpu_fallbacks, 2);
    assert_eq!((faults(&s), started(&s)), (vec![2], 3));
    assert_eq!(s.jobs_failed, 0);
}
