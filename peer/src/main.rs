//! peer_bench: whole Groth16 proofs with cuzk on the GPU against bellperson 0.26 with
//! supraseal-c2 (its `cuda-supraseal` prover), same circuit, same params, same r and s, in one
//! process.
//!
//! `peer_bench [--logs 16,20,22] [--runs 5] [--circuit bits|random]`
//!
//! For each size (log2 of the constraint count, the per-input constraints included):
//! - params from cuzk's test-only generator (byte-equal to bellperson's `generate_parameters`),
//!   written to a temporary `.params` file for supraseal, which reads its SRS from a path;
//! - warm-up: one cuzk proof ("first": uploads the SRS's G1 sections to the device) and one
//!   peer proof ("first": waits for supraseal's SRS read and, at the first size, JIT-compiles
//!   its kernels: sppark builds SASS for sm_80 and PTX, so an sm_90 device compiles the PTX);
//! - `--runs` timed runs, each on a new witness: cuzk synthesis, cuzk prove from that
//!   assignment (validate + GPU start + CPU finish), supraseal's `generate_groth16_proof` on the
//!   very same assignment (prove only), and bellperson's `create_proof` (synthesis inside).
//!
//! Every run checks that the three proofs have the same 192 bytes and that bellperson's
//! verifier accepts each of them. Prints medians. Exits 0 with a SKIP line without a CUDA
//! device.

use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use bellperson::groth16::{self as bp, ParameterSource};
use blstrs::{Bls12, G1Affine, G2Affine, Scalar};
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::gpu::{self, GpuStart};
use cuzk::groth16::{finish, synthesize, Assignment, Proof, Randomness, Srs, StartPhase};
use ff::Field;
use group::prime::PrimeCurveAffine;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

type Peer = bp::SuprasealParameters<Bls12>;

const USAGE: &str = "usage: peer_bench [--logs 16,20,22] [--runs N] [--circuit bits|random]";

struct Args {
    logs: Vec<u32>,
    runs: usize,
    circuit: String,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut out = Args {
        logs: vec![16, 20, 22],
        runs: 5,
        circuit: "bits".into(),
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--logs" => {
                out.logs = value()?
                    .split(',')
                    .map(|s| s.trim().parse::<u32>())
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("--logs: {e}"))?;
                if out.logs.iter().any(|&l| !(2..=27).contains(&l)) {
                    return Err("--logs: each size must be in 2..=27".into());
                }
            }
            "--runs" => {
                out.runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?;
                if out.runs == 0 {
                    return Err("--runs must be at least 1".into());
                }
            }
            "--circuit" => {
                out.circuit = value()?.clone();
                if out.circuit != "bits" && out.circuit != "random" {
                    return Err("--circuit is bits or random".into());
                }
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(out)
}

/// The circuit of `kind` that fills a domain of 2^log: `bits` (Filecoin-like) or `random`.
fn circuit_for(kind: &str, log: u32) -> SampleCircuit {
    if kind == "bits" {
        SampleCircuit::bits_filling(log)
    } else {
        SampleCircuit::random_filling(log)
    }
}

/// One (r, s) per size, used by every proof of that size.
fn fixed_rs(log: u32) -> Randomness {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_0000 + log as u64);
    Randomness {
        r: Scalar::random(&mut rng),
        s: Scalar::random(&mut rng),
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// cuzk's prove, split as `groth16::prove` does it: validate, the start phase on the GPU
/// (H and the G1 MSMs), then `finish` on the CPU (B_g2 and the assembly).
struct CuzkTimes {
    start: Duration,
    total: Duration,
}

fn cuzk_prove(gpu: &GpuStart, srs: &Srs, a: Assignment, rs: Randomness) -> (Proof, CuzkTimes) {
    let t = Instant::now();
    a.validate(srs).expect("the assignment fits its params");
    let Assignment {
        evaluations,
        witness,
    } = a;
    let (partial, _) = gpu
        .start(srs, evaluations, &witness)
        .expect("cuzk start phase on the GPU");
    let start = t.elapsed();
    let proof = finish(srs, &witness, &partial, rs).expect("cuzk finish");
    let total = t.elapsed();
    (proof, CuzkTimes { start, total })
}

/// supraseal-c2's prover on an assignment cuzk synthesized: the call bellperson's
/// `cuda-supraseal` prover makes after its own synthesis (`prover/supraseal.rs`), with the
/// same arguments taken from cuzk's equal assignment.
fn peer_prove(params: &Peer, a: &Assignment, rs: Randomness) -> bp::Proof<Bls12> {
    let srs = params
        .get_supraseal_srs()
        .expect("SuprasealParameters holds a supraseal SRS");
    let (e, w) = (&a.evaluations, &a.witness);
    let mut proofs = vec![bp::Proof::<Bls12> {
        a: G1Affine::identity(),
        b: G2Affine::identity(),
        c: G1Affine::identity(),
    }];
    supraseal_c2::generate_groth16_proof(
        &[e.a.as_ptr()],
        &[e.b.as_ptr()],
        &[e.c.as_ptr()],
        e.a.len(),
        &[w.input.as_ptr()],
        &[w.aux.as_ptr()],
        w.input.len(),
        w.aux.len(),
        w.a_aux_density.words(),
        w.b_input_density.words(),
        w.b_aux_density.words(),
        w.a_aux_density.count_ones(),
        w.b_input_density.count_ones(),
        w.b_aux_density.count_ones(),
        1,
        &[rs.r],
        &[rs.s],
        &mut proofs,
        srs,
    );
    proofs.pop().unwrap()
}

/// bellperson + supraseal-c2 from the circuit, synthesis included.
fn peer_create(params: &Peer, c: SampleCircuit, rs: Randomness) -> bp::Proof<Bls12> {
    bp::create_proof::<Bls12, _, &Peer>(c, params, rs.r, rs.s).expect("bellperson create_proof")
}

fn bp_bytes(p: &bp::Proof<Bls12>) -> Vec<u8> {
    let mut out = Vec::with_capacity(192);
    p.write(&mut out).unwrap();
    out
}

/// Checks one run's proofs: whether all have cuzk's bytes, and (always) that bellperson's
/// verifier accepts each of them; a rejected proof ends the benchmark.
fn check(
    what: &str,
    pvk: &bp::PreparedVerifyingKey<Bls12>,
    inputs: &[Scalar],
    cuzk: &Proof,
    peers: &[(&str, &bp::Proof<Bls12>)],
) -> bool {
    let ours = cuzk.to_bytes().to_vec();
    let decoded = bp::Proof::<Bls12>::read(&ours[..]).expect("cuzk's proof bytes decode");
    assert!(
        bp::verify_proof(pvk, &decoded, inputs).expect("verify"),
        "{what}: bellperson's verifier rejects cuzk's proof"
    );
    let mut equal = true;
    for (name, p) in peers {
        assert!(
            bp::verify_proof(pvk, p, inputs).expect("verify"),
            "{what}: bellperson's verifier rejects the proof of {name}"
        );
        if bp_bytes(p) != ours {
            eprintln!("{what}: {name}'s proof bytes differ from cuzk's (both verify)");
            equal = false;
        }
    }
    equal
}

struct Row {
    log: u32,
    constraints: usize,
    gen: Duration,
    synth: Duration,
    cuzk_first: Duration,
    cuzk_start: Duration,
    cuzk_prove: Duration,
    peer_first: Duration,
    peer_prove: Duration,
    peer_total: Duration,
    equal: bool,
}

fn bench_size(gpu: &GpuStart, kind: &str, log: u32, runs: usize) -> Row {
    let circuit = circuit_for(kind, log);
    let t = Instant::now();
    let srs =
        generate_srs(circuit.clone(), &ToxicWaste::from_seed(log as u64)).expect("generate params");
    let gen = t.elapsed();
    let bytes = srs.to_bytes();
    let mut file = tempfile::Builder::new()
        .prefix("peer-bench-")
        .suffix(".params")
        .tempfile()
        .expect("temporary params file (set TMPDIR to a roomier place)");
    file.write_all(&bytes)
        .and_then(|_| file.flush())
        .expect("write the params file");
    // The params file starts with the verifying key in bellperson's layout.
    let vk = bp::VerifyingKey::<Bls12>::read(&bytes[..]).expect("verifying key");
    let pvk = bp::prepare_verifying_key(&vk);
    eprintln!(
        "2^{log}: params generated in {:.1} s, {:.0} MiB",
        gen.as_secs_f64(),
        bytes.len() as f64 / (1 << 20) as f64
    );
    drop(bytes);
    let params = Peer::new(file.path().to_path_buf()).expect("supraseal loads the params");
    let rs = fixed_rs(log);

    // Warm-up on both sides, with its own witness; checked like the timed runs.
    let warm = circuit.with_seed(999);
    let a = synthesize(warm.clone()).expect("synthesize");
    let constraints = a.shape().constraints;
    let inputs = a.witness.input[1..].to_vec();
    let t = Instant::now();
    let (ours, _) = cuzk_prove(gpu, &srs, a, rs);
    let cuzk_first = t.elapsed();
    let t = Instant::now();
    let theirs = peer_create(&params, warm, rs);
    let peer_first = t.elapsed();
    let mut equal = check(
        &format!("2^{log} warm-up"),
        &pvk,
        &inputs,
        &ours,
        &[("bellperson+supraseal", &theirs)],
    );
    eprintln!(
        "2^{log}: warm-up: cuzk {:.1} ms, peer {:.1} ms",
        ms(cuzk_first),
        ms(peer_first)
    );

    let (mut synth, mut start, mut prove) = (vec![], vec![], vec![]);
    let (mut peer_prove_t, mut peer_total) = (vec![], vec![]);
    for rep in 0..runs {
        let c = circuit.with_seed(1000 + rep as u64);
        let t = Instant::now();
        let a = synthesize(c.clone()).expect("synthesize");
        synth.push(t.elapsed());
        let inputs = a.witness.input[1..].to_vec();
        let for_peer = a.clone();

        let (ours, times) = cuzk_prove(gpu, &srs, a, rs);
        start.push(times.start);
        prove.push(times.total);

        let t = Instant::now();
        let only = peer_prove(&params, &for_peer, rs);
        peer_prove_t.push(t.elapsed());
        drop(for_peer);

        let t = Instant::now();
        let theirs = peer_create(&params, c, rs);
        peer_total.push(t.elapsed());

        equal &= check(
            &format!("2^{log} run {rep}"),
            &pvk,
            &inputs,
            &ours,
            &[
                ("supraseal generate_groth16_proof", &only),
                ("bellperson+supraseal create_proof", &theirs),
            ],
        );
        eprintln!(
            "2^{log} run {rep}: synth {:.1} ms, cuzk prove {:.1} ms, peer prove {:.1} ms, peer create_proof {:.1} ms",
            ms(synth[rep]),
            ms(prove[rep]),
            ms(peer_prove_t[rep]),
            ms(peer_total[rep])
        );
    }
    Row {
        log,
        constraints,
        gen,
        synth: median(synth),
        cuzk_first,
        cuzk_start: median(start),
        cuzk_prove: median(prove),
        peer_first,
        peer_prove: median(peer_prove_t),
        peer_total: median(peer_total),
        equal,
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().collect();
    println!("$ {}", argv.join(" "));
    // Set by peer/build-device.sh: the commit the cuzk sources were built from.
    if let Some(src) = option_env!("CUZK_PEER_SOURCE") {
        println!("cuzk built from {src}");
    }
    let args = match parse_args(&argv[1..]) {
        Ok(a) => a,
        Err(e) => {
            if !e.is_empty() {
                eprintln!("peer_bench: {e}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if !gpu::KERNELS_COMPILED {
        eprintln!(
            "peer_bench: this build has no cuzk kernels (nvcc missing?); build with peer/build-device.sh"
        );
        return ExitCode::from(1);
    }
    let devices = match gpu::discover() {
        Ok(d) if !d.is_empty() => d,
        Ok(_) => {
            println!("SKIP: no CUDA device");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            println!("SKIP: no usable CUDA device ({e})");
            return ExitCode::SUCCESS;
        }
    };
    let t = Instant::now();
    let gpu = GpuStart::new(0).expect("device 0 was discovered but does not open");
    println!(
        "device 0: {:?}; cuzk GpuStart::new {:.1} ms; host threads {}",
        devices[0],
        ms(t.elapsed()),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "circuit {}, {} timed runs per size after one warm-up; median ms; peer = bellperson 0.26 + supraseal-c2 0.1",
        args.circuit, args.runs
    );

    let rows: Vec<Row> = args
        .logs
        .iter()
        .map(|&log| bench_size(&gpu, &args.circuit, log, args.runs))
        .collect();

    println!();
    println!(
        "{:>4} {:>11} {:>8} | {:>9} {:>11} {:>10} {:>10} {:>10} | {:>10} {:>10} {:>10} | {:>7} {:>7} | {:>5}",
        "log2",
        "constraints",
        "srs gen s",
        "cuzk syn",
        "prove first",
        "prove",
        "(gpu start)",
        "cuzk total",
        "peer first",
        "peer prove",
        "peer total",
        "x prove",
        "x total",
        "bytes"
    );
    for r in &rows {
        let cuzk_total = r.synth + r.cuzk_prove;
        println!(
            "{:>4} {:>11} {:>8.1} | {:>9.1} {:>11.1} {:>10.1} {:>10.1} {:>10.1} | {:>10.1} {:>10.1} {:>10.1} | {:>6.2}x {:>6.2}x | {:>5}",
            r.log,
            r.constraints,
            r.gen.as_secs_f64(),
            ms(r.synth),
            ms(r.cuzk_first),
            ms(r.cuzk_prove),
            ms(r.cuzk_start),
            ms(cuzk_total),
            ms(r.peer_first),
            ms(r.peer_prove),
            ms(r.peer_total),
            r.peer_prove.as_secs_f64() / r.cuzk_prove.as_secs_f64(),
            r.peer_total.as_secs_f64() / cuzk_total.as_secs_f64(),
            if r.equal { "yes" } else { "no" }
        );
    }
    println!();
    println!("cuzk syn: cuzk::groth16::synthesize. prove: validate + GpuStart::start (H and the G1 MSMs) + finish (B_g2 MSM and assembly, CPU); (gpu start) is its start share; prove first: the first proof of the size (uploads the SRS's G1 sections). cuzk total = syn + prove.");
    println!("peer prove: supraseal_c2::generate_groth16_proof on cuzk's assignment (what bellperson calls after synthesis); peer total: bellperson create_proof (synthesis inside); peer first: its first proof of the size (waits for its SRS read; JIT at the first size).");
    println!("x prove = peer prove / cuzk prove; x total = peer total / cuzk total; bytes: all proofs of the size equal cuzk's 192 bytes (every proof is also verified by bellperson).");
    ExitCode::SUCCESS
}
