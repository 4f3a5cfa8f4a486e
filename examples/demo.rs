//! A real Filecoin proof, end to end: a 2KiB sector sealed with filecoin-proofs, its
//! WinningPoSt (or, with `porep`, its PoRep C2) proved through cuzk's engine from exactly
//! the inputs filecoin-ffi takes, and the proof checked by filecoin-proofs' own verifier.
//!
//! ```text
//! cargo run --release --example demo [winning|porep|all]     (default: winning)
//! ```
//!
//! The params the circuits need are made by cuzk's test-only generator (known toxic waste:
//! never for production) into `target/cuzk-test-params`, the same cache the tests use, so
//! only the first run pays for them (WinningPoSt: seconds; the 2KiB PoRep: minutes on two
//! cores). Everything else goes to a temporary folder.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cuzk::filecoin::{proof_bytes, prove_porep_c2, prove_winning_post, ParamsFor, ProofOptions};
use cuzk::fixtures::filecoin_params::ensure_test_params;
use cuzk::fixtures::sector;
use cuzk::{Engine, EngineConfig};

fn main() -> Result<(), cuzk::Error> {
    let what = std::env::args().nth(1).unwrap_or_else(|| "winning".into());
    let (winning, porep) = match what.as_str() {
        "winning" => (true, false),
        "porep" => (false, true),
        "all" => (true, true),
        other => {
            return Err(cuzk::Error::invalid_argument(format!(
                "unknown demo {other:?}: winning, porep or all"
            )))
        }
    };
    let params_dir = std::env::var_os("CUZK_TEST_PARAMS").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/cuzk-test-params"),
        PathBuf::from,
    );
    let scratch = std::env::temp_dir().join(format!("cuzk-demo-{}", std::process::id()));
    // filecoin-proofs reads its settings once, at first use: its verifier must find the
    // verifying keys made here, and sealing writes its parents cache into the scratch folder.
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir);
    std::env::set_var("FIL_PROOFS_PARENT_CACHE", scratch.join("parents"));
    let result = run(&params_dir, &scratch, winning, porep);
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

fn run(
    params_dir: &std::path::Path,
    scratch: &std::path::Path,
    winning: bool,
    porep: bool,
) -> Result<(), cuzk::Error> {
    let t = Instant::now();
    let miner = 1000;
    let prover_id = cuzk::filecoin::prover_id_from_miner(miner);
    let sealed = sector::seal_2kib(&scratch.join("sector"), sector::SEAL_2KIB, 1, prover_id, 1)?;
    println!(
        "sealed a 2KiB sector with filecoin-proofs in {:.2?} (miner {miner}, sector 1, comm_r {})",
        t.elapsed(),
        sector::to_hex(&sealed.comm_r)
    );

    let engine = Engine::new(EngineConfig::default())?;
    let devices: Vec<_> = engine.devices().iter().map(|d| d.name.as_str()).collect();
    println!("engine on {}", devices.join(", "));
    let options = || ProofOptions {
        params_dir: Some(params_dir.to_path_buf()),
        ..ProofOptions::default()
    };
    let params = |p: ParamsFor| -> Result<(), cuzk::Error> {
        let (path, took) = ensure_test_params(p, params_dir)?;
        if took > Duration::ZERO {
            println!("made test params {} in {took:.1?}", path.display());
        }
        Ok(())
    };

    if winning {
        params(ParamsFor::PoSt(sector::WINNING_POST_2KIB))?;
        let mut randomness = [7u8; 32];
        randomness[31] &= 0x3f;
        let inputs = sector::winning_post_inputs(&sealed, randomness)?;
        let job = prove_winning_post(
            &engine,
            inputs.registered_post_proof,
            &inputs.randomness,
            inputs.prover_id,
            &inputs.vanilla_proofs,
            options(),
        )?;
        let proof = proof_bytes(&job.finish(Duration::MAX)?);
        report(
            "WinningPoSt",
            &job,
            &proof,
            sector::verify_winning_post(&inputs, &proof)?,
        );
    }
    if porep {
        params(ParamsFor::Seal(sector::SEAL_2KIB))?;
        let job = prove_porep_c2(
            &engine,
            &sealed.c1_output,
            sealed.sector_id,
            sealed.prover_id,
            options(),
        )?;
        let proof = proof_bytes(&job.finish(Duration::MAX)?);
        report(
            "PoRep C2",
            &job,
            &proof,
            sector::verify_seal(&sealed, &proof)?,
        );
    }
    Ok(())
}

fn report(kind: &str, job: &cuzk::Job, proof: &[u8], verified: bool) {
    let t = job.timings();
    println!(
        "{kind}: {} bytes in {:.2?} (params load {:.2?}, synthesis {:.2?}, device {:.2?}, \
         finalize {:.2?}); filecoin-proofs' verifier: {}",
        proof.len(),
        t.total,
        t.params_load,
        t.synthesis,
        t.device,
        t.finalize,
        if verified { "valid" } else { "INVALID" }
    );
    assert!(verified, "{kind} proof rejected by filecoin-proofs");
}
