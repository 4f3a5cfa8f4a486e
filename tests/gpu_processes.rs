//! One GPU, several users: two engines in this process and an engine in a second process
//! prove on device 0 at the same time. Each gets its own context work and memory; every
//! proof equals the CPU's for the same r and s, and the second process ends cleanly. Skips
//! cleanly (and says so) without a CUDA device; CI compiles it.
//!
//! The second process is this test binary again, running `second_process_role` with
//! `CUZK_GPU_SECOND_PROCESS` set (without it, that test does nothing).

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use blstrs::Scalar;
use cuzk::cpu::CpuStart;
use cuzk::engine::{Device, Engine, EngineConfig, Priority, RandomnessChoice};
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::gpu::{self, GpuStart};
use cuzk::groth16::{prove, synthesize, Randomness, Srs};
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const ROLE: &str = "CUZK_GPU_SECOND_PROCESS";

fn have_gpu() -> bool {
    match gpu::discover() {
        Ok(d) if !d.is_empty() => true,
        other => {
            println!("SKIP: no CUDA device ({other:?})");
            false
        }
    }
}

fn circuit_and_srs() -> (SampleCircuit, Arc<Srs>) {
    let c = SampleCircuit::BooleanHeavy {
        bits: 20_000,
        seed: 0,
    };
    let srs = generate_srs(c.clone(), &ToxicWaste::from_seed(5)).unwrap();
    (c, Arc::new(srs))
}

fn fixed(seed: u64) -> Randomness {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Randomness {
        r: Scalar::random(&mut rng),
        s: Scalar::random(&mut rng),
    }
}

/// An engine on device 0 proves `jobs` jobs of 2 partitions with fixed r and s; each proof
/// is compared with the CPU's.
fn prove_on_one_engine(who: &str, jobs: u64) {
    let (circuit, srs) = circuit_and_srs();
    let engine = Engine::new(EngineConfig {
        devices: vec![Device::new("cuda0", Arc::new(GpuStart::new(0).unwrap()))],
        ..EngineConfig::default()
    })
    .unwrap();
    for j in 0..jobs {
        let parts: Vec<_> = (0..2)
            .map(|i| synthesize(circuit.with_seed(j * 2 + i)).unwrap())
            .collect();
        let rs: Vec<_> = (0..2).map(|i| fixed(100 + j * 2 + i)).collect();
        let job = engine
            .prove_start(
                srs.clone(),
                parts.clone(),
                RandomnessChoice::Given(rs.clone()),
                Priority::PorepSnap,
            )
            .unwrap();
        let proofs = job.finish(Duration::from_secs(600)).unwrap();
        for (k, (a, rs)) in parts.into_iter().zip(rs).enumerate() {
            let want = prove(&CpuStart, &srs, a, rs).unwrap();
            assert_eq!(proofs[k], want, "{who}: job {j} partition {k}");
        }
    }
    println!("{who}: {jobs} jobs proved, every proof the CPU's");
}

#[test]
fn second_process_role() {
    if std::env::var_os(ROLE).is_none() {
        return;
    }
    prove_on_one_engine("second process", 6);
}

#[test]
fn two_engines_and_a_second_process_share_one_gpu() {
    if !have_gpu() {
        return;
    }
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "second_process_role", "--nocapture"])
        .env(ROLE, "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::scope(|s| {
        s.spawn(|| prove_on_one_engine("engine A", 4));
        s.spawn(|| prove_on_one_engine("engine B", 4));
    });
    let out = child.wait_with_output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    println!("second process:\n{text}");
    assert!(out.status.success(), "the second process failed: {text}");
    assert!(
        text.contains("second process: 6 jobs proved"),
        "the second process did not prove: {text}"
    );
}
