//! A Merkle inclusion proof in a Poseidon tree (TreeC, TreeR) on a witness generator:
//! storage-proofs-core's `PoRCircuit` step for step (the version pinned in Cargo.lock), its
//! hashes through [`crate::r1cs::poseidon`] instead of the gadget's linear combinations.
//!
//! Per level of the base, sub and top trees, as `PoRCircuit` does: the insertion index's
//! bits allocated, then the siblings, then storage-proofs' `insert` gadget (its selections
//! are a few products, kept as the circuit has them) and the level's hash; after the last
//! level the index bits packed into public inputs and the root checked. On a system that
//! records or proves, and for a tree that is not Poseidon's, this is `PoRCircuit` itself.

use std::any::TypeId;

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use filecoin_hashers::poseidon::PoseidonHasher;
use filecoin_hashers::PoseidonArity;
use filecoin_proofs::types::MerkleTreeTrait;
use storage_proofs_core::gadgets::insertion::insert;
use storage_proofs_core::gadgets::por::{AuthPath, PoRCircuit};
use storage_proofs_core::gadgets::{constraint, variables::Root};
use typenum::Unsigned;

use crate::r1cs::{poseidon::poseidon_hash, sha256};

/// A Merkle proof's path as storage-proofs hands it to `AuthPath`: per level the siblings'
/// values and the insertion index, base levels first, then the sub and top trees' level.
pub(super) type PathOptions = Vec<(Vec<Option<Fr>>, Option<usize>)>;

/// `PoRCircuit::synthesize(cs, leaf, path, root, private = true)`: `leaf` is in the tree of
/// `Tree`'s shape whose root is `root`.
pub(super) fn inclusion<Tree: 'static + MerkleTreeTrait, CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    path: PathOptions,
    root: &AllocatedNum<Fr>,
    leaf: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    if !cs.is_witness_generator() || TypeId::of::<Tree::Hasher>() != TypeId::of::<PoseidonHasher>()
    {
        let path: AuthPath<Tree::Hasher, Tree::Arity, Tree::SubTreeArity, Tree::TopTreeArity> =
            path.into();
        return PoRCircuit::<Tree>::synthesize(
            cs,
            Root::from_allocated::<CS>(leaf.clone()),
            path,
            Root::from_allocated::<CS>(root.clone()),
            true,
        );
    }
    // `AuthPath::from`: the last level is the top tree's, the one before it the sub tree's,
    // where the tree has them.
    let (sub, top, upper) = upper_levels::<Tree>();
    let mut base = path;
    if base.len() < upper {
        return Err(SynthesisError::Unsatisfiable);
    }
    let mut upper_levels = base.split_off(base.len() - upper);
    let top_level = (top > 0).then(|| upper_levels.pop()).flatten();
    let sub_level = (sub > 0).then(|| upper_levels.pop()).flatten();

    let mut bits = Vec::new();
    let cur = levels::<Tree::Arity, _>(&mut cs, leaf.clone(), base, &mut bits)?;
    let cur =
        levels::<Tree::SubTreeArity, _>(&mut cs, cur, sub_level.into_iter().collect(), &mut bits)?;
    let computed =
        levels::<Tree::TopTreeArity, _>(&mut cs, cur, top_level.into_iter().collect(), &mut bits)?;
    sha256::pack_into_inputs(&mut cs, &bits)?;
    constraint::equal(&mut cs, || "enforce root is correct", &computed, root);
    Ok(())
}

/// `SubPath::synthesize`: the levels of one tree of arity `A`, from `cur` up; the index bits
/// go to `bits`.
fn levels<A: 'static + PoseidonArity, CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    mut cur: AllocatedNum<Fr>,
    path: PathOptions,
    bits: &mut Vec<Boolean>,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let arity = A::to_usize();
    if arity == 0 {
        return match path.is_empty() {
            true => Ok(cur),
            false => Err(SynthesisError::Unsatisfiable),
        };
    }
    let index_bits = arity.trailing_zeros() as usize;
    for (hashes, index) in path {
        let mut cs = cs.namespace(|| "merkle tree hash");
        let level_bits = (0..index_bits)
            .map(|i| {
                AllocatedBit::alloc(&mut cs, index.map(|ix| (ix >> i) & 1 == 1)).map(Boolean::from)
            })
            .collect::<Result<Vec<_>, _>>()?;
        bits.extend_from_slice(&level_bits);
        let siblings = hashes
            .iter()
            .map(|h| AllocatedNum::alloc(&mut cs, || h.ok_or(SynthesisError::AssignmentMissing)))
            .collect::<Result<Vec<_>, _>>()?;
        cur = hash_level::<A, _>(&mut cs, &cur, &level_bits, &siblings)?;
    }
    Ok(cur)
}

/// The arities of `Tree`'s sub and top trees (0 where it has none) and how many path levels
/// they take (a top tree has a sub tree).
fn upper_levels<Tree: MerkleTreeTrait>() -> (usize, usize, usize) {
    let (sub, top) = (
        Tree::SubTreeArity::to_usize(),
        Tree::TopTreeArity::to_usize(),
    );
    (sub, top, usize::from(sub > 0) + usize::from(top > 0))
}

/// One level of a tree of arity `A`: `cur` inserted among `siblings` at `index`, then
/// hashed (both paths' step; `PoRCircuit` and `por_no_challenge_input` do the same).
fn hash_level<A: 'static + PoseidonArity, CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    cur: &AllocatedNum<Fr>,
    index: &[Boolean],
    siblings: &[AllocatedNum<Fr>],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let inserted = insert(
        &mut cs.namespace(|| "merkle proof insert"),
        cur,
        index,
        siblings,
    )?;
    poseidon_hash(
        cs.namespace(|| "merkle proof hash"),
        inserted,
        A::PARAMETERS(),
    )
}

/// storage-proofs-core's `por_no_challenge_input`: `leaf` is in the tree of `Tree`'s shape
/// whose root is `root`, its insertion indexes `challenge_bits` (little-endian, the base
/// levels' first) and its siblings `path` (allocated by the caller).
pub(super) fn no_challenge_input<Tree: 'static + MerkleTreeTrait, CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    challenge_bits: Vec<AllocatedBit>,
    leaf: AllocatedNum<Fr>,
    path: Vec<Vec<AllocatedNum<Fr>>>,
    root: AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    if !cs.is_witness_generator() || TypeId::of::<Tree::Hasher>() != TypeId::of::<PoseidonHasher>()
    {
        return storage_proofs_core::gadgets::por::por_no_challenge_input::<Tree, _>(
            cs,
            challenge_bits,
            leaf,
            path,
            root,
        );
    }
    let (sub, top, upper) = upper_levels::<Tree>();
    if path.len() < upper {
        return Err(SynthesisError::Unsatisfiable);
    }
    let base_levels = path.len() - upper;
    let mut bits = challenge_bits.into_iter().map(Boolean::from);
    let mut siblings = path.into_iter();
    let mut cur = leaf;
    for _ in 0..base_levels {
        cur = given_level::<Tree::Arity, _>(&mut cs, cur, &mut bits, siblings.next())?;
    }
    if sub > 0 {
        cur = given_level::<Tree::SubTreeArity, _>(&mut cs, cur, &mut bits, siblings.next())?;
    }
    if top > 0 {
        cur = given_level::<Tree::TopTreeArity, _>(&mut cs, cur, &mut bits, siblings.next())?;
    }
    // The gadget asserts that the bits and the arities agree.
    if bits.next().is_some() {
        return Err(SynthesisError::Unsatisfiable);
    }
    constraint::equal(&mut cs, || "calculated root == provided root", &cur, &root);
    Ok(())
}

/// One level of `por_no_challenge_input` in a tree of arity `A`: `cur` inserted among the
/// given `siblings` at the index the next bits give, then hashed.
fn given_level<A: 'static + PoseidonArity, CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    cur: AllocatedNum<Fr>,
    bits: &mut impl Iterator<Item = Boolean>,
    siblings: Option<Vec<AllocatedNum<Fr>>>,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let arity = A::to_usize();
    let siblings = siblings.ok_or(SynthesisError::Unsatisfiable)?;
    if siblings.len() + 1 != arity {
        return Err(SynthesisError::Unsatisfiable);
    }
    let index: Vec<Boolean> = bits.take(arity.trailing_zeros() as usize).collect();
    if index.len() != arity.trailing_zeros() as usize {
        return Err(SynthesisError::Unsatisfiable);
    }
    hash_level::<A, _>(cs, &cur, &index, &siblings)
}
