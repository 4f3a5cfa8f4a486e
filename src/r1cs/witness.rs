//! The witness only, per proof: a constraint system that keeps the values `alloc` and
//! `alloc_input` are given and does nothing for `enforce` (its linear combinations are never
//! built).

use std::time::Instant;

use bellpepper_core::{
    Circuit, ConstraintSystem, Index, LinearCombination, SynthesisError, Variable,
};
use blstrs::Scalar;
use ff::Field;

use super::profile::{Profiler, WitnessProfile};
use crate::error::Result;

/// A circuit's variable assignment, as a witness run (or the recording run) leaves it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WitnessValues {
    /// Public inputs, ONE first.
    pub input: Vec<Scalar>,
    /// Aux variables.
    pub aux: Vec<Scalar>,
}

/// Runs `circuit` for its witness alone.
pub fn witness<C: Circuit<Scalar>>(circuit: C) -> Result<WitnessValues> {
    let mut cs = WitnessCs::new();
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    Ok(cs.values)
}

/// As [`witness`], with every gadget computing its own values: the system does not present
/// itself as a witness generator, so no fast path is taken (cuzk's native SHA-256 path for
/// PoRep, neptune's for Poseidon). The reference the fast paths are tested against, value
/// for value.
pub fn witness_through_gadgets<C: Circuit<Scalar>>(circuit: C) -> Result<WitnessValues> {
    let mut cs = WitnessCs::new();
    cs.fast_paths = false;
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    Ok(cs.values)
}

/// As [`witness`], timing each namespace path up to `depth` levels ([`WitnessProfile`]).
/// The values are the same; the run is slower by the names it builds.
pub fn witness_profile<C: Circuit<Scalar>>(
    circuit: C,
    depth: usize,
) -> Result<(WitnessValues, WitnessProfile)> {
    let t = Instant::now();
    let mut cs = WitnessCs::new();
    cs.profiler = Some(Profiler::new(depth));
    cs.alloc_input(|| "one", || Ok(Scalar::ONE))?;
    circuit.synthesize(&mut cs)?;
    let aux = cs.values.aux.len();
    let profile = cs
        .profiler
        .take()
        .expect("set above")
        .finish(t.elapsed(), aux);
    Ok((cs.values, profile))
}

/// The witness-only constraint system. It is a bellpepper witness generator, so gadgets
/// with a witness fast path (neptune's `poseidon_hash_allocated` and sponge) take it, and
/// extensible, so circuits that synthesize parts in parallel (storage-proofs' PoSt) do.
pub struct WitnessCs {
    values: WitnessValues,
    /// Only when profiling: without it namespaces cost nothing (their names are not built).
    profiler: Option<Profiler>,
    /// Whether the system says it is a witness generator, which lets circuits take their
    /// fast witness paths (off only for [`witness_through_gadgets`]).
    fast_paths: bool,
}

impl ConstraintSystem<Scalar> for WitnessCs {
    type Root = Self;

    /// An empty system: its first input must be ONE (what [`witness`] allocates, and what
    /// a circuit that synthesizes parts on their own allocates in each part's system).
    fn new() -> Self {
        WitnessCs {
            values: WitnessValues::default(),
            profiler: None,
            fast_paths: true,
        }
    }

    fn alloc<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.values.aux.push(f()?);
        Ok(Variable::new_unchecked(Index::Aux(
            self.values.aux.len() - 1,
        )))
    }

    fn alloc_input<F, A, AR>(&mut self, _: A, f: F) -> Result<Variable, SynthesisError>
    where
        F: FnOnce() -> Result<Scalar, SynthesisError>,
        A: FnOnce() -> AR,
        AR: Into<String>,
    {
        self.values.input.push(f()?);
        Ok(Variable::new_unchecked(Index::Input(
            self.values.input.len() - 1,
        )))
    }

    fn enforce<A, AR, LA, LB, LC>(&mut self, _: A, _: LA, _: LB, _: LC)
    where
        A: FnOnce() -> AR,
        AR: Into<String>,
        LA: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LB: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
        LC: FnOnce(LinearCombination<Scalar>) -> LinearCombination<Scalar>,
    {
        // Constraints are not even counted: a witness generator's fast path (neptune's)
        // allocates without enforcing, so a count would not be the recorded one anyway.
    }

    fn push_namespace<NR, N>(&mut self, name: N)
    where
        NR: Into<String>,
        N: FnOnce() -> NR,
    {
        if let Some(p) = &mut self.profiler {
            p.push(name().into(), self.values.aux.len());
        }
    }

    fn pop_namespace(&mut self) {
        if let Some(p) = &mut self.profiler {
            p.pop(self.values.aux.len());
        }
    }

    fn get_root(&mut self) -> &mut Self::Root {
        self
    }

    fn is_extensible() -> bool {
        true
    }

    /// Appends a child system synthesized on its own; its ONE (input 0) is ours.
    fn extend(&mut self, other: &Self) {
        let (v, o) = (&mut self.values, &other.values);
        v.input.extend_from_slice(o.input.get(1..).unwrap_or(&[]));
        v.aux.extend_from_slice(&o.aux);
    }

    fn is_witness_generator(&self) -> bool {
        self.fast_paths
    }

    fn extend_inputs(&mut self, new_inputs: &[Scalar]) {
        self.values.input.extend_from_slice(new_inputs);
    }

    fn extend_aux(&mut self, new_aux: &[Scalar]) {
        self.values.aux.extend_from_slice(new_aux);
    }

    fn allocate_empty(&mut self, aux_n: usize, inputs_n: usize) -> (&mut [Scalar], &mut [Scalar]) {
        let v = &mut self.values;
        let (a0, i0) = (v.aux.len(), v.input.len());
        v.aux.resize(a0 + aux_n, Scalar::ZERO);
        v.input.resize(i0 + inputs_n, Scalar::ZERO);
        (&mut v.aux[a0..], &mut v.input[i0..])
    }

    fn allocate_empty_inputs(&mut self, n: usize) -> &mut [Scalar] {
        let i0 = self.values.input.len();
        self.values.input.resize(i0 + n, Scalar::ZERO);
        &mut self.values.input[i0..]
    }

    fn allocate_empty_aux(&mut self, n: usize) -> &mut [Scalar] {
        let a0 = self.values.aux.len();
        self.values.aux.resize(a0 + n, Scalar::ZERO);
        &mut self.values.aux[a0..]
    }

    fn inputs_slice(&self) -> &[Scalar] {
        &self.values.input
    }

    fn aux_slice(&self) -> &[Scalar] {
        &self.values.aux
    }
}
