//! A backlog of real PoRep C2s through cuzk's engine, next to filecoin-proofs'
//! `seal_commit_phase2` on the same C1 outputs, in one process.
//!
//! ```text
//! cargo build --release --features test-fixtures --bin filecoin_bench
//! target/release/filecoin_bench [--sectors N] [--sector-size 2KiB|8MiB|512MiB]
//!     [--window-posts W] [--device-counts K,...] [--logical L]
//!     [--synthesis-threads T] [--no-peer] [--params DIR]
//! ```
//!
//! Seals N sectors with filecoin-proofs, makes (or finds) the test params in DIR (default
//! `target/cuzk-test-params`), and submits a backlog to one engine at once (every GPU, or
//! the CPU): the N C2s, then W WindowPoSts over the N sectors (2KiB only), every partition
//! with a fixed (r, s) (`cuzk::fixtures::backlog`). It prints per proof its synthesis, queue
//! wait, device and finalize time and its end-to-end time, per device the start phases it
//! ran, the time it held its mutex and the time it had kernels running (measured on the
//! device), the synthesis pool's busy fraction and how many synthesized partitions waited
//! for a device (sampled). Every proof is checked with filecoin-proofs' verifiers after the
//! clock stops.
//!
//! `--device-counts 1,2,4` runs the same backlog on engines with the first 1, 2 and 4
//! devices and prints proofs per second against the first count's, checking that every
//! count gave the same bytes. The devices are the GPUs (with `--logical L`, L contexts on
//! each GPU, taken GPU by GPU: on one GPU, `--logical 4 --device-counts 1,2,4` exercises the
//! multi-device path without more silicon) or, without a GPU, logical CPU devices.
//!
//! Then, unless `--no-peer`, filecoin-proofs proves the same C1s one after another (as a
//! filecoin-ffi host does) and the ratio of the two backlogs' wall times is printed (against
//! the last device count's run).
//!
//! Built in this crate, filecoin-proofs proves with bellperson on the CPU. `peer/` builds the
//! same source as `filecoin_bench_supraseal`, where filecoin-proofs proves through
//! supraseal-c2 on the GPU, as filecoin-ffi does on a GPU machine.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cuzk::engine::Device;
use cuzk::filecoin::ParamsFor;
use cuzk::fixtures::backlog::{Backlog, BacklogJob, BacklogRun};
use cuzk::fixtures::filecoin_params::{default_test_params_dir, ensure_test_params};
use cuzk::fixtures::sector;
use cuzk::{Engine, EngineConfig};
use filecoin_proofs_api::RegisteredSealProof;

/// Which prover filecoin-proofs' side runs: `peer/build-device.sh` sets it at compile time.
const PEER_PROVER: &str = match option_env!("CUZK_PEER_PROVER") {
    Some(p) => p,
    None => "bellperson 0.27, CPU",
};

struct Args {
    sectors: usize,
    seal_proof: RegisteredSealProof,
    window_posts: usize,
    device_counts: Vec<usize>,
    logical: usize,
    synthesis_threads: usize,
    peer: bool,
    params: PathBuf,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        sectors: 3,
        seal_proof: sector::SEAL_2KIB,
        window_posts: 0,
        device_counts: Vec::new(),
        logical: 1,
        synthesis_threads: 0,
        peer: true,
        params: default_test_params_dir(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let count = |v: String| v.parse::<usize>().map_err(|e| format!("{flag}: {e}"));
        match flag.as_str() {
            "--sectors" => a.sectors = count(value()?)?,
            "--window-posts" => a.window_posts = count(value()?)?,
            "--logical" => a.logical = count(value()?)?,
            "--device-counts" => {
                a.device_counts = value()?
                    .split(',')
                    .map(|v| count(v.to_string()))
                    .collect::<Result<_, _>>()?
            }
            "--synthesis-threads" => a.synthesis_threads = count(value()?)?,
            "--sector-size" => {
                a.seal_proof = match value()?.as_str() {
                    "2KiB" => RegisteredSealProof::StackedDrg2KiBV1_1,
                    "8MiB" => RegisteredSealProof::StackedDrg8MiBV1_1,
                    "512MiB" => RegisteredSealProof::StackedDrg512MiBV1_1,
                    other => return Err(format!("--sector-size {other}: 2KiB, 8MiB or 512MiB")),
                }
            }
            "--no-peer" => a.peer = false,
            "--params" => a.params = PathBuf::from(value()?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.sectors == 0 {
        return Err("--sectors must be at least 1".into());
    }
    if a.logical == 0 || a.device_counts.contains(&0) {
        return Err("--logical and --device-counts take counts of at least 1".into());
    }
    Ok(a)
}

fn sector_size_name(p: RegisteredSealProof) -> String {
    let bytes = u64::from(p.sector_size());
    match bytes {
        b if b >= 1 << 30 => format!("{}GiB", b >> 30),
        b if b >= 1 << 20 => format!("{}MiB", b >> 20),
        b => format!("{}KiB", b >> 10),
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn run() -> Result<(), String> {
    let a = args()?;
    let e = |e: cuzk::Error| e.to_string();
    let scratch = std::env::temp_dir().join(format!("cuzk-filecoin-bench-{}", std::process::id()));
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &a.params);
    std::env::set_var("FIL_PROOFS_PARENT_CACHE", scratch.join("parents"));
    let size = sector_size_name(a.seal_proof);
    let (_, made) = ensure_test_params(ParamsFor::Seal(a.seal_proof), &a.params).map_err(e)?;
    if !made.is_zero() {
        println!(
            "made the {size} PoRep test params in {:.1} s",
            made.as_secs_f64()
        );
    }
    if a.window_posts > 0 {
        let post = ParamsFor::PoSt(sector::WINDOW_POST_2KIB);
        let (_, made) = ensure_test_params(post, &a.params).map_err(e)?;
        if !made.is_zero() {
            println!(
                "made the WindowPoSt test params in {:.1} s",
                made.as_secs_f64()
            );
        }
    }
    let prover_id = cuzk::filecoin::prover_id_from_miner(1000);
    let sectors = (1..=a.sectors as u64)
        .map(|id| {
            sector::seal(
                &scratch.join(format!("s{id}")),
                a.seal_proof,
                id,
                prover_id,
                id,
            )
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(e)?;

    let backlog = Backlog::new(&sectors, a.window_posts, a.params.clone(), 0x5eed).map_err(e)?;
    // Every device there is (GPUs, or logical CPU devices where there is none); each run
    // takes the first k. Opened once: a GPU context per device, reused by every run.
    let gpus = Device::logical_gpus(a.logical, 0).map_err(e)?;
    let most = a.device_counts.iter().copied().max();
    let available = if gpus.is_empty() {
        Device::cpu(most.unwrap_or(1))
    } else {
        gpus
    };
    let counts = if a.device_counts.is_empty() {
        vec![available.len()]
    } else {
        a.device_counts.clone()
    };
    if let Some(&k) = counts.iter().find(|&&k| k > available.len()) {
        return Err(format!(
            "--device-counts {k}: only {} devices (--logical gives more per GPU)",
            available.len()
        ));
    }
    println!(
        "# filecoin_bench --sectors {} --sector-size {size} --window-posts {} --device-counts {} --logical {} --synthesis-threads {}",
        a.sectors,
        a.window_posts,
        counts.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(","),
        a.logical,
        a.synthesis_threads,
    );
    let mut runs: Vec<(usize, BacklogRun)> = Vec::new();
    for &k in &counts {
        let engine = Engine::new(EngineConfig {
            devices: available[..k].to_vec(),
            synthesis_threads: a.synthesis_threads,
            ..EngineConfig::default()
        })
        .map_err(e)?;
        let run = run_backlog(&engine, &backlog, &a.params, &size).map_err(e)?;
        drop(engine);
        if let Some((k0, first)) = runs.first() {
            if let Some(j) = (0..run.proofs.len()).find(|&j| run.proofs[j] != first.proofs[j]) {
                return Err(format!(
                    "job {j}: the proof on {k} devices differs from the one on {k0}"
                ));
            }
        }
        runs.push((k, run));
    }
    if runs.len() > 1 {
        let (k0, first) = &runs[0];
        println!(
            "devices  proofs/s  vs {k0}  synthesis pool busy  ready for a device (mean / max)"
        );
        for (k, r) in &runs {
            println!(
                "{k:>7}  {:>8.2}  {:>4.2}x  {:>18.1}%  {:>10.1} / {}",
                r.proofs_per_second(),
                r.proofs_per_second() / first.proofs_per_second(),
                100.0 * r.synthesis_busy_fraction(),
                r.ready_waiting.mean,
                r.ready_waiting.max
            );
        }
        println!(
            "every device count gave the same bytes for all {} proofs",
            first.proofs.len()
        );
    }
    let cuzk_wall = runs.last().map(|r| r.1.wall).unwrap_or_default();
    // cuzk's GPU contexts (and their resident points) are closed before filecoin-proofs
    // proves, as they were when each run's engine owned its devices: with them still open,
    // supraseal-c2's first 8MiB proof failed filecoin-proofs' own check (2026-12-03, once).
    drop(available);

    if a.peer {
        let t = Instant::now();
        for s in &sectors {
            let c1 = s.c1().map_err(e)?;
            let out =
                filecoin_proofs_api::seal::seal_commit_phase2(c1, s.prover_id, s.sector_id.into())
                    .map_err(|e| format!("filecoin-proofs seal_commit_phase2: {e:#}"))?;
            if !sector::verify_seal(s, &out.proof).map_err(e)? {
                return Err("filecoin-proofs' own proof does not verify".into());
            }
        }
        let peer = t.elapsed();
        println!(
            "filecoin-proofs seal_commit_phase2 ({PEER_PROVER}): {} proofs in {:.2} s ({:.2} s per proof)",
            sectors.len(),
            peer.as_secs_f64(),
            peer.as_secs_f64() / sectors.len() as f64
        );
        println!(
            "backlog speedup cuzk ({} devices) vs filecoin-proofs (its PoReps): {:.2}x",
            counts.last().copied().unwrap_or(1),
            peer.as_secs_f64() / cuzk_wall.as_secs_f64()
        );
        if a.window_posts > 0 {
            println!(
                "  (cuzk's backlog also held the {} WindowPoSts)",
                a.window_posts
            );
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// One engine's run of the backlog, printed: per proof, per device, the synthesis pool.
fn run_backlog(
    engine: &Engine,
    backlog: &Backlog,
    params: &std::path::Path,
    size: &str,
) -> cuzk::Result<BacklogRun> {
    let names: Vec<_> = engine.devices().iter().map(|d| d.name.clone()).collect();
    println!(
        "## {} jobs ({size} PoRep C2s, WindowPoSts) on {} ({} synthesis threads)",
        backlog.jobs().len(),
        names.join(", "),
        engine.stats().synthesis_threads
    );
    // Load the params before the clock starts: a host preloads them at start-up.
    let t = Instant::now();
    for p in backlog.params() {
        engine.preload_params(
            &p.params_path(Some(params))?,
            cuzk::groth16::PointCheck::Unchecked,
        )?;
    }
    println!("params preloaded in {:.0} ms", ms(t.elapsed()));
    let run = backlog.run(engine)?;
    println!(
        "job  kind         synthesis ms  queue wait ms  device ms  finalize ms  end-to-end ms"
    );
    for (k, (j, t)) in backlog.jobs().iter().zip(&run.timings).enumerate() {
        let kind = match j {
            BacklogJob::PoRep(_) => "porep-c2",
            BacklogJob::WindowPost(_) => "window-post",
        };
        println!(
            "{k:>3}  {kind:<11}  {:>12.0}  {:>13.0}  {:>9.0}  {:>11.0}  {:>13.0}",
            ms(t.synthesis),
            ms(t.queue_wait),
            ms(t.device),
            ms(t.finalize),
            ms(t.total)
        );
    }
    for d in &run.devices {
        println!(
            "{}: of the backlog's {:.2} s, device mutex held {:.1}%, kernels running \
             (device events) {:.1}%; {} start phases",
            d.name,
            run.wall.as_secs_f64(),
            100.0 * run.of_wall(d.held),
            100.0 * run.of_wall(d.kernels),
            d.partitions
        );
    }
    let started: u64 = run.devices.iter().map(|d| d.partitions).sum();
    if started != run.partitions as u64 {
        return Err(cuzk::Error::internal(format!(
            "the devices ran {started} start phases for {} partitions",
            run.partitions
        )));
    }
    println!(
        "synthesis pool busy {:.1}%; synthesized partitions waiting for a device: mean {:.1}, max {}; \
         waiting for a synthesis thread: mean {:.1}, max {}",
        100.0 * run.synthesis_busy_fraction(),
        run.ready_waiting.mean,
        run.ready_waiting.max,
        run.synthesis_waiting.mean,
        run.synthesis_waiting.max
    );
    backlog.verify(&run.proofs)?;
    println!(
        "cuzk: {} proofs ({} partitions) in {:.2} s ({:.2} proofs/s), all accepted by filecoin-proofs' verifiers",
        run.proofs.len(),
        run.partitions,
        run.wall.as_secs_f64(),
        run.proofs_per_second()
    );
    Ok(run)
}

fn main() {
    if let Err(e) = run() {
        eprintln!("filecoin_bench: {e}");
        std::process::exit(1);
    }
}
