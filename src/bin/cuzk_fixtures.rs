//! Writes the fixture the C, C++ and Go host tests prove against: params, partitions as raw
//! little-endian files, fixed randomizers and the proofs cuzk's CPU prover makes from them
//! (the prover the oracle tests check byte for byte against bellperson).
//!
//! ```text
//! cargo run --features test-fixtures --bin cuzk_fixtures -- OUT_DIR [PARTITIONS] [CONSTRAINTS]
//! ```
//!
//! Layout of `OUT_DIR` (all integers little-endian):
//! - `fixture.txt`: `key value` lines: `partitions`, `constraints`, `inputs` (ONE included),
//!   `aux`, `public_inputs`, `domain_size`;
//! - `params.bin`: the `.params` file; `vk.bin`: its verifying key;
//! - `r.bin`, `s.bin`: one 32-byte canonical scalar per partition;
//! - `proofs.bin`: 192 bytes per partition, the expected proofs for those r and s;
//! - `p<i>/{a,b,c,input,aux}.bin`: 32-byte canonical scalars; `p<i>/{a_aux,b_input,
//!   b_aux}_density.bin`: the bitmaps' u64 words (bit counts: `aux`, `inputs`, `aux`);
//!   `p<i>/public.bin`: the public inputs a verifier takes (ONE excluded).
//!
//! Test-only params (known toxic waste): never for production.

use std::fs;
use std::path::Path;

use cuzk::cpu::CpuStart;
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::groth16::scalars::scalars_to_bytes;
use cuzk::groth16::{prove, synthesize, verify_proof, Randomness};
use ff::Field;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

fn words(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn write(path: &Path, data: &[u8]) -> Result<(), String> {
    fs::write(path, data).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .ok_or("usage: cuzk_fixtures OUT_DIR [PARTITIONS] [CONSTRAINTS]")?;
    let partitions: usize = args
        .next()
        .map_or(Ok(3), |a| a.parse())
        .map_err(|e| format!("PARTITIONS: {e}"))?;
    let constraints: usize = args
        .next()
        .map_or(Ok(300), |a| a.parse())
        .map_err(|e| format!("CONSTRAINTS: {e}"))?;
    let out = Path::new(&out);
    fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;

    // A random sparse R1CS: public inputs, and A/B densities with holes, so a host that
    // passes a bitmap wrong gets a wrong proof rather than a lucky right one.
    let circuit = SampleCircuit::Random {
        constraints,
        seed: 0,
    };
    let srs =
        generate_srs(circuit.clone(), &ToxicWaste::from_seed(2024)).map_err(|e| e.to_string())?;
    let pvk = srs.vk.prepare();
    write(&out.join("params.bin"), &srs.to_bytes())?;
    write(&out.join("vk.bin"), &srs.vk.to_bytes())?;

    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut r_all, mut s_all, mut proofs) = (Vec::new(), Vec::new(), Vec::new());
    let mut shape = None;
    for i in 0..partitions {
        let a = synthesize(circuit.with_seed(100 + i as u64)).map_err(|e| e.to_string())?;
        let public = a.witness.input[1..].to_vec();
        shape = Some(a.shape());
        let dir = out.join(format!("p{i}"));
        fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let e = &a.evaluations;
        let w = &a.witness;
        for (name, data) in [
            ("a.bin", scalars_to_bytes(&e.a)),
            ("b.bin", scalars_to_bytes(&e.b)),
            ("c.bin", scalars_to_bytes(&e.c)),
            ("input.bin", scalars_to_bytes(&w.input)),
            ("aux.bin", scalars_to_bytes(&w.aux)),
            ("a_aux_density.bin", words(w.a_aux_density.words())),
            ("b_input_density.bin", words(w.b_input_density.words())),
            ("b_aux_density.bin", words(w.b_aux_density.words())),
            ("public.bin", scalars_to_bytes(&public)),
        ] {
            write(&dir.join(name), &data)?;
        }
        let rs = Randomness {
            r: blstrs::Scalar::random(&mut rng),
            s: blstrs::Scalar::random(&mut rng),
        };
        r_all.extend(rs.r.to_bytes_le());
        s_all.extend(rs.s.to_bytes_le());
        let proof = prove(&CpuStart, &srs, a, rs).map_err(|e| e.to_string())?;
        if !verify_proof(&pvk, &proof, &public).map_err(|e| e.to_string())? {
            return Err(format!("partition {i}: the expected proof does not verify"));
        }
        proofs.extend(proof.to_bytes());
    }
    write(&out.join("r.bin"), &r_all)?;
    write(&out.join("s.bin"), &s_all)?;
    write(&out.join("proofs.bin"), &proofs)?;
    let shape = shape.ok_or("PARTITIONS must be at least 1")?;
    let manifest = format!(
        "partitions {partitions}\nconstraints {}\ninputs {}\naux {}\npublic_inputs {}\ndomain_size {}\n",
        shape.constraints,
        shape.inputs,
        shape.aux,
        shape.inputs - 1,
        srs.domain_size(),
    );
    write(&out.join("fixture.txt"), manifest.as_bytes())?;
    println!(
        "wrote {partitions} partitions of {} constraints to {}",
        shape.constraints,
        out.display()
    );
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("cuzk_fixtures: {e}");
        std::process::exit(1);
    }
}
