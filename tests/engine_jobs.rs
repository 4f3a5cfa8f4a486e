//! Job life cycles through the engine: validation, cancellation, failures, admission,
//! scheduling order, shutdown, and the stats and exposition that report them.

mod engine_common;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};
use cuzk::engine::{Hooks, JobStatus};
use cuzk::groth16::BackendKind;
use cuzk::stats::NO_GPU_ORDINAL;
use cuzk::{AdmissionPolicy, Engine, EngineConfig, ErrorKind, Priority, RandomnessChoice};
use engine_common::*;

/// A hook that holds the device inside job 0's first start until `open` is sent to, so that
/// later jobs pile up in the queue in a known state.
/// (job seq, partition) of each start phase, in the order the device ran them.
type StartLog = Arc<Mutex<Vec<(u64, usize)>>>;

fn gate(cfg: &mut EngineConfig) -> (Sender<()>, StartLog) {
    let (open, gate): (Sender<()>, Receiver<()>) = crossbeam_channel::unbounded();
    let started = Arc::new(Mutex::new(Vec::new()));
    let log = started.clone();
    cfg.hooks.on_device_start = Some(Arc::new(move |job, partition| {
        log.lock().unwrap().push((job, partition));
        if job == 0 && partition == 0 {
            let _ = gate.recv_timeout(PATIENCE);
        }
    }));
    (open, started)
}

fn wait_started(started: &Mutex<Vec<(u64, usize)>>, n: usize) {
    assert!(
        eventually(|| started.lock().unwrap().len() >= n),
        "device never started"
    );
}

#[test]
fn a_bad_partition_fails_the_whole_job_naming_it() {
    let f = fixture();
    let engine = Engine::new(config(cuzk::engine::Device::cpu(1), 2)).expect("engine");
    let (mut parts, _) = partitions(1, 4);
    parts[2] = malformed(9);
    let e = engine
        .prove_start(
            f.srs.clone(),
            parts,
            RandomnessChoice::Random,
            Priority::Other,
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidAssignment);
    assert!(e.message().starts_with("partition 2: "), "{e}");

    let (parts, _) = partitions(1, 2);
    let e = engine
        .prove_start(
            f.srs.clone(),
            parts,
            RandomnessChoice::Given(vec![cuzk::groth16::Randomness::random()]),
            Priority::Other,
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = engine
        .prove_start(
            f.srs.clone(),
            vec![],
            RandomnessChoice::Random,
            Priority::Other,
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    let stats = engine.shutdown();
    assert_eq!(stats.jobs_rejected, 3);
    assert_eq!(stats.jobs_admitted, 0);
    assert_eq!(
        stats.memory_peak_bytes, 0,
        "nothing reserved for a rejected job"
    );
}

#[test]
fn given_randomness_gives_reproducible_proofs() {
    let f = fixture();
    let engine = Engine::new(config(cuzk::engine::Device::cpu(2), 2)).expect("engine");
    let rs: Vec<_> = (0..3)
        .map(|_| cuzk::groth16::Randomness::random())
        .collect();
    let run = || {
        let (parts, publics) = partitions(40, 3);
        let job = engine
            .prove_start(
                f.srs.clone(),
                parts,
                RandomnessChoice::Given(rs.clone()),
                Priority::WindowPost,
            )
            .expect("admitted");
        let proofs = job.finish(PATIENCE).expect("proved");
        assert!(proofs.iter().zip(&publics).all(|(p, x)| verifies(&f, p, x)));
        assert_eq!(job.poll(), JobStatus::Done);
        proofs
    };
    assert_eq!(run(), run());
    // And they are the prover's own bytes for that (r, s).
    let (parts, _) = partitions(40, 3);
    let direct = cuzk::groth16::prove_batch(&cuzk::cpu::CpuStart, &f.srs, parts, &rs).unwrap();
    assert_eq!(run(), direct);
}

#[test]
fn backend_panic_or_fault_fails_only_its_job() {
    let f = fixture();
    let engine = Engine::new(config(faulty_devices(1), 2)).expect("engine");
    let submit = |parts| {
        engine
            .prove_start(
                f.srs.clone(),
                parts,
                RandomnessChoice::Random,
                Priority::PorepSnap,
            )
            .expect("admitted")
    };
    let (mut p1, _) = partitions(1, 3);
    p1[1] = poisoned(PANIC_INPUT);
    let panicking = submit(p1);
    let (good_parts, publics) = partitions(10, 3);
    let good = submit(good_parts);
    let (mut p2, _) = partitions(20, 2);
    p2[0] = poisoned(ERROR_INPUT);
    let faulting = submit(p2);

    let e = panicking.finish(PATIENCE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Internal);
    assert!(e.message().contains("partition 1"), "{e}");
    assert!(e.message().contains("deliberate backend panic"), "{e}");
    let e = faulting.finish(PATIENCE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Gpu);
    assert!(e.message().starts_with("partition 0: "), "{e}");
    assert!(matches!(faulting.poll(), JobStatus::Failed(ref x) if x.kind() == ErrorKind::Gpu));
    let proofs = good.finish(PATIENCE).expect("unaffected");
    assert!(proofs.iter().zip(&publics).all(|(p, x)| verifies(&f, p, x)));

    // The device survives its panic.
    let (parts, publics) = partitions(30, 2);
    let proofs = submit(parts).finish(PATIENCE).expect("device still works");
    assert!(proofs.iter().zip(&publics).all(|(p, x)| verifies(&f, p, x)));

    assert!(eventually(|| engine.memory_budget().reserved() == 0));
    let stats = engine.shutdown();
    assert_eq!((stats.jobs_failed, stats.jobs_finished), (2, 2));
    assert_eq!(stats.partitions_failed, 2);
    assert_eq!(
        stats.partitions_admitted,
        stats.partitions_proved + stats.partitions_failed + stats.partitions_dropped
    );
}

#[test]
fn cancel_gives_back_memory_and_queue_places_at_once() {
    let f = fixture();
    let mut cfg = config(cuzk::engine::Device::cpu(1), 1);
    let (open, started) = gate(&mut cfg);
    let engine = Engine::new(cfg).expect("engine");
    let (parts, publics) = partitions(1, 1);
    let blocker = engine
        .prove_start(
            f.srs.clone(),
            parts,
            RandomnessChoice::Random,
            Priority::WinningPost,
        )
        .expect("admitted");
    wait_started(&started, 1);
    let held_by_blocker = engine.memory_budget().reserved();

    let (parts, _) = partitions(10, 5);
    let victim = engine
        .prove_start(
            f.srs.clone(),
            parts,
            RandomnessChoice::Random,
            Priority::PorepSnap,
        )
        .expect("admitted");
    assert_eq!(
        victim.poll(),
        JobStatus::Pending {
            proved: 0,
            total: 5
        }
    );
    assert_eq!(engine.stats().queue_depth, [0, 0, 5, 0]);
    assert!(engine.memory_budget().reserved() > held_by_blocker);

    assert!(victim.cancel());
    assert!(!victim.cancel(), "cancelling twice is a no-op");
    // Released by the cancel itself, while the device is still busy with the blocker.
    assert_eq!(engine.stats().queue_depth, [0; 4]);
    assert_eq!(engine.memory_budget().reserved(), held_by_blocker);
    assert_eq!(victim.poll(), JobStatus::Cancelled);
    assert_eq!(
        victim.finish(PATIENCE).unwrap_err().kind(),
        ErrorKind::Cancelled
    );

    // Dropping an unfinished job's handle cancels it too.
    let (parts, _) = partitions(20, 2);
    drop(
        engine
            .prove_start(
                f.srs.clone(),
                parts,
                RandomnessChoice::Random,
                Priority::Other,
            )
            .expect("admitted"),
    );
    assert_eq!(engine.memory_budget().reserved(), held_by_blocker);

    open.send(()).unwrap();
    let proofs = blocker.finish(PATIENCE).expect("blocker unaffected");
    assert!(verifies(&f, &proofs[0], &publics[0]));
    assert!(!blocker.cancel(), "a done job cannot be cancelled");
    assert!(eventually(|| engine.memory_budget().reserved() == 0));
    let stats = engine.shutdown();
    assert_eq!((stats.jobs_cancelled, stats.jobs_finished), (2, 1));
    assert_eq!(stats.partitions_dropped, 7);
    assert_eq!(
        stats.devices()[0].partitions,
        1,
        "no cancelled partition reached the device"
    );
}

#[test]
fn partitions_run_by_class_then_job_then_index() {
    let f = fixture();
    let mut cfg = config(cuzk::engine::Device::cpu(1), 1);
    let (open, started) = gate(&mut cfg);
    let engine = Engine::new(cfg).expect("engine");
    let submit = |seed, n, priority| {
        let (parts, _) = partitions(seed, n);
        engine
            .prove_start(f.srs.clone(), parts, RandomnessChoice::Random, priority)
            .expect("admitted")
    };
    let blocker = submit(1, 1, Priority::Other);
    wait_started(&started, 1);
    // Jobs 1..=5 queue up behind the blocker in an order that is not their run order.
    let jobs = [
        submit(10, 2, Priority::Other),
        submit(20, 1, Priority::PorepSnap),
        submit(30, 2, Priority::WinningPost),
        submit(40, 1, Priority::WindowPost),
        submit(50, 2, Priority::WinningPost),
    ];
    assert_eq!(engine.stats().queue_depth, [4, 1, 1, 2]);
    open.send(()).unwrap();
    blocker.finish(PATIENCE).expect("proved");
    for j in &jobs {
        j.finish(PATIENCE).expect("proved");
    }
    let order = started.lock().unwrap().clone();
    assert_eq!(
        order,
        vec![
            (0, 0),
            (3, 0),
            (3, 1),
            (5, 0),
            (5, 1),
            (4, 0),
            (2, 0),
            (1, 0),
            (1, 1)
        ]
    );
    let stats = engine.shutdown();
    // One worker, all work queued while the device was held: every hand-over is a gap.
    assert_eq!(stats.gap.count, 8);
    assert_eq!(stats.queue_wait.count, 9);
}

#[test]
fn admission_policies() {
    let f = fixture();
    let one = {
        let s = partition(0).0.shape();
        (s.evaluation_bytes() + s.witness_bytes() + std::mem::size_of::<cuzk::groth16::Proof>())
            as u64
    };
    let try_with = |admission| {
        let mut cfg = config(cuzk::engine::Device::cpu(1), 1);
        cfg.memory_budget = Some(2 * one);
        cfg.admission = admission;
        let (open, started) = gate(&mut cfg);
        let engine = Engine::new(cfg).expect("engine");
        // A job that can never fit fails at once, whatever the policy.
        let (parts, _) = partitions(1, 3);
        let e = engine
            .prove_start(
                f.srs.clone(),
                parts,
                RandomnessChoice::Random,
                Priority::Other,
            )
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ResourceExhausted);
        // Fill the budget, then ask for more.
        let (parts, _) = partitions(1, 2);
        let blocker = engine
            .prove_start(
                f.srs.clone(),
                parts,
                RandomnessChoice::Random,
                Priority::Other,
            )
            .expect("fits");
        wait_started(&started, 1);
        let (parts, _) = partitions(5, 1);
        let e = engine
            .prove_start(
                f.srs.clone(),
                parts,
                RandomnessChoice::Random,
                Priority::Other,
            )
            .unwrap_err();
        // A job's own policy overrides the engine's.
        let other = match admission {
            AdmissionPolicy::FailFast => AdmissionPolicy::Wait(Duration::from_millis(10)),
            AdmissionPolicy::Wait(_) => AdmissionPolicy::FailFast,
        };
        let (parts, _) = partitions(6, 1);
        let e_other = engine
            .prove_start_with_admission(
                f.srs.clone(),
                parts,
                RandomnessChoice::Random,
                Priority::Other,
                other,
            )
            .unwrap_err();
        open.send(()).unwrap();
        blocker.finish(PATIENCE).expect("proved");
        let stats = engine.shutdown();
        assert!(stats.memory_peak_bytes <= 2 * one);
        assert_eq!(stats.jobs_rejected, 3);
        (e.kind(), e_other.kind())
    };
    assert_eq!(
        try_with(AdmissionPolicy::FailFast),
        (ErrorKind::ResourceExhausted, ErrorKind::Timeout)
    );
    assert_eq!(
        try_with(AdmissionPolicy::Wait(Duration::from_millis(10))),
        (ErrorKind::Timeout, ErrorKind::ResourceExhausted)
    );

    // With time to wait, a job is admitted as soon as memory is released.
    let mut cfg = config(cuzk::engine::Device::cpu(1), 1);
    cfg.memory_budget = Some(one);
    let engine = Engine::new(cfg).expect("engine");
    let jobs: Vec<_> = (0..10)
        .map(|i| {
            let (parts, publics) = partitions(100 + i, 1);
            let job = engine
                .prove_start(
                    f.srs.clone(),
                    parts,
                    RandomnessChoice::Random,
                    Priority::Other,
                )
                .expect("admitted after waiting");
            (job, publics)
        })
        .collect();
    for (job, publics) in &jobs {
        assert!(verifies(
            &f,
            &job.finish(PATIENCE).expect("proved")[0],
            &publics[0]
        ));
    }
    let stats = engine.shutdown();
    assert_eq!(stats.memory_peak_bytes, one);
    assert_eq!(stats.jobs_finished, 10);
}

#[test]
fn shutdown_fails_queued_jobs_and_completes_running_ones() {
    let f = fixture();
    let mut cfg = config(cuzk::engine::Device::cpu(1), 1);
    let (open, started) = gate(&mut cfg);
    let engine = Engine::new(cfg).expect("engine");
    let (parts, publics) = partitions(1, 1);
    let running = engine
        .prove_start(
            f.srs.clone(),
            parts,
            RandomnessChoice::Random,
            Priority::Other,
        )
        .expect("admitted");
    wait_started(&started, 1);
    let (parts, _) = partitions(2, 3);
    let queued = engine
        .prove_start(
            f.srs.clone(),
            parts,
            RandomnessChoice::Random,
            Priority::Other,
        )
        .expect("admitted");
    let stats = std::thread::scope(|s| {
        // Open the gate only once the shutdown has failed the queued job, so the running
        // partition is in flight while the engine shuts down.
        s.spawn(|| {
            eventually(|| matches!(queued.poll(), JobStatus::Failed(_)));
            open.send(()).unwrap();
        });
        engine.shutdown()
    });
    let e = queued.finish(PATIENCE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShuttingDown);
    let proofs = running
        .finish(Duration::ZERO)
        .expect("completed during shutdown");
    assert!(verifies(&f, &proofs[0], &publics[0]));
    assert_eq!((stats.jobs_failed, stats.jobs_finished), (1, 1));
    assert_eq!(stats.partitions_dropped, 3);
    assert_eq!(stats.memory_reserved_bytes, 0);
}

#[test]
fn finish_times_out_and_can_be_called_again() {
    let f = fixture();
    let mut cfg = config(cuzk::engine::Device::cpu(1), 1);
    let (open, started) = gate(&mut cfg);
    let engine = Engine::new(cfg).expect("engine");
    let (parts, publics) = partitions(1, 2);
    let job = engine
        .prove_start(
            f.srs.clone(),
            parts,
            RandomnessChoice::Random,
            Priority::Other,
        )
        .expect("admitted");
    wait_started(&started, 1);
    let e = job.finish(Duration::from_millis(5)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Timeout);
    open.send(()).unwrap();
    let proofs = job.finish(PATIENCE).expect("proved");
    assert_eq!(job.finish(Duration::ZERO).expect("again"), proofs);
    // A timeout too large for a deadline means "no deadline", not a panic.
    assert_eq!(job.finish(Duration::MAX).expect("again"), proofs);
    assert!(proofs.iter().zip(&publics).all(|(p, x)| verifies(&f, p, x)));
}

#[test]
fn stats_and_prometheus_report_the_work() {
    let f = fixture();
    let events = Arc::new(AtomicUsize::new(0));
    let mut cfg = config(cuzk::engine::Device::cpu(2), 2);
    cfg.hooks = Hooks {
        on_finalize: Some({
            let events = events.clone();
            Arc::new(move |_, _| {
                events.fetch_add(1, SeqCst);
            })
        }),
        ..Hooks::default()
    };
    let engine = Engine::new(cfg).expect("engine");
    let jobs: Vec<_> = (0..6)
        .map(|i| {
            let (parts, _) = partitions(10 * i, 3);
            engine
                .prove_start(
                    f.srs.clone(),
                    parts,
                    RandomnessChoice::Random,
                    Priority::ALL[i as usize % 4],
                )
                .expect("admitted")
        })
        .collect();
    for j in &jobs {
        j.finish(PATIENCE).expect("proved");
    }
    assert!(eventually(|| engine.memory_budget().reserved() == 0));
    let live = engine.stats();
    let text = live.prometheus();
    let stats = engine.shutdown();
    assert_eq!(stats.partitions_proved, 18);
    assert_eq!(events.load(SeqCst), 18);
    assert_eq!(stats.devices().len(), 2);
    assert_eq!(
        stats.devices().iter().map(|d| d.partitions).sum::<u64>(),
        18
    );
    for d in stats.devices() {
        assert!(d.busy_ns <= d.life_ns && d.window_busy_ns <= d.window_ns);
    }
    for h in [
        &stats.queue_wait,
        &stats.mutex_wait,
        &stats.mutex_hold,
        &stats.finalize,
    ] {
        assert_eq!(h.count, 18);
        assert!(h.p50_ns <= h.p99_ns && h.p99_ns <= h.max_ns);
        assert!(h.max_ns <= h.sum_ns);
    }
    assert!(stats.memory_peak_bytes > 0 && stats.memory_budget_bytes == 1 << 30);
    assert!(text.contains("cuzk_partitions_proved_total 18"), "{text}");
    assert!(text.contains("cuzk_jobs_finished_total 6"));
    assert!(text.contains("# TYPE cuzk_device_gap_seconds summary"));
    assert!(text.contains("cuzk_device_busy_recent_ratio{device=\"1\"}"));
    assert!(text.contains("cuzk_finalize_seconds_count 18"));

    // Each start phase's stages, once per partition, within the device mutex's holds.
    // The CPU's stages are disjoint, so even their total fits in the holds; it has no
    // transfers or gathers.
    let slack = 1_000_000; // 1 ms: rounding only, every stage is timed inside the hold
    let mut cpu_total = 0;
    for (stage, h) in stats.start_stages() {
        assert_eq!(h.count, 18, "{stage}");
        assert!(h.sum_ns <= stats.mutex_hold.sum_ns + slack, "{stage}");
        assert!(h.max_ns <= stats.mutex_hold.max_ns + slack, "{stage}");
        let name = format!("cuzk_start_stage_seconds_count{{stage=\"{stage}\"}} 18");
        assert!(text.contains(&name), "{name} in {text}");
        match stage {
            "ntt" | "msm_h" | "msm_l" | "msm_a" | "msm_b_g1" => {
                assert!(h.sum_ns > 0, "{stage}");
                cpu_total += h.sum_ns;
            }
            _ => assert_eq!(h.sum_ns, 0, "{stage} on the CPU"),
        }
    }
    assert!(cpu_total <= stats.mutex_hold.sum_ns + slack);
    assert_eq!(stats.finalize_b_g2.count, 18);
    assert!(stats.finalize_b_g2.sum_ns > 0);
    assert!(stats.finalize_b_g2.sum_ns <= stats.finalize.sum_ns + slack);
    assert!(text.contains("cuzk_finalize_b_g2_seconds_count 18"));
    for (i, d) in stats.devices().iter().enumerate() {
        assert_eq!(d.backend, BackendKind::Cpu);
        assert_eq!(d.gpu_ordinal, NO_GPU_ORDINAL);
        let info = format!("cuzk_device_info{{device=\"{i}\",backend=\"cpu\"}} 1");
        assert!(text.contains(&info), "{info}");
        assert_eq!(d.kernel_active_ns, 0, "a CPU device runs no kernels");
        let active = format!("cuzk_device_kernel_active_seconds_total{{device=\"{i}\"}} 0");
        assert!(text.contains(&active), "{active}");
    }
}

#[test]
fn two_workers_hand_the_device_over_in_queue_order() {
    // Each worker takes a partition from the queue before it locks the device; the device
    // mutex must then serve the workers in the order they came, or a worker that just
    // released it keeps overtaking one already waiting with an earlier partition.
    let f = fixture();
    let mut cfg = config(cuzk::engine::Device::cpu(1), 2);
    let started: StartLog = Arc::new(Mutex::new(Vec::new()));
    let log = started.clone();
    cfg.hooks.on_device_start = Some(Arc::new(move |job, partition| {
        log.lock().unwrap().push((job, partition));
        std::thread::sleep(Duration::from_millis(3));
    }));
    let engine = Engine::new(cfg).expect("engine");
    let n = 40;
    let (parts, _) = partitions(1, n);
    let job = engine
        .prove_start(
            f.srs.clone(),
            parts,
            RandomnessChoice::Random,
            Priority::Other,
        )
        .expect("admitted");
    job.finish(PATIENCE).expect("proved");
    let order: Vec<usize> = started.lock().unwrap().iter().map(|&(_, p)| p).collect();
    assert_eq!(order.len(), n);
    // Two workers race only between taking a partition and taking a ticket, so a partition
    // may swap with its neighbour, never fall further behind.
    for (pos, &p) in order.iter().enumerate() {
        assert!(
            pos.abs_diff(p) <= 1,
            "partition {p} ran {pos}th: overtaken (order {order:?})"
        );
    }
    engine.shutdown();
}
