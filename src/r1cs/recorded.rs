//! A circuit's recorded R1CS: what every proof of the circuit shares.

use bellpepper_core::Circuit;
use blstrs::Scalar;

use super::matrix::{Coefficients, SparseMatrix, FIRST_TABLE_CODE, MINUS_ONE, PLUS_ONE};
use super::witness::{witness, WitnessValues};
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{Assignment, CircuitShape, Density};

/// A matrix column with this bit set is input `column & !INPUT_COLUMN`; otherwise it is aux
/// variable `column`. Two ranges rather than inputs-then-aux because a circuit may allocate
/// inputs after aux variables, so the number of inputs is known only at the end.
pub const INPUT_COLUMN: u32 = 1 << 31;

/// The A, B and C matrices of one circuit shape (bellperson's per-input constraints
/// included), its counts and the density bitmaps every assignment of it carries (they
/// depend on the structure only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedCircuit {
    /// Which recording this is (a device keeps the matrices resident under it).
    pub(crate) id: RecordingId,
    pub(crate) a: SparseMatrix,
    pub(crate) b: SparseMatrix,
    pub(crate) c: SparseMatrix,
    pub(crate) coefficients: Coefficients,
    pub(crate) inputs: usize,
    pub(crate) aux: usize,
    pub(crate) a_aux_density: Density,
    pub(crate) b_input_density: Density,
    pub(crate) b_aux_density: Density,
}

/// A recording's identity: a process-wide counter, a new value for every recording (and
/// for every clone, which is a recording of its own). Equality of recordings is equality of
/// their contents, so two `RecordingId`s always compare equal.
#[derive(Debug)]
pub(crate) struct RecordingId(pub(crate) u64);

impl RecordingId {
    pub(crate) fn next() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        RecordingId(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
    }
}

impl Clone for RecordingId {
    fn clone(&self) -> Self {
        RecordingId::next()
    }
}

impl PartialEq for RecordingId {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for RecordingId {}

/// How a circuit's coefficients are distributed (the measurement behind the matrices'
/// coefficient codes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CoefficientStats {
    /// Non-zero entries in A, B and C.
    pub entries: usize,
    /// Entries whose coefficient is +1.
    pub plus_one: usize,
    /// Entries whose coefficient is −1.
    pub minus_one: usize,
    /// Entries whose coefficient is ±2^k, k ≥ 1.
    pub powers_of_two: usize,
    /// Distinct coefficients, ±1 included.
    pub distinct: usize,
    /// Distinct coefficients that are ±2^k, k ≥ 1.
    pub distinct_powers_of_two: usize,
}

impl RecordedCircuit {
    /// The circuit's sizes.
    pub fn shape(&self) -> CircuitShape {
        CircuitShape {
            constraints: self.a.rows(),
            inputs: self.inputs,
            aux: self.aux,
        }
    }

    /// A, B and C.
    pub fn matrices(&self) -> [&SparseMatrix; 3] {
        [&self.a, &self.b, &self.c]
    }

    /// The coefficient table the matrices' codes index.
    pub fn coefficients(&self) -> &Coefficients {
        &self.coefficients
    }

    /// The density bitmaps every assignment of this shape carries: a_aux, b_input, b_aux.
    pub fn densities(&self) -> [&Density; 3] {
        [
            &self.a_aux_density,
            &self.b_input_density,
            &self.b_aux_density,
        ]
    }

    /// Non-zero entries of A, B and C.
    pub fn nnz(&self) -> [usize; 3] {
        [self.a.nnz(), self.b.nnz(), self.c.nnz()]
    }

    /// Host bytes the recording takes (matrices, coefficient table, bitmaps).
    pub fn bytes(&self) -> usize {
        let bits = self.a_aux_density.words().len()
            + self.b_input_density.words().len()
            + self.b_aux_density.words().len();
        self.a.bytes() + self.b.bytes() + self.c.bytes() + self.coefficients.bytes() + bits * 8
    }

    /// Computes only `circuit`'s witness, then a, b and c from the matrices: the same
    /// [`Assignment`] as [`synthesize`](crate::groth16::synthesize) of a circuit of this shape.
    pub fn synthesize<C: Circuit<Scalar>>(&self, circuit: C) -> Result<Assignment> {
        self.evaluate(witness(circuit)?)
    }

    /// Checks that `values` are a witness of this shape: as many inputs and aux variables
    /// as recorded (a circuit whose structure differs from the recorded one's would give
    /// wrong a, b, c, or an out-of-range read, were it not caught here).
    pub fn check(&self, values: &WitnessValues) -> Result<()> {
        self.check_lengths(values.input.len(), values.aux.len())
    }

    /// [`RecordedCircuit::check`] from the lengths alone.
    pub(crate) fn check_lengths(&self, inputs: usize, aux: usize) -> Result<()> {
        if inputs != self.inputs || aux != self.aux {
            return Err(Error::new(
                ErrorKind::Synthesis,
                format!(
                    "the witness has {inputs} inputs and {aux} aux variables but the recorded \
                     circuit has {} and {}: the circuit is not of the recorded shape",
                    self.inputs, self.aux
                ),
            ));
        }
        Ok(())
    }

    /// The coefficient distribution of A, B and C.
    pub fn coefficient_stats(&self) -> CoefficientStats {
        use ff::{Field, PrimeField};
        let table = self.coefficients.table();
        // A table entry is ±2^k when it or its negation has a single bit set.
        let single_bit = |k: &Scalar| {
            let bits = |s: &Scalar| -> u32 { s.to_repr().iter().map(|b| b.count_ones()).sum() };
            bits(k) == 1 || bits(&-*k) == 1
        };
        let power: Vec<bool> = table.iter().map(single_bit).collect();
        let mut used = vec![false; table.len() + FIRST_TABLE_CODE as usize];
        let mut s = CoefficientStats::default();
        for m in [&self.a, &self.b, &self.c] {
            for &code in m.codes() {
                s.entries += 1;
                used[code as usize] = true;
                match code {
                    PLUS_ONE => s.plus_one += 1,
                    MINUS_ONE => s.minus_one += 1,
                    c if power[(c - FIRST_TABLE_CODE) as usize] => s.powers_of_two += 1,
                    _ => {}
                }
            }
        }
        s.distinct = used.iter().filter(|&&u| u).count();
        s.distinct_powers_of_two = power
            .iter()
            .zip(&used[FIRST_TABLE_CODE as usize..])
            .filter(|(&p, &u)| p && u)
            .count();
        debug_assert!(table.iter().all(|k| !bool::from(k.is_zero())));
        s
    }
}
