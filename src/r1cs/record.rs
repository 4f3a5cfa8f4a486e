//! Recording, once per circuit shape: runs a circuit against a constraint system whose
//! `enforce` appends the A, B and C rows to sparse matrices (and which keeps the values it
//! is given, so the proof that records also has its witness).

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;

use super::matrix::{Code, Coefficients, SparseMatrix, FIRST_TABLE_CODE, MINUS_ONE, PLUS_ONE};
use super::recorded::{RecordedCircuit, RecordingId, INPUT_COLUMN};
use super::witness::WitnessValues;
use crate::error::{Error, Result};
use crate::groth16::Density;

/// Records `circuit`'s R1CS exactly as [`synthesize`](crate::groth16::synthesize) would
/// evaluate it (ONE first, bellperson's `input_i · 0 = 0` constraints appended) and returns
/// it with the witness this run assigned.
pub fn record<C: Circuit<Scalar>>(circuit: C) -> Result<(RecordedCircuit, WitnessValues)> {
    let mut cs = Recorder::empty();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    if let Some(e) = cs.error.take() {
        return Err(e);
    }
    for i in 0..cs.input.len() {
        cs.a.push_entry(input_column(i)?, super::matrix::PLUS_ONE);
        cs.a.end_row()?;
        cs.b.end_row()?;
        cs.c.end_row()?;
    }
    let Recorder {
        mut a,
        mut b,
        mut c,
        mut coefficients,
        input,
        aux,
        a_aux_density,
        b_input_density,
        b_aux_density,
        error: _,
    } = cs;
    for m in [&mut a, &mut b, &mut c] {
        m.shrink_to_fit();
    }
    coefficients.freeze();
    let recorded = RecordedCircuit {
        id: RecordingId::next(),
        a,
        b,
        c,
        coefficients,
        inputs: input.len(),
        aux: aux.len(),
        a_aux_density,
        b_input_density,
        b_aux_density,
    };
    Ok((recorded, WitnessValues { input, aux }))
}

fn input_column(i: usize) -> Result<u32> {
    u32::try_from(i)
        .ok()
        .filter(|&c| c < INPUT_COLUMN)
        .map(|c| c | INPUT_COLUMN)
        .ok_or_else(|| Error::internal(format!("input {i} is past the recordable 2^31")))
}

fn aux_column(i: usize) -> Result<u32> {
    u32::try_from(i)
        .ok()
        .filter(|&c| c < INPUT_COLUMN)
        .ok_or_else(|| Error::internal(format!("aux variable {i} is past the recordable 2^31")))
}

/// The recording constraint system.
struct Recorder {
    a: SparseMatrix,
    b: SparseMatrix,
    c: SparseMatrix,
    coefficients: Coefficients,
    input: Vec<Scalar>,
    aux: Vec<Scalar>,
    a_aux_density: Density,
    b_input_density: Density,
    b_aux_density: Density,
    /// `enforce` cannot fail; the first error it met (a matrix or table overflow) is
    /// returned once the circuit is done.
    error: Option<Error>,
}

impl Recorder {
    /// Appends `lc` as the next row of the matrix `which` (0, 1, 2 for A, B, C), marking in
    /// the densities each variable with a non-zero coefficient, as `synthesize` marks them.
    fn push_row(&mut self, which: usize, lc: &LinearCombination<Scalar>) -> Result<()> {
        let (m, input_density, aux_density) = match which {
            0 => (&mut self.a, None, Some(&mut self.a_aux_density)),
            1 => (
                &mut self.b,
                Some(&mut self.b_input_density),
                Some(&mut self.b_aux_density),
            ),
            _ => (&mut self.c, None, None),
        };
        let k = &mut self.coefficients;
        let mut input_density = input_density;
        for (&i, coeff) in lc.iter_inputs() {
            // A zero coefficient contributes nothing and must not mark the variable dense.
            if bool::from(coeff.is_zero()) {
                continue;
            }
            m.push_entry(input_column(i)?, k.code(coeff)?);
            if let Some(d) = input_density.as_deref_mut() {
                d.set(i);
            }
        }
        let mut aux_density = aux_density;
        for (&i, coeff) in lc.iter_aux() {
            if bool::from(coeff.is_zero()) {
                continue;
            }
            m.push_entry(aux_column(i)?, k.code(coeff)?);
            if let Some(d) = aux_density.as_deref_mut() {
                d.set(i);
            }
        }
        m.end_row()
    }

    fn empty() -> Self {
        Recorder {
            a: SparseMatrix::new(),
            b: SparseMatrix::new(),
            c: SparseMatrix::new(),
            coefficients: Coefficients::default(),
            input: Vec::new(),
            aux: Vec::new(),
            a_aux_density: Density::new(0),
            b_input_density: Density::new(0),
            b_aux_density: Density::new(0),
            error: None,
        }
    }
}

impl ConstraintSystem<Scalar> for Recorder {
    type Root = Self;

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.aux.push(f()?);
        self.a_aux_density.push(false);
        self.b_aux_density.push(false);
        Ok(Variable::new_unchecked(Index::Aux(self.aux.len() - 1)))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.input.push(f()?);
        self.b_input_density.push(false);
        Ok(Variable::new_unchecked(Index::Input(self.input.len() - 1)))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        if self.error.is_some() {
            return;
        }
        let lcs = [
            a(LinearCombination::zero()),
            b(LinearCombination::zero()),
            c(LinearCombination::zero()),
        ];
        for (which, lc) in lcs.iter().enumerate() {
            if let Err(e) = self.push_row(which, lc) {
                self.error = Some(e);
                return;
            }
        }
    }

    /// An empty system, for a part of a circuit synthesized on its own (its first input is
    /// its own ONE, the same variable as ours).
    fn new() -> Self {
        Recorder::empty()
    }

    fn is_extensible() -> bool {
        true
    }

    /// Appends a part recorded on its own (a WindowPoSt's sector chunks, one per thread) as
    /// if it had been recorded here in sequence, which is how the synthesizer and the witness
    /// generator append theirs: its rows after ours, its aux variables after ours, its inputs
    /// after ours less its ONE (our ONE), its coefficients by value into our table.
    fn extend(&mut self, other: &Self) {
        if self.error.is_some() {
            return;
        }
        if let Some(e) = &other.error {
            self.error = Some(Error::new(e.kind(), e.to_string()));
            return;
        }
        let (inputs, aux) = (self.input.len(), self.aux.len());
        let column = |col: u32| -> Result<u32> {
            if col & INPUT_COLUMN == 0 {
                return aux_column(aux + col as usize);
            }
            match (col & !INPUT_COLUMN) as usize {
                0 => input_column(0),
                i => input_column(inputs + i - 1),
            }
        };
        // The part's table codes in ours, looked up once per distinct coefficient rather
        // than once per entry (a 32GiB WindowPoSt has ~700M entries).
        let mut codes = Vec::with_capacity(other.coefficients.len());
        for k in other.coefficients.table() {
            match self.coefficients.code(k) {
                Ok(c) => codes.push(c),
                Err(e) => {
                    self.error = Some(e);
                    return;
                }
            }
        }
        let recode = |code: Code| match code {
            PLUS_ONE | MINUS_ONE => code,
            k => codes[usize::from(k - FIRST_TABLE_CODE)],
        };
        let append = |mine: &mut SparseMatrix, theirs: &SparseMatrix| -> Result<()> {
            mine.reserve(theirs.rows(), theirs.nnz());
            for r in 0..theirs.rows() {
                let (cols, row_codes) = theirs.row(r);
                for (&col, &code) in cols.iter().zip(row_codes) {
                    mine.push_entry(column(col)?, recode(code));
                }
                mine.end_row()?;
            }
            Ok(())
        };
        let Recorder { a, b, c, .. } = self;
        let appended = append(a, &other.a)
            .and_then(|()| append(b, &other.b))
            .and_then(|()| append(c, &other.c));
        if let Err(e) = appended {
            self.error = Some(e);
            return;
        }
        self.a_aux_density.extend(&other.a_aux_density);
        self.b_aux_density.extend(&other.b_aux_density);
        if !other.b_input_density.is_empty()
            && other.b_input_density.get(0)
            && !self.b_input_density.is_empty()
        {
            self.b_input_density.set(0);
        }
        for i in 1..other.b_input_density.len() {
            self.b_input_density.push(other.b_input_density.get(i));
        }
        self.input
            .extend_from_slice(other.input.get(1..).unwrap_or(&[]));
        self.aux.extend_from_slice(&other.aux);
    }

    fn push_namespace<NR, N>(&mut self, _: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
    }

    fn pop_namespace(&mut self) {}

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }
}
