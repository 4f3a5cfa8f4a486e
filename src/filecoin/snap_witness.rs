//! The SnapDeals partition's witness without its SHA-256 gadgets.
//!
//! A SnapDeals circuit hashes its TreeD (the new data's binary SHA-256 tree) twice over: the
//! partition's apex tree up to comm_d, and each challenge's path from its leaf up to its apex
//! leaf; through bellperson's SHA-256 gadget that is most of its witness run, as the labels
//! and the comm_d path were the PoRep's (`notes/synthesis.md`). [`SnapPartition`] is
//! storage-proofs-update's `EmptySectorUpdateCircuit` for every constraint system that
//! records or proves, and, for a witness generator (cuzk's `WitnessCs`), walks the same
//! circuit with those hashes computed by [`r1cs::sha256`](crate::r1cs::sha256)
//! (`sha256_tree`): the same aux and input values in the same order. Every other step calls
//! the gadgets the circuit calls (Poseidon, bit decompositions, insertion and selection,
//! the TreeR paths).
//!
//! The walk follows storage-proofs-update 19.1's `EmptySectorUpdateCircuit::synthesize` and
//! its gadgets `apex_por`, `gen_challenge_bits`, `allocated_num_to_allocated_bits`,
//! `get_challenge_high_bits` and `label_r_new` step for step (the version is pinned in
//! Cargo.lock). Those gadgets are crate-private in storage-proofs-update, so the walk carries
//! its own copies, under their names. `tests/r1cs_recorded.rs` checks the walk value for
//! value against the gadgets (`r1cs::witness_through_gadgets`) and the whole assignment
//! against bellperson's synthesis; any drift of a future storage-proofs-update shows there
//! first.
//!
//! On a system that records or proves, the walk calls the SHA-256 gadgets themselves
//! (filecoin-hashers' `hash2_circuit`, storage-proofs-core's `por_no_challenge_input`), so it
//! is the whole circuit there too: its recorded R1CS is checked equal to the circuit's. The
//! random-valued partition (`snap_random_partition`) walks on every system.
//!
//! Unlike the PoRep's, the circuit's own fields are public, so the walk reads the circuit
//! storage-proofs-update builds; no vanilla proof is read back.

use crate::r1cs::poseidon::poseidon_hash;
use bellpepper_core::boolean::{field_into_allocated_bits_le, AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{Circuit, ConstraintSystem, LinearCombination, SynthesisError};
use bellperson::gadgets::multipack::pack_bits;
use blstrs::Scalar as Fr;
use ff::{Field, PrimeField, PrimeFieldBits};
use filecoin_hashers::{HashFunction, Hasher};
use filecoin_proofs::types::{MerkleTreeTrait, TreeRHasher};
use storage_proofs_core::gadgets::insertion::select;
use storage_proofs_core::gadgets::por::por_no_challenge_input;
use storage_proofs_update::circuit::{PrivateInputs, PublicInputs};
use storage_proofs_update::constants::{
    hs, validate_tree_r_shape, TreeD, TreeDHasher, POSEIDON_CONSTANTS_GEN_RANDOMNESS,
};
use storage_proofs_update::{EmptySectorUpdateCircuit, PublicParams};

use super::sha256_tree;

/// One SnapDeals partition: storage-proofs-update's circuit, which a witness generator
/// walks.
pub(super) struct SnapPartition<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> {
    circuit: EmptySectorUpdateCircuit<Tree>,
    /// Every system walks (random values, or a test of the walk itself), not only a witness
    /// generator.
    walk_always: bool,
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> SnapPartition<Tree> {
    /// `circuit` (`EmptySectorUpdateCompound::circuit`'s), walked by a witness generator,
    /// or with `walk_always` by every system (on one that records or proves, the walk with
    /// the SHA-256 gadgets).
    pub(super) fn new(circuit: EmptySectorUpdateCircuit<Tree>, walk_always: bool) -> Self {
        SnapPartition {
            circuit,
            walk_always,
        }
    }
}

impl<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> Circuit<Fr> for SnapPartition<Tree> {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        if self.walk_always || cs.is_witness_generator() {
            walk(self.circuit, cs)
        } else {
            self.circuit.synthesize(cs)
        }
    }
}

/// The circuit asserts its inputs are well formed (it panics otherwise); the walk, which a
/// witness run may take without the circuit ever running, refuses them.
fn ensure(holds: bool) -> Result<(), SynthesisError> {
    if holds {
        Ok(())
    } else {
        Err(SynthesisError::Unsatisfiable)
    }
}

/// `EmptySectorUpdateCircuit::synthesize`.
fn walk<Tree, CS>(
    circuit: EmptySectorUpdateCircuit<Tree>,
    cs: &mut CS,
) -> Result<(), SynthesisError>
where
    Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>,
    CS: ConstraintSystem<Fr>,
{
    let EmptySectorUpdateCircuit {
        pub_params:
            PublicParams {
                sector_nodes,
                challenge_count,
                challenge_bit_len,
                partition_count,
                partition_bit_len,
                apex_leaf_count,
                apex_leaf_bit_len,
            },
        pub_inputs:
            PublicInputs {
                k_and_h_select,
                comm_r_old,
                comm_d_new,
                comm_r_new,
            },
        priv_inputs:
            PrivateInputs {
                comm_c,
                root_r_old,
                root_r_new,
                apex_leafs,
                challenge_proofs,
            },
    } = circuit;

    // As in the circuit, a panic: a TreeR of another shape than the sector size's is a
    // programming error, not an input's.
    validate_tree_r_shape::<Tree>(sector_nodes);
    let hs = hs(sector_nodes);
    let h_select_bit_len = hs.len();

    // Every challenge's TreeD path ends in the partition's path (from its apex root to
    // comm_d), which is checked once, in the apex step.
    let partition_from = challenge_bit_len
        .checked_sub(partition_bit_len)
        .ok_or(SynthesisError::Unsatisfiable)?;
    let partition_path_of = |proof: &storage_proofs_update::circuit::ChallengeProof<Tree>| {
        proof
            .path_d_new
            .get(partition_from..)
            .map(<[_]>::to_vec)
            .ok_or(SynthesisError::Unsatisfiable)
    };
    let partition_path = partition_path_of(
        challenge_proofs
            .first()
            .ok_or(SynthesisError::Unsatisfiable)?,
    )?;

    if let Some(k_and_h_select) = k_and_h_select {
        let bits: Vec<bool> = k_and_h_select.to_le_bits().into_iter().collect();
        let k = bits[..partition_bit_len]
            .iter()
            .rev()
            .fold(0usize, |k, &bit| (k << 1) | usize::from(bit));
        ensure(k < partition_count)?;
        let h_select = &bits[partition_bit_len..partition_bit_len + h_select_bit_len];
        ensure(h_select.iter().filter(|&&bit| bit).count() == 1)?;
        ensure(
            bits[partition_bit_len + h_select_bit_len..]
                .iter()
                .all(|&bit| !bit),
        )?;
    }
    ensure(apex_leafs.len() == apex_leaf_count)?;
    ensure(partition_path.len() == partition_bit_len)?;
    ensure(partition_path.iter().all(|siblings| siblings.len() == 1))?;
    ensure(challenge_proofs.len() == challenge_count)?;
    for proof in &challenge_proofs[1..] {
        ensure(partition_path_of(proof)? == partition_path)?;
    }

    let k_and_h_select = AllocatedNum::alloc(cs.namespace(|| "k_and_h_select"), || {
        k_and_h_select.ok_or(SynthesisError::AssignmentMissing)
    })?;
    k_and_h_select.inputize(cs.namespace(|| "k_and_h_select (public input)"))?;

    let k_and_h_select_bits = {
        let bit_len = partition_bit_len + h_select_bit_len;
        let bits: Vec<Option<bool>> = match k_and_h_select.get_value() {
            Some(v) => v.to_le_bits().into_iter().take(bit_len).map(Some).collect(),
            None => vec![None; bit_len],
        };
        let bits = bits
            .into_iter()
            .enumerate()
            .map(|(i, bit)| {
                AllocatedBit::alloc(cs.namespace(|| format!("k_and_h_select_bit_{i}")), bit)
            })
            .collect::<Result<Vec<AllocatedBit>, SynthesisError>>()?;
        cs.enforce(
            || "k_and_h_select binary decomp",
            |_| binary_decomposition(&bits),
            |lc| lc + CS::one(),
            |lc| lc + k_and_h_select.get_variable(),
        );
        bits
    };
    let partition_bits = k_and_h_select_bits[..partition_bit_len].to_vec();
    let h_select_bits = k_and_h_select_bits[partition_bit_len..].to_vec();
    let partition = pack_bits(
        cs.namespace(|| "pack partition bits"),
        &partition_bits
            .iter()
            .cloned()
            .map(Into::into)
            .collect::<Vec<Boolean>>(),
    )?;

    let mut public = |name: &'static str, input: &'static str, value: Option<Fr>| {
        let num = AllocatedNum::alloc(cs.namespace(|| name), || {
            value.ok_or(SynthesisError::AssignmentMissing)
        })?;
        num.inputize(cs.namespace(|| input))?;
        Ok::<_, SynthesisError>(num)
    };
    let comm_r_old = public("comm_r_old", "comm_r_old_input", comm_r_old)?;
    let comm_d_new = public("comm_d_new", "comm_d_new_input", comm_d_new)?;
    let comm_r_new = public("comm_r_new", "comm_r_new_input", comm_r_new)?;

    let phi = poseidon_hash(
        cs.namespace(|| "phi"),
        vec![comm_d_new.clone(), comm_r_old.clone()],
        &POSEIDON_CONSTANTS_GEN_RANDOMNESS,
    )?;

    let comm_c = alloc(cs.namespace(|| "comm_c"), comm_c)?;
    let root_r_old = alloc(cs.namespace(|| "root_r_old"), root_r_old)?;
    let root_r_new = alloc(cs.namespace(|| "root_r_new"), root_r_new)?;
    let apex_leafs = apex_leafs
        .iter()
        .enumerate()
        .map(|(i, &leaf)| alloc(cs.namespace(|| format!("apex_leaf_{i}")), leaf))
        .collect::<Result<Vec<_>, _>>()?;
    let partition_path = partition_path
        .iter()
        .enumerate()
        .map(|(i, siblings)| {
            alloc(
                cs.namespace(|| format!("partition_path_sibling_{i}")),
                siblings[0],
            )
            .map(|sibling| vec![sibling])
        })
        .collect::<Result<Vec<_>, _>>()?;

    // comm_r = H(comm_c || root_r), old and new.
    for (name, enforced, root, comm_r) in [
        (
            "comm_r_old_calc",
            "enforce comm_r_old_calc == comm_r_old",
            &root_r_old,
            &comm_r_old,
        ),
        (
            "comm_r_new_calc",
            "enforce comm_r_new_calc == comm_r_new",
            &root_r_new,
            &comm_r_new,
        ),
    ] {
        let calc = <Tree::Hasher as Hasher>::Function::hash2_circuit(
            cs.namespace(|| name),
            &comm_c,
            root,
        )?;
        cs.enforce(
            || enforced,
            |lc| lc + calc.get_variable(),
            |lc| lc + CS::one(),
            |lc| lc + comm_r.get_variable(),
        );
    }

    apex_por(
        cs.namespace(|| "apex_gadget"),
        apex_leafs.clone(),
        partition_bits.clone(),
        partition_path,
        comm_d_new,
    )?;

    let generated_bits = gen_challenge_bits(
        cs.namespace(|| "gen_challenge_bits"),
        &comm_r_new,
        &partition,
        challenge_count,
        partition_from,
    )?;

    for (c_index, c_bits_without_partition) in generated_bits.into_iter().enumerate() {
        let c_bits: Vec<AllocatedBit> = c_bits_without_partition
            .iter()
            .chain(partition_bits.iter())
            .cloned()
            .collect();

        let c_high = get_challenge_high_bits(
            cs.namespace(|| format!("get_challenge_high_bits (c_index={c_index})")),
            &c_bits,
            &h_select_bits,
            &hs,
        )?;
        let rho = poseidon_hash(
            cs.namespace(|| format!("rho (c_index={c_index})")),
            vec![phi.clone(), c_high],
            &POSEIDON_CONSTANTS_GEN_RANDOMNESS,
        )?;

        let proof = &challenge_proofs[c_index];
        let leaf_r_old = alloc(
            cs.namespace(|| format!("leaf_r_old (c_index={c_index})")),
            proof.leaf_r_old,
        )?;
        let leaf_d_new = alloc(
            cs.namespace(|| format!("leaf_d_new (c_index={c_index})")),
            proof.leaf_d_new,
        )?;
        let leaf_r_new = label_r_new(
            cs.namespace(|| format!("leaf_r_new (c_index={c_index})")),
            &leaf_r_old,
            &leaf_d_new,
            &rho,
        )?;
        // The circuit's sanity check: the encoding it computes is the proof's new leaf.
        if let Some(computed) = leaf_r_new.get_value() {
            ensure(proof.leaf_r_new == Some(computed))?;
        }

        for (tree, path, leaf, root) in [
            ("r_old", &proof.path_r_old, &leaf_r_old, &root_r_old),
            ("r_new", &proof.path_r_new, &leaf_r_new, &root_r_new),
        ] {
            let path = path
                .iter()
                .enumerate()
                .map(|(tree_row, siblings)| {
                    siblings
                        .iter()
                        .enumerate()
                        .map(|(sibling_index, &sibling)| {
                            alloc(
                                cs.namespace(|| {
                                    format!(
                                        "path_{tree} sibling (c_index={c_index}, \
                                         tree_row={tree_row}, sibling_index={sibling_index})"
                                    )
                                }),
                                sibling,
                            )
                        })
                        .collect::<Result<Vec<_>, _>>()
                })
                .collect::<Result<Vec<_>, _>>()?;
            // Its Poseidon hashes native on a witness generator.
            super::poseidon_path::no_challenge_input::<Tree, _>(
                cs.namespace(|| format!("por tree_{tree} (c_index={c_index})")),
                c_bits.clone(),
                leaf.clone(),
                path,
                root.clone(),
            )?;
        }

        // The challenge's apex leaf, selected by its bits below the partition's, and its
        // TreeD path up to it.
        let path_len_to_apex_leaf = partition_from
            .checked_sub(apex_leaf_bit_len)
            .ok_or(SynthesisError::Unsatisfiable)?;
        let apex_leaf_bits: Vec<Boolean> = c_bits
            [path_len_to_apex_leaf..path_len_to_apex_leaf + apex_leaf_bit_len]
            .iter()
            .cloned()
            .map(Into::into)
            .collect();
        let apex_leaf = select(
            cs.namespace(|| format!("select_apex_leaf (c_index={c_index})")),
            &apex_leafs,
            &apex_leaf_bits,
        )?;
        let c_bits_to_apex_leaf: Vec<AllocatedBit> =
            c_bits.into_iter().take(path_len_to_apex_leaf).collect();
        let path_to_apex_leaf = proof
            .path_d_new
            .iter()
            .take(path_len_to_apex_leaf)
            .enumerate()
            .map(|(tree_row, siblings)| {
                alloc(
                    cs.namespace(|| {
                        format!(
                            "path_to_apex_leaf sibling (c_index={c_index}, tree_row={tree_row})"
                        )
                    }),
                    siblings[0],
                )
                .map(|sibling| vec![sibling])
            })
            .collect::<Result<Vec<_>, _>>()?;
        tree_d_por(
            cs.namespace(|| format!("por to_apex_leaf (c_index={c_index})")),
            c_bits_to_apex_leaf,
            leaf_d_new,
            path_to_apex_leaf,
            apex_leaf,
        )?;
    }
    Ok(())
}

/// A private number, as the circuit allocates each (`AssignmentMissing` without a value).
fn alloc<CS: ConstraintSystem<Fr>>(
    cs: CS,
    value: Option<Fr>,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    AllocatedNum::alloc(cs, || value.ok_or(SynthesisError::AssignmentMissing))
}

/// Σ 2^i · bits[i], the linear combination the circuit's bit decompositions enforce equal
/// to the number (built only where a system enforces).
fn binary_decomposition(bits: &[AllocatedBit]) -> LinearCombination<Fr> {
    let mut lc = LinearCombination::<Fr>::zero();
    let mut pow2 = Fr::ONE;
    for bit in bits {
        lc = lc + (pow2, bit.get_variable());
        pow2 = pow2.double();
    }
    lc
}

/// A TreeD hash of two nodes: `Sha256Function::hash2_circuit` (the gadget where the system
/// records or proves).
fn tree_d_hash2<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    left: &AllocatedNum<Fr>,
    right: &AllocatedNum<Fr>,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    if !cs.is_witness_generator() {
        return <TreeDHasher as Hasher>::Function::hash2_circuit(cs, left, right);
    }
    sha256_tree::node(&mut cs, &[left.clone(), right.clone()])
}

/// storage-proofs-core's `por_no_challenge_input` over TreeD (itself where the system
/// records or proves). TreeD is binary with no sub or top tree: one challenge bit and one
/// sibling per level. The computed root's equality with `root` is a constraint only, so a
/// witness generator has nothing to do for it.
fn tree_d_por<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    challenge_bits: Vec<AllocatedBit>,
    leaf: AllocatedNum<Fr>,
    path: Vec<Vec<AllocatedNum<Fr>>>,
    root: AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    if !cs.is_witness_generator() {
        return por_no_challenge_input::<TreeD, _>(cs, challenge_bits, leaf, path, root);
    }
    // The gadget asserts these; the walk refuses them.
    ensure(challenge_bits.len() == path.len())?;
    ensure(path.iter().all(|siblings| siblings.len() == 1))?;
    let mut cur = leaf;
    for (height, (bit, siblings)) in challenge_bits.into_iter().zip(path).enumerate() {
        cur = sha256_tree::level(
            &mut cs.namespace(|| format!("merkle proof hash (height={height})")),
            &cur,
            bit.into(),
            &siblings,
        )?;
    }
    Ok(())
}

/// storage-proofs-update's `apex_por`: the partition's apex tree from its apex leaves, and
/// the partition path from its root up to comm_d.
fn apex_por<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    apex_leafs: Vec<AllocatedNum<Fr>>,
    partition_bits: Vec<AllocatedBit>,
    partition_path: Vec<Vec<AllocatedNum<Fr>>>,
    comm_d: AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    // A power of two (the circuit's apex leaf count).
    let apex_tree_height = apex_leafs.len().trailing_zeros() as usize;
    let mut row = apex_leafs;
    for row_index in 0..apex_tree_height {
        row = row
            .chunks(2)
            .enumerate()
            .map(|(i, siblings)| {
                tree_d_hash2(
                    cs.namespace(|| {
                        format!("apex_tree generation hash (tree_row={row_index}, siblings={i})")
                    }),
                    &siblings[0],
                    &siblings[1],
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
    }
    let apex_root = row
        .into_iter()
        .next()
        .ok_or(SynthesisError::Unsatisfiable)?;
    tree_d_por(
        cs.namespace(|| "partition-tree por"),
        partition_bits,
        apex_root,
        partition_path,
        comm_d,
    )
}

/// storage-proofs-update's `allocated_num_to_allocated_bits`: `num` as `Fr::NUM_BITS` bits.
fn allocated_num_to_allocated_bits<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    num: &AllocatedNum<Fr>,
) -> Result<Vec<AllocatedBit>, SynthesisError> {
    let bits = field_into_allocated_bits_le(&mut cs, num.get_value())?;
    ensure(bits.len() == Fr::NUM_BITS as usize)?;
    cs.enforce(
        || "binary decomp",
        |_| binary_decomposition(&bits),
        |lc| lc + CS::one(),
        |lc| lc + num.get_variable(),
    );
    Ok(bits)
}

/// storage-proofs-update's `gen_challenge_bits`: each challenge's `bits_per_challenge`
/// random bits, from the digests `H(comm_r_new || k * digests_per_partition + j)`.
fn gen_challenge_bits<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    comm_r_new: &AllocatedNum<Fr>,
    partition: &AllocatedNum<Fr>,
    challenges: usize,
    bits_per_challenge: usize,
) -> Result<Vec<Vec<AllocatedBit>>, SynthesisError> {
    let challenges_per_digest = Fr::CAPACITY as usize / bits_per_challenge;
    // The circuit's `(challenges as f32 / challenges_per_digest as f32).ceil()`, exact for
    // its few challenges.
    let digests_per_partition = challenges.div_ceil(challenges_per_digest) as u64;
    let mut generated_bits = Vec::with_capacity(challenges);
    for j in 0..digests_per_partition {
        let digest_index =
            AllocatedNum::alloc(cs.namespace(|| format!("digest_index_{j}")), || {
                let k = partition
                    .get_value()
                    .ok_or(SynthesisError::AssignmentMissing)?;
                Ok(k * Fr::from(digests_per_partition) + Fr::from(j))
            })?;
        cs.enforce(
            || format!("digest_index_{j} == k * digests_per_partition + {j}"),
            |lc| {
                lc + (Fr::from(digests_per_partition), partition.get_variable())
                    + (Fr::from(j), CS::one())
            },
            |lc| lc + CS::one(),
            |lc| lc + digest_index.get_variable(),
        );
        let digest = poseidon_hash(
            cs.namespace(|| format!("digest_{j}")),
            vec![comm_r_new.clone(), digest_index],
            &POSEIDON_CONSTANTS_GEN_RANDOMNESS,
        )?;
        let digest_bits =
            allocated_num_to_allocated_bits(cs.namespace(|| format!("digest_{j}_bits")), &digest)?;
        // Not every bit of the last digest may be taken.
        let take = if j == digests_per_partition - 1 {
            challenges - generated_bits.len()
        } else {
            challenges_per_digest
        };
        generated_bits.extend(
            digest_bits
                .chunks(bits_per_challenge)
                .take(take)
                .map(<[_]>::to_vec),
        );
    }
    Ok(generated_bits)
}

/// storage-proofs-update's `get_challenge_high_bits`: the challenge's `h` high bits packed,
/// `h` chosen from `hs` by the one bit set in `h_select_bits`.
fn get_challenge_high_bits<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    c_bits: &[AllocatedBit],
    h_select_bits: &[AllocatedBit],
    hs: &[usize],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    ensure(h_select_bits.len() == hs.len())?;
    let bit_len = c_bits.len();
    let c_bits: Vec<Boolean> = c_bits.iter().cloned().map(Into::into).collect();
    // Each `h`'s high bits, times its select bit: all zero but the selected one.
    let c_high_and_zeros = hs
        .iter()
        .zip(h_select_bits)
        .enumerate()
        .map(|(k, (h, h_select_bit))| {
            let c_high = pack_bits(
                cs.namespace(|| format!("c_high (h={h}, k={k})")),
                &c_bits[bit_len - h..],
            )?;
            let c_high_or_zero = AllocatedNum::alloc(
                cs.namespace(|| format!("c_high_or_zero (h={h}, k={k})")),
                || {
                    if h_select_bit
                        .get_value()
                        .ok_or(SynthesisError::AssignmentMissing)?
                    {
                        c_high.get_value().ok_or(SynthesisError::AssignmentMissing)
                    } else {
                        Ok(Fr::ZERO)
                    }
                },
            )?;
            cs.enforce(
                || format!("c_high_or_zero == c_high * h_select_bit (h={h}, k={k})"),
                |lc| lc + c_high.get_variable(),
                |lc| lc + h_select_bit.get_variable(),
                |lc| lc + c_high_or_zero.get_variable(),
            );
            Ok(c_high_or_zero)
        })
        .collect::<Result<Vec<AllocatedNum<Fr>>, SynthesisError>>()?;

    let c_high_selected = AllocatedNum::alloc(cs.namespace(|| "c_high_selected"), || {
        c_high_and_zeros.iter().try_fold(Fr::ZERO, |sum, c| {
            Ok(sum + c.get_value().ok_or(SynthesisError::AssignmentMissing)?)
        })
    })?;
    cs.enforce(
        || "c_high_selected == dot(c_highs, h_select_bits)",
        |lc| {
            c_high_and_zeros
                .iter()
                .fold(lc, |lc, c| lc + c.get_variable())
        },
        |lc| lc + CS::one(),
        |lc| lc + c_high_selected.get_variable(),
    );
    Ok(c_high_selected)
}

/// storage-proofs-update's `label_r_new`: the new replica leaf `label_r_old + label_d_new
/// * rho`.
fn label_r_new<CS: ConstraintSystem<Fr>>(
    mut cs: CS,
    label_r_old: &AllocatedNum<Fr>,
    label_d_new: &AllocatedNum<Fr>,
    rho: &AllocatedNum<Fr>,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let label_d_new_rho = label_d_new.mul(cs.namespace(|| "label_d_new * rho"), rho)?;
    let label_r_new = AllocatedNum::alloc(cs.namespace(|| "label_r_new"), || {
        let old = label_r_old
            .get_value()
            .ok_or(SynthesisError::AssignmentMissing)?;
        let d_rho = label_d_new_rho
            .get_value()
            .ok_or(SynthesisError::AssignmentMissing)?;
        Ok(old + d_rho)
    })?;
    cs.enforce(
        || "label_r_new == label_r_old + label_d_new * rho",
        |lc| lc + label_r_old.get_variable() + label_d_new_rho.get_variable(),
        |lc| lc + CS::one(),
        |lc| lc + label_r_new.get_variable(),
    );
    Ok(label_r_new)
}
