//! Synthesis from a recorded R1CS: record each circuit shape's A, B and C once, then per
//! proof compute only the witness and three sparse matrix-vector products.
//!
//! ```text
//! first circuit of a shape ─► record (Recorder: enforce appends rows) ─► RecordedCircuit
//!                                                      │ + that run's witness
//! every circuit ─► witness (WitnessCs: enforce is a no-op) ─► WitnessValues
//!               ─► RecordedCircuit::evaluate: a = A·w, b = B·w, c = C·w ─► Assignment
//! ```
//!
//! The [`Assignment`](crate::groth16::Assignment) is exactly
//! [`synthesize`](crate::groth16::synthesize)'s (bellperson's): the same evaluations, the
//! per-input constraints included, the same witness and density bitmaps. [`R1csCache`]
//! keeps the recordings by [`ShapeKey`]; the engine synthesizes a partition that carries a
//! key through it.

mod cache;
mod deferred;
pub mod file;
mod matrix;
mod matvec;
pub mod poseidon;
mod profile;
mod record;
mod recorded;
pub mod sha256;
mod witness;

pub use cache::{R1csCache, ShapeKey};
pub use matrix::{Code, Coefficients, SparseMatrix, FIRST_TABLE_CODE, MINUS_ONE, PLUS_ONE};
pub use profile::{ProfileEntry, WitnessProfile};
pub use record::record;
pub use recorded::{CoefficientStats, RecordedCircuit, INPUT_COLUMN};
pub use witness::{witness, witness_profile, witness_through_gadgets, WitnessCs, WitnessValues};
