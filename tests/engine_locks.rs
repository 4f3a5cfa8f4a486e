//! The engine's lock discipline, checked structurally (no timing thresholds):
//! - the trimmer calls its trim holding no engine lock, and a trim that never returns
//!   blocks no proof;
//! - a slow finalizer does not hold back the device: the worker starts every later partition
//!   while the first finalize is still running;
//! - inside the device mutex the worker holds exactly one engine lock (that mutex).

mod engine_common;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cuzk::engine::{engine_locks_held, Hooks};
use cuzk::{Engine, Priority, RandomnessChoice, TrimPolicy};
use engine_common::*;

#[test]
fn trim_holds_no_engine_lock_and_a_stuck_trim_blocks_no_proof() {
    let f = fixture();
    let entered = Arc::new(AtomicUsize::new(0));
    let max_locks = Arc::new(AtomicUsize::new(usize::MAX));
    let thread_names = Arc::new(Mutex::new(Vec::new()));
    let (release_tx, release_rx) = crossbeam_channel::bounded::<()>(0);
    let mut cfg = config(cuzk::engine::Device::cpu(1), 2);
    cfg.trim = TrimPolicy::Every {
        interval: Duration::from_millis(1),
        min_freed_bytes: 1,
    };
    cfg.hooks = Hooks {
        trim: Some({
            let (entered, max_locks, names) =
                (entered.clone(), max_locks.clone(), thread_names.clone());
            Arc::new(move || {
                let held = engine_locks_held();
                let _ = max_locks.compare_exchange(usize::MAX, held, SeqCst, SeqCst);
                max_locks.fetch_max(held, SeqCst);
                names
                    .lock()
                    .unwrap()
                    .push(std::thread::current().name().map(String::from));
                // The first trim "takes forever" until the test lets it go.
                if entered.fetch_add(1, SeqCst) == 0 {
                    let _ = release_rx.recv_timeout(PATIENCE);
                }
            })
        }),
        ..Hooks::default()
    };
    let engine = Engine::new(cfg).expect("engine");

    let (parts, publics) = partitions(1, 3);
    let job = engine
        .prove_start(
            f.srs.clone(),
            parts,
            RandomnessChoice::Random,
            Priority::Other,
        )
        .expect("admitted");
    let proofs = job.finish(PATIENCE).expect("proved");
    assert!(proofs.iter().zip(&publics).all(|(p, x)| verifies(&f, p, x)));
    assert!(
        eventually(|| entered.load(SeqCst) == 1),
        "the trimmer never trimmed"
    );

    // The trimmer is now stuck inside its trim. If it held anything the pipeline needs
    // (queue, job state, device mutex, budget), these jobs would never finish.
    let jobs: Vec<_> = (0..20)
        .map(|i| {
            let (parts, publics) = partitions(100 + 10 * i, 2);
            let job = engine
                .prove_start(
                    f.srs.clone(),
                    parts,
                    RandomnessChoice::Random,
                    Priority::ALL[i as usize % 4],
                )
                .expect("admitted while trimming");
            (job, publics)
        })
        .collect();
    for (job, publics) in &jobs {
        let proofs = job
            .finish(PATIENCE)
            .expect("proved while the trim is stuck");
        assert!(proofs.iter().zip(publics).all(|(p, x)| verifies(&f, p, x)));
    }
    assert_eq!(
        entered.load(SeqCst),
        1,
        "trims do not overlap: one trimmer thread"
    );
    release_tx.send(()).expect("trimmer waiting");
    assert!(
        eventually(|| entered.load(SeqCst) >= 2),
        "freed bytes were not trimmed later"
    );

    let stats = engine.shutdown();
    assert_eq!(max_locks.load(SeqCst), 0, "trim ran holding an engine lock");
    assert!(thread_names
        .lock()
        .unwrap()
        .iter()
        .all(|n| n.as_deref() == Some("cuzk-trimmer")));
    assert_eq!(stats.trims as usize, entered.load(SeqCst));
    assert_eq!(stats.jobs_finished, 21);
}

#[test]
fn slow_finalizer_does_not_hold_back_the_device() {
    const N: usize = 16;
    let f = fixture();
    let starts = Arc::new(AtomicUsize::new(0));
    let locks_in_start = Arc::new(AtomicU64::new(0));
    let first_finalize_saw_all_starts = Arc::new(AtomicBool::new(false));
    let finalizes = Arc::new(AtomicUsize::new(0));
    let order = Arc::new(Mutex::new(Vec::new()));
    // One device with one worker and one finalizer: the strictest case, where a worker that
    // waited on its finalizer in any way would be stuck behind it.
    let mut cfg = config(cuzk::engine::Device::cpu(1), 1);
    cfg.finalizers = 1;
    cfg.hooks = Hooks {
        on_device_start: Some({
            let (starts, locks, order) = (starts.clone(), locks_in_start.clone(), order.clone());
            Arc::new(move |_, partition| {
                // Inside the device mutex: exactly that one engine lock, not the queue's or a
                // job's.
                locks.fetch_max(engine_locks_held() as u64, SeqCst);
                order.lock().unwrap().push(("start", partition));
                starts.fetch_add(1, SeqCst);
            })
        }),
        on_finalize: Some({
            let (starts, saw, finalizes, order) = (
                starts.clone(),
                first_finalize_saw_all_starts.clone(),
                finalizes.clone(),
                order.clone(),
            );
            Arc::new(move |_, partition| {
                order.lock().unwrap().push(("finalize", partition));
                if finalizes.fetch_add(1, SeqCst) == 0 {
                    // A deliberately slow finalize: it lasts until the device has started
                    // every partition (or PATIENCE runs out, which fails the test).
                    saw.store(eventually(|| starts.load(SeqCst) == N), SeqCst);
                    order.lock().unwrap().push(("finalize_ended", partition));
                }
            })
        }),
        ..Hooks::default()
    };
    let engine = Engine::new(cfg).expect("engine");
    let (parts, publics) = partitions(500, N);
    let job = engine
        .prove_start(
            f.srs.clone(),
            parts,
            RandomnessChoice::Random,
            Priority::PorepSnap,
        )
        .expect("admitted");
    let proofs = job.finish(PATIENCE).expect("proved");
    assert!(proofs.iter().zip(&publics).all(|(p, x)| verifies(&f, p, x)));
    let stats = engine.shutdown();

    assert!(
        first_finalize_saw_all_starts.load(SeqCst),
        "the worker waited for the slow finalizer"
    );
    let order = order.lock().unwrap().clone();
    assert_eq!(order[0], ("start", 0));
    assert_eq!(
        order.iter().find(|e| e.0 == "finalize"),
        Some(&("finalize", 0))
    );
    // Partition k + 1 started before finalizer k finished, for every k: the slow finalize
    // of partition 0 outlasted every start.
    let finalize_0_ended = order
        .iter()
        .position(|e| *e == ("finalize_ended", 0))
        .expect("finalize 0 ended");
    for k in 1..N {
        let s = order
            .iter()
            .position(|e| *e == ("start", k))
            .expect("started");
        assert!(
            s < finalize_0_ended,
            "partition {k} started after finalize 0 ended"
        );
    }
    assert_eq!(locks_in_start.load(SeqCst), 1);
    // Every start but the last ended with the next partition queued: N − 1 gaps measured,
    // one per hand-over, however long the finalizer took.
    assert_eq!(stats.gap.count, (N - 1) as u64);
    assert_eq!(stats.mutex_hold.count, N as u64);
    assert_eq!(stats.devices()[0].partitions, N as u64);
    assert_eq!(stats.finalize.count, N as u64);
}
