//! A recording as a start phase's deferred evaluations: the engine hands a device the
//! witness and the recording, and the device computes a, b and c itself (a GPU on the
//! device, from the aux values it uploads for the MSMs anyway; the CPU with the mat-vec).

use blstrs::Scalar;

use super::recorded::RecordedCircuit;
use crate::error::Result;
use crate::groth16::{CsrMatrix, DeferredEvaluations, Evaluations, Witness};

impl DeferredEvaluations for RecordedCircuit {
    fn id(&self) -> u64 {
        self.id.0
    }

    fn evaluate(&self, witness: &Witness) -> Result<Evaluations> {
        // The shape check reads only the lengths; the values are not copied.
        self.check_lengths(witness.input.len(), witness.aux.len())?;
        Ok(self.products(&witness.input, &witness.aux))
    }

    fn matrices(&self) -> ([CsrMatrix<'_>; 3], &[Scalar]) {
        fn csr(m: &super::SparseMatrix) -> CsrMatrix<'_> {
            CsrMatrix {
                row_start: m.row_start(),
                cols: m.cols(),
                codes: m.codes(),
            }
        }
        (
            [csr(&self.a), csr(&self.b), csr(&self.c)],
            self.coefficients.table(),
        )
    }

    fn rows(&self) -> usize {
        self.a.rows()
    }

    fn variables(&self) -> (usize, usize) {
        (self.inputs, self.aux)
    }
}
