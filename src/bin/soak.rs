//! A mixed-job soak: many jobs of every Filecoin kind and of synthetic circuits through one
//! engine whose memory budget makes jobs wait, with device faults injected, cancellations and
//! bad inputs; every job's outcome is checked, and no other outcome passes.
//!
//! ```text
//! cargo build --release --locked --features test-fixtures --bin soak
//! target/release/soak [--jobs 1000] [--seed 1] [--params DIR] [--memory-budget BYTES]
//!     [--fault-rate 0.03] [--hang-rate 0.004] [--start-deadline SECS] [--probe-delay 2]
//!     [--cpu-fallback on|off] [--cancel-rate 0.03] [--bad-rate 0.03] [--threads 8]
//!     [--kinds porep,snap,window,winning,synthetic] [--sectors 6]
//!     [--synthetic-logs 16,18,20] [--witnesses 4] [--misdeliver]
//! ```
//!
//! Fixtures, made once: `--sectors` real 2KiB sectors sealed with filecoin-proofs, and from
//! them a pool of inputs per kind (each sector's C1 output; WinningPoSt at two randomnesses
//! per sector; WindowPoSt over three sectors at a time; one SnapDeals update per sector), the
//! test params of each kind in DIR (`ensure_test_params`, made if missing); and per
//! `--synthetic-logs` entry a random circuit filling a domain of 2^log, its SRS from the
//! fixture generator and `--witnesses` witnesses of it.
//!
//! One engine (default devices: every GPU, or the CPU) with a budget of four of the largest
//! partitions unless `--memory-budget` says otherwise, so jobs wait for admission. Its
//! `on_device_start` hook draws, for about `--fault-rate` of start phases, a device and makes
//! that device's next start phase fail (`FaultInjector::fail_starts`) or its result not verify
//! (`corrupt_results`), and for about `--hang-rate` of them a device whose next start phase
//! hangs (`hang_starts`; one at a time per device). The engine's fault policy has a start
//! deadline (`--start-deadline`, by default 10 s with GPUs, 300 s on the CPU: well above the
//! slowest healthy start phase of these circuits there), so a hung start is a device fault
//! and its device is hung; a releaser thread lets the stuck call go on 0.1 to 2 s after the
//! engine counted the hang, as a device that comes back would. Devices out of rotation are
//! probed after `--probe-delay` (2 s: with one device, every partition waits for the probe or
//! goes to the fallback meanwhile). The CPU fallback is on unless `--cpu-fallback off`: with
//! one device and no fallback, a hang fails every job queued while it lasts (`every device is
//! hung`), which a run can check too but which turns a share of the mix into failed jobs.
//! With the fallback, the CPU proves what is queued while no device is in rotation (one
//! partition at a time, big ones for seconds: hangs are rare) and a partition whose device
//! attempts are used up.
//!
//! `--threads` submitter threads take jobs 0..N in turn, one in flight each. Job j's plan
//! comes from its own stream of the `--seed` generator, so it does not depend on which thread
//! runs it: a kind from `--kinds` (a kind named twice is drawn twice as often), an input from
//! that kind's pool (synthetic: 1 to 3 partitions, each a witness drawn from the shape's;
//! half of them synthesized by the host and submitted ready, half synthesized by the engine),
//! with probability `--bad-rate` a bad input of the kind (the cases the Filecoin tests
//! check: truncated or garbled C1 JSON, a C1 of the wrong sector size or sector number,
//! empty or wrong-length randomness, garbled or foreign vanilla proofs, a proof type of the
//! other PoSt, a malformed assignment), and with probability `--cancel-rate` a cancel at a
//! random moment (log-uniform from 100 µs to 5 s after submission).
//!
//! The checks: a good input's proofs verify with filecoin-proofs' own verifiers
//! (`sector::verify_*`; synthetic: cuzk's verifier, each partition against its witness's
//! public inputs) against that job's own inputs, so a proof handed to another job's caller
//! fails unless both jobs drew the same pool entry; a job cancelled before it ended ends
//! `Cancelled`; a bad input fails (at submission or later) with the error kind its case
//! names; a job that fails with a device error counts as a device failure only if faults were
//! injected and the error names them (every attempt's device and error). Anything else
//! (another error, a timeout, a proof that does not verify, a bad input proved) is a failure.
//! After shutdown: the engine's accounting identities, no reserved memory left, the budget's
//! peak within its limit, and the faults: each device's `device_hangs` equals the hangs its
//! start phases took (`FaultInjector::taken`), `device_faults` equals the failing starts,
//! hangs and corrupt results taken (a corrupt result counts only if it was verified, which a
//! job that ended first skips: the check is the range between those of proved jobs and all of
//! them), no CPU fallback when it is off, and every hung partition's job proved (so the
//! partition was proved elsewhere and verified), was cancelled or failed with an error naming
//! the device (with the fallback on, only for want of budget room to retry from). Exit status
//! 1 if any check failed. `--misdeliver` checks each job's proofs against the next pool entry's inputs
//! instead, as if the engine had handed them to another job's caller: then every job that
//! proved must fail its check, which shows the check would catch it.
//!
//! Printed at the end, one line per figure: jobs by kind and outcome, proofs verified, the
//! faults injected, `device_faults`, `partition_retries`, `partitions_failed_after_retries`,
//! `device_hangs`, `cpu_fallbacks`, the budget's peak against its limit, host RSS at start, before the engine (the fixtures
//! built), after the engine is dropped and after a `malloc_trim(0)` then (freed memory still
//! in glibc's arenas goes back with the trim; what stays is really held), and each GPU's
//! free memory before the engine and after it is dropped. With each reading: glibc's bytes in
//! use and free in its arenas (`mallinfo2`, looked up at run time), and after the trim the
//! resident bytes by mapping (main heap, other arenas, thread stacks, files). The engine runs
//! with `trim_arena_tops` (`--trim-arena-tops off` leaves glibc's thresholds alone): then
//! RSS after the drop and the trim is checked against its level before the engine, within
//! `RSS_KEPT` (without it glibc keeps up to 64 MiB free at the top of each arena,
//! notes/engine.md). On a CPU run the bytes in use are checked too: at most `ENGINE_KEEPS`
//! more after the engine is dropped than before it (the CPU backend's domain tables, kept
//! per process, are built before that baseline).
//! `CUZK_LOG=cuzk::engine=warn` shows each device fault as it happens.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cuzk::engine::{
    FaultInjector, FaultPolicy, Hooks, InjectedFault, JobInput, JobKind, JobRequest,
    PartitionCircuit, PartitionHook,
};
use cuzk::filecoin::{
    proof_bytes, prove_porep_c2, prove_snap, prove_window_post, prove_winning_post, ParamsFor,
    ProofOptions, SnapCommitments,
};
use cuzk::fixtures::filecoin_params::{default_test_params_dir, ensure_test_params};
use cuzk::fixtures::sector::{self, SealedSector, SnapInputs, WindowPostInputs, WinningPostInputs};
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::groth16::{
    synthesize, verify_proof, Assignment, CircuitShape, PointCheck, PreparedVerifyingKey, Proof,
    Srs,
};
use cuzk::{Engine, EngineConfig, Error, ErrorKind, Job};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use rayon::prelude::*;

/// How long a job may take before it counts as lost.
const PATIENCE: Duration = Duration::from_secs(1800);

/// How much more the allocator may have in use after the engine is dropped than before it
/// (the domain tables built first): filecoin-proofs' verifying-key cache and other
/// process-wide state filled during the run. Measured: about 4 MiB on the CPU
/// (notes/runs.md, session 8).
const ENGINE_KEEPS: u64 = 16 << 20;

/// How much more resident memory the process may have once the engine is dropped and
/// trimmed than before it, with `--trim-arena-tops on` (the default): what the allocator
/// keeps in use (`ENGINE_KEEPS`) and at most `ARENA_TOP_BYTES` free at the top of each arena
/// (a few per core), with room to spare.
const RSS_KEPT: u64 = 96 << 20;

/// The default budget, in partitions of the largest kind: few enough that jobs wait.
const BUDGET_PARTITIONS: u64 = 4;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    PoRep,
    Snap,
    Window,
    Winning,
    Synthetic,
}

impl Kind {
    const ALL: [Kind; 5] = [
        Kind::PoRep,
        Kind::Snap,
        Kind::Window,
        Kind::Winning,
        Kind::Synthetic,
    ];

    fn name(self) -> &'static str {
        match self {
            Kind::PoRep => "porep",
            Kind::Snap => "snap",
            Kind::Window => "window",
            Kind::Winning => "winning",
            Kind::Synthetic => "synthetic",
        }
    }

    /// The params it proves with (synthetic circuits make their own).
    fn params(self) -> Option<ParamsFor> {
        match self {
            Kind::PoRep => Some(ParamsFor::Seal(sector::SEAL_2KIB)),
            Kind::Snap => Some(ParamsFor::Update(sector::UPDATE_2KIB)),
            Kind::Window => Some(ParamsFor::PoSt(sector::WINDOW_POST_2KIB)),
            Kind::Winning => Some(ParamsFor::PoSt(sector::WINNING_POST_2KIB)),
            Kind::Synthetic => None,
        }
    }

    /// The bad inputs of this kind, each with the error kind it must fail with.
    fn bad_cases(self) -> &'static [(&'static str, ErrorKind)] {
        use ErrorKind::*;
        match self {
            Kind::PoRep => &[
                ("truncated C1 output", InvalidInput),
                ("garbled C1 JSON", InvalidInput),
                ("C1 output registered as 8MiB", SectorSizeMismatch),
                ("another sector's number", InvalidInput),
            ],
            Kind::Winning => &[
                ("empty randomness", InvalidInput),
                ("vanilla proof cut to 40 bytes", InvalidInput),
                ("two vanilla proofs", InvalidInput),
                ("WindowPoSt proof type", InvalidInput),
                ("vanilla proofs of other randomness", InvalidInput),
            ],
            Kind::Window => &[
                ("WinningPoSt proof type", InvalidInput),
                ("31-byte randomness", InvalidInput),
                ("vanilla proof cut to 40 bytes", InvalidInput),
            ],
            Kind::Snap => &[
                ("no vanilla proofs", InvalidInput),
                ("WinningPoSt vanilla proofs", InvalidInput),
            ],
            Kind::Synthetic => &[("evaluation c one short", InvalidAssignment)],
        }
    }
}

struct Args {
    line: String,
    jobs: u64,
    seed: u64,
    params: PathBuf,
    memory_budget: Option<u64>,
    fault_rate: f64,
    hang_rate: f64,
    /// `None`: the default for the engine's devices.
    start_deadline: Option<Duration>,
    probe_delay: Duration,
    cpu_fallback: bool,
    /// `EngineConfig::trim_arena_tops`; with it, the RSS after the engine is checked.
    trim_arena_tops: bool,
    cancel_rate: f64,
    bad_rate: f64,
    threads: usize,
    /// Drawn uniformly: a kind named twice is drawn twice as often.
    kinds: Vec<Kind>,
    sectors: usize,
    synthetic_logs: Vec<u32>,
    witnesses: usize,
    /// Check each job's proofs against another job's inputs (the check's own test).
    misdeliver: bool,
}

fn args() -> Result<Args, String> {
    let mut a = Args {
        line: std::env::args().collect::<Vec<_>>().join(" "),
        jobs: 1000,
        seed: 1,
        params: default_test_params_dir(),
        memory_budget: None,
        fault_rate: 0.03,
        hang_rate: 0.004,
        start_deadline: None,
        probe_delay: Duration::from_secs(2),
        cpu_fallback: true,
        trim_arena_tops: true,
        cancel_rate: 0.03,
        bad_rate: 0.03,
        threads: 8,
        kinds: Kind::ALL.to_vec(),
        sectors: 6,
        synthetic_logs: vec![16, 18, 20],
        witnesses: 4,
        misdeliver: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--misdeliver" {
            a.misdeliver = true;
            continue;
        }
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        let num =
            |v: &str| -> Result<u64, String> { v.parse().map_err(|e| format!("{flag} {v}: {e}")) };
        let rate = |v: &str| -> Result<f64, String> {
            match v.parse::<f64>() {
                Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
                _ => Err(format!("{flag} {v}: a fraction from 0 to 1")),
            }
        };
        let secs = |v: &str| -> Result<Duration, String> {
            v.parse::<f64>()
                .ok()
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .ok_or(format!("{flag} {v}: seconds"))
        };
        match flag.as_str() {
            "--jobs" => a.jobs = num(&value)?,
            "--hang-rate" => a.hang_rate = rate(&value)?,
            "--start-deadline" => a.start_deadline = Some(secs(&value)?),
            "--probe-delay" => a.probe_delay = secs(&value)?,
            "--cpu-fallback" => {
                a.cpu_fallback = match value.as_str() {
                    "on" => true,
                    "off" => false,
                    v => return Err(format!("--cpu-fallback {v}: on or off")),
                }
            }
            "--trim-arena-tops" => {
                a.trim_arena_tops = match value.as_str() {
                    "on" => true,
                    "off" => false,
                    v => return Err(format!("--trim-arena-tops {v}: on or off")),
                }
            }
            "--seed" => a.seed = num(&value)?,
            "--params" => a.params = PathBuf::from(value),
            "--memory-budget" => a.memory_budget = Some(num(&value)?),
            "--fault-rate" => a.fault_rate = rate(&value)?,
            "--cancel-rate" => a.cancel_rate = rate(&value)?,
            "--bad-rate" => a.bad_rate = rate(&value)?,
            "--threads" => a.threads = num(&value)? as usize,
            "--sectors" => a.sectors = num(&value)? as usize,
            "--witnesses" => a.witnesses = num(&value)? as usize,
            "--kinds" => {
                a.kinds = value
                    .split(',')
                    .map(|k| {
                        Kind::ALL.into_iter().find(|x| x.name() == k).ok_or(format!(
                            "--kinds: {k} is not one of porep, snap, window, winning, synthetic"
                        ))
                    })
                    .collect::<Result<_, _>>()?
            }
            "--synthetic-logs" => {
                a.synthetic_logs = value
                    .split(',')
                    .map(|l| match l.parse::<u32>() {
                        Ok(n) if (4..=24).contains(&n) => Ok(n),
                        _ => Err(format!("--synthetic-logs: {l} is not a log from 4 to 24")),
                    })
                    .collect::<Result<_, _>>()?
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.threads == 0 || a.witnesses == 0 {
        return Err("--threads and --witnesses must be at least 1".into());
    }
    if a.sectors == 0 && a.kinds.iter().any(|k| k.params().is_some()) {
        return Err("--sectors must be at least 1 for the Filecoin kinds".into());
    }
    if a.synthetic_logs.is_empty() && a.kinds.contains(&Kind::Synthetic) {
        return Err("--synthetic-logs: no shape for the synthetic kind".into());
    }
    Ok(a)
}

/// One synthetic shape: its circuit, its params and witnesses of it.
struct Synthetic {
    log: u32,
    circuit: SampleCircuit,
    srs: Arc<Srs>,
    pvk: PreparedVerifyingKey,
    /// Witness w is the circuit with seed `witness_seed(w)`, synthesized by the host.
    witnesses: Vec<Assignment>,
}

fn witness_seed(w: usize) -> u64 {
    1000 + w as u64
}

/// Every job's possible inputs, made once.
struct Fixtures {
    sectors: Vec<SealedSector>,
    winning: Vec<WinningPostInputs>,
    window: Vec<WindowPostInputs>,
    snap: Vec<SnapInputs>,
    synthetic: Vec<Synthetic>,
    /// Bytes the budget holds for one partition (as the engine reserves: evaluations,
    /// witness and proof of its params' shape), for each kind selected.
    partition_bytes: Vec<(String, u64)>,
    /// Each kind's evaluation domain size (its SRS's), for the CPU backend's domain cache.
    domains: Vec<usize>,
    /// Each Filecoin kind's params file, preloaded into the engine.
    params_files: Vec<PathBuf>,
}

impl Fixtures {
    /// The inputs a job of `kind` draws from.
    fn entries(&self, kind: Kind) -> usize {
        match kind {
            Kind::PoRep => self.sectors.len(),
            Kind::Winning => self.winning.len(),
            Kind::Window => self.window.len(),
            Kind::Snap => self.snap.len(),
            Kind::Synthetic => self.synthetic.len(),
        }
    }
}

fn reserved_bytes(shape: &CircuitShape) -> u64 {
    (shape.evaluation_bytes() + shape.witness_bytes() + std::mem::size_of::<Proof>()) as u64
}

fn fixtures(a: &Args, scratch: &Path, rng: &mut ChaCha8Rng) -> Result<Fixtures, String> {
    let e = |e: Error| e.to_string();
    let want = |k: Kind| a.kinds.contains(&k);
    let mut partition_bytes = Vec::new();
    let mut domains = Vec::new();
    let mut params_files = Vec::new();
    for kind in Kind::ALL.into_iter().filter(|&k| want(k)) {
        let Some(params) = kind.params() else {
            continue;
        };
        let (path, made) = ensure_test_params(params, &a.params).map_err(e)?;
        if !made.is_zero() {
            println!(
                "made the 2KiB {} test params in {:.1} s",
                kind.name(),
                made.as_secs_f64()
            );
        }
        // Only the params give a Filecoin partition's shape, which sizes the budget before
        // the engine exists; loaded once more here and dropped (2KiB PoRep: 1.1 GB).
        let srs = Srs::load(&path, PointCheck::Unchecked).map_err(e)?;
        let shape = CircuitShape {
            constraints: srs.domain_size(),
            inputs: srs.num_inputs(),
            aux: srs.num_aux(),
        };
        partition_bytes.push((kind.name().to_string(), reserved_bytes(&shape)));
        domains.push(srs.domain_size());
        if !params_files.contains(&path) {
            params_files.push(path);
        }
    }

    let filecoin = !params_files.is_empty();
    let t = Instant::now();
    let prover_id = cuzk::filecoin::prover_id_from_miner(1000);
    let sectors: Vec<SealedSector> = if filecoin {
        (1..=a.sectors as u64)
            .map(|id| {
                sector::seal_2kib(
                    &scratch.join(format!("s{id}")),
                    sector::SEAL_2KIB,
                    id,
                    prover_id,
                    a.seed.wrapping_mul(1000).wrapping_add(id),
                )
            })
            .collect::<Result<_, _>>()
            .map_err(e)?
    } else {
        Vec::new()
    };
    let mut randomness = || {
        let mut r = [0u8; 32];
        rng.fill_bytes(&mut r);
        r
    };
    // SnapDeals' bad cases use WinningPoSt vanilla proofs, so these are made for any kind.
    let winning = sectors
        .iter()
        .flat_map(|s| [(s, randomness()), (s, randomness())])
        .map(|(s, r)| sector::winning_post_inputs(s, r))
        .collect::<Result<Vec<_>, _>>()
        .map_err(e)?;
    let window = if want(Kind::Window) {
        // Three sectors at a time (two partitions at 2KiB), each set its own randomness.
        (0..sectors.len())
            .map(|i| {
                let set: Vec<&SealedSector> = (0..3.min(sectors.len()))
                    .map(|k| &sectors[(i + k) % sectors.len()])
                    .collect();
                sector::window_post_inputs(&set, randomness())
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(e)?
    } else {
        Vec::new()
    };
    let snap = if want(Kind::Snap) {
        sectors
            .iter()
            .enumerate()
            .map(|(i, s)| sector::snap_inputs(s, 77 + i as u64))
            .collect::<Result<Vec<_>, _>>()
            .map_err(e)?
    } else {
        Vec::new()
    };
    if filecoin {
        println!(
            "sealed {} 2KiB sectors and made their inputs ({} WinningPoSt, {} WindowPoSt, {} SnapDeals) in {:.1} s",
            sectors.len(),
            winning.len(),
            window.len(),
            snap.len(),
            t.elapsed().as_secs_f64()
        );
    }

    let mut synthetic = Vec::new();
    if want(Kind::Synthetic) {
        for &log in &a.synthetic_logs {
            let t = Instant::now();
            let circuit = SampleCircuit::random_filling(log);
            let srs =
                generate_srs(circuit.clone(), &ToxicWaste::from_seed(log as u64)).map_err(e)?;
            let witnesses = (0..a.witnesses)
                .into_par_iter()
                .map(|w| synthesize(circuit.with_seed(witness_seed(w))))
                .collect::<Result<Vec<_>, _>>()
                .map_err(e)?;
            let shape = witnesses[0].shape();
            println!(
                "synthetic 2^{log}: {} constraints, {} inputs, {} aux; params and {} witnesses in {:.1} s",
                shape.constraints,
                shape.inputs,
                shape.aux,
                witnesses.len(),
                t.elapsed().as_secs_f64()
            );
            partition_bytes.push((format!("synthetic 2^{log}"), reserved_bytes(&shape)));
            domains.push(srs.domain_size());
            synthetic.push(Synthetic {
                log,
                circuit,
                pvk: srs.vk.prepare(),
                srs: Arc::new(srs),
                witnesses,
            });
        }
    }
    Ok(Fixtures {
        sectors,
        winning,
        window,
        snap,
        synthetic,
        partition_bytes,
        domains,
        params_files,
    })
}

/// What job j does, drawn from its own stream of the seed's generator.
struct Plan {
    job: u64,
    kind: Kind,
    /// Which input of the kind's pool (synthetic: which shape).
    entry: usize,
    /// Synthetic: each partition's witness.
    witnesses: Vec<usize>,
    /// Synthetic: synthesized by the host (ready partitions) rather than by the engine.
    ready: bool,
    /// Index into `kind.bad_cases()`.
    bad: Option<usize>,
    cancel_after: Option<Duration>,
}

fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    (rng.next_u64() % n as u64) as usize
}

fn unit(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn plan(a: &Args, fx: &Fixtures, job: u64) -> Plan {
    let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
    rng.set_stream(job);
    let kind = a.kinds[below(&mut rng, a.kinds.len())];
    let entry = below(&mut rng, fx.entries(kind));
    let bad = (unit(&mut rng) < a.bad_rate).then(|| below(&mut rng, kind.bad_cases().len()));
    let cancel_after = (unit(&mut rng) < a.cancel_rate).then(|| {
        let (lo, hi) = (1e-4f64.ln(), 5f64.ln());
        Duration::from_secs_f64((lo + unit(&mut rng) * (hi - lo)).exp())
    });
    let (mut witnesses, mut ready) = (Vec::new(), false);
    if kind == Kind::Synthetic {
        // The malformed assignment is a host's: only ready partitions can be malformed.
        ready = bad.is_some() || rng.next_u32() & 1 == 0;
        // A ready job reserves all its partitions at once: at most two, so that one fits
        // in half the default budget.
        let n = 1 + below(&mut rng, if ready { 2 } else { 3 });
        witnesses = (0..n).map(|_| below(&mut rng, a.witnesses)).collect();
    }
    Plan {
        job,
        kind,
        entry,
        witnesses,
        ready,
        bad,
        cancel_after,
    }
}

impl Plan {
    fn describe(&self, fx: &Fixtures) -> String {
        let mut s = format!("job {} ({} input {}", self.job, self.label(fx), self.entry);
        if self.kind == Kind::Synthetic {
            let how = if self.ready { "ready" } else { "synthesized" };
            s += &format!(", {how} witnesses {:?}", self.witnesses);
        }
        if let Some(b) = self.bad {
            s += &format!(", bad: {}", self.kind.bad_cases()[b].0);
        }
        if let Some(c) = self.cancel_after {
            s += &format!(", cancel after {:.1} ms", c.as_secs_f64() * 1e3);
        }
        s + ")"
    }

    fn label(&self, fx: &Fixtures) -> String {
        match self.kind {
            Kind::Synthetic => format!("synthetic 2^{}", fx.synthetic[self.entry].log),
            k => k.name().to_string(),
        }
    }
}

/// How a job ended, once checked.
enum Outcome {
    /// Every proof verified against the job's own inputs.
    Proved(usize),
    Cancelled,
    /// A bad input failed with its case's error kind.
    Rejected,
    /// Failed with the injected device faults named.
    DeviceFailed(String),
    /// Anything else: a check failed.
    Failed(String),
}

const OUTCOMES: [&str; 5] = ["proved", "cancelled", "rejected", "device-failed", "FAILED"];

impl Outcome {
    fn index(&self) -> usize {
        match self {
            Outcome::Proved(_) => 0,
            Outcome::Cancelled => 1,
            Outcome::Rejected => 2,
            Outcome::DeviceFailed(_) => 3,
            Outcome::Failed(_) => 4,
        }
    }
}

/// Faults the start hook armed (a later start phase on the device takes each one, as
/// `FaultInjector::taken` records; one still armed when the run ends is never taken).
#[derive(Default)]
struct Injected {
    fails: AtomicU64,
    corrupts: AtomicU64,
    hangs: AtomicU64,
}

struct Soak<'a> {
    a: &'a Args,
    fx: &'a Fixtures,
    engine: &'a Engine,
    injected: &'a Injected,
}

impl Soak<'_> {
    fn options(&self) -> ProofOptions {
        ProofOptions {
            params_dir: Some(self.a.params.clone()),
            ..ProofOptions::default()
        }
    }

    fn submit_synthetic(&self, p: &Plan, malformed: bool) -> cuzk::Result<Job> {
        let sy = &self.fx.synthetic[p.entry];
        let input = if p.ready {
            let mut parts: Vec<Assignment> = p
                .witnesses
                .iter()
                .map(|&w| sy.witnesses[w].clone())
                .collect();
            if malformed {
                parts[0].evaluations.c.pop();
            }
            JobInput::Ready(parts)
        } else {
            JobInput::Synthesize(
                p.witnesses
                    .iter()
                    .map(|&w| PartitionCircuit::new(sy.circuit.with_seed(witness_seed(w))))
                    .collect(),
            )
        };
        // Verified in the engine, as the Filecoin kinds are: a corrupt result is retried.
        self.engine
            .submit(JobRequest::new(sy.srs.clone(), input, JobKind::Other))
    }

    fn submit(&self, p: &Plan) -> cuzk::Result<Job> {
        let (fx, engine, o) = (self.fx, self.engine, self.options());
        match p.kind {
            Kind::PoRep => {
                let s = &fx.sectors[p.entry];
                prove_porep_c2(engine, &s.c1_output, s.sector_id, s.prover_id, o)
            }
            Kind::Winning => {
                let w = &fx.winning[p.entry];
                prove_winning_post(
                    engine,
                    w.registered_post_proof,
                    &w.randomness,
                    w.prover_id,
                    &w.vanilla_proofs,
                    o,
                )
            }
            Kind::Window => {
                let w = &fx.window[p.entry];
                prove_window_post(
                    engine,
                    w.registered_post_proof,
                    &w.randomness,
                    w.prover_id,
                    &w.vanilla_proofs,
                    o,
                )
            }
            Kind::Snap => {
                let s = &fx.snap[p.entry];
                prove_snap(
                    engine,
                    s.registered_update_proof,
                    &s.vanilla_proofs,
                    commitments(s),
                    o,
                )
            }
            Kind::Synthetic => self.submit_synthetic(p, false),
        }
    }

    /// Submits bad case `case` of the plan's kind, built from the plan's input.
    fn submit_bad(&self, p: &Plan, case: usize) -> cuzk::Result<Job> {
        let (fx, engine, o) = (self.fx, self.engine, self.options());
        match p.kind {
            Kind::PoRep => {
                let s = &fx.sectors[p.entry];
                let c1 = &s.c1_output;
                let text;
                let (bytes, number): (&[u8], u64) = match case {
                    0 => (&c1[..c1.len() / 2], s.sector_id),
                    1 => (b"{\"registered_proof\": 7, \"garbage\": [", s.sector_id),
                    2 => {
                        text = String::from_utf8_lossy(c1).replacen(
                            "\"StackedDrg2KiBV1_1\"",
                            "\"StackedDrg8MiBV1_1\"",
                            1,
                        );
                        (text.as_bytes(), s.sector_id)
                    }
                    _ => (c1, s.sector_id + 1000),
                };
                prove_porep_c2(engine, bytes, number, s.prover_id, o)
            }
            Kind::Winning => {
                let w = &fx.winning[p.entry];
                let mut proof = w.registered_post_proof;
                let mut randomness = w.randomness.to_vec();
                let mut vanilla = w.vanilla_proofs.clone();
                match case {
                    0 => randomness.clear(),
                    1 => vanilla[0].truncate(40),
                    2 => vanilla.push(vanilla[0].clone()),
                    3 => proof = sector::WINDOW_POST_2KIB,
                    // Another field element: the vanilla proofs' challenges no longer match.
                    _ => randomness[0] ^= 1,
                }
                prove_winning_post(engine, proof, &randomness, w.prover_id, &vanilla, o)
            }
            Kind::Window => {
                let w = &fx.window[p.entry];
                let mut proof = w.registered_post_proof;
                let mut randomness = w.randomness.to_vec();
                let mut vanilla = w.vanilla_proofs.clone();
                match case {
                    0 => proof = sector::WINNING_POST_2KIB,
                    1 => randomness.truncate(31),
                    _ => vanilla[0].truncate(40),
                }
                prove_window_post(engine, proof, &randomness, w.prover_id, &vanilla, o)
            }
            Kind::Snap => {
                let s = &fx.snap[p.entry];
                let vanilla: &[Vec<u8>] = match case {
                    0 => &[],
                    _ => &fx.winning[p.entry % fx.winning.len()].vanilla_proofs,
                };
                prove_snap(
                    engine,
                    s.registered_update_proof,
                    vanilla,
                    commitments(s),
                    o,
                )
            }
            Kind::Synthetic => self.submit_synthetic(p, true),
        }
    }

    /// Whether `proofs` are right for the plan's own inputs (`--misdeliver`: for the next
    /// entry's, and the next witness's).
    fn check_proofs(&self, p: &Plan, proofs: &[Proof]) -> Result<(), String> {
        let fx = self.fx;
        let bytes = proof_bytes(proofs);
        let other = |i: usize, n: usize| if self.a.misdeliver { (i + 1) % n } else { i };
        let entry = other(p.entry, fx.entries(p.kind));
        let ok = match p.kind {
            Kind::PoRep => sector::verify_seal(&fx.sectors[entry], &bytes),
            Kind::Winning => sector::verify_winning_post(&fx.winning[entry], &bytes),
            Kind::Window => sector::verify_window_post(&fx.window[entry], &bytes),
            Kind::Snap => sector::verify_snap(&fx.snap[entry], &bytes),
            Kind::Synthetic => {
                let sy = &fx.synthetic[p.entry];
                if proofs.len() != p.witnesses.len() {
                    return Err(format!(
                        "{} proofs for {} partitions",
                        proofs.len(),
                        p.witnesses.len()
                    ));
                }
                proofs
                    .iter()
                    .zip(&p.witnesses)
                    .try_fold(true, |all, (proof, &w)| {
                        let w = other(w, sy.witnesses.len());
                        let inputs = &sy.witnesses[w].witness.input[1..];
                        Ok(all && verify_proof(&sy.pvk, proof, inputs)?)
                    })
            }
        };
        match ok {
            Ok(true) => Ok(()),
            Ok(false) if self.a.misdeliver => {
                Err("its proof does not verify against the next entry's inputs".into())
            }
            Ok(false) => Err("its proof does not verify against its own inputs".into()),
            Err(e) => Err(format!("verifying: {e}")),
        }
    }

    /// An error's outcome: the bad case's expected kind, or injected device faults named.
    fn judge_error(&self, p: &Plan, e: &Error) -> Outcome {
        if let Some(b) = p.bad {
            let (name, want) = p.kind.bad_cases()[b];
            return if e.kind() == want {
                Outcome::Rejected
            } else {
                Outcome::Failed(format!(
                    "bad input ({name}) must fail with {want:?}, got {e}"
                ))
            };
        }
        let m = e.message();
        let hung = self.injected.hangs.load(Relaxed) > 0
            && m.contains("hung")
            && self.engine.devices().iter().any(|d| m.contains(&d.name));
        let named = m.contains("injected fault")
            || hung
            || (e.kind() == ErrorKind::VerificationFailed
                && self.injected.corrupts.load(Relaxed) > 0);
        match e.kind() {
            ErrorKind::Gpu | ErrorKind::VerificationFailed if named => {
                Outcome::DeviceFailed(e.to_string())
            }
            k => Outcome::Failed(format!("failed with {k:?}: {e}")),
        }
    }

    /// Submits, cancels where planned, waits and checks one job. Also says whether a
    /// planned cancel came only after the job had ended, and the job's sequence number if
    /// it was admitted.
    fn run(&self, p: &Plan) -> (Outcome, bool, Option<u64>) {
        let submitted = match p.bad {
            Some(b) => self.submit_bad(p, b),
            None => self.submit(p),
        };
        let job = match submitted {
            Ok(job) => job,
            Err(e) => return (self.judge_error(p, &e), false, None),
        };
        let seq = job.seq();
        let mut cancelled = false;
        let mut late = false;
        if let Some(after) = p.cancel_after {
            match job.finish(after) {
                Err(e) if e.kind() == ErrorKind::Timeout => {
                    cancelled = job.cancel();
                    late = !cancelled;
                }
                // It ended first: judged below as it ended.
                _ => late = true,
            }
        }
        let result = job.finish(PATIENCE);
        let outcome = match (result, cancelled) {
            (Err(e), true) if e.kind() == ErrorKind::Cancelled => Outcome::Cancelled,
            (Err(e), true) => Outcome::Failed(format!("cancelled, yet ended with {e}")),
            (Ok(_), true) => Outcome::Failed("cancelled, yet returned proofs".into()),
            (Ok(_), false) if p.bad.is_some() => Outcome::Failed("a bad input was proved".into()),
            (Ok(proofs), false) => match self.check_proofs(p, &proofs) {
                Ok(()) => Outcome::Proved(proofs.len()),
                Err(e) => Outcome::Failed(e),
            },
            (Err(e), false) => self.judge_error(p, &e),
        };
        (outcome, late, Some(seq))
    }
}

fn commitments(s: &SnapInputs) -> SnapCommitments {
    SnapCommitments {
        comm_r_old: s.comm_r_old,
        comm_r_new: s.comm_r_new,
        comm_d_new: s.comm_d_new,
    }
}

#[derive(Default)]
struct Tally {
    /// Jobs by kind label and outcome (`OUTCOMES` order).
    by_kind: BTreeMap<String, [u64; OUTCOMES.len()]>,
    proofs_verified: u64,
    cancels_late: u64,
    failures: Vec<String>,
    device_failures: Vec<String>,
    /// Each admitted job's engine sequence number: its outcome (`OUTCOMES` index), its
    /// plan and, for a device failure, the error.
    by_seq: BTreeMap<u64, (usize, String, Option<String>)>,
}

/// The process's resident set (`VmRSS`), in bytes.
fn rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

fn rss_text() -> String {
    rss().map_or("unknown (no /proc/self/status)".into(), mib)
}

/// glibc's allocator, summed over its arenas (`mallinfo2`).
#[derive(Clone, Copy)]
struct Heap {
    /// Allocated and not freed: in the arenas, and mmapped chunks.
    in_use: u64,
    /// Freed, still in the arenas (a trim gives back its whole pages).
    free: u64,
}

/// `mallinfo2`'s fields (glibc 2.33 and later).
#[repr(C)]
#[derive(Default)]
struct Mallinfo2 {
    arena: usize,
    ordblks: usize,
    smblks: usize,
    hblks: usize,
    hblkhd: usize,
    usmblks: usize,
    fsmblks: usize,
    uordblks: usize,
    fordblks: usize,
    keepcost: usize,
}

/// The allocator's figures, where the C library has `mallinfo2` (looked up at run time:
/// an older glibc, or another C library, lacks it).
fn heap() -> Option<Heap> {
    // SAFETY: dlsym with a NUL-terminated name; the symbol, when present, is glibc's
    // `struct mallinfo2 mallinfo2(void)`, which takes the arenas' locks and nothing else.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"mallinfo2".as_ptr()) };
    if f.is_null() {
        return None;
    }
    let f: extern "C" fn() -> Mallinfo2 = unsafe { std::mem::transmute(f) };
    let m = f();
    Some(Heap {
        in_use: (m.uordblks + m.hblkhd) as u64,
        free: m.fordblks as u64,
    })
}

/// Resident bytes by kind of mapping (`/proc/self/smaps`): the main heap (`[heap]`), glibc's
/// other arenas (anonymous, read-write, at a 64 MiB boundary: each arena's heap is aligned to
/// its 64 MiB reservation), thread stacks (anonymous, read-write, right above a guard page
/// mapped with no access), other anonymous mappings, and files.
fn smaps_text() -> String {
    let Ok(text) = std::fs::read_to_string("/proc/self/smaps") else {
        return "unknown (no /proc/self/smaps)".into();
    };
    let mut by: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    let mut current = "";
    // The previous mapping's end, and whether it was anonymous with no access (a guard).
    let mut guard_end = 0u64;
    for line in text.lines() {
        let mut f = line.split_whitespace();
        let first = f.next().unwrap_or("");
        if first == "Rss:" {
            let kib: u64 = f.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            by.entry(current).or_default().0 += kib << 10;
            continue;
        }
        let Some((lo, hi)) = first.split_once('-') else {
            continue;
        };
        let (Ok(lo), Ok(hi)) = (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16)) else {
            continue;
        };
        let perms = f.next().unwrap_or("");
        let path = f.nth(3).unwrap_or("");
        let anon = path.is_empty();
        current = match path {
            "" if perms.starts_with("rw") && lo % (64 << 20) == 0 => "arena heaps",
            "" if perms.starts_with("rw") && guard_end == lo => "thread stacks",
            "" => "other anonymous",
            p if p.starts_with('[') => p,
            _ => "files",
        };
        // Set after use: a fresh entry's Rss line follows.
        guard_end = if anon && perms.starts_with("---") {
            hi
        } else {
            0
        };
        by.entry(current).or_default().1 += 1;
    }
    by.iter()
        .map(|(k, (rss, n))| format!("{k} {} ({n} mappings)", mib(*rss)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The process's memory at one moment.
#[derive(Clone, Copy)]
struct Reading {
    rss: Option<u64>,
    heap: Option<Heap>,
}

fn reading() -> Reading {
    Reading {
        rss: rss(),
        heap: heap(),
    }
}

impl Reading {
    /// RSS, and the allocator's in-use and free bytes, each with its change from `base`.
    fn text(&self, base: Option<&Reading>) -> String {
        let d = |now: u64, then: Option<u64>| match then {
            Some(t) => format!(
                "{} ({:+.1} MiB)",
                mib(now),
                (now as f64 - t as f64) / (1 << 20) as f64
            ),
            None => mib(now),
        };
        let rss = match self.rss {
            Some(r) => d(r, base.and_then(|b| b.rss)),
            None => "unknown (no /proc/self/status)".into(),
        };
        match self.heap {
            Some(h) => format!(
                "{rss}; malloc in use {}, free in arenas {}",
                d(h.in_use, base.and_then(|b| b.heap.map(|h| h.in_use))),
                d(h.free, base.and_then(|b| b.heap.map(|h| h.free)))
            ),
            None => format!("{rss}; malloc figures unknown (no mallinfo2)"),
        }
    }
}

/// Each GPU's free memory (the driver's figure, every context counted), and one text for
/// the summary.
fn gpu_free(ordinals: &[u32]) -> (Vec<Option<usize>>, String) {
    let each: Vec<_> = ordinals
        .iter()
        .map(|&o| cuzk::gpu::memory_info(o as usize))
        .collect();
    let text: Vec<String> = ordinals
        .iter()
        .zip(&each)
        .map(|(o, m)| match m {
            Ok(m) => format!(
                "cuda{o} {} free of {}",
                mib(m.free as u64),
                mib(m.total as u64)
            ),
            Err(e) => format!("cuda{o} unknown ({e})"),
        })
        .collect();
    (
        each.into_iter().map(|m| m.ok().map(|m| m.free)).collect(),
        text.join(", "),
    )
}

fn run() -> Result<bool, String> {
    let a = args()?;
    let e = |e: Error| e.to_string();
    println!("# {}", a.line);
    let rss_start = rss_text();
    let scratch = std::env::temp_dir().join(format!("cuzk-soak-{}", std::process::id()));
    // filecoin-proofs reads these once, at its first use.
    std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &a.params);
    std::env::set_var("FIL_PROOFS_PARENT_CACHE", scratch.join("parents"));
    let mut rng = ChaCha8Rng::seed_from_u64(a.seed);
    let t = Instant::now();
    let fx = fixtures(&a, &scratch, &mut rng)?;
    println!("fixtures in {:.1} s", t.elapsed().as_secs_f64());
    // Before the engine: what the fixtures (and the process) hold without it.
    // The CPU backend builds each domain's tables once per process and keeps them
    // (`Domain::cached`): built here, before the baseline, since the CPU (a CPU device or
    // the fallback) may prove any of these shapes, so that the check below measures what
    // the engine itself keeps.
    for &n in &fx.domains {
        cuzk::cpu::ntt::Domain::cached(n.next_power_of_two().trailing_zeros()).map_err(e)?;
    }
    let before_engine = reading();
    let before_maps = smaps_text();

    let (largest_name, largest) = fx
        .partition_bytes
        .iter()
        .max_by_key(|(_, b)| *b)
        .cloned()
        .ok_or("no kind selected")?;
    let budget = a.memory_budget.unwrap_or(BUDGET_PARTITIONS * largest);
    let mix: Vec<String> = Kind::ALL
        .into_iter()
        .filter_map(|k| {
            let n = a.kinds.iter().filter(|&&x| x == k).count();
            (n > 0).then(|| {
                format!(
                    "{} {:.0}%",
                    k.name(),
                    100.0 * n as f64 / a.kinds.len() as f64
                )
            })
        })
        .collect();
    println!("mix: {}", mix.join(", "));
    for (name, b) in &fx.partition_bytes {
        println!("partition of {name}: {} reserved", mib(*b));
    }
    println!(
        "memory budget {} ({}, the largest partition is {largest_name}'s {})",
        mib(budget),
        match a.memory_budget {
            Some(_) => "--memory-budget".to_string(),
            None => format!("{BUDGET_PARTITIONS} of the largest partition"),
        },
        mib(largest)
    );

    let injector = FaultInjector::new();
    let injected = Arc::new(Injected::default());
    let mut config = EngineConfig {
        memory_budget: Some(budget),
        trim_arena_tops: a.trim_arena_tops,
        ..EngineConfig::default()
    };
    let devices = config.devices.len();
    let ordinals: Vec<u32> = config
        .devices
        .iter()
        .filter_map(|d| d.backend.backend().gpu_ordinal())
        .collect();
    let (free_before, gpu_before) = gpu_free(&ordinals);
    // Well above the slowest healthy start phase of these circuits (a GPU's take well under
    // a second; a 2KiB PoRep partition takes about a minute on two cores).
    let deadline = a
        .start_deadline
        .unwrap_or(Duration::from_secs(match ordinals.len() {
            0 => 300,
            _ => 10,
        }));
    config.faults = FaultPolicy {
        start_deadline: Some(deadline),
        probe_delay: a.probe_delay,
        cpu_fallback: a.cpu_fallback,
        ..FaultPolicy::default()
    };
    // Per device, a hang armed and not yet released: one at a time, so that a release
    // lets exactly the start phase that hung go on.
    let hang_armed: Arc<Vec<AtomicBool>> =
        Arc::new((0..devices).map(|_| AtomicBool::new(false)).collect());
    // Set once every job is done: the hook arms nothing more.
    let arming_over = Arc::new(AtomicBool::new(false));
    let hook: PartitionHook = {
        let (inj, count) = (injector.clone(), injected.clone());
        let (armed, over) = (hang_armed.clone(), arming_over.clone());
        let (fault_rate, hang_rate) = (a.fault_rate, a.hang_rate);
        let rng = Mutex::new(ChaCha8Rng::seed_from_u64(a.seed ^ 0xfa17_fa17));
        // The hook does not know its device: it picks one, whose next start phase faults.
        Arc::new(move |_, _| {
            let mut rng = rng.lock().unwrap_or_else(|p| p.into_inner());
            if over.load(Relaxed) {
                return;
            }
            if unit(&mut rng) < hang_rate {
                let device = below(&mut rng, devices);
                if !armed[device].swap(true, Relaxed) {
                    inj.hang_starts(device, 1);
                    count.hangs.fetch_add(1, Relaxed);
                }
            }
            if unit(&mut rng) >= fault_rate {
                return;
            }
            let device = below(&mut rng, devices);
            if rng.next_u32() & 1 == 0 {
                inj.fail_starts(device, 1);
                count.fails.fetch_add(1, Relaxed);
            } else {
                inj.corrupt_results(device, 1);
                count.corrupts.fetch_add(1, Relaxed);
            }
        })
    };
    config.hooks = Hooks {
        on_device_start: Some(hook),
        faults: Some(injector.clone()),
        ..Hooks::default()
    };
    let engine = Engine::new(config).map_err(e)?;
    let names: Vec<_> = engine.devices().iter().map(|d| d.name.clone()).collect();
    println!(
        "engine on {} ({} synthesis threads); {} jobs from {} submitter threads, fault rate {}, hang rate {}, cancel rate {}, bad rate {}",
        names.join(", "),
        engine.stats().synthesis_threads,
        a.jobs,
        a.threads,
        a.fault_rate,
        a.hang_rate,
        a.cancel_rate,
        a.bad_rate
    );
    println!(
        "start deadline {:.1} s, probe delay {:.1} s, CPU fallback {}",
        deadline.as_secs_f64(),
        a.probe_delay.as_secs_f64(),
        if a.cpu_fallback { "on" } else { "off" }
    );
    let t = Instant::now();
    for path in &fx.params_files {
        engine
            .preload_params(path, PointCheck::Unchecked)
            .map_err(e)?;
    }
    println!("params preloaded in {:.1} s", t.elapsed().as_secs_f64());

    let soak = Soak {
        a: &a,
        fx: &fx,
        engine: &engine,
        injected: &injected,
    };
    let tally = Mutex::new(Tally::default());
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let t = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..a.threads {
            s.spawn(|| loop {
                let j = next.fetch_add(1, Relaxed);
                if j >= a.jobs {
                    break;
                }
                let p = plan(&a, &fx, j);
                let (outcome, late, seq) = soak.run(&p);
                let mut t = tally.lock().unwrap_or_else(|p| p.into_inner());
                t.by_kind.entry(p.label(&fx)).or_default()[outcome.index()] += 1;
                t.cancels_late += late as u64;
                if let Some(seq) = seq {
                    let error = match &outcome {
                        Outcome::DeviceFailed(m) => Some(m.clone()),
                        _ => None,
                    };
                    t.by_seq
                        .insert(seq, (outcome.index(), p.describe(&fx), error));
                }
                match outcome {
                    Outcome::Proved(n) => t.proofs_verified += n as u64,
                    Outcome::DeviceFailed(m) => {
                        t.device_failures.push(format!("{}: {m}", p.describe(&fx)))
                    }
                    Outcome::Failed(m) => {
                        let m = format!("{}: {m}", p.describe(&fx));
                        eprintln!("soak: FAILED {m}");
                        t.failures.push(m);
                    }
                    Outcome::Cancelled | Outcome::Rejected => {}
                }
                drop(t);
                done.fetch_add(1, Relaxed);
            });
        }
        // Releases each hang 0.1 to 2 s after the engine counted it (its start phase is
        // then past the deadline); once every job is done, disarms what is still armed and
        // releases what still hangs, each once the engine has counted it.
        s.spawn(|| {
            let mut released = vec![0usize; devices];
            let mut release_at: Vec<Option<Instant>> = vec![None; devices];
            let mut rng = ChaCha8Rng::seed_from_u64(a.seed ^ 0x4a46_4a46);
            loop {
                let finished = done.load(Relaxed) >= a.jobs;
                if finished && !arming_over.swap(true, Relaxed) {
                    (0..devices).for_each(|k| injector.disarm(k));
                }
                let taken = injector.taken();
                let st = engine.stats();
                let mut hanging = false;
                for k in 0..devices {
                    let hung = taken
                        .iter()
                        .filter(|i| i.device == k && i.fault == InjectedFault::Hang)
                        .count();
                    if hung == released[k] {
                        continue;
                    }
                    hanging = true;
                    if st.devices()[k].hangs < hung as u64 {
                        continue;
                    }
                    let at = *release_at[k].get_or_insert_with(|| {
                        Instant::now() + Duration::from_secs_f64(0.1 + 1.9 * unit(&mut rng))
                    });
                    if Instant::now() >= at {
                        injector.release(k);
                        released[k] = hung;
                        release_at[k] = None;
                        hang_armed[k].store(false, Relaxed);
                    }
                }
                if finished && !hanging {
                    break;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        // Progress every 30 s, for long runs.
        s.spawn(|| {
            let mut last = Instant::now();
            while done.load(Relaxed) < a.jobs {
                std::thread::sleep(Duration::from_millis(200));
                if last.elapsed() >= Duration::from_secs(30) {
                    last = Instant::now();
                    let st = engine.stats();
                    println!(
                        "progress {:.0} s: {}/{} jobs done, {} partitions proved, {} retries, budget {} reserved (peak {})",
                        t.elapsed().as_secs_f64(),
                        done.load(Relaxed),
                        a.jobs,
                        st.partitions_proved,
                        st.partition_retries,
                        mib(st.memory_reserved_bytes),
                        mib(st.memory_peak_bytes)
                    );
                }
            }
        });
    });
    let wall = t.elapsed();
    // A released call still finishes its start phase (its result is discarded): the engine
    // is dropped once none is left, so that every reservation has come back.
    let stuck_wait = Instant::now();
    while engine.stuck_calls() > 0 && stuck_wait.elapsed() < PATIENCE {
        std::thread::sleep(Duration::from_millis(20));
    }
    let stuck = engine.stuck_calls();
    let with_engine = reading();
    let st = engine.shutdown();
    // Freed, but maybe still in glibc's arenas: then a trim gives it back to the OS.
    let dropped = reading();
    cuzk::engine::malloc_trim();
    let trimmed = reading();
    let trimmed_maps = smaps_text();
    let (free_after, gpu_after) = gpu_free(&ordinals);
    let _ = std::fs::remove_dir_all(&scratch);

    let mut t = tally.into_inner().unwrap_or_else(|p| p.into_inner());
    let counted = |i: usize| -> u64 { t.by_kind.values().map(|n| n[i]).sum() };
    let (proved, cancelled) = (counted(0), counted(1));
    // The engine's own accounting after shutdown.
    let mut failures = std::mem::take(&mut t.failures);
    let mut check = |ok: bool, what: String| {
        if !ok {
            failures.push(what);
        }
    };
    check(
        st.jobs_admitted == st.jobs_finished + st.jobs_failed + st.jobs_cancelled,
        format!(
            "jobs admitted {} != finished {} + failed {} + cancelled {}",
            st.jobs_admitted, st.jobs_finished, st.jobs_failed, st.jobs_cancelled
        ),
    );
    check(
        st.partitions_admitted
            == st.partitions_proved + st.partitions_failed + st.partitions_dropped,
        format!(
            "partitions admitted {} != proved {} + failed {} + dropped {}",
            st.partitions_admitted,
            st.partitions_proved,
            st.partitions_failed,
            st.partitions_dropped
        ),
    );
    check(
        st.jobs_finished == proved,
        format!(
            "the engine finished {} jobs, {proved} came back proved",
            st.jobs_finished
        ),
    );
    check(
        st.jobs_cancelled == cancelled,
        format!(
            "the engine cancelled {} jobs, {cancelled} came back cancelled",
            st.jobs_cancelled
        ),
    );
    check(
        st.memory_reserved_bytes == 0,
        format!(
            "{} still reserved after shutdown",
            mib(st.memory_reserved_bytes)
        ),
    );
    check(
        st.memory_peak_bytes <= st.memory_budget_bytes,
        format!(
            "budget peak {} over its limit {}",
            mib(st.memory_peak_bytes),
            mib(st.memory_budget_bytes)
        ),
    );
    for (o, (before, after)) in ordinals.iter().zip(free_before.iter().zip(&free_after)) {
        if let (Some(before), Some(after)) = (before, after) {
            // The driver hands memory out in pages; a few of them may differ.
            check(
                after + (16 << 20) >= *before,
                format!(
                    "cuda{o}: {} free before the engine, {} after it was dropped",
                    mib(*before as u64),
                    mib(*after as u64)
                ),
            );
        }
    }
    // The faults: what the start phases took against what the engine counted.
    let taken = injector.taken();
    let count = |f: InjectedFault| taken.iter().filter(|i| i.fault == f).count() as u64;
    let (fails, corrupts, hangs) = (
        count(InjectedFault::Fail),
        count(InjectedFault::Corrupt),
        count(InjectedFault::Hang),
    );
    let outcome_of = |seq: u64| t.by_seq.get(&seq);
    // A corrupt result of a job that proved was verified (and caught); one of a job that
    // ended first may have been dropped unverified.
    let corrupts_verified = taken
        .iter()
        .filter(|i| i.fault == InjectedFault::Corrupt)
        .filter(|i| outcome_of(i.job).is_some_and(|o| o.0 == 0))
        .count() as u64;
    let device_faults: u64 = st.devices().iter().map(|d| d.faults).sum();
    let (least, most) = (fails + hangs + corrupts_verified, fails + hangs + corrupts);
    check(
        (least..=most).contains(&device_faults),
        format!(
            "{device_faults} device faults; the start phases took {fails} failing starts, {hangs} hangs and {corrupts} corrupt results ({corrupts_verified} of them in jobs that proved): {least} to {most}"
        ),
    );
    for (k, d) in st.devices().iter().enumerate() {
        let took = taken
            .iter()
            .filter(|i| i.device == k && i.fault == InjectedFault::Hang)
            .count() as u64;
        check(
            d.hangs == took,
            format!("{}: {} device hangs, {took} hangs taken", names[k], d.hangs),
        );
    }
    check(
        st.partition_retries <= device_faults,
        format!(
            "{} retries, {device_faults} device faults",
            st.partition_retries
        ),
    );
    check(
        a.cpu_fallback || st.cpu_fallbacks == 0,
        format!("{} CPU fallbacks with the fallback off", st.cpu_fallbacks),
    );
    check(
        stuck == 0,
        format!("{stuck} start phases still stuck at shutdown"),
    );
    // What the engine keeps once dropped: the allocator's bytes in use, against those
    // before it (RSS is not the measure: glibc's malloc_trim leaves the free memory of its
    // other arenas resident, notes/engine.md). Checked on the CPU, where it was measured.
    if let (true, Some(b), Some(a)) = (ordinals.is_empty(), before_engine.heap, trimmed.heap) {
        check(
            a.in_use <= b.in_use + ENGINE_KEEPS,
            format!(
                "the allocator has {} more in use after the engine was dropped than before it (at most {})",
                mib(a.in_use.saturating_sub(b.in_use)),
                mib(ENGINE_KEEPS)
            ),
        );
    }
    // With the arenas' tops bounded, resident memory comes back too: after the engine's
    // drop and a trim, about where it was before the engine.
    if let (true, Some(b), Some(a)) = (a.trim_arena_tops, before_engine.rss, trimmed.rss) {
        check(
            a <= b + RSS_KEPT,
            format!(
                "RSS is {} above its level before the engine once the engine was dropped and trimmed (at most {} with --trim-arena-tops on)",
                mib(a.saturating_sub(b)),
                mib(RSS_KEPT)
            ),
        );
    }
    // Every hung partition was proved elsewhere (its job proved, each proof verified
    // against the job's own inputs), or its job was cancelled, rejected for its input, or
    // failed naming the device.
    for i in taken.iter().filter(|i| i.fault == InjectedFault::Hang) {
        let what = format!(
            "job {} partition {} hung on {}",
            i.job, i.partition, names[i.device]
        );
        match outcome_of(i.job) {
            None => check(false, format!("{what}: no such job submitted")),
            Some((0..=2, _, _)) => {}
            Some((3, plan, Some(m))) => check(
                m.contains(&names[i.device]),
                format!("{what}: {plan} failed without naming it: {m}"),
            ),
            Some((_, plan, _)) => check(false, format!("{what}: {plan} failed its checks")),
        }
    }
    // With the fallback, a hang fails a job only where the budget had no room for a copy
    // to retry from, and no job waits on hung devices alone.
    if a.cpu_fallback {
        for m in &t.device_failures {
            check(
                !m.contains("every device is hung")
                    && (!m.contains("hung") || m.contains("no room in the memory budget")),
                format!("with the CPU fallback on: {m}"),
            );
        }
    }
    t.failures = failures;

    println!("== summary ({:.1} s of jobs)", wall.as_secs_f64());
    let jobs: u64 = t.by_kind.values().flatten().sum();
    println!("jobs: {jobs} in {:.1} s", wall.as_secs_f64());
    for (kind, n) in &t.by_kind {
        let each: Vec<String> = OUTCOMES
            .iter()
            .zip(n)
            .map(|(o, n)| format!("{o} {n}"))
            .collect();
        println!("jobs {kind}: {}", each.join(", "));
    }
    println!(
        "proofs verified: {} (partitions, each against its own job's inputs)",
        t.proofs_verified
    );
    println!(
        "cancels: {cancelled} cancelled, {} came after the job had ended",
        t.cancels_late
    );
    println!(
        "faults armed: {} failing start phases, {} corrupt results, {} hangs",
        injected.fails.load(Relaxed),
        injected.corrupts.load(Relaxed),
        injected.hangs.load(Relaxed)
    );
    println!(
        "faults injected (taken by a start phase): {} ({fails} failing start phases, {corrupts} corrupt results, {corrupts_verified} of them in jobs that proved, {hangs} hangs)",
        fails + corrupts + hangs
    );
    let per_device: Vec<String> = names
        .iter()
        .zip(st.devices())
        .map(|(n, d)| format!("{n} {}", d.faults))
        .collect();
    println!("device_faults: {device_faults} ({})", per_device.join(", "));
    let per_device: Vec<String> = names
        .iter()
        .zip(st.devices())
        .map(|(n, d)| format!("{n} {}", d.hangs))
        .collect();
    println!(
        "device_hangs: {} ({})",
        st.devices().iter().map(|d| d.hangs).sum::<u64>(),
        per_device.join(", ")
    );
    println!("partition_retries: {}", st.partition_retries);
    println!("cpu_fallbacks: {}", st.cpu_fallbacks);
    println!(
        "device mutex hold: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (hangs held it for the deadline)",
        st.mutex_hold.p50_ns as f64 / 1e6,
        st.mutex_hold.p99_ns as f64 / 1e6,
        st.mutex_hold.max_ns as f64 / 1e6
    );
    println!(
        "partitions_failed_after_retries: {}",
        st.partitions_failed_after_retries
    );
    for m in &t.device_failures {
        println!("  device-failed {m}");
    }
    println!(
        "memory budget peak: {} of {} ({:.1}%)",
        mib(st.memory_peak_bytes),
        mib(st.memory_budget_bytes),
        100.0 * st.memory_peak_bytes as f64 / st.memory_budget_bytes.max(1) as f64
    );
    println!(
        "admission wait: n={} p50 {:.1} ms, max {:.1} ms",
        st.admission_wait.count,
        st.admission_wait.p50_ns as f64 / 1e6,
        st.admission_wait.max_ns as f64 / 1e6
    );
    println!("rss at start: {rss_start}");
    println!(
        "memory before the engine (fixtures built): {}",
        before_engine.text(None)
    );
    println!(
        "memory with the engine, every job done: {}",
        with_engine.text(Some(&before_engine))
    );
    println!(
        "memory after the engine is dropped (fixtures held): {}",
        dropped.text(Some(&before_engine))
    );
    println!(
        "memory after that and malloc_trim(0): {}",
        trimmed.text(Some(&before_engine))
    );
    println!("resident after the trim, by mapping: {trimmed_maps}");
    println!("resident before the engine, by mapping: {before_maps}");
    if ordinals.is_empty() {
        println!("gpu free memory: no GPU device");
    } else {
        println!("gpu free memory before the engine: {gpu_before}");
        println!("gpu free memory after the engine is dropped: {gpu_after}");
    }
    println!("checks failed: {}", t.failures.len());
    for m in &t.failures {
        println!("  FAILED {m}");
    }
    Ok(t.failures.is_empty())
}

fn main() {
    // CUZK_LOG=cuzk::engine=warn shows each device fault.
    cuzk::fixtures::log_from_env();
    match run() {
        Ok(true) => println!("soak: PASS"),
        Ok(false) => {
            println!("soak: FAIL");
            std::process::exit(1);
        }
        Err(e) => {
            eprintln!("soak: {e}");
            std::process::exit(2);
        }
    }
}
