//! Groth16 over BLS12-381, compatible with bellperson byte for byte: params (SRS) reading,
//! assignments and the synthesizer, the prover split into start/finish, proofs, verification.

pub mod assignment;
pub mod deferred;
pub mod density;
mod encoding;
pub mod proof;
pub mod prover;
pub mod scalars;
pub mod srs;
pub mod stages;
pub mod synthesize;
pub mod verify;
pub mod verifying_key;

pub use assignment::{Assignment, CircuitShape, Evaluations, Witness};
pub use deferred::{CsrMatrix, DeferredEvaluations};
pub use density::Density;
pub use encoding::PointCheck;
pub use proof::{Proof, PROOF_BYTES};
pub use prover::{
    finish, finish_timed, prove, prove_batch, Backend, BackendKind, PartialProof, Randomness,
    Staged, StartPhase, StartTimings,
};
pub use scalars::ScalarEncoding;
pub use srs::{Srs, SrsId};
pub use stages::START_STAGES;
pub use synthesize::{synthesize, synthesize_batch};
pub use verify::verify_proof;
pub use verifying_key::{PreparedVerifyingKey, VerifyingKey};
