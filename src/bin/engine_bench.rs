//! Keeps the engine's queue full for a while and prints how busy each device stayed and
//! where the time between start phases went.
//!
//! ```text
//! cargo run --release --features test-fixtures --bin engine_bench -- \
//!     [--seconds 30] [--constraints 16384] [--partitions 2] [--backlog 6] \
//!     [--devices 1] [--workers 2] [--finalizers 2] [--gpu 0] [--max-gpus 0] \
//!     [--feeders 2] [--jobs 0 --proofs-out FILE]
//! ```
//!
//! `--devices N` gives N logical CPU devices; `--gpu 1` uses every CUDA GPU instead (a build
//! with `--features cuda,test-fixtures`), `--gpu 2` two logical devices per GPU, and
//! `--max-gpus K` only the first K GPUs. Params come from the test-only fixture generator,
//! which is why the bench needs that feature.
//!
//! By default `--feeders` threads keep `--backlog` partitions queued for `--seconds`, each
//! copying its next job's inputs before it waits for room in the queue. `--jobs N`
//! instead proves a fixed backlog: N jobs queued at once, each with its own reproducible
//! r and s, timed until the last proof is back. Every proof is checked against its own
//! job's public inputs, and `--proofs-out` writes them one per line (job, partition, hex),
//! so that runs on different device sets can be compared byte for byte with `cmp`.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk::engine::Device;
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use std::fmt::Write as _;

use blstrs::Scalar;
use cuzk::groth16::{synthesize, verify_proof, Assignment, Randomness, Srs};
use cuzk::stats::HistogramSnapshot;
use cuzk::{Engine, EngineConfig, ErrorKind, Priority, RandomnessChoice, StatsSnapshot};

struct Args {
    seconds: u64,
    constraints: usize,
    partitions: usize,
    backlog: u64,
    devices: usize,
    /// 0: CPU devices; k > 0: k logical devices on every CUDA GPU.
    gpu: usize,
    workers: usize,
    finalizers: usize,
    /// 0: every GPU; k > 0: the first k.
    max_gpus: usize,
    /// Threads that copy jobs' inputs and queue them (timed mode).
    feeders: usize,
    /// 0: timed mode; n > 0: a fixed backlog of n jobs.
    jobs: u64,
    proofs_out: Option<String>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        seconds: 30,
        constraints: 1 << 14,
        partitions: 2,
        backlog: 6,
        devices: 1,
        workers: 2,
        finalizers: 2,
        gpu: 0,
        max_gpus: 0,
        feeders: 2,
        jobs: 0,
        proofs_out: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        if flag == "--proofs-out" {
            a.proofs_out = Some(value);
            continue;
        }
        let n: u64 = value
            .parse()
            .map_err(|_| format!("{flag}: not a number: {value}"))?;
        match flag.as_str() {
            "--seconds" => a.seconds = n,
            "--constraints" => a.constraints = n as usize,
            "--partitions" => a.partitions = n as usize,
            "--backlog" => a.backlog = n,
            "--devices" => a.devices = n as usize,
            "--workers" => a.workers = n as usize,
            "--finalizers" => a.finalizers = n as usize,
            "--gpu" => a.gpu = n as usize,
            "--max-gpus" => a.max_gpus = n as usize,
            "--feeders" => a.feeders = (n as usize).max(1),
            "--jobs" => a.jobs = n,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
}

/// Seconds since the Unix epoch, to line the bench's window up with nvidia-smi's samples.
fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

fn line(name: &str, h: &HistogramSnapshot) {
    println!(
        "  {name:<18} n={:<6} p50={:>9.3} ms  p99={:>9.3} ms  max={:>9.3} ms  sum={:>10.1} ms",
        h.count,
        ms(h.p50_ns),
        ms(h.p99_ns),
        ms(h.max_ns),
        ms(h.sum_ns)
    );
}

fn report(title: &str, s: &StatsSnapshot) {
    println!("{title} (uptime {:.1} s)", s.uptime_ns as f64 / 1e9);
    for (i, d) in s.devices().iter().enumerate() {
        println!(
            "  device {i}: busy (mutex held) {:.2}% of life, {:.2}% of the last {:.1} s; \
             kernels running {:.2}% of life (device events; 0 on a CPU); {} start phases",
            100.0 * d.busy_fraction(),
            100.0 * d.window_busy_fraction(),
            d.window_ns as f64 / 1e9,
            100.0 * d.kernel_active_ns as f64 / d.life_ns.max(1) as f64,
            d.partitions
        );
    }
    line("gap", &s.gap);
    line("device mutex wait", &s.mutex_wait);
    line("device mutex hold", &s.mutex_hold);
    line("queue wait", &s.queue_wait);
    line("finalize", &s.finalize);
    line("admission wait", &s.admission_wait);
    line("trim", &s.trim);
    println!(
        "  partitions proved {}, jobs finished {}, memory peak {:.1} MiB of {:.1} MiB budget",
        s.partitions_proved,
        s.jobs_finished,
        s.memory_peak_bytes as f64 / (1 << 20) as f64,
        s.memory_budget_bytes as f64 / (1 << 20) as f64
    );
}

fn main() {
    // CUZK_LOG=cuzk::gpu_timing=debug shows each start phase's waits and stages.
    cuzk::fixtures::log_from_env();
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("engine_bench: {e}");
            std::process::exit(2);
        }
    };
    let circuit = SampleCircuit::Random {
        constraints: args.constraints,
        seed: 1,
    };
    let t = Instant::now();
    let srs = Arc::new(generate_srs(circuit.clone(), &ToxicWaste::from_seed(1)).expect("params"));
    // A few distinct witnesses of the one shape, cloned into each job.
    let partitions: Vec<_> = (0..args.partitions as u64)
        .map(|i| synthesize(circuit.with_seed(100 + i)).expect("synthesis"))
        .collect();
    let shape = partitions[0].shape();
    println!(
        "engine_bench: {} constraints (domain {}), {} partitions/job, backlog {} partitions, \
         {} device(s) x {} workers, {} finalizers, {} feeders, {} s; setup {:.1} s",
        shape.constraints,
        shape.domain_size(),
        args.partitions,
        args.backlog,
        args.devices,
        args.workers,
        args.finalizers,
        args.feeders,
        args.seconds,
        t.elapsed().as_secs_f64()
    );

    let engine = Engine::new(EngineConfig {
        devices: if args.gpu == 0 {
            Device::cpu(args.devices)
        } else {
            let gpus = Device::logical_gpus(args.gpu, args.max_gpus).expect("opening the GPUs");
            assert!(!gpus.is_empty(), "--gpu: no CUDA device");
            gpus
        },
        workers_per_device: args.workers,
        finalizers: args.finalizers,
        ..EngineConfig::default()
    })
    .expect("engine");
    println!(
        "devices: {}",
        engine
            .devices()
            .iter()
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if args.jobs > 0 {
        fixed_backlog(&args, &engine, &srs, &partitions);
        return;
    }
    let stop = AtomicBool::new(false);
    let proved = AtomicU64::new(0);
    let (jobs_tx, jobs_rx) = crossbeam_channel::unbounded();
    let (at_half, half, at_deadline, deadline) = std::thread::scope(|s| {
        // The collector waits on jobs in submission order.
        s.spawn(|| {
            for job in jobs_rx {
                let job: cuzk::Job = job;
                match job.finish(Duration::from_secs(3600)) {
                    Ok(p) => {
                        proved.fetch_add(p.len() as u64, Relaxed);
                    }
                    Err(e) if e.kind() == ErrorKind::ShuttingDown => {}
                    Err(e) => panic!("job {} failed: {e}", job.seq()),
                }
            }
        });
        // The feeders keep at least `backlog` partitions queued. Each copies its next job's
        // inputs first, while the queue is still full: at 2^22 a job's two partitions are
        // about 1 GB of fresh pages, and one thread copying them between submissions fell
        // behind an H200 (every job's first partition found the queue empty and the device
        // idle for 130-290 ms: notes/engine.md).
        let feeders: Vec<_> = (0..args.feeders)
            .map(|_| {
                let jobs_tx = jobs_tx.clone();
                let (engine, srs, partitions, stop, args) =
                    (&engine, &srs, &partitions, &stop, &args);
                s.spawn(move || {
                    while !stop.load(Relaxed) {
                        let inputs = partitions.clone();
                        while engine.stats().queue_depth.iter().sum::<u64>() >= args.backlog {
                            if stop.load(Relaxed) {
                                return;
                            }
                            std::thread::sleep(Duration::from_micros(200));
                        }
                        let job = engine
                            .prove_start(
                                srs.clone(),
                                inputs,
                                RandomnessChoice::Random,
                                Priority::PorepSnap,
                            )
                            .expect("admitted");
                        jobs_tx.send(job).expect("collector alive");
                    }
                })
            })
            .collect();
        drop(jobs_tx);
        // The second half of the run is the steady state: the first fills the backlog and
        // warms the device (SRS and matrices made resident).
        let run = Duration::from_secs(args.seconds);
        std::thread::sleep(run / 2);
        let (at_half, half) = (engine.stats(), unix_now());
        std::thread::sleep(run - run / 2);
        // Read while the backlog still exists, so the figures are the steady state.
        let (at_deadline, deadline) = (engine.stats(), unix_now());
        stop.store(true, Relaxed);
        for feeder in feeders {
            feeder.join().expect("feeder");
        }
        (at_half, half, at_deadline, deadline)
    });
    report("with a backlog, at the deadline", &at_deadline);
    let elapsed = at_deadline.uptime_ns as f64 / 1e9;
    println!(
        "  throughput {:.2} proofs/s",
        at_deadline.partitions_proved as f64 / elapsed
    );
    // The device's own kernel time over the second half, next to the mutex's; a sampled
    // nvidia-smi utilization over the same wall-clock window (unix seconds printed for it,
    // scripts/device-suite.sh engine) should agree with the kernel figure.
    let window_ns = at_deadline
        .uptime_ns
        .saturating_sub(at_half.uptime_ns)
        .max(1);
    for (i, (d1, d2)) in at_half
        .devices()
        .iter()
        .zip(at_deadline.devices().iter())
        .enumerate()
    {
        println!(
            "  device {i}, second half ({:.1} s): kernels running {:.2}%, mutex held {:.2}%",
            window_ns as f64 / 1e9,
            100.0 * d2.kernel_active_ns.saturating_sub(d1.kernel_active_ns) as f64
                / window_ns as f64,
            100.0 * d2.busy_ns.saturating_sub(d1.busy_ns) as f64 / window_ns as f64,
        );
    }
    println!(
        "  second half: {:.2} proofs/s; window unix {half:.3} {deadline:.3}",
        (at_deadline.partitions_proved - at_half.partitions_proved) as f64 * 1e9 / window_ns as f64
    );
    let last = engine.shutdown();
    println!(
        "after shutdown: {} proofs collected, {} partitions dropped at shutdown",
        proved.load(Relaxed),
        last.partitions_dropped
    );
}

/// r and s of partition `p` of job `j`: distinct for every proof, the same in every run.
fn randomness(j: u64, p: usize) -> Randomness {
    let k = 1 + 2 * (j * 1000 + p as u64);
    Randomness {
        r: Scalar::from(k) * Scalar::from(0x9e37_79b9_7f4a_7c15),
        s: Scalar::from(k + 1) * Scalar::from(0xc2b2_ae3d_27d4_eb4f),
    }
}

/// Proves `args.jobs` jobs queued at once and reports the time to the last proof, checking
/// each proof against its own job's public inputs and (where asked) writing them out.
fn fixed_backlog(args: &Args, engine: &Engine, srs: &Arc<Srs>, partitions: &[Assignment]) {
    let pvk = srs.vk.prepare();
    let t = Instant::now();
    let mut lines = String::new();
    let mut proofs = 0u64;
    let mut collected = Vec::new();
    std::thread::scope(|scope| {
        // Submitted from their own thread: admission may wait for memory that only collected
        // jobs give back.
        let (tx, rx) = crossbeam_channel::unbounded();
        scope.spawn(move || {
            let mut slowest = Duration::ZERO;
            let ts = Instant::now();
            for j in 0..args.jobs {
                let rs = (0..partitions.len()).map(|p| randomness(j, p)).collect();
                let parts = partitions.to_vec();
                let t = Instant::now();
                let job = engine
                    .prove_start(
                        srs.clone(),
                        parts,
                        RandomnessChoice::Given(rs),
                        Priority::PorepSnap,
                    )
                    .expect("admitted");
                slowest = slowest.max(t.elapsed());
                tx.send(job).expect("collector alive");
            }
            println!(
                "  submitted {} jobs in {:.2} s (slowest prove_start {:.1} ms)",
                args.jobs,
                ts.elapsed().as_secs_f64(),
                slowest.as_secs_f64() * 1e3
            );
        });
        // Proofs are checked after the clock stops: verifying on this thread while jobs
        // finish would make the checker, not the engine, the measured bottleneck.
        for (j, job) in rx.iter().enumerate() {
            let job: cuzk::Job = job;
            let got = job
                .finish(Duration::from_secs(3600))
                .unwrap_or_else(|e| panic!("job {j} failed: {e}"));
            assert_eq!(got.len(), partitions.len(), "job {j}: proof count");
            collected.push(got);
        }
    });
    let wall = t.elapsed().as_secs_f64();
    let s = engine.stats();
    for (j, got) in collected.iter().enumerate() {
        for (p, proof) in got.iter().enumerate() {
            let inputs = &partitions[p].witness.input[1..];
            assert!(
                verify_proof(&pvk, proof, inputs).expect("verifying"),
                "job {j} partition {p}: the proof does not verify"
            );
            let hex: String = proof
                .to_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            let _ = writeln!(lines, "{j} {p} {hex}");
            proofs += 1;
        }
    }
    report("fixed backlog, all proofs back", &s);
    let per_device: u64 = s.devices().iter().map(|d| d.partitions).sum();
    println!(
        "  {proofs} proofs of {} jobs in {wall:.2} s: {:.3} proofs/s; start phases per device sum to {per_device} (partitions proved {}); every proof verified against its own inputs",
        args.jobs,
        proofs as f64 / wall,
        s.partitions_proved
    );
    assert_eq!(per_device, s.partitions_proved, "per-device start phases");
    assert_eq!(s.partitions_proved, proofs, "partitions proved");
    if let Some(path) = &args.proofs_out {
        std::fs::write(path, lines).expect("writing --proofs-out");
        println!("  proofs written to {path}");
    }
}
