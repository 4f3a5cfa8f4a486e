//! # cuzk
//!
//! A Groth16 proving library for Filecoin (BLS12-381), built to be linked into Go, C and C++
//! hosts through a C ABI, or used as a Rust crate. Proofs are byte-identical to bellperson's
//! for the same circuit, params, r and s.
//!
//! - [`groth16`]: params (`.params` files), assignments, the synthesizer, the prover split into
//!   a device phase ([`groth16::StartPhase`]) and a host phase ([`groth16::finish`]), proofs
//!   and verification.
//! - [`cpu`]: the CPU backend (NTT, MSM).

pub mod cpu;
pub mod error;
#[cfg(feature = "test-fixtures")]
pub mod fixtures;
pub mod groth16;

pub use error::{Error, ErrorKind, Result};
