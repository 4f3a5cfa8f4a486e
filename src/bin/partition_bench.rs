//! One Filecoin partition of any sector size through every stage on GPU 0: the recording,
//! the witness on the CPU, a, b and c on the GPU from the resident matrices, the NTTs and
//! MSMs, and the host's finish, each timed.
//!
//! ```text
//! cargo build --release --features cuda,test-fixtures --bin partition_bench   (without cuda: --cpu only)
//! target/release/partition_bench [--kind porep|snap|window-post|winning-post]
//!     [--sector-size 2KiB|8MiB|512MiB|32GiB|64GiB] [--proofs N] [--check-cpu] [--cpu] [--staged]
//! ```
//!
//! The partition has random values in the circuit's shape (`cuzk::filecoin`'s
//! `*_random_partition`: the real circuit's R1CS, checked at 2KiB by tests/r1cs_recorded.rs)
//! and the params are timing-only ([`cuzk::fixtures::timing_srs`]: the right section lengths,
//! points cycling through 16,384 random ones), so nothing here verifies: the figures are the
//! work of a real partition of that size, which no device session could seal and set up
//! params for at 32GiB. The first proof also makes the SRS and the matrices resident on the
//! device; the later ones are the steady state. `--check-cpu` proves each partition's start
//! phase on the CPU too and requires the same four MSM results (minutes per proof at 32GiB).
//! `--cpu` runs the start phase on the CPU instead of the GPU (any machine; a, b and c by the
//! CPU mat-vec).
//! `--staged` has each proof's inputs staged on the device before its start phase
//! (`StartPhase::stage`, as the engine's device worker does before it takes the device's
//! mutex, while the other worker's kernels run) and timed apart from it: the start phase then
//! uploads nothing of the partition. Staging needs a device warm for the params (proof 0 makes
//! it so) with room for the inputs; a proof that could not be staged says so and starts as
//! without the flag.
//! The `CUZK_MSM_*` variables override the GPU's MSM tuning as they do for gpu_bench
//! (`MsmTuning::from_env`), e.g. `CUZK_MSM_AFFINE_ROUNDS=0` for the MSM without affine rounds.

use std::time::Instant;

use cuzk::cpu::CpuStart;
use cuzk::engine::PartitionCircuit;
use cuzk::filecoin::{
    porep_random_partition, post_random_partition, snap_random_partition, RegisteredPoStProof,
    RegisteredSealProof, RegisteredUpdateProof,
};
use cuzk::fixtures::timing_srs;
use cuzk::gpu::{self, GpuStart};
use cuzk::groth16::{finish_timed, Randomness, StartPhase};
use cuzk::r1cs::R1csCache;

struct Args {
    kind: String,
    size: String,
    proofs: usize,
    check_cpu: bool,
    cpu: bool,
    staged: bool,
}

fn args() -> Args {
    let argv: Vec<String> = std::env::args().collect();
    let opt = |name: &str| {
        argv.iter()
            .position(|a| a == name)
            .and_then(|i| argv.get(i + 1))
            .cloned()
    };
    Args {
        kind: opt("--kind").unwrap_or_else(|| "porep".into()),
        size: opt("--sector-size").unwrap_or_else(|| "2KiB".into()),
        proofs: opt("--proofs").and_then(|s| s.parse().ok()).unwrap_or(2),
        check_cpu: argv.iter().any(|a| a == "--check-cpu"),
        cpu: argv.iter().any(|a| a == "--cpu"),
        staged: argv.iter().any(|a| a == "--staged"),
    }
}

/// The registered proofs of a sector size: seal, update, WindowPoSt, WinningPoSt.
fn proofs_of(
    size: &str,
) -> (
    RegisteredSealProof,
    RegisteredUpdateProof,
    RegisteredPoStProof,
    RegisteredPoStProof,
) {
    use RegisteredPoStProof as P;
    use RegisteredSealProof as S;
    use RegisteredUpdateProof as U;
    match size {
        "2KiB" => (
            S::StackedDrg2KiBV1_1,
            U::StackedDrg2KiBV1,
            P::StackedDrgWindow2KiBV1_2,
            P::StackedDrgWinning2KiBV1,
        ),
        "8MiB" => (
            S::StackedDrg8MiBV1_1,
            U::StackedDrg8MiBV1,
            P::StackedDrgWindow8MiBV1_2,
            P::StackedDrgWinning8MiBV1,
        ),
        "512MiB" => (
            S::StackedDrg512MiBV1_1,
            U::StackedDrg512MiBV1,
            P::StackedDrgWindow512MiBV1_2,
            P::StackedDrgWinning512MiBV1,
        ),
        "32GiB" => (
            S::StackedDrg32GiBV1_1,
            U::StackedDrg32GiBV1,
            P::StackedDrgWindow32GiBV1_2,
            P::StackedDrgWinning32GiBV1,
        ),
        "64GiB" => (
            S::StackedDrg64GiBV1_1,
            U::StackedDrg64GiBV1,
            P::StackedDrgWindow64GiBV1_2,
            P::StackedDrgWinning64GiBV1,
        ),
        other => panic!("--sector-size {other}: one of 2KiB, 8MiB, 512MiB, 32GiB, 64GiB"),
    }
}

fn partition(args: &Args, seed: u64) -> PartitionCircuit {
    let (seal, update, window, winning) = proofs_of(&args.size);
    match args.kind.as_str() {
        "porep" => porep_random_partition(seal, seed),
        "snap" => snap_random_partition(update, seed),
        "window-post" => post_random_partition(window, seed),
        "winning-post" => post_random_partition(winning, seed),
        other => panic!("--kind {other}: one of porep, snap, window-post, winning-post"),
    }
    .expect("a random partition")
}

/// The process's peak resident set (`VmHWM`), for the memory line.
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l.trim_start_matches("VmHWM:").trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

fn main() {
    // CUZK_LOG=cuzk::gpu_timing=debug shows each start phase's host parts and each MSM's
    // affine rounds.
    cuzk::fixtures::log_from_env();
    let args = args();
    let name = format!("{}-{}", args.kind, args.size);
    let gpu = if args.cpu {
        None
    } else {
        match gpu::discover() {
            Ok(d) if !d.is_empty() => println!("device: {:?}", d[0]),
            Ok(_) => return println!("SKIP: no CUDA device (--cpu proves on the CPU)"),
            Err(e) => return println!("SKIP: {e} (--cpu proves on the CPU)"),
        }
        let start = GpuStart::new(0).expect("GPU 0");
        // The MSM overrides gpu_bench takes (`CUZK_MSM_*`), for side-by-side runs.
        let tuning = gpu::MsmTuning::from_env();
        if tuning != gpu::MsmTuning::default() {
            println!("MSM tuning: {tuning:?}");
        }
        start.set_msm_tuning(tuning);
        Some(start)
    };
    let (backend, on): (&dyn StartPhase, &str) = match &gpu {
        Some(g) => (g, "GPU"),
        None => (&CpuStart, "CPU"),
    };
    println!(
        "partition_bench {name}: random values in the circuit's shape, timing-only params \
         (points cycle through 16,384 random ones: nothing verifies); {} threads",
        rayon::current_num_threads()
    );
    let cache = R1csCache::new();

    let t = Instant::now();
    let (first, recorded) = partition(&args, 1)
        .synthesize_deferred(&cache, None)
        .expect("record and witness");
    let recorded = recorded.expect("a shape key: the partition is recorded");
    println!(
        "  record once (and its witness): {:.3} s, {:?}, matrices {:.2} GB",
        t.elapsed().as_secs_f64(),
        recorded.shape(),
        recorded.bytes() as f64 / 1e9
    );
    let t = Instant::now();
    let srs = timing_srs(&first.witness, recorded.shape().constraints, 1);
    println!(
        "  timing params: {:.3} s, {:.2} GB on the host (h {}, l {}, a {}, b {})",
        t.elapsed().as_secs_f64(),
        srs.memory_bytes() as f64 / 1e9,
        srs.h.len(),
        srs.l.len(),
        srs.a.len(),
        srs.b_g1.len()
    );
    drop(first);

    for i in 0..args.proofs {
        let t = Instant::now();
        let (assignment, _) = partition(&args, 10 + i as u64)
            .synthesize_deferred(&cache, None)
            .expect("witness");
        let witness_s = t.elapsed().as_secs_f64();
        let witness = assignment.witness;
        witness
            .validate(recorded.shape().constraints, &srs)
            .expect("the witness fits the params");

        let t = Instant::now();
        let staged = match args.staged {
            true => backend.stage(&srs, None, &witness).expect("staging"),
            false => None,
        };
        let staging = match (args.staged, &staged) {
            (false, _) => String::new(),
            (true, Some(_)) => format!(", staged first in {:.3} s", t.elapsed().as_secs_f64()),
            (true, None) if gpu.is_none() => ", not staged (the CPU has nothing to stage)".into(),
            (true, None) => ", not staged (device not warm for the params, or no room)".into(),
        };
        let t = Instant::now();
        let (partial, timings) = match staged {
            Some(staged) => backend.start_deferred_staged(&srs, &*recorded, &witness, staged),
            None => backend.start_deferred(&srs, &*recorded, &witness),
        }
        .expect("start phase");
        let start_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let (_proof, b_g2) =
            finish_timed(&srs, &witness, &partial, Randomness::random()).expect("finish");
        let finish_s = t.elapsed().as_secs_f64();

        let stages: Vec<String> = [("matvec", timings.matvec)]
            .iter()
            .chain(timings.stages().iter())
            .map(|(stage, d)| format!("{stage} {:.3}", d.as_secs_f64()))
            .collect();
        println!(
            "partition {name} proof {i}{}: witness {witness_s:.3} s (CPU){staging}, start {start_s:.3} s \
             ({on}; kernels {:.3} over a span of {:.3}), finish {finish_s:.3} s (host B_g2 {:.3}), witness + start + \
             finish {:.3} s",
            if i == 0 && gpu.is_some() {
                " (SRS and matrices made resident)"
            } else {
                ""
            },
            timings.kernels.as_secs_f64(),
            timings.kernel_span.as_secs_f64(),
            b_g2.as_secs_f64(),
            witness_s + start_s + finish_s
        );
        println!("  {name} proof {i} start stages (s): {}", stages.join(", "));
        if args.check_cpu {
            let t = Instant::now();
            let (cpu, _) = CpuStart
                .start_deferred(&srs, &*recorded, &witness)
                .expect("CPU start phase");
            // The CPU leaves B_g2 to the finish; the GPU's, where it made one, against that.
            let b_g2_same = partial.b_g2.map_or(true, |g| {
                g == cuzk::groth16::prover::b_g2_msm(&srs, &witness)
            });
            let same = cpu.h == partial.h
                && cpu.l == partial.l
                && cpu.a == partial.a
                && cpu.b_g1 == partial.b_g1
                && b_g2_same;
            println!(
                "  {name} proof {i} CPU start phase {:.3} s, same MSM results as the {on}'s: {same}",
                t.elapsed().as_secs_f64()
            );
            assert!(
                same,
                "{name}: the {on}'s start phase differs from the CPU's"
            );
        }
    }
    if let Some(g) = &gpu {
        println!(
            "  {name}: device resident {:.2} GB",
            g.resident_bytes() as f64 / 1e9
        );
    }
    println!("  {name}: peak RSS {}", peak_rss());
}
