//! Keeps the engine's queue full for a while and prints how busy each device stayed and
//! where the time between start phases went.
//!
//! ```text
//! cargo run --release --features test-fixtures --bin engine_bench -- \
//!     [--seconds 30] [--constraints 16384] [--partitions 2] [--backlog 6] \
//!     [--devices 1] [--workers 2] [--finalizers 2] [--gpu 0]
//! ```
//!
//! `--devices N` gives N logical CPU devices; `--gpu 1` uses every CUDA GPU instead (a build
//! with `--features cuda,test-fixtures`), `--gpu 2` two logical devices per GPU. Params
//! come from the test-only fixture generator, which is why the bench needs that feature.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuzk::engine::Device;
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::groth16::synthesize;
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
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
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
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    Ok(a)
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
            "  device {i}: busy {:.2}% of life, {:.2}% of the last {:.1} s; {} start phases",
            100.0 * d.busy_fraction(),
            100.0 * d.window_busy_fraction(),
            d.window_ns as f64 / 1e9,
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
         {} device(s) x {} workers, {} finalizers, {} s; setup {:.1} s",
        shape.constraints,
        shape.domain_size(),
        args.partitions,
        args.backlog,
        args.devices,
        args.workers,
        args.finalizers,
        args.seconds,
        t.elapsed().as_secs_f64()
    );

    let engine = Engine::new(EngineConfig {
        devices: if args.gpu == 0 {
            Device::cpu(args.devices)
        } else {
            let gpus: Vec<Device> = (0..args.gpu)
                .flat_map(|_| Device::gpus().expect("opening the GPUs"))
                .collect();
            assert!(!gpus.is_empty(), "--gpu: no CUDA device");
            gpus
        },
        workers_per_device: args.workers,
        finalizers: args.finalizers,
        ..EngineConfig::default()
    })
    .expect("engine");
    let stop = AtomicBool::new(false);
    let proved = AtomicU64::new(0);
    let (jobs_tx, jobs_rx) = crossbeam_channel::unbounded();
    let at_deadline = std::thread::scope(|s| {
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
        // The feeder keeps at least `backlog` partitions queued.
        let feeder = s.spawn(|| {
            while !stop.load(Relaxed) {
                let queued: u64 = engine.stats().queue_depth.iter().sum();
                if queued >= args.backlog {
                    std::thread::sleep(Duration::from_micros(200));
                    continue;
                }
                let job = engine
                    .prove_start(
                        srs.clone(),
                        partitions.clone(),
                        RandomnessChoice::Random,
                        Priority::PorepSnap,
                    )
                    .expect("admitted");
                jobs_tx.send(job).expect("collector alive");
            }
            drop(jobs_tx);
        });
        std::thread::sleep(Duration::from_secs(args.seconds));
        // Read while the backlog still exists, so the figures are the steady state.
        let at_deadline = engine.stats();
        stop.store(true, Relaxed);
        feeder.join().expect("feeder");
        at_deadline
    });
    report("with a backlog, at the deadline", &at_deadline);
    let elapsed = at_deadline.uptime_ns as f64 / 1e9;
    println!(
        "  throughput {:.2} proofs/s",
        at_deadline.partitions_proved as f64 / elapsed
    );
    let last = engine.shutdown();
    println!(
        "after shutdown: {} proofs collected, {} partitions dropped at shutdown",
        proved.load(Relaxed),
        last.partitions_dropped
    );
}
