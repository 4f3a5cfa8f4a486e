//! A backlog of real PoRep C2s through cuzk's engine, next to filecoin-proofs'
//! `seal_commit_phase2` on the same C1 outputs, in one process.
//!
//! ```text
//! cargo build --release --features test-fixtures --bin filecoin_bench
//! target/release/filecoin_bench [--sectors N] [--sector-size 2KiB|8MiB|512MiB]
//!     [--synthesis-threads T] [--no-peer] [--params DIR]
//! ```
//!
//! Seals N sectors with filecoin-proofs, makes (or finds) the test params in DIR (default
//! `target/cuzk-test-params`), submits all N C2s to one engine at once (every GPU, or the
//! CPU), and prints per partition its synthesis, queue wait and device time, per proof its
//! end-to-end time, and per device the time it held its mutex and the time it had kernels
//! running (measured on the device). Every proof is checked with filecoin-proofs'
//! `verify_seal` after the clock stops. Then, unless `--no-peer`, filecoin-proofs proves the
//! same C1s one after another (as a filecoin-ffi host does) and the ratio of the two
//! backlogs' wall times is printed.
//!
//! Built in this crate, filecoin-proofs proves with bellperson on the CPU. `peer/` builds the
//! same source as `filecoin_bench_supraseal`, where filecoin-proofs proves through
//! supraseal-c2 on the GPU, as filecoin-ffi does on a GPU machine.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cuzk::filecoin::{proof_bytes, prove_porep_c2, ParamsFor, ProofOptions};
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
    synthesis_threads: usize,
    peer: bool,
    params: PathBuf,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        sectors: 3,
        seal_proof: sector::SEAL_2KIB,
        synthesis_threads: 0,
        peer: true,
        params: default_test_params_dir(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--sectors" => a.sectors = value()?.parse().map_err(|e| format!("--sectors: {e}"))?,
            "--synthesis-threads" => {
                a.synthesis_threads = value()?
                    .parse()
                    .map_err(|e| format!("--synthesis-threads: {e}"))?
            }
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

    let engine = Engine::new(EngineConfig {
        synthesis_threads: a.synthesis_threads,
        ..EngineConfig::default()
    })
    .map_err(e)?;
    let names: Vec<_> = engine.devices().iter().map(|d| d.name.clone()).collect();
    println!(
        "# filecoin_bench --sectors {} --sector-size {size} --synthesis-threads {}: {} {size} PoRep C2s on {} ({} synthesis threads)",
        a.sectors,
        a.synthesis_threads,
        a.sectors,
        names.join(", "),
        engine.stats().synthesis_threads
    );
    // Load the params before the clock starts: a host preloads them at start-up.
    let path = ParamsFor::Seal(a.seal_proof)
        .params_path(Some(&a.params))
        .map_err(e)?;
    let t = Instant::now();
    engine
        .preload_params(&path, cuzk::groth16::PointCheck::Unchecked)
        .map_err(e)?;
    println!("params preloaded in {:.0} ms", ms(t.elapsed()));

    let t = Instant::now();
    let jobs = sectors
        .iter()
        .map(|s| {
            prove_porep_c2(
                &engine,
                &s.c1_output,
                s.sector_id,
                s.prover_id,
                ProofOptions {
                    params_dir: Some(a.params.clone()),
                    ..ProofOptions::default()
                },
            )
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(e)?;
    let mut proofs = Vec::new();
    println!("sector  synthesis ms  queue wait ms  device ms  finalize ms  end-to-end ms");
    for (s, j) in sectors.iter().zip(&jobs) {
        proofs.push(proof_bytes(&j.finish(Duration::MAX).map_err(e)?));
        let t = j.timings();
        println!(
            "{:>6}  {:>12.0}  {:>13.0}  {:>9.0}  {:>11.0}  {:>13.0}",
            s.sector_id,
            ms(t.synthesis),
            ms(t.queue_wait),
            ms(t.device),
            ms(t.finalize),
            ms(t.total)
        );
    }
    let cuzk_wall = t.elapsed();
    let st = engine.stats();
    for (name, d) in names.iter().zip(st.devices()) {
        let of_backlog = |ns: u64| 100.0 * ns as f64 / cuzk_wall.as_nanos().max(1) as f64;
        println!(
            "{name}: of the backlog's {:.2} s, device mutex held {:.1}%, kernels running \
             (device events) {:.1}%; {} start phases",
            cuzk_wall.as_secs_f64(),
            of_backlog(d.busy_ns),
            of_backlog(d.kernel_active_ns),
            d.partitions
        );
    }
    println!(
        "synthesis pool busy {:.1}%, synthesis p50 {:.0} ms",
        100.0 * st.synthesis_busy_fraction(),
        st.synthesis.p50_ns as f64 / 1e6
    );
    for (s, p) in sectors.iter().zip(&proofs) {
        if !sector::verify_seal(s, p).map_err(e)? {
            return Err(format!(
                "sector {}: verify_seal rejects cuzk's proof",
                s.sector_id
            ));
        }
    }
    println!(
        "cuzk: {} proofs in {:.2} s ({:.2} s per proof), all accepted by verify_seal",
        proofs.len(),
        cuzk_wall.as_secs_f64(),
        cuzk_wall.as_secs_f64() / proofs.len() as f64
    );
    drop(engine);

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
            "backlog speedup cuzk vs filecoin-proofs: {:.2}x",
            peer.as_secs_f64() / cuzk_wall.as_secs_f64()
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("filecoin_bench: {e}");
        std::process::exit(1);
    }
}
