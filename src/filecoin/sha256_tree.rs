//! A sector's binary SHA-256 tree (filecoin-hashers' `Sha256Hasher`: the PoRep's comm_d
//! tree, SnapDeals' TreeD) in a witness generator's walk: the steps storage-proofs' gadgets
//! take for a node and a path level, with the hash through [`r1cs::sha256`]. Shared by the
//! PoRep and SnapDeals walks (`porep_witness.rs`, `snap_witness.rs`). Only for witness
//! generators: nothing here enforces the hash, and `r1cs::sha256` refuses any other system.

use bellpepper_core::boolean::Boolean;
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::PrimeField;
use storage_proofs_core::gadgets::insertion::insert;

use crate::r1cs::sha256;

/// `Sha256Function::hash_multi_leaf_circuit` (and `hash2_circuit`, the same steps for two
/// children): each child's 255 bits, padded to bytes and byte-reversed, hashed; the digest's
/// first 254 little-endian bits packed.
pub(super) fn node<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    children: &[AllocatedNum<Fr>],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let mut preimage = Vec::with_capacity(children.len() * 256);
    for child in children {
        let mut bits = child.to_bits_le(&mut *cs)?;
        while bits.len() % 8 != 0 {
            bits.push(Boolean::constant(false));
        }
        preimage.extend(bits.chunks_exact(8).flat_map(|b| b.iter().rev()).cloned());
    }
    let digest = sha256::sha256(cs, &preimage)?;
    let le: Vec<Boolean> = digest
        .chunks(8)
        .flat_map(|b| b.iter().rev())
        .take(Fr::CAPACITY as usize)
        .cloned()
        .collect();
    sha256::pack_bits(cs, &le)
}

/// One level of a path up a binary SHA-256 tree, as storage-proofs-core's `PoRCircuit` and
/// `por_no_challenge_input` take it: `cur` inserted beside its sibling by the index `bit`
/// (the insertion gadget itself), then the pair hashed ([`node`]).
pub(super) fn level<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    cur: &AllocatedNum<Fr>,
    bit: Boolean,
    siblings: &[AllocatedNum<Fr>],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let inserted = insert(&mut *cs, cur, &[bit], siblings)?;
    node(cs, &inserted)
}
