//! A demo proof, end to end: params for a sample circuit written to a `.params` file and
//! loaded back through the memory-mapped reader, a witness synthesized, a proof made on the
//! CPU backend and verified.
//!
//! `cargo run --release --example demo [LOG2_CONSTRAINTS]` (default 14).

use std::time::Instant;

use cuzk::cpu::CpuStart;
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::groth16::{prove, synthesize, verify_proof, PointCheck, Randomness, Srs};

fn main() -> Result<(), cuzk::Error> {
    let log: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(14);
    // Boolean-heavy like Filecoin's circuits: bits, packed into public numbers.
    let bits = (1usize << log) * 64 / 66 - 2;
    let circuit = SampleCircuit::BooleanHeavy { bits, seed: 42 };

    let t = Instant::now();
    let srs = generate_srs(circuit.clone(), &ToxicWaste::from_seed(42))?;
    let path = std::env::temp_dir().join(format!("cuzk-demo-{}.params", std::process::id()));
    std::fs::write(&path, srs.to_bytes())
        .map_err(|e| cuzk::Error::invalid_argument(e.to_string()))?;
    println!(
        "params: {} ({} constraints' domain, {:.1} MiB) generated in {:.2?}",
        path.display(),
        srs.domain_size(),
        std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0) as f64 / 1048576.0,
        t.elapsed()
    );

    let t = Instant::now();
    let srs = Srs::load(&path, PointCheck::Checked)?;
    println!("loaded and checked every point in {:.2?}", t.elapsed());
    let _ = std::fs::remove_file(&path);

    let t = Instant::now();
    let assignment = synthesize(circuit)?;
    let inputs = assignment.witness.input[1..].to_vec();
    println!(
        "synthesized {} constraints, {} inputs, {} aux in {:.2?}",
        assignment.shape().constraints,
        assignment.shape().inputs,
        assignment.shape().aux,
        t.elapsed()
    );

    let t = Instant::now();
    let proof = prove(&CpuStart, &srs, assignment, Randomness::random())?;
    println!("proved on the CPU backend in {:.2?}", t.elapsed());

    let ok = verify_proof(&srs.vk.prepare(), &proof, &inputs)?;
    let hex: String = proof
        .to_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("proof: {hex}");
    println!("verified: {ok}");
    if ok {
        Ok(())
    } else {
        Err(cuzk::Error::internal("the demo proof did not verify"))
    }
}
