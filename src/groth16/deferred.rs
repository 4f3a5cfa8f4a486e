//! Evaluations a start phase computes itself: a recorded circuit's A, B and C times the
//! witness (`crate::r1cs`). The host then holds only the witness; a GPU start phase computes
//! a, b and c on the device from the witness it uploads anyway for the MSMs, so they never
//! exist on the host nor cross the bus (on a 32GiB PoRep partition, 12 GiB per proof).
//!
//! The trait lives here, below both the recorder (`r1cs`) and the devices (`cpu`, `gpu`), so
//! that neither depends on the other.

use blstrs::Scalar;

use super::assignment::{Evaluations, Witness};
use crate::error::Result;

/// One recorded R1CS matrix in compressed sparse rows (`src/r1cs/matrix.rs`'s layout): row
/// r's entries are `row_start[r]..row_start[r + 1]`; an entry's column has the top bit set
/// for an input (`column & !(1 << 31)`), else it is an aux variable; its code is 0 for +1,
/// 1 for −1 and `2 + i` for the coefficient table's entry i.
#[derive(Clone, Copy, Debug)]
pub struct CsrMatrix<'a> {
    /// Rows + 1 offsets, the first 0, the last the number of entries.
    pub row_start: &'a [u32],
    /// Each entry's column.
    pub cols: &'a [u32],
    /// Each entry's coefficient code.
    pub codes: &'a [u16],
}

/// A circuit shape's recorded matrices: what a start phase needs to compute a, b and c of
/// any witness of that shape.
pub trait DeferredEvaluations: Send + Sync + std::fmt::Debug {
    /// Identifies the recording for as long as it lives (a device keeps its matrices
    /// resident under it); two recordings alive at once never share one.
    fn id(&self) -> u64;

    /// a, b and c on the host, one element per constraint (the CPU start phase, or a device
    /// without room for the matrices).
    fn evaluate(&self, witness: &Witness) -> Result<Evaluations>;

    /// A, B and C, and the coefficient table their codes index.
    fn matrices(&self) -> ([CsrMatrix<'_>; 3], &[Scalar]);

    /// Rows of each matrix: the constraints, the per-input ones included.
    fn rows(&self) -> usize;

    /// The witness's length: (inputs, the constant ONE included; aux variables).
    fn variables(&self) -> (usize, usize);
}
