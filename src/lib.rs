//! # cuzk
//!
//! A Groth16 proving library for Filecoin (BLS12-381), built to be linked into Go, C and C++
//! hosts through a C ABI, or used as a Rust crate. Proofs are byte-identical to bellperson's
//! for the same circuit, params, r and s.
//!
//! - [`groth16`]: params (`.params` files), assignments, the synthesizer, the prover split into
//!   a device phase ([`groth16::StartPhase`]) and a host phase ([`groth16::finish`]), proofs
//!   and verification.
//! - [`r1cs`]: synthesis from a recorded R1CS (record a circuit's matrices once, then per
//!   proof only its witness and a sparse mat-vec), the same assignments as the synthesizer's.
//! - [`cpu`]: the CPU backend (NTT, MSM).
//! - [`engine`]: the proving engine (ordered partition queue, device workers behind a timed
//!   device mutex, memory budget, finalizers, deferred trim).
//! - [`filecoin`]: the Filecoin proof kinds (PoRep C2, SnapDeals, WindowPoSt, WinningPoSt)
//!   from the inputs filecoin-ffi takes, submitted to the engine as circuits to synthesize.
//! - [`stats`]: the engine's counters and latency histograms, and their snapshot.

pub mod cpu;
pub mod engine;
pub mod error;
pub mod ffi;
pub mod filecoin;
#[cfg(feature = "test-fixtures")]
pub mod fixtures;
pub mod gpu;
pub mod groth16;
pub mod r1cs;
pub mod stats;

pub use engine::{
    AdmissionPolicy, Device, Engine, EngineConfig, Job, JobStatus, Priority, RandomnessChoice,
    TrimPolicy,
};
pub use error::{Error, ErrorKind, Result};
pub use stats::StatsSnapshot;
