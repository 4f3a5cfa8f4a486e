//! Synthesis benchmark: the synthesizer (bellperson's algorithm) against cuzk's recorded
//! path (witness only, then the CPU mat-vec), on the 2KiB Filecoin circuits and a sample
//! circuit, same process, same cores.
//!
//! `cargo bench --bench synth -- [NAME ...]` (default: all of porep-2KiB snap-2KiB
//! winning-post-2KiB window-post-2KiB sample-bits-2^18; by name only: porep-2KiB-random,
//! porep-32GiB-random, snap-32GiB-random and window-post-32GiB-random, a partition with random
//! values in the circuit's shape (`cuzk::filecoin`'s `*_random_partition`), whose 80-130M
//! constraints want a machine with ~64 GiB of memory). `-- --profile[=DEPTH] [NAME ...]`
//! prints instead where each circuit's witness time goes, by namespace (DEPTH levels,
//! default 3), after checking the profiled run's values equal the plain run's. bellperson 0.27 keeps its
//! synthesizer (`ProvingAssignment`) private, so the "bellperson" column is
//! `cuzk::groth16::synthesize`, which evaluates every linear combination per proof exactly
//! as bellperson's does (the oracle tests compare their proofs' bytes). Each line is the
//! median of a few runs; building the circuit from its inputs (inside the partition's
//! closure) is timed on both sides.

#[path = "../tests/filecoin_common/mod.rs"]
mod filecoin_common;

use std::time::{Duration, Instant};

use cuzk::engine::PartitionCircuit;
use cuzk::filecoin::{
    porep_c2_circuits, porep_random_partition, post_random_partition, snap_random_partition,
    RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof,
};
use cuzk::fixtures::{sector, SampleCircuit};
use filecoin_common::fixture;

/// One benchmarked circuit: its name, how many runs to take the median of, and a maker of
/// fresh instances (a partition is consumed by its synthesis).
struct Bench {
    name: &'static str,
    runs: usize,
    /// In the default set (the others run only when named).
    default: bool,
    make: Box<dyn Fn() -> PartitionCircuit>,
}

fn median(mut v: Vec<Duration>) -> f64 {
    v.sort();
    v[v.len() / 2].as_secs_f64()
}

fn randomness_bytes(seed: u8) -> [u8; 32] {
    let mut r = [seed; 32];
    r[31] &= 0x3f;
    r
}

fn first(set: cuzk::filecoin::CircuitSet) -> PartitionCircuit {
    set.partitions.into_iter().next().expect("a partition")
}

/// The 2KiB rows' inputs, made (the sectors sealed) the first time one of them runs: named
/// 32GiB rows alone need none.
struct Inputs {
    c1: (Vec<u8>, u64, [u8; 32]),
    snap: sector::SnapInputs,
    winning: sector::WinningPostInputs,
    window: sector::WindowPostInputs,
}

fn inputs() -> &'static Inputs {
    static INPUTS: std::sync::OnceLock<Inputs> = std::sync::OnceLock::new();
    INPUTS.get_or_init(|| {
        let f = fixture();
        let s0 = &f.sectors[0];
        let sectors: Vec<_> = f.sectors.iter().collect();
        Inputs {
            c1: (s0.c1_output.clone(), s0.sector_id, s0.prover_id),
            snap: sector::snap_inputs(&f.sectors[1], 41).expect("snap inputs"),
            winning: sector::winning_post_inputs(s0, randomness_bytes(7)).expect("winning"),
            window: sector::window_post_inputs(&sectors, randomness_bytes(9)).expect("window"),
        }
    })
}

fn benches() -> Vec<Bench> {
    vec![
        Bench {
            name: "porep-2KiB",
            runs: 3,
            default: true,
            make: Box::new(|| {
                let (c1, sector_id, prover_id) = &inputs().c1;
                first(porep_c2_circuits(c1, *sector_id, *prover_id).unwrap())
            }),
        },
        Bench {
            name: "snap-2KiB",
            runs: 3,
            default: true,
            make: Box::new(|| first(inputs().snap.circuits().unwrap())),
        },
        Bench {
            name: "winning-post-2KiB",
            runs: 5,
            default: true,
            make: Box::new(|| first(inputs().winning.circuits().unwrap())),
        },
        Bench {
            name: "window-post-2KiB",
            runs: 9,
            default: true,
            make: Box::new(|| first(inputs().window.circuits().unwrap())),
        },
        // Random values in the PoRep circuit's shape (tests/r1cs_recorded.rs: the same R1CS
        // as a sealed sector's at 2KiB): a partition of a sector size no test seals.
        Bench {
            name: "porep-2KiB-random",
            runs: 3,
            default: false,
            make: Box::new(|| {
                porep_random_partition(RegisteredSealProof::StackedDrg2KiBV1_1, 1).unwrap()
            }),
        },
        Bench {
            name: "porep-32GiB-random",
            runs: 1,
            default: false,
            make: Box::new(|| {
                porep_random_partition(RegisteredSealProof::StackedDrg32GiBV1_1, 1).unwrap()
            }),
        },
        Bench {
            name: "snap-32GiB-random",
            runs: 1,
            default: false,
            make: Box::new(|| {
                snap_random_partition(RegisteredUpdateProof::StackedDrg32GiBV1, 1).unwrap()
            }),
        },
        Bench {
            name: "window-post-32GiB-random",
            runs: 1,
            default: false,
            make: Box::new(|| {
                post_random_partition(RegisteredPoStProof::StackedDrgWindow32GiBV1_2, 1).unwrap()
            }),
        },
        Bench {
            name: "sample-bits-2^18",
            runs: 5,
            default: true,
            make: Box::new(|| PartitionCircuit::new(SampleCircuit::bits_filling(18))),
        },
    ]
}

fn main() {
    let wanted: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    println!(
        "threads: {}   (bellperson: cuzk::groth16::synthesize, bellperson's algorithm; \
         cuzk: witness + CPU mat-vec from the recorded R1CS)",
        rayon::current_num_threads()
    );
    let profile = std::env::args().find_map(|a| match a.as_str() {
        "--profile" => Some(3),
        a => a.strip_prefix("--profile=").and_then(|d| d.parse().ok()),
    });
    for b in benches() {
        let named = wanted.iter().any(|w| w == b.name);
        if (wanted.is_empty() && !b.default) || (!wanted.is_empty() && !named) {
            continue;
        }
        if let Some(depth) = profile {
            let plain = (b.make)().witness().expect("witness");
            let (values, prof) = (b.make)().witness_profile(depth).expect("profiled witness");
            assert!(values == plain, "{}: the profiled witness differs", b.name);
            println!("witness profile {} (depth {depth}):\n{prof}", b.name);
            continue;
        }
        // Progress on stderr, so a run cut short (a device call's limit) says where it was.
        let started = Instant::now();
        let stamp = |what: &str| {
            eprintln!(
                "[{:8.1} s] {}: {what}",
                started.elapsed().as_secs_f64(),
                b.name
            )
        };
        let t = Instant::now();
        let (recorded, _) = (b.make)().record().expect("record");
        let record_once = t.elapsed().as_secs_f64();
        stamp("recorded");

        let (mut synth, mut wit, mut matvec) = (Vec::new(), Vec::new(), Vec::new());
        let mut last = None;
        for _ in 0..b.runs {
            // The previous run's assignments go before this run makes its own.
            drop(last.take());
            let c = (b.make)();
            let t = Instant::now();
            let want = c.synthesize().expect("synthesize");
            synth.push(t.elapsed());
            stamp("synthesized (bellperson's algorithm)");

            let c = (b.make)();
            let t = Instant::now();
            let values = c.witness().expect("witness");
            wit.push(t.elapsed());
            stamp("witness");
            let witness_bytes = 32 * (values.input.len() + values.aux.len());
            let t = Instant::now();
            let got = recorded.evaluate(values).expect("mat-vec");
            matvec.push(t.elapsed());
            last = Some((want, got, witness_bytes));
        }
        // A check outside the timings: the last run's two paths agree.
        let (want, got, witness_bytes) = last.expect("one run at least");
        assert!(got == want, "{}: the recorded path differs", b.name);
        let e = &want.evaluations;
        let w_ = &want.witness;
        let host_bytes = 32 * (e.a.len() + e.b.len() + e.c.len() + w_.input.len() + w_.aux.len());
        drop((want, got));

        let (bp, w, m) = (median(synth), median(wit), median(matvec));
        println!(
            "synthesis {} bellperson {bp:.3} cuzk {:.3} speedup {:.2}",
            b.name,
            w + m,
            bp / (w + m)
        );
        let nnz = recorded.nnz();
        println!(
            "  {} witness {w:.3} matvec {m:.3} record-once {record_once:.3} matrix-bytes {} \
             (constraints {}, nnz a/b/c {}/{}/{}, {:?})",
            b.name,
            recorded.bytes(),
            recorded.shape().constraints,
            nnz[0],
            nnz[1],
            nnz[2],
            recorded.coefficient_stats()
        );
        println!(
            "  {} host bytes per partition: synthesized (a, b, c, witness) {host_bytes}, \
             witness only {witness_bytes}",
            b.name
        );
    }
}
