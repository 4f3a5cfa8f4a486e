//! Poseidon's witness without its gadget's linear combinations: the values neptune's
//! `circuit::poseidon_hash` (the circuit Filecoin's trees and columns hash with) allocates,
//! in its order, computed as plain field arithmetic on a witness generator.
//!
//! Why: the gadget keeps every state element between two S-box layers as a `Num`, a linear
//! combination over the allocated variables, and builds each round's MDS product as new
//! combinations (a width-9 hash scales and adds 81 of them a full round); a witness needs only
//! the values. Which values it allocates follows from the gadget's structure, which is fixed:
//! the first full round adds its round keys before the S-box (the domain tag's S-box is a
//! constant: nothing allocated), so each preimage element allocates (x + k)², its square and
//! (x + k)⁵ + k'; every later S-box first allocates its input (a `Num` after the MDS product),
//! then x², x⁴ and x⁵ (+ the next key); partial rounds do so for the first element only; the
//! product after each round uses the full MDS matrix, the pre-sparse matrix or a sparse one
//! by round as the gadget does; the result is the second element, allocated last. Tests
//! compare every allocated value and the result with the gadget for every arity Filecoin uses.
//!
//! On a system that records or proves (where the constraints are needed) [`poseidon_hash`]
//! is the gadget itself, so a circuit that calls it is the same circuit everywhere.

use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar;
use ff::Field;
use neptune::poseidon::{Arity, PoseidonConstants};

/// neptune's `circuit::poseidon_hash` of `preimage` (as many elements as the arity): the
/// gadget on a system that records or proves; on a witness generator the same aux values,
/// in the same order, and the same result.
pub fn poseidon_hash<CS, A>(
    mut cs: CS,
    preimage: Vec<AllocatedNum<Scalar>>,
    constants: &PoseidonConstants<Scalar, A>,
) -> Result<AllocatedNum<Scalar>, SynthesisError>
where
    CS: ConstraintSystem<Scalar>,
    A: Arity<Scalar>,
{
    if !cs.is_witness_generator() || preimage.len() != A::to_usize() {
        // The gadget decides what a preimage of another length means (it asserts).
        return neptune::circuit::poseidon_hash(cs, preimage, constants);
    }
    let mut state = Vec::with_capacity(constants.width());
    state.push(constants.domain_tag);
    for p in &preimage {
        state.push(p.get_value().ok_or(SynthesisError::AssignmentMissing)?);
    }
    let mut aux =
        |v: Scalar| -> Result<(), SynthesisError> { cs.alloc(|| "poseidon", || Ok(v)).map(|_| ()) };
    Permutation {
        constants,
        state: &mut state,
        keys: 0,
        round: 0,
    }
    .run(&mut aux)?;
    let out = state[1];
    AllocatedNum::alloc(cs.namespace(|| "hash result"), || Ok(out))
}

/// The gadget's rounds over plain values.
struct Permutation<'a, A: Arity<Scalar>> {
    constants: &'a PoseidonConstants<Scalar, A>,
    state: &'a mut Vec<Scalar>,
    /// The next compressed round constant.
    keys: usize,
    /// Rounds done (which matrix the next product uses).
    round: usize,
}

impl<A: Arity<Scalar>> Permutation<'_, A> {
    fn run(
        &mut self,
        aux: &mut impl FnMut(Scalar) -> Result<(), SynthesisError>,
    ) -> Result<(), SynthesisError> {
        let half = self.constants.full_rounds / 2;
        self.first_round(aux)?;
        for _ in 1..half {
            self.full_round(false, aux)?;
        }
        for _ in 0..self.constants.partial_rounds {
            let key = self.constants.compressed_round_constants[self.keys];
            self.keys += 1;
            self.state[0] = s_box(self.state[0], Some(key), aux)?;
            self.product();
        }
        for _ in 0..half - 1 {
            self.full_round(false, aux)?;
        }
        self.full_round(true, aux)
    }

    /// The first full round: keys added before the S-box and after it; the domain tag's
    /// S-box a constant, each preimage element (already allocated) three allocations.
    fn first_round(
        &mut self,
        aux: &mut impl FnMut(Scalar) -> Result<(), SynthesisError>,
    ) -> Result<(), SynthesisError> {
        let width = self.state.len();
        let keys = &self.constants.compressed_round_constants[self.keys..self.keys + 2 * width];
        self.keys += 2 * width;
        let (pre, post) = keys.split_at(width);
        for i in 0..width {
            let x = self.state[i] + pre[i];
            let x2 = x.square();
            let x4 = x2.square();
            let x5 = x4 * x + post[i];
            if i > 0 {
                aux(x2)?;
                aux(x4)?;
                aux(x5)?;
            }
            self.state[i] = x5;
        }
        self.product();
        Ok(())
    }

    /// A later full round: each element's S-box, with the next round's keys added after it
    /// except in the last round.
    fn full_round(
        &mut self,
        last: bool,
        aux: &mut impl FnMut(Scalar) -> Result<(), SynthesisError>,
    ) -> Result<(), SynthesisError> {
        let width = self.state.len();
        for i in 0..width {
            let key = (!last).then(|| self.constants.compressed_round_constants[self.keys + i]);
            self.state[i] = s_box(self.state[i], key, aux)?;
        }
        if !last {
            self.keys += width;
        }
        self.product();
        Ok(())
    }

    /// The state times the round's matrix, as the gadget picks it.
    fn product(&mut self) {
        let c = self.constants;
        let sparse_offset = c.half_full_rounds - 1;
        let width = self.state.len();
        if self.round > sparse_offset && self.round < c.half_full_rounds + c.partial_rounds {
            let m = &c.sparse_matrixes[self.round - sparse_offset - 1];
            let first = self.state[0];
            let dot = self
                .state
                .iter()
                .zip(&m.w_hat)
                .fold(Scalar::ZERO, |acc, (s, w)| acc + *s * w);
            for j in 1..width {
                self.state[j] += first * m.v_rest[j - 1];
            }
            self.state[0] = dot;
        } else {
            let m = if self.round == sparse_offset {
                &c.pre_sparse_matrix
            } else {
                &c.mds_matrices.m
            };
            let next: Vec<Scalar> = (0..width)
                .map(|j| {
                    self.state
                        .iter()
                        .zip(m.iter())
                        .fold(Scalar::ZERO, |acc, (s, row)| acc + *s * row[j])
                })
                .collect();
            self.state.copy_from_slice(&next);
        }
        self.round += 1;
    }
}

/// The gadget's S-box on an element held as a combination: its value allocated, then x², x⁴
/// and x⁵ (+ `key`).
fn s_box(
    x: Scalar,
    key: Option<Scalar>,
    aux: &mut impl FnMut(Scalar) -> Result<(), SynthesisError>,
) -> Result<Scalar, SynthesisError> {
    let x2 = x.square();
    let x4 = x2.square();
    let x5 = x4 * x + key.unwrap_or(Scalar::ZERO);
    aux(x)?;
    aux(x2)?;
    aux(x4)?;
    aux(x5)?;
    Ok(x5)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::r1cs::WitnessCs;
    use filecoin_hashers::{
        POSEIDON_CONSTANTS_11, POSEIDON_CONSTANTS_16, POSEIDON_CONSTANTS_2, POSEIDON_CONSTANTS_4,
        POSEIDON_CONSTANTS_8, POSEIDON_MD_CONSTANTS,
    };
    use rand_core::{RngCore, SeedableRng};

    fn check<A: Arity<Scalar>>(constants: &PoseidonConstants<Scalar, A>, seed: u64) {
        let arity = A::to_usize();
        let run = |ours: bool| {
            let mut cs = WitnessCs::new();
            cs.alloc_input(|| "one", || Ok(Scalar::ONE)).unwrap();
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let preimage: Vec<AllocatedNum<Scalar>> = (0..arity)
                .map(|i| {
                    let v = Scalar::from(rng.next_u64()) * Scalar::from(rng.next_u64()).square();
                    AllocatedNum::alloc(cs.namespace(|| format!("x{i}")), || Ok(v)).unwrap()
                })
                .collect();
            let out = if ours {
                poseidon_hash(&mut cs, preimage.clone(), constants).unwrap()
            } else {
                neptune::circuit::poseidon_hash(&mut cs, preimage.clone(), constants).unwrap()
            };
            let values: Vec<Scalar> = preimage.iter().map(|p| p.get_value().unwrap()).collect();
            (cs.aux_slice().to_vec(), out.get_value().unwrap(), values)
        };
        let (ours, out, values) = run(true);
        let (theirs, want, _) = run(false);
        assert_eq!(out, want, "arity {arity}: result");
        // And it is Poseidon: neptune's own hash of the preimage.
        let mut p = neptune::Poseidon::new_with_preimage(&values, constants);
        assert_eq!(out, p.hash(), "arity {arity}: neptune's hash");
        assert_eq!(ours.len(), theirs.len(), "arity {arity}: aux count");
        if let Some(i) = (0..ours.len()).find(|&i| ours[i] != theirs[i]) {
            panic!("arity {arity}: aux {i} of {} differs", ours.len());
        }
    }

    #[test]
    fn equals_the_gadget_value_for_value() {
        // Every arity Filecoin's trees, columns and MD hashes use.
        for seed in 0..3 {
            check(&*POSEIDON_CONSTANTS_2, seed);
            check(&*POSEIDON_CONSTANTS_4, seed);
            check(&*POSEIDON_CONSTANTS_8, seed);
            check(&*POSEIDON_CONSTANTS_11, seed);
            check(&*POSEIDON_CONSTANTS_16, seed);
            check(&*POSEIDON_MD_CONSTANTS, seed);
            // SnapDeals' randomness (a custom domain tag).
            check(
                &*storage_proofs_update::constants::POSEIDON_CONSTANTS_GEN_RANDOMNESS,
                seed,
            );
        }
    }

    #[test]
    fn a_recording_system_gets_the_gadget() {
        let mut cs = bellpepper_core::test_cs::TestConstraintSystem::<Scalar>::new();
        let preimage: Vec<_> = (0..2u64)
            .map(|i| {
                AllocatedNum::alloc(cs.namespace(|| format!("x{i}")), || Ok(Scalar::from(i + 5)))
                    .unwrap()
            })
            .collect();
        poseidon_hash(cs.namespace(|| "h"), preimage, &*POSEIDON_CONSTANTS_2).unwrap();
        assert!(cs.num_constraints() > 0 && cs.is_satisfied());
    }
}
