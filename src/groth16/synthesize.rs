//! A Rust synthesizer: runs any `bellpepper_core::Circuit` and records exactly what
//! bellperson's prover records (evaluations, assignment, density bitmaps), so that the same
//! circuit proves to the same bytes under either prover.

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;
use rayon::prelude::*;

use super::assignment::{Assignment, Evaluations, Witness};
use super::density::Density;
use crate::error::Result;

/// Synthesizes one circuit: allocates ONE, runs the circuit, then adds the constraint
/// `input_i · 0 = 0` for every input, as bellperson does (it makes every input appear in A,
/// which is why the `a` section has full input density).
pub fn synthesize<C: Circuit<Scalar>>(circuit: C) -> Result<Assignment> {
    let mut cs = ProvingAssignment::new();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    for i in 0..cs.witness.input.len() {
        cs.enforce(
            || "input",
            |lc| lc + Variable::new_unchecked(Index::Input(i)),
            |lc| lc,
            |lc| lc,
        );
    }
    Ok(Assignment {
        evaluations: cs.evaluations,
        witness: cs.witness,
    })
}

/// Synthesizes a batch of circuits (a job's partitions) in parallel.
pub fn synthesize_batch<C: Circuit<Scalar> + Send>(circuits: Vec<C>) -> Result<Vec<Assignment>> {
    circuits.into_par_iter().map(synthesize).collect()
}

/// The constraint system the synthesizer runs circuits against.
#[derive(Default)]
pub struct ProvingAssignment {
    evaluations: Evaluations,
    witness: Witness,
}

/// Evaluates `lc`, marking in the bitmaps each variable that has a non-zero coefficient.
fn eval(
    lc: &LinearCombination<Scalar>,
    input_density: Option<&mut Density>,
    aux_density: Option<&mut Density>,
    input: &[Scalar],
    aux: &[Scalar],
) -> Scalar {
    fn terms<'a>(
        it: impl Iterator<Item = (&'a usize, &'a Scalar)>,
        values: &[Scalar],
        mut density: Option<&mut Density>,
        acc: &mut Scalar,
    ) {
        for (&index, coeff) in it {
            // A zero coefficient contributes nothing and must not mark the variable dense:
            // the params have no point for a variable that appears only that way.
            if bool::from(coeff.is_zero()) {
                continue;
            }
            let v = values[index];
            *acc += if *coeff == Scalar::ONE { v } else { v * coeff };
            if let Some(d) = density.as_deref_mut() {
                d.set(index);
            }
        }
    }
    let mut acc = Scalar::ZERO;
    terms(lc.iter_inputs(), input, input_density, &mut acc);
    terms(lc.iter_aux(), aux, aux_density, &mut acc);
    acc
}

impl ConstraintSystem<Scalar> for ProvingAssignment {
    type Root = Self;

    fn new() -> Self {
        Self::default()
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.witness.aux.push(f()?);
        self.witness.a_aux_density.push(false);
        self.witness.b_aux_density.push(false);
        Ok(Variable::new_unchecked(Index::Aux(
            self.witness.aux.len() - 1,
        )))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.witness.input.push(f()?);
        self.witness.b_input_density.push(false);
        Ok(Variable::new_unchecked(Index::Input(
            self.witness.input.len() - 1,
        )))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, a: LA, b: LB, c: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        let a = a(LinearCombination::zero());
        let b = b(LinearCombination::zero());
        let c = c(LinearCombination::zero());
        let w = &mut self.witness;
        let e = &mut self.evaluations;
        e.a.push(eval(&a, None, Some(&mut w.a_aux_density), &w.input, &w.aux));
        e.b.push(eval(
            &b,
            Some(&mut w.b_input_density),
            Some(&mut w.b_aux_density),
            &w.input,
            &w.aux,
        ));
        e.c.push(eval(&c, None, None, &w.input, &w.aux));
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

    fn is_extensible() -> bool {
        true
    }

    /// Appends a child system synthesized on its own (bellpepper's parallel synthesis). The
    /// child allocated its own ONE as input 0; it is the same variable as ours, so its input
    /// density bit folds into ours and its value is dropped.
    fn extend(&mut self, other: &Self) {
        let (w, o) = (&mut self.witness, &other.witness);
        w.a_aux_density.extend(&o.a_aux_density);
        w.b_aux_density.extend(&o.b_aux_density);
        if o.b_input_density.get(0) && !w.b_input_density.is_empty() {
            w.b_input_density.set(0);
        }
        for i in 1..o.b_input_density.len() {
            w.b_input_density.push(o.b_input_density.get(i));
        }
        w.input.extend_from_slice(o.input.get(1..).unwrap_or(&[]));
        w.aux.extend_from_slice(&o.aux);
        let (e, oe) = (&mut self.evaluations, &other.evaluations);
        e.a.extend_from_slice(&oe.a);
        e.b.extend_from_slice(&oe.b);
        e.c.extend_from_slice(&oe.c);
    }
}
