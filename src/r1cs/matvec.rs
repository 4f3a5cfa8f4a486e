//! The mat-vec, per proof on the CPU: a = A·w, b = B·w, c = C·w, parallel over rows.

use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::matrix::{Code, SparseMatrix, FIRST_TABLE_CODE, MINUS_ONE, PLUS_ONE};
use super::recorded::{RecordedCircuit, INPUT_COLUMN};
use super::witness::WitnessValues;
use crate::error::Result;
use crate::groth16::{Assignment, Evaluations, Witness};

/// Rows per rayon task: a row is a handful of entries, so a task of a few thousand rows
/// amortizes the scheduling.
const MIN_ROWS_PER_TASK: usize = 4096;

impl RecordedCircuit {
    /// The assignment of the witness `values`: a, b and c from the matrices, the bitmaps
    /// from the recording. Fails when `values` are not of the recorded shape.
    pub fn evaluate(&self, values: WitnessValues) -> Result<Assignment> {
        self.check(&values)?;
        let evaluations = self.products(&values.input, &values.aux);
        Ok(Assignment {
            evaluations,
            witness: self.witness_of(values),
        })
    }

    /// `values` with this shape's density bitmaps: the witness a start phase needs when it
    /// computes a, b and c itself ([`crate::groth16::DeferredEvaluations`]). Fails when
    /// `values` are not of the recorded shape.
    pub fn witness_only(&self, values: WitnessValues) -> Result<Witness> {
        self.check(&values)?;
        Ok(self.witness_of(values))
    }

    fn witness_of(&self, values: WitnessValues) -> Witness {
        let WitnessValues { input, aux } = values;
        Witness {
            input,
            aux,
            a_aux_density: self.a_aux_density.clone(),
            b_input_density: self.b_input_density.clone(),
            b_aux_density: self.b_aux_density.clone(),
        }
    }

    /// a = A·w, b = B·w, c = C·w for a witness of the recorded shape (checked by the caller).
    pub(crate) fn products(&self, input: &[Scalar], aux: &[Scalar]) -> Evaluations {
        let table = self.coefficients.table();
        let product = |m: &SparseMatrix| -> Vec<Scalar> {
            (0..m.rows())
                .into_par_iter()
                .with_min_len(MIN_ROWS_PER_TASK)
                .map(|r| {
                    let (cols, codes) = m.row(r);
                    row_value(cols, codes, table, input, aux)
                })
                .collect()
        };
        Evaluations {
            a: product(&self.a),
            b: product(&self.b),
            c: product(&self.c),
        }
    }
}

/// One row's value. Most coefficients are ±1 (an addition) and most Filecoin witness values
/// are 0 or 1, so a table coefficient is multiplied only when the value is neither.
#[inline]
fn row_value(
    cols: &[u32],
    codes: &[Code],
    table: &[Scalar],
    input: &[Scalar],
    aux: &[Scalar],
) -> Scalar {
    let mut acc = Scalar::ZERO;
    for (&col, &code) in cols.iter().zip(codes) {
        let v = if col & INPUT_COLUMN != 0 {
            &input[(col & !INPUT_COLUMN) as usize]
        } else {
            &aux[col as usize]
        };
        match code {
            PLUS_ONE => acc += v,
            MINUS_ONE => acc -= v,
            c => {
                let k = &table[(c - FIRST_TABLE_CODE) as usize];
                if *v == Scalar::ONE {
                    acc += k;
                } else if !bool::from(v.is_zero()) {
                    acc += *v * k;
                }
            }
        }
    }
    acc
}
