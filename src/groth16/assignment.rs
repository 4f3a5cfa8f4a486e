//! What a synthesized circuit hands the prover.
//!
//! The assignment is split by lifetime: [`Evaluations`] (the A, B, C evaluations, the bulk
//! of the memory) are consumed by the start phase as soon as H is computed; [`Witness`]
//! (inputs, aux and the density bitmaps) lives until `finish` has done the B_g2 MSM.

use blstrs::Scalar;
use ff::{Field, PrimeField};

use super::density::{Density, Selection};
use super::srs::Srs;
use crate::error::{Error, ErrorKind, Result};

/// The A, B and C linear combinations evaluated at each constraint (one scalar per
/// constraint, the per-input constraints bellperson adds included).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Evaluations {
    /// A evaluations.
    pub a: Vec<Scalar>,
    /// B evaluations.
    pub b: Vec<Scalar>,
    /// C evaluations.
    pub c: Vec<Scalar>,
}

impl Evaluations {
    /// A copy made by the rayon pool's threads, each writing its own part of the new
    /// vectors (fresh pages included). The engine keeps such a copy of a partition that may
    /// be retried while a device worker stages it, so its time is a wait whenever the
    /// device has nothing else queued: 384 MB at 2^22 constraints, 12 GB for a 32GiB PoRep
    /// partition that is not recorded.
    pub fn par_clone(&self) -> Self {
        use rayon::prelude::*;
        let copy = |v: &Vec<Scalar>| {
            let mut out = Vec::with_capacity(v.len());
            v.par_iter().copied().collect_into_vec(&mut out);
            out
        };
        Evaluations {
            a: copy(&self.a),
            b: copy(&self.b),
            c: copy(&self.c),
        }
    }
}

/// The variable assignment and which variables each SRS section covers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Witness {
    /// Public inputs, the constant ONE first.
    pub input: Vec<Scalar>,
    /// Auxiliary (private) variables.
    pub aux: Vec<Scalar>,
    /// Aux variables that appear in some A (inputs always do).
    pub a_aux_density: Density,
    /// Inputs that appear in some B.
    pub b_input_density: Density,
    /// Aux variables that appear in some B.
    pub b_aux_density: Density,
}

/// One partition's synthesized circuit.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Assignment {
    /// Consumed by the start phase.
    pub evaluations: Evaluations,
    /// Kept until the proof is assembled.
    pub witness: Witness,
}

/// The sizes that decide an assignment's cost and which SRS it fits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CircuitShape {
    /// Constraints, the per-input ones included.
    pub constraints: usize,
    /// Inputs, ONE included.
    pub inputs: usize,
    /// Aux variables.
    pub aux: usize,
}

impl CircuitShape {
    /// The NTT domain size: the smallest power of two holding every constraint.
    pub fn domain_size(&self) -> usize {
        self.constraints.next_power_of_two()
    }

    /// Host bytes the evaluations take (a, b, c), freed after the start phase.
    pub fn evaluation_bytes(&self) -> usize {
        // The NTTs extend a, b and c to the domain size in place.
        3 * self.domain_size() * std::mem::size_of::<Scalar>()
    }

    /// Host bytes the witness takes, held until the proof is assembled.
    pub fn witness_bytes(&self) -> usize {
        (self.inputs + self.aux) * std::mem::size_of::<Scalar>() + (self.inputs + 2 * self.aux) / 8
    }
}

impl Witness {
    /// The scalars the `a` section pairs with: every input, then the A-dense aux values.
    pub fn a_query(&self) -> [(&[Scalar], Selection<'_>); 2] {
        [
            (&self.input, Selection::All),
            (&self.aux, Selection::Dense(&self.a_aux_density)),
        ]
    }

    /// The scalars the `b_g1` and `b_g2` sections pair with: the B-dense inputs, then the
    /// B-dense aux values.
    pub fn b_query(&self) -> [(&[Scalar], Selection<'_>); 2] {
        [
            (&self.input, Selection::Dense(&self.b_input_density)),
            (&self.aux, Selection::Dense(&self.b_aux_density)),
        ]
    }
}

impl Assignment {
    /// The assignment's sizes.
    pub fn shape(&self) -> CircuitShape {
        CircuitShape {
            constraints: self.evaluations.a.len(),
            inputs: self.witness.input.len(),
            aux: self.witness.aux.len(),
        }
    }

    /// Checks that this assignment is well formed and fits `srs`: every length and popcount
    /// the prover relies on. A mismatch here would otherwise be a wrong proof or an
    /// out-of-bounds read, so nothing proves without passing this.
    pub fn validate(&self, srs: &Srs) -> Result<()> {
        let e = &self.evaluations;
        let n = e.a.len();
        if e.b.len() != n || e.c.len() != n {
            return Err(Error::invalid_assignment(format!(
                "evaluations differ in length: a has {n}, b has {}, c has {}",
                e.b.len(),
                e.c.len()
            )));
        }
        self.witness.validate(n, srs)
    }
}

impl Witness {
    /// Checks that this witness, of a circuit of `constraints` constraints, is well formed
    /// and fits `srs` (see [`Assignment::validate`]; a witness whose evaluations a start
    /// phase computes itself is checked with its recording's row count).
    pub fn validate(&self, constraints: usize, srs: &Srs) -> Result<()> {
        let w = self;
        let n = constraints;
        if n == 0 || w.input.is_empty() {
            return Err(Error::new(
                ErrorKind::EmptyCircuit,
                "empty circuit: an assignment needs at least one constraint and the input ONE",
            ));
        }
        if w.input[0] != Scalar::ONE {
            return Err(Error::invalid_assignment(
                "input[0] must be 1 (the constant ONE variable)",
            ));
        }
        let domain = n.next_power_of_two();
        let max_log = <Scalar as PrimeField>::S;
        if domain.trailing_zeros() > max_log {
            return Err(Error::invalid_assignment(format!(
                "{n} constraints exceed the largest NTT domain 2^{max_log}"
            )));
        }
        let fits = |what: &str, got: usize, srs_has: usize, section: &str| {
            if got == srs_has {
                Ok(())
            } else {
                Err(Error::invalid_assignment(format!(
                    "{what} is {got} but the params section `{section}` holds {srs_has}"
                )))
            }
        };
        fits("the domain size less one", domain - 1, srs.h.len(), "h")?;
        fits(
            "the number of inputs",
            w.input.len(),
            srs.vk.ic.len(),
            "vk.ic",
        )?;
        fits("the number of aux variables", w.aux.len(), srs.l.len(), "l")?;
        let bits = |what: &str, d: &super::density::Density, len: usize| {
            if d.len() == len {
                Ok(())
            } else {
                Err(Error::invalid_assignment(format!(
                    "bitmap {what} has {} bits but there are {len} variables",
                    d.len()
                )))
            }
        };
        bits("a_aux_density", &w.a_aux_density, w.aux.len())?;
        bits("b_input_density", &w.b_input_density, w.input.len())?;
        bits("b_aux_density", &w.b_aux_density, w.aux.len())?;
        fits(
            "inputs plus the popcount of a_aux_density",
            w.input.len() + w.a_aux_density.count_ones(),
            srs.a.len(),
            "a",
        )?;
        fits(
            "the popcounts of b_input_density plus b_aux_density",
            w.b_input_density.count_ones() + w.b_aux_density.count_ones(),
            srs.b_g1.len(),
            "b_g1",
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn par_clone_is_an_equal_copy() {
        // Lengths that split unevenly over the pool's threads, and an empty vector.
        let v = |n: u64, k: u64| (0..n).map(|i| Scalar::from(i * k + 1)).collect::<Vec<_>>();
        let e = Evaluations {
            a: v(100_003, 3),
            b: v(0, 5),
            c: v(4097, 7),
        };
        let copy = e.par_clone();
        assert_eq!(copy, e);
        assert_eq!(copy.a.len(), 100_003);
        assert_ne!(copy.a.as_ptr(), e.a.as_ptr());
    }
}
