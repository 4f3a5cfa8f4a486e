//! Whole-proof benchmark: cuzk's CPU backend against bellperson's CPU prover, same circuit,
//! same params, same r and s, in one process.
//!
//! `cargo bench --bench prove -- [random|bits] [LOG2 ...]` (default: both circuit kinds at
//! 10 12 14 16 18 20). Prints one row per kind and size: median seconds per proof for each
//! prover (synthesis included on both sides, as bellperson's `create_proof` synthesizes),
//! and the speed-up.

use std::time::{Duration, Instant};

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use cuzk::cpu::CpuStart;
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::groth16::{prove, synthesize, verify_proof, Randomness};
use ff::Field;

/// The circuit of `kind` that fills a domain of 2^log: `bits` (Filecoin-like) or `random`.
fn circuit_for(kind: &str, log: u32) -> SampleCircuit {
    if kind == "bits" {
        SampleCircuit::bits_filling(log)
    } else {
        SampleCircuit::random_filling(log)
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let logs: Vec<u32> = args.iter().filter_map(|a| a.parse().ok()).collect();
    let logs = if logs.is_empty() {
        vec![10, 12, 14, 16, 18, 20]
    } else {
        logs
    };
    let named: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| *a == "random" || *a == "bits")
        .collect();
    let kinds = if named.is_empty() {
        vec!["random", "bits"]
    } else {
        named
    };
    println!(
        "threads: {}   (cuzk: CPU backend; bellperson 0.26: CPU prover)",
        rayon::current_num_threads()
    );
    println!(
        "{:>7} {:>6} {:>10} {:>12} {:>12} {:>12} {:>14} {:>8}",
        "circuit",
        "log2",
        "srs gen s",
        "cuzk synth",
        "cuzk prove",
        "cuzk total",
        "bellperson",
        "speedup"
    );
    for (kind, log) in kinds
        .iter()
        .flat_map(|k| logs.iter().map(move |l| (*k, *l)))
    {
        let circuit = circuit_for(kind, log);
        let t = Instant::now();
        let srs = generate_srs(circuit.clone(), &ToxicWaste::from_seed(log as u64)).unwrap();
        let gen = t.elapsed();
        let bp_params = bp::Parameters::<Bls12>::read(&srs.to_bytes()[..], false).unwrap();
        let pvk = srs.vk.prepare();
        let reps = if log <= 14 {
            5
        } else if log <= 18 {
            3
        } else {
            1
        };
        let (mut synth, mut ours, mut theirs) = (vec![], vec![], vec![]);
        for rep in 0..reps {
            let rs = Randomness {
                r: Scalar::random(rand::thread_rng()),
                s: Scalar::random(rand::thread_rng()),
            };
            let c = circuit.with_seed(1000 + rep as u64);

            let t = Instant::now();
            let a = synthesize(c.clone()).unwrap();
            let ts = t.elapsed();
            let inputs = a.witness.input[1..].to_vec();
            let proof = prove(&CpuStart, &srs, a, rs).unwrap();
            let total = t.elapsed();
            synth.push(ts);
            ours.push(total);

            let t = Instant::now();
            let bp_proof = bp::create_proof::<Bls12, _, _>(c, &bp_params, rs.r, rs.s).unwrap();
            theirs.push(t.elapsed());

            let mut bp_bytes = Vec::new();
            bp_proof.write(&mut bp_bytes).unwrap();
            assert_eq!(
                proof.to_bytes().to_vec(),
                bp_bytes,
                "the provers disagree at 2^{log}"
            );
            assert!(verify_proof(&pvk, &proof, &inputs).unwrap());
        }
        let (s, o, b) = (median(synth), median(ours), median(theirs));
        println!(
            "{:>7} {:>6} {:>10.2} {:>12.4} {:>12.4} {:>12.4} {:>14.4} {:>7.2}x",
            kind,
            log,
            gen.as_secs_f64(),
            s.as_secs_f64(),
            (o - s).as_secs_f64(),
            o.as_secs_f64(),
            b.as_secs_f64(),
            b.as_secs_f64() / o.as_secs_f64()
        );
    }
}
