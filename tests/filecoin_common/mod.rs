//! Shared by the Filecoin tests: real 2KiB sectors sealed with filecoin-proofs, a test
//! parameter cache made by cuzk's fixture generator, and the bellperson oracle.
#![allow(dead_code)] // each test binary uses a different part

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use blstrs::Bls12;
use cuzk::engine::Device;
use cuzk::filecoin::{CircuitSet, ParamsFor};
use cuzk::fixtures::filecoin_params::ensure_test_params;
use cuzk::fixtures::sector::{self, SealedSector, SEAL_2KIB};
use cuzk::groth16::Randomness;
use cuzk::{Engine, EngineConfig};

pub const MINER: u64 = 1000;

/// Long enough never to be reached by a healthy run.
pub const PATIENCE: Duration = Duration::from_secs(1800);

pub struct Fixture {
    pub params_dir: PathBuf,
    /// Three sealed sectors (ids 1, 2, 3): WindowPoSt over them has two partitions.
    pub sectors: Vec<SealedSector>,
}

/// The parameter cache the tests share between runs of the suite: `CUZK_TEST_PARAMS`, or
/// `target/cuzk-test-params` (cargo clean removes it).
pub fn params_dir() -> PathBuf {
    cuzk::fixtures::filecoin_params::default_test_params_dir()
}

/// Where the tests write sectors and scratch files: `CUZK_TEST_SCRATCH`, or cargo's
/// temporary folder for integration tests (a path of the build machine, so a test binary
/// copied to the GPU machine is given the variable).
pub fn scratch_root() -> PathBuf {
    std::env::var_os("CUZK_TEST_SCRATCH")
        .map_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")), PathBuf::from)
}

/// A fresh folder `name` under the scratch root, for this process.
pub fn tempdir(name: &str) -> PathBuf {
    let d = scratch_root().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Sets filecoin-proofs' settings (read once per process, at its first use) and seals the
/// sectors, once per test binary.
pub fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let params_dir = params_dir();
        std::fs::create_dir_all(&params_dir).unwrap();
        let scratch = tempdir("filecoin-sectors");
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", &params_dir);
        std::env::set_var("FIL_PROOFS_PARENT_CACHE", scratch.join("parents"));
        let prover_id = sector::prover_id_from_miner(MINER);
        let sectors = (1..=3)
            .map(|id| {
                let dir = scratch.join(format!("s{id}"));
                std::fs::create_dir_all(&dir).unwrap();
                sector::seal_2kib(&dir, SEAL_2KIB, id, prover_id, id).expect("seal a 2KiB sector")
            })
            .collect();
        Fixture {
            params_dir,
            sectors,
        }
    })
}

/// Makes (or finds) the params of `params` in the test cache; says how long making took.
pub fn ensure(params: ParamsFor) {
    let dir = &fixture().params_dir;
    let (path, took) = ensure_test_params(params, dir).expect("test params");
    if !took.is_zero() {
        eprintln!("made {} in {:.1} s", path.display(), took.as_secs_f64());
    }
}

/// An engine on every GPU, or one CPU device where there is none (so on the GPU machine,
/// built with `--features cuda`, these same tests prove on the GPU).
pub fn engine() -> Engine {
    Engine::new(EngineConfig {
        devices: Device::detect(),
        synthesis_threads: 2,
        ..EngineConfig::default()
    })
    .expect("engine")
}

/// Reproducible (r, s) per partition.
pub fn randomness(seed: u64, n: usize) -> Vec<Randomness> {
    cuzk::fixtures::seeded_randomness(seed, n)
}

/// bellperson 0.27's `create_proof` of every circuit of `set` with the same params and
/// (r, s): the bytes cuzk must give.
pub fn bellperson_proofs(set: CircuitSet, rs: &[Randomness]) -> Vec<u8> {
    let path = set.params.params_path(Some(&fixture().params_dir)).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let params =
        bellperson::groth16::Parameters::<Bls12>::read(std::io::BufReader::new(file), false)
            .expect("bellperson reads the params");
    let mut out = Vec::new();
    for (c, rs) in set.partitions.into_iter().zip(rs) {
        out.extend(
            c.bellperson_proof(&params, rs.r, rs.s)
                .expect("bellperson proof"),
        );
    }
    out
}
