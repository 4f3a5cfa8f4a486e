//! peer_bench: whole Groth16 proofs with cuzk on the GPU against bellperson 0.26 with
//! supraseal-c2 (its `cuda-supraseal` prover), same circuit, same params, same r and s, in one
//! process.
//!
//! `peer_bench [--logs 16,20,22] [--runs 5] [--circuit bits|random] [--only cuzk|peer]
//! [--peer-first] [--srs real|timing] [--no-create-proof]
//! [--overlap-uploads] [--compare-orders] [--poison-scratch] [--settle-ms N] [--dirty-device]`
//!
//! For each size (log2 of the constraint count, the per-input constraints included):
//! - params from cuzk's test-only generator (byte-equal to bellperson's `generate_parameters`),
//!   written to a temporary `.params` file for supraseal, which reads its SRS from a path;
//!   with `--srs timing`, timing-only params of the circuit's exact shape instead
//!   (`fixtures::timing_srs`: points cycling through 2^14 random ones; made in seconds where
//!   the generator would take most of an hour at 2^26). Both provers compute the same MSMs
//!   over the same points, so their proofs must still have equal bytes, but no proof
//!   verifies: the runs compare bytes only, and the output says so;
//! - warm-up: one cuzk proof ("first": uploads the SRS's G1 sections to the device) and one
//!   peer proof ("first": waits for supraseal's SRS read; at the first size, the CUDA runtime's
//!   start and the load of supraseal's kernels);
//! - `--runs` timed runs, each on a new witness: cuzk synthesis, cuzk prove from that
//!   assignment (validate + GPU start + CPU finish), supraseal's `generate_groth16_proof` on the
//!   very same assignment (prove only), and bellperson's `create_proof` (synthesis inside).
//!
//! cuzk opens device 0 at its first proof. `--peer-first` runs the peer's proofs before cuzk's
//! (so the peer's first proof comes before cuzk touches the GPU beyond counting devices);
//! `--only cuzk` or `--only peer` runs one side, so that either can be watched alone in a
//! process of its own. Before and after every proof a line goes to stderr with the seconds
//! since the start: the last one says where a run that does not return is.
//!
//! `--overlap-uploads` has cuzk's H step copy b, c and the aux values on its copy stream
//! under the kernels before them instead of in order on the compute stream (cuzk's default,
//! with the device waiting for them). cuzk's proofs are the same either way and verify; but
//! supraseal-c2's proofs made after cuzk's overlapped H steps in this process have differed
//! (timing-only params) and been rejected by bellperson's verifier (real params, 2^22), so
//! the side-by-side runs in order by default.
//! `--compare-orders` also runs each timed run's start phase twice more on the same
//! assignment, copies overlapped and in order, and says which of the partial proof's points
//! (H, L, A, B_g1, B_g2) differ between the two, and whether each, finished with the run's
//! r and s, has the bytes of the run's own cuzk proof.
//! `--poison-scratch` fills cuzk's scratch buffers and each fresh aux buffer with 0xff bytes
//! before every H step that uploads (a diagnostic: a kernel that reads a buffer before its
//! copy has landed then reads garbage, not the previous proof's values).
//! `--settle-ms N` waits N ms before each of the peer's proofs (a diagnostic: whether what
//! goes wrong in supraseal-c2 after cuzk's overlapped H steps depends on timing).
//! `--dirty-device` fills the device's free memory with 0xff bytes, the plain way and through
//! its default memory pool, before each of the peer's proofs (a diagnostic: a prover that
//! reads device memory it has not written then reads 0xff bytes wherever it does; a proof of
//! supraseal-c2 that changes with it, after cuzk's in-order proofs or none, is supraseal-c2's
//! own uninitialized read, not something cuzk left behind).
//! `--no-create-proof` leaves bellperson's `create_proof` out (its synthesis alone takes
//! minutes at 2^26).
//!
//! Every run checks that its proofs have the same 192 bytes and (real params) that
//! bellperson's verifier accepts each of them. Prints medians. Exits 0 with a SKIP line
//! without a CUDA device.

use std::cell::OnceCell;
use std::fmt;
use std::io::Write;
use std::process::ExitCode;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use bellperson::groth16::{self as bp, ParameterSource};
use blstrs::{Bls12, G1Affine, G2Affine, Scalar};
use cuzk::fixtures::{generate_srs, timing_srs, SampleCircuit, ToxicWaste};
use cuzk::gpu::{self, GpuStart};
use cuzk::groth16::{
    finish, synthesize, Assignment, Proof, Randomness, Srs, StartPhase, StartTimings,
};
use ff::Field;
use group::prime::PrimeCurveAffine;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

type Peer = bp::SuprasealParameters<Bls12>;

const USAGE: &str = "usage: peer_bench [--logs 16,20,22] [--runs N] [--circuit bits|random] [--only cuzk|peer] [--peer-first] [--srs real|timing] [--no-create-proof] [--overlap-uploads] [--compare-orders] [--poison-scratch] [--settle-ms N] [--dirty-device]";

/// One side of the comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Cuzk,
    Peer,
}

struct Args {
    logs: Vec<u32>,
    runs: usize,
    circuit: String,
    /// The sides that prove, in the order they prove at each step.
    order: Vec<Side>,
    /// Timing-only params (`fixtures::timing_srs`) instead of the generator's.
    timing_srs: bool,
    /// Whether bellperson's `create_proof` (synthesis included) runs too.
    create_proof: bool,
    /// cuzk's H-step uploads under its kernels, or in order (the default).
    overlap_uploads: bool,
    /// Each timed run's start phase again in both orders, point by point.
    compare_orders: bool,
    /// cuzk's scratch filled with 0xff bytes before each H step (a diagnostic).
    poison_scratch: bool,
    /// A pause before each of the peer's proofs (a diagnostic).
    settle: Duration,
    /// The device's free memory filled with 0xff bytes before each of the peer's proofs (a
    /// diagnostic).
    dirty_device: bool,
}

impl Args {
    fn runs(&self, side: Side) -> bool {
        self.order.contains(&side)
    }
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut out = Args {
        logs: vec![16, 20, 22],
        runs: 5,
        circuit: "bits".into(),
        order: vec![Side::Cuzk, Side::Peer],
        timing_srs: false,
        create_proof: true,
        overlap_uploads: false,
        compare_orders: false,
        poison_scratch: false,
        settle: Duration::ZERO,
        dirty_device: false,
    };
    let (mut only, mut peer_first) = (None, false);
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
            "--only" => {
                only = Some(match value()?.as_str() {
                    "cuzk" => Side::Cuzk,
                    "peer" => Side::Peer,
                    _ => return Err("--only is cuzk or peer".into()),
                });
            }
            "--peer-first" => peer_first = true,
            "--srs" => {
                out.timing_srs = match value()?.as_str() {
                    "real" => false,
                    "timing" => true,
                    _ => return Err("--srs is real or timing".into()),
                }
            }
            "--no-create-proof" => out.create_proof = false,
            "--overlap-uploads" => out.overlap_uploads = true,
            "--compare-orders" => out.compare_orders = true,
            "--poison-scratch" => out.poison_scratch = true,
            "--dirty-device" => out.dirty_device = true,
            "--settle-ms" => {
                let v = value()?;
                out.settle = Duration::from_millis(
                    v.parse()
                        .map_err(|_| format!("--settle-ms {v}: not a number"))?,
                );
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if let Some(side) = only {
        out.order = vec![side];
    } else if peer_first {
        out.order = vec![Side::Peer, Side::Cuzk];
    }
    Ok(out)
}

/// Writes one progress line to stderr, flushed, stamped with the seconds since the first line.
fn progress(msg: fmt::Arguments) {
    static START: OnceLock<Instant> = OnceLock::new();
    let t = START.get_or_init(Instant::now).elapsed();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "[{:9.3} s] {msg}", t.as_secs_f64());
    let _ = err.flush();
}

macro_rules! step {
    ($($arg:tt)*) => {
        progress(format_args!($($arg)*))
    };
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

/// A start phase's stages in ms, with the device's kernel time and span beside them.
fn stage_line(t: &StartTimings) -> String {
    let mut line = format!(
        "kernels {:.1} over a span of {:.1}",
        ms(t.kernels),
        ms(t.kernel_span)
    );
    for (name, d) in t.stages() {
        line += &format!(", {name} {:.1}", ms(d));
    }
    line
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
    /// The start phase's own stages (what the progress log shows per run).
    stages: StartTimings,
}

fn cuzk_prove(gpu: &GpuStart, srs: &Srs, a: Assignment, rs: Randomness) -> (Proof, CuzkTimes) {
    let t = Instant::now();
    a.validate(srs).expect("the assignment fits its params");
    let Assignment {
        evaluations,
        witness,
    } = a;
    let (partial, stages) = gpu
        .start(srs, evaluations, &witness)
        .expect("cuzk start phase on the GPU");
    let start = t.elapsed();
    let proof = finish(srs, &witness, &partial, rs).expect("cuzk finish");
    let total = t.elapsed();
    (
        proof,
        CuzkTimes {
            start,
            total,
            stages,
        },
    )
}

/// `--compare-orders`: the start phase of `a` with the H step's copies under its kernels,
/// then in order, point by point (`restore`: the order the bench runs with, set again); each
/// is also finished with the run's r and s and compared with the bench's own proof of `a`
/// (`main`), so that a proof differing from the peer's says which side moved.
fn compare_orders(
    gpu: &GpuStart,
    srs: &Srs,
    a: &Assignment,
    restore: bool,
    rs: Randomness,
    main: &Proof,
) -> String {
    let mut parts = Vec::with_capacity(2);
    for overlap in [true, false] {
        gpu.set_overlap_uploads(overlap);
        let (p, _) = gpu
            .start(srs, a.evaluations.clone(), &a.witness)
            .expect("cuzk start phase on the GPU");
        parts.push(p);
    }
    gpu.set_overlap_uploads(restore);
    let (o, i) = (&parts[0], &parts[1]);
    let differ: Vec<&str> = [
        ("H", o.h == i.h),
        ("L", o.l == i.l),
        ("A", o.a == i.a),
        ("B_g1", o.b_g1 == i.b_g1),
        ("B_g2", o.b_g2 == i.b_g2),
    ]
    .into_iter()
    .filter(|(_, same)| !same)
    .map(|(name, _)| name)
    .collect();
    let main = bp_bytes(&as_bp(main));
    let same_as_main = |p| {
        let proof = finish(srs, &a.witness, p, rs).expect("cuzk finish");
        match bp_bytes(&as_bp(&proof)) == main {
            true => "=",
            false => "!=",
        }
    };
    let points = match differ.is_empty() {
        true => "overlapped = in order".to_string(),
        false => format!("overlapped != in order in {}", differ.join(", ")),
    };
    format!(
        "{points}; the bench's proof {} overlapped's, {} in order's",
        same_as_main(o),
        same_as_main(i)
    )
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

/// cuzk's device 0, opened at cuzk's first proof.
/// The assignment for cuzk's prover (side `i` of `order`), which consumes it: a copy when
/// the peer, later in the order, still has to prove the same one.
fn cuzk_assignment(a: &mut Option<Assignment>, order: &[Side], i: usize) -> Assignment {
    if order[i + 1..].contains(&Side::Peer) {
        a.clone()
            .expect("the assignment is there until cuzk takes it")
    } else {
        a.take()
            .expect("the assignment is there until cuzk takes it")
    }
}

fn cuzk_gpu<'a>(cell: &'a OnceCell<GpuStart>, args: &Args) -> &'a GpuStart {
    cell.get_or_init(|| {
        step!("cuzk: GpuStart::new(0) ...");
        let t = Instant::now();
        let gpu = GpuStart::new(0).expect("device 0 was discovered but does not open");
        step!("cuzk: GpuStart::new(0) done in {:.1} ms", ms(t.elapsed()));
        gpu.set_overlap_uploads(args.overlap_uploads);
        if args.overlap_uploads {
            step!("cuzk: H-step uploads under the kernels (--overlap-uploads)");
        }
        gpu.set_poison_scratch(args.poison_scratch);
        if args.poison_scratch {
            step!("cuzk: scratch filled with 0xff before each H step (--poison-scratch)");
        }
        gpu
    })
}

/// What the diagnostics ask for before each of the peer's proofs: `--settle-ms`'s pause and
/// `--dirty-device`'s fill (through cuzk's device 0, the peer's primary context too).
fn before_peer(gpu: &OnceCell<GpuStart>, args: &Args) {
    std::thread::sleep(args.settle);
    if args.dirty_device {
        let t = Instant::now();
        let (plain, pooled) = cuzk_gpu(gpu, args)
            .fill_free_memory(0xff)
            .expect("the free-memory fill");
        step!(
            "device 0's free memory filled with 0xff: {:.1} GiB plain, {:.1} GiB through the pool, in {:.1} ms",
            plain as f64 / (1u64 << 30) as f64,
            pooled as f64 / (1u64 << 30) as f64,
            ms(t.elapsed())
        );
    }
}

/// Checks one run's proofs: that bellperson's verifier accepts each of them (a rejected proof
/// ends the benchmark; with timing-only params, `pvk` is `None` and nothing can verify), and
/// whether all have the bytes of the first.
fn check(
    what: &str,
    pvk: Option<&bp::PreparedVerifyingKey<Bls12>>,
    inputs: &[Scalar],
    proofs: &[(&str, bp::Proof<Bls12>)],
) -> bool {
    let mut equal = true;
    for (name, p) in proofs {
        if let Some(pvk) = pvk {
            assert!(
                bp::verify_proof(pvk, p, inputs).expect("verify"),
                "{what}: bellperson's verifier rejects the proof of {name}"
            );
        }
        let (first, reference) = &proofs[0];
        if bp_bytes(p) != bp_bytes(reference) {
            let verified = match pvk {
                Some(_) => "both verify",
                None => "timing-only params: neither can be verified",
            };
            eprintln!("{what}: {name}'s proof bytes differ from {first}'s ({verified})");
            equal = false;
        }
    }
    equal
}

/// cuzk's proof in bellperson's type, through its 192 bytes.
fn as_bp(p: &Proof) -> bp::Proof<Bls12> {
    bp::Proof::<Bls12>::read(&p.to_bytes()[..]).expect("cuzk's proof bytes decode")
}

/// One size's figures; `None` for a side that did not run.
struct Row {
    log: u32,
    constraints: usize,
    gen: Duration,
    synth: Duration,
    cuzk_first: Option<Duration>,
    cuzk_start: Option<Duration>,
    cuzk_prove: Option<Duration>,
    peer_first: Option<Duration>,
    peer_prove: Option<Duration>,
    peer_total: Option<Duration>,
    /// Whether every run's proofs had equal bytes; `None` where a run has one proof.
    equal: Option<bool>,
}

fn bench_size(gpu: &OnceCell<GpuStart>, args: &Args, log: u32) -> Row {
    let runs = args.runs;
    let circuit = circuit_for(&args.circuit, log);
    // The warm-up's witness (timing params take their section lengths from it).
    let warm = circuit.with_seed(999);
    let a = synthesize(warm.clone()).expect("synthesize");
    let constraints = a.shape().constraints;
    step!("2^{log}: generating params ...");
    let t = Instant::now();
    let srs = match args.timing_srs {
        false => generate_srs(circuit.clone(), &ToxicWaste::from_seed(log as u64))
            .expect("generate params"),
        true => timing_srs(&a.witness, constraints, log as u64),
    };
    let gen = t.elapsed();
    // The params file starts with the verifying key in bellperson's layout.
    let vk = bp::VerifyingKey::<Bls12>::read(&srs.vk.to_bytes()[..]).expect("verifying key");
    let pvk = (!args.timing_srs).then(|| bp::prepare_verifying_key(&vk));
    step!(
        "2^{log}: params {} in {:.1} s",
        if args.timing_srs {
            "(timing only: proofs compare bytes, none verifies)"
        } else {
            "generated"
        },
        gen.as_secs_f64(),
    );
    // supraseal reads its SRS from a file, in a thread of its own; it starts the CUDA runtime
    // (device count, pinned host memory) before it returns.
    let mut file = None;
    let mut params = None;
    if args.runs(Side::Peer) {
        let mut f = tempfile::Builder::new()
            .prefix("peer-bench-")
            .suffix(".params")
            .tempfile()
            .expect("temporary params file (set TMPDIR to a roomier place)");
        let t = Instant::now();
        {
            let mut w = std::io::BufWriter::with_capacity(16 << 20, f.as_file_mut());
            srs.write_to(&mut w)
                .and_then(|_| w.flush())
                .expect("write the params file");
        }
        step!(
            "2^{log}: params file written in {:.1} s, {:.0} MiB",
            t.elapsed().as_secs_f64(),
            f.as_file().metadata().map(|m| m.len()).unwrap_or(0) as f64 / (1 << 20) as f64
        );
        step!("2^{log}: peer: SuprasealParameters::new ...");
        let t = Instant::now();
        params = Some(Peer::new(f.path().to_path_buf()).expect("supraseal loads the params"));
        step!(
            "2^{log}: peer: SuprasealParameters::new returned in {:.1} ms",
            ms(t.elapsed())
        );
        file = Some(f);
    }
    let rs = fixed_rs(log);

    // Warm-up on each side, with its own witness; checked like the timed runs.
    let inputs = a.witness.input[1..].to_vec();
    let mut a = Some(a);
    let (mut cuzk_first, mut peer_first) = (None, None);
    let mut proofs = vec![];
    for (i, side) in args.order.iter().enumerate() {
        match side {
            Side::Cuzk => {
                let mine = cuzk_assignment(&mut a, &args.order, i);
                step!("2^{log} warm-up: cuzk prove ...");
                let t = Instant::now();
                let (ours, _) = cuzk_prove(cuzk_gpu(gpu, args), &srs, mine, rs);
                let d = t.elapsed();
                step!("2^{log} warm-up: cuzk prove done in {:.1} ms", ms(d));
                cuzk_first = Some(d);
                proofs.push(("cuzk", as_bp(&ours)));
            }
            Side::Peer => {
                let params = params.as_ref().unwrap();
                if args.create_proof {
                    step!("2^{log} warm-up: peer create_proof ...");
                    let t = Instant::now();
                    let theirs = peer_create(params, warm.clone(), rs);
                    let d = t.elapsed();
                    step!("2^{log} warm-up: peer create_proof done in {:.1} ms", ms(d));
                    peer_first = Some(d);
                    proofs.push(("bellperson+supraseal create_proof", theirs));
                } else {
                    let a = a.as_ref().expect("the assignment is kept for the peer");
                    before_peer(gpu, args);
                    step!("2^{log} warm-up: peer generate_groth16_proof ...");
                    let t = Instant::now();
                    let theirs = peer_prove(params, a, rs);
                    let d = t.elapsed();
                    step!(
                        "2^{log} warm-up: peer generate_groth16_proof done in {:.1} ms",
                        ms(d)
                    );
                    peer_first = Some(d);
                    proofs.push(("supraseal generate_groth16_proof", theirs));
                }
            }
        }
    }
    drop(a);
    let mut equal = check(&format!("2^{log} warm-up"), pvk.as_ref(), &inputs, &proofs);

    let (mut synth, mut start, mut prove) = (vec![], vec![], vec![]);
    let (mut peer_prove_t, mut peer_total) = (vec![], vec![]);
    for rep in 0..runs {
        let c = circuit.with_seed(1000 + rep as u64);
        let t = Instant::now();
        let a = synthesize(c.clone()).expect("synthesize");
        synth.push(t.elapsed());
        let inputs = a.witness.input[1..].to_vec();
        let mut a = Some(a);
        let mut proofs = vec![];
        let mut line = format!("2^{log} run {rep}: synth {:.1} ms", ms(synth[rep]));
        for (i, side) in args.order.iter().enumerate() {
            match side {
                Side::Cuzk => {
                    let mine = cuzk_assignment(&mut a, &args.order, i);
                    step!("2^{log} run {rep}: cuzk prove ...");
                    let (ours, times) = cuzk_prove(cuzk_gpu(gpu, args), &srs, mine, rs);
                    step!(
                        "2^{log} run {rep}: cuzk prove done in {:.1} ms",
                        ms(times.total)
                    );
                    step!(
                        "2^{log} run {rep}: cuzk stages {}",
                        stage_line(&times.stages)
                    );
                    line += &format!(", cuzk prove {:.1} ms", ms(times.total));
                    if let (true, Some(same)) = (args.compare_orders, a.as_ref()) {
                        let gpu = cuzk_gpu(gpu, args);
                        let cmp = compare_orders(gpu, &srs, same, args.overlap_uploads, rs, &ours);
                        step!("2^{log} run {rep}: {cmp}");
                        line += &format!(", {cmp}");
                    }
                    start.push(times.start);
                    prove.push(times.total);
                    proofs.push(("cuzk", as_bp(&ours)));
                }
                Side::Peer => {
                    let params = params.as_ref().unwrap();
                    before_peer(gpu, args);
                    step!("2^{log} run {rep}: peer generate_groth16_proof ...");
                    let t = Instant::now();
                    let only = peer_prove(params, a.as_ref().unwrap(), rs);
                    let d = t.elapsed();
                    step!(
                        "2^{log} run {rep}: peer generate_groth16_proof done in {:.1} ms",
                        ms(d)
                    );
                    peer_prove_t.push(d);
                    line += &format!(", peer prove {:.1} ms", ms(d));
                    proofs.push(("supraseal generate_groth16_proof", only));
                    if args.create_proof {
                        step!("2^{log} run {rep}: peer create_proof ...");
                        let t = Instant::now();
                        let theirs = peer_create(params, c.clone(), rs);
                        let total = t.elapsed();
                        step!(
                            "2^{log} run {rep}: peer create_proof done in {:.1} ms",
                            ms(total)
                        );
                        peer_total.push(total);
                        line += &format!(", peer create_proof {:.1} ms", ms(total));
                        proofs.push(("bellperson+supraseal create_proof", theirs));
                    }
                }
            }
        }
        drop(a);
        equal &= check(
            &format!("2^{log} run {rep}"),
            pvk.as_ref(),
            &inputs,
            &proofs,
        );
        eprintln!("{line}");
    }
    drop(params);
    drop(file);
    let some_median = |v: Vec<Duration>| (!v.is_empty()).then(|| median(v));
    Row {
        log,
        constraints,
        gen,
        synth: median(synth),
        cuzk_first,
        cuzk_start: some_median(start),
        cuzk_prove: some_median(prove),
        peer_first,
        peer_prove: some_median(peer_prove_t),
        peer_total: some_median(peer_total),
        equal: (args.order != [Side::Cuzk]).then_some(equal),
    }
}

/// A table cell in ms, `-` for a side that did not run.
fn cell(d: Option<Duration>) -> String {
    d.map_or("-".into(), |d| format!("{:.1}", ms(d)))
}

/// `peer / cuzk` as `1.23x`, `-` unless both ran.
fn ratio(peer: Option<Duration>, cuzk: Option<Duration>) -> String {
    match (peer, cuzk) {
        (Some(p), Some(c)) => format!("{:.2}x", p.as_secs_f64() / c.as_secs_f64()),
        _ => "-".into(),
    }
}

fn main() -> ExitCode {
    step!("peer_bench starts");
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
    // Counts devices through the driver; no context yet.
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
    println!(
        "device 0: {:?}; host threads {}",
        devices[0],
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let order: Vec<&str> = args
        .order
        .iter()
        .map(|s| match s {
            Side::Cuzk => "cuzk",
            Side::Peer => "peer",
        })
        .collect();
    println!(
        "circuit {}, {} timed runs per size after one warm-up; median ms; proving {} in this order; peer = bellperson 0.26 + supraseal-c2 0.1; params: {}",
        args.circuit,
        args.runs,
        order.join(", then "),
        if args.timing_srs {
            "timing only (fixtures::timing_srs: the circuit's shape, points cycling through 2^14 random ones; proofs compare bytes, none verifies)"
        } else {
            "cuzk's generator (byte-equal to bellperson's; every proof verified)"
        }
    );

    let gpu = OnceCell::new();
    let rows: Vec<Row> = args
        .logs
        .iter()
        .map(|&log| bench_size(&gpu, &args, log))
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
        let cuzk_total = r.cuzk_prove.map(|p| r.synth + p);
        println!(
            "{:>4} {:>11} {:>8.1} | {:>9.1} {:>11} {:>10} {:>10} {:>10} | {:>10} {:>10} {:>10} | {:>7} {:>7} | {:>5}",
            r.log,
            r.constraints,
            r.gen.as_secs_f64(),
            ms(r.synth),
            cell(r.cuzk_first),
            cell(r.cuzk_prove),
            cell(r.cuzk_start),
            cell(cuzk_total),
            cell(r.peer_first),
            cell(r.peer_prove),
            cell(r.peer_total),
            ratio(r.peer_prove, r.cuzk_prove),
            ratio(r.peer_total, cuzk_total),
            match r.equal {
                Some(true) => "yes",
                Some(false) => "no",
                None => "-",
            }
        );
    }
    println!();
    println!("cuzk syn: cuzk::groth16::synthesize (its assignment feeds peer prove too). prove: validate + GpuStart::start (H and the G1 MSMs) + finish (B_g2 MSM and assembly, CPU); (gpu start) is its start share; prove first: the first proof of the size (uploads the SRS's G1 sections; at the first size also opens device 0). cuzk total = syn + prove.");
    println!("peer prove: supraseal_c2::generate_groth16_proof on cuzk's assignment (what bellperson calls after synthesis); peer total: bellperson create_proof (synthesis inside); peer first: its first proof of the size (waits for its SRS read; at the first size also supraseal's kernel load).");
    println!("x prove = peer prove / cuzk prove; x total = peer total / cuzk total; bytes: all proofs of each run have the same 192 bytes (with real params every proof is also verified by bellperson); - where a side did not run.");
    ExitCode::SUCCESS
}
