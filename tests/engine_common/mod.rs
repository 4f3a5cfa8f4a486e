//! Shared fixtures for the engine tests: a tiny circuit's params, assignments with distinct
//! public inputs, and a CPU backend that fails on demand.
#![allow(dead_code)] // each test binary uses a different part

use std::sync::Arc;
use std::time::Duration;

use blstrs::Scalar;
use cuzk::cpu::CpuStart;
use cuzk::engine::{Device, FaultPolicy, Hooks};
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::groth16::{
    synthesize, verify_proof, Assignment, Evaluations, PartialProof, PreparedVerifyingKey, Proof,
    Srs, StartPhase, StartTimings, Witness,
};
use cuzk::{AdmissionPolicy, EngineConfig, Error, ErrorKind, TrimPolicy};

/// Long enough never to be reached by a healthy run; a deadlock fails instead of hanging.
pub const PATIENCE: Duration = Duration::from_secs(120);

/// A public input the faulty backend panics on.
pub const PANIC_INPUT: u64 = 0xdead;
/// A public input the faulty backend returns an error for.
pub const ERROR_INPUT: u64 = 0xbad;
/// A public input the faulty backend rejects as the input's fault (not the device's).
pub const INVALID_INPUT: u64 = 0xbadd;

pub struct Fixture {
    pub srs: Arc<Srs>,
    pub pvk: PreparedVerifyingKey,
}

/// Params of a one-constraint circuit (x·y = z, z public): a proof costs about a millisecond.
pub fn fixture() -> Fixture {
    let srs = generate_srs(
        SampleCircuit::OneConstraint { seed: 0 },
        &ToxicWaste::from_seed(11),
    )
    .expect("params");
    let pvk = srs.vk.prepare();
    Fixture {
        srs: Arc::new(srs),
        pvk,
    }
}

/// A partition whose public input (z) is determined by `seed`, and that input.
pub fn partition(seed: u64) -> (Assignment, Vec<Scalar>) {
    let a = synthesize(SampleCircuit::OneConstraint { seed }).expect("synthesis");
    let public = a.witness.input[1..].to_vec();
    (a, public)
}

/// `n` partitions with seeds `first..first + n`.
pub fn partitions(first: u64, n: usize) -> (Vec<Assignment>, Vec<Vec<Scalar>>) {
    (first..first + n as u64).map(partition).unzip()
}

/// A partition the faulty backend fails on (`PANIC_INPUT` or `ERROR_INPUT`); it passes
/// validation, since only a value changed.
pub fn poisoned(marker: u64) -> Assignment {
    let (mut a, _) = partition(marker);
    a.witness.input[1] = Scalar::from(marker);
    a
}

/// An assignment that fails validation.
pub fn malformed(seed: u64) -> Assignment {
    let (mut a, _) = partition(seed);
    a.evaluations.c.pop();
    a
}

pub fn verifies(f: &Fixture, proof: &Proof, public: &[Scalar]) -> bool {
    verify_proof(&f.pvk, proof, public).expect("inputs fit the key")
}

/// The CPU start phase, except that it panics or fails on partitions marked by `poisoned`
/// (on every device: a fault that follows the partition, not the device).
pub struct FaultyStart;

impl StartPhase for FaultyStart {
    fn name(&self) -> &'static str {
        "faulty-cpu"
    }

    fn start(
        &self,
        srs: &Srs,
        evaluations: Evaluations,
        witness: &Witness,
    ) -> cuzk::Result<(PartialProof, StartTimings)> {
        if witness.input.get(1) == Some(&Scalar::from(PANIC_INPUT)) {
            panic!("deliberate backend panic");
        }
        if witness.input.get(1) == Some(&Scalar::from(ERROR_INPUT)) {
            return Err(Error::new(ErrorKind::Gpu, "deliberate device fault"));
        }
        if witness.input.get(1) == Some(&Scalar::from(INVALID_INPUT)) {
            return Err(Error::new(
                ErrorKind::InvalidAssignment,
                "deliberately refused input",
            ));
        }
        CpuStart.start(srs, evaluations, witness)
    }
}

pub fn faulty_devices(n: usize) -> Vec<Device> {
    (0..n)
        .map(|i| Device::new(format!("faulty{i}"), Arc::new(FaultyStart)))
        .collect()
}

/// A small engine on CPU devices that never trims unless a test asks. A device out of
/// rotation is probed again after 50 ms.
pub fn config(devices: Vec<Device>, workers_per_device: usize) -> EngineConfig {
    EngineConfig {
        devices,
        workers_per_device,
        memory_budget: Some(1 << 30),
        finalizers: 2,
        trim: TrimPolicy::Disabled,
        admission: AdmissionPolicy::Wait(PATIENCE),
        synthesis_threads: 2,
        max_ready: 0,
        defer_evaluations: None,
        recordings_dir: None,
        trim_arena_tops: false,
        faults: FaultPolicy {
            probe_delay: Duration::from_millis(50),
            ..FaultPolicy::default()
        },
        hooks: Hooks::default(),
    }
}

/// Polls `cond` until it holds or `PATIENCE` runs out; returns whether it held.
pub fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    let t = std::time::Instant::now();
    while t.elapsed() < PATIENCE {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    false
}
