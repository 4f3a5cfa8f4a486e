//! The PoRep C2 partition's witness without its SHA-256 gadgets.
//!
//! A PoRep witness run is over 90% SHA-256 gadget (the labels and the comm_d path;
//! `notes/synthesis.md`). [`PorepPartition`] is storage-proofs' `StackedCircuit` for every
//! constraint system that records or proves, and, for a witness generator (cuzk's
//! `WitnessCs`), walks the same circuit with the SHA-256 steps computed by
//! [`r1cs::sha256`](crate::r1cs::sha256): the same aux and input values in the same order.
//! Every other step calls storage-proofs', bellpepper's and neptune's gadgets as the circuit
//! does (Poseidon column hashes and Merkle paths, bit decompositions, the encoding).
//!
//! The walk follows storage-proofs-porep 19.1's `StackedCircuit::synthesize`,
//! `params::Proof::synthesize`, `create_label_circuit` and storage-proofs-core's
//! `PoRCircuit` step for step; the version is pinned in Cargo.lock. `tests/r1cs_recorded.rs`
//! checks it value for value against the gadgets (`r1cs::witness_through_gadgets`) and the
//! whole assignment against bellperson's synthesis; any drift of a future storage-proofs
//! shows there first.
//!
//! On a system that records or proves, the walk calls the SHA-256 gadgets themselves
//! (storage-proofs' `create_label_circuit` and `PoRCircuit`), so it is the whole circuit
//! there too: its recorded R1CS is checked equal to `StackedCircuit`'s. That is what lets
//! [`PorepPartition::random`] stand in for a partition of any sector size with random
//! values (the shape, and so the work, does not depend on them) where no sealed sector is
//! at hand: the synthesis bench's 32GiB partition.
//!
//! storage-proofs keeps a column proof's fields and a labeling proof's node crate-private;
//! both are serde types, and their bincode form is read back into the parts needed here.

use bellpepper_core::boolean::{AllocatedBit, Boolean};
use bellpepper_core::num::AllocatedNum;
use bellpepper_core::{Circuit, ConstraintSystem, SynthesisError};
use blstrs::Scalar as Fr;
use ff::PrimeField;
use filecoin_hashers::{HashFunction, Hasher, POSEIDON_CONSTANTS_11, POSEIDON_CONSTANTS_2};
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::types::MerkleTreeTrait;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use storage_proofs_core::gadgets::uint64::UInt64;
use storage_proofs_core::gadgets::{constraint, encode::encode};
use storage_proofs_core::merkle::{BinaryMerkleTree, MerkleProof, MerkleProofTrait};
use storage_proofs_core::util::reverse_bit_numbering;
use storage_proofs_porep::stacked::{self, StackedCircuit};
use typenum::{U11, U2};

use super::sha256_tree;
use crate::error::{Error, Result};
use crate::r1cs::{poseidon, sha256};

pub(super) use super::poseidon_path::PathOptions;
type TreeProof<Tree> = MerkleProof<
    <Tree as MerkleTreeTrait>::Hasher,
    <Tree as MerkleTreeTrait>::Arity,
    <Tree as MerkleTreeTrait>::SubTreeArity,
    <Tree as MerkleTreeTrait>::TopTreeArity,
>;
type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

/// One PoRep partition: storage-proofs' circuit, and what the walk reads.
pub(super) struct PorepPartition<Tree: 'static + MerkleTreeTrait> {
    /// For systems that record or prove; without it (random values, or a test of the walk
    /// itself) every system walks.
    circuit: Option<StackedCircuit<Tree, DefaultPieceHasher>>,
    witness: Values,
}

impl<Tree: 'static + MerkleTreeTrait> PorepPartition<Tree> {
    /// `circuit` is `StackedCompound::circuit` of `proofs` (its vanilla proofs) and these
    /// public inputs; `None` to walk on every system.
    pub(super) fn new(
        circuit: Option<StackedCircuit<Tree, DefaultPieceHasher>>,
        public: &stacked::PublicInputs<Domain<Tree>, <DefaultPieceHasher as Hasher>::Domain>,
        proofs: &[stacked::Proof<Tree, DefaultPieceHasher>],
    ) -> Result<Self> {
        Ok(PorepPartition {
            circuit,
            witness: Values::new::<Tree>(public, proofs)?,
        })
    }

    #[cfg(feature = "test-fixtures")]
    /// A partition of `params`' shape with random values from `rng`: the circuit's work,
    /// not a provable statement (its proof would not verify).
    pub(super) fn random(
        params: &stacked::PublicParams<Tree>,
        rng: &mut dyn rand_core::RngCore,
    ) -> Self {
        PorepPartition {
            circuit: None,
            witness: Values::random::<Tree>(params, rng),
        }
    }
}

impl<Tree: 'static + MerkleTreeTrait> Circuit<Fr> for PorepPartition<Tree> {
    fn synthesize<CS: ConstraintSystem<Fr>>(self, cs: &mut CS) -> Result<(), SynthesisError> {
        match self.circuit {
            Some(circuit) if !cs.is_witness_generator() => circuit.synthesize(cs),
            _ => self.witness.synthesize::<Tree, _>(cs),
        }
    }
}

/// The partition's private values, as `StackedCircuit` holds them.
struct Values {
    replica_id: Fr,
    comm_d: Fr,
    comm_r: Fr,
    comm_r_last: Fr,
    comm_c: Fr,
    challenges: Vec<ChallengeValues>,
}

struct ChallengeValues {
    challenge: u64,
    data_leaf: Fr,
    comm_d_path: PathOptions,
    comm_r_last_path: PathOptions,
    comm_c_path: PathOptions,
    drg_parents: Vec<ColumnValues>,
    exp_parents: Vec<ColumnValues>,
}

/// A column (one row per layer) and its path in the comm_c tree.
struct ColumnValues {
    rows: Vec<Fr>,
    path: PathOptions,
}

/// A vanilla column proof's bincode layout: `Column { index, rows, _h }` then the proof.
#[derive(Deserialize)]
#[serde(bound = "D: DeserializeOwned, P: DeserializeOwned")]
struct ColumnProofParts<D, P> {
    column: (u32, Vec<D>, ()),
    inclusion_proof: P,
}

/// A vanilla labeling proof's bincode layout (its hasher marker is not serialized).
#[derive(Deserialize)]
#[serde(bound = "D: DeserializeOwned")]
struct LabelingProofParts<D> {
    _parents: Vec<D>,
    _layer_index: u32,
    node: u64,
}

fn reread<T: serde::Serialize, U: DeserializeOwned>(what: &str, value: &T) -> Result<U> {
    bincode::serialize(value)
        .and_then(|bytes| bincode::deserialize(&bytes))
        .map_err(|e| Error::internal(format!("PoRep witness: reading a vanilla {what}: {e}")))
}

fn column<Tree: 'static + MerkleTreeTrait>(
    proof: &stacked::ColumnProof<TreeProof<Tree>>,
) -> Result<ColumnValues> {
    let parts: ColumnProofParts<Domain<Tree>, TreeProof<Tree>> = reread("column proof", proof)?;
    Ok(ColumnValues {
        rows: parts.column.1.into_iter().map(Into::into).collect(),
        path: parts.inclusion_proof.as_options(),
    })
}

impl Values {
    fn new<Tree: 'static + MerkleTreeTrait>(
        public: &stacked::PublicInputs<Domain<Tree>, <DefaultPieceHasher as Hasher>::Domain>,
        proofs: &[stacked::Proof<Tree, DefaultPieceHasher>],
    ) -> Result<Self> {
        let first = proofs
            .first()
            .ok_or_else(|| Error::invalid_input("a PoRep partition with no vanilla proofs"))?;
        let tau = public
            .tau
            .as_ref()
            .ok_or_else(|| Error::internal("PoRep public inputs without comm_d, comm_r"))?;
        let challenges = proofs
            .iter()
            .map(|p| {
                let c = &p.replica_column_proofs;
                let labeling = p
                    .labeling_proofs
                    .first()
                    .ok_or_else(|| Error::invalid_input("a PoRep challenge with no labels"))?;
                let labeling: LabelingProofParts<Domain<Tree>> =
                    reread("labeling proof", labeling)?;
                let c_x: ColumnValues = column::<Tree>(&c.c_x)?;
                Ok(ChallengeValues {
                    challenge: labeling.node,
                    data_leaf: p.comm_d_proofs.leaf().into(),
                    comm_d_path: p.comm_d_proofs.as_options(),
                    comm_r_last_path: p.comm_r_last_proof.as_options(),
                    comm_c_path: c_x.path,
                    drg_parents: c
                        .drg_parents
                        .iter()
                        .map(column::<Tree>)
                        .collect::<Result<_>>()?,
                    exp_parents: c
                        .exp_parents
                        .iter()
                        .map(column::<Tree>)
                        .collect::<Result<_>>()?,
                })
            })
            .collect::<Result<_>>()?;
        Ok(Values {
            replica_id: public.replica_id.into(),
            comm_d: tau.comm_d.into(),
            comm_r: tau.comm_r.into(),
            comm_r_last: first.comm_r_last().into(),
            comm_c: first.comm_c().into(),
            challenges,
        })
    }

    #[cfg(feature = "test-fixtures")]
    /// Random values in `params`' shape: its challenges per partition, layers, parents and
    /// tree paths (the data tree binary, the others `Tree`'s arities).
    fn random<Tree: 'static + MerkleTreeTrait>(
        params: &stacked::PublicParams<Tree>,
        rng: &mut dyn rand_core::RngCore,
    ) -> Self {
        use super::random::{random_fr, random_path};
        use storage_proofs_core::drgraph::Graph;
        let nodes = params.graph.size();
        let layers = params.num_layers;
        let (drg, exp) = (
            params.graph.base_graph().degree(),
            params.graph.expansion_degree(),
        );
        let challenges = (0..params.challenges.num_challenges_per_partition())
            .map(|_| {
                let challenge = rng.next_u64() % nodes as u64;
                ChallengeValues {
                    challenge,
                    data_leaf: random_fr(rng),
                    comm_d_path: (0..nodes.trailing_zeros())
                        .map(|level| {
                            let bit = ((challenge >> level) & 1) as usize;
                            (vec![Some(random_fr(rng))], Some(bit))
                        })
                        .collect(),
                    comm_r_last_path: random_path::<Tree>(nodes, rng),
                    comm_c_path: random_path::<Tree>(nodes, rng),
                    drg_parents: (0..drg)
                        .map(|_| random_column::<Tree>(layers, nodes, rng))
                        .collect(),
                    exp_parents: (0..exp)
                        .map(|_| random_column::<Tree>(layers, nodes, rng))
                        .collect(),
                }
            })
            .collect();
        Values {
            replica_id: random_fr(rng),
            comm_d: random_fr(rng),
            comm_r: random_fr(rng),
            comm_r_last: random_fr(rng),
            comm_c: random_fr(rng),
            challenges,
        }
    }

    /// `StackedCircuit::synthesize`.
    fn synthesize<Tree: 'static + MerkleTreeTrait, CS: ConstraintSystem<Fr>>(
        self,
        cs: &mut CS,
    ) -> Result<(), SynthesisError> {
        let replica_id =
            AllocatedNum::alloc(cs.namespace(|| "replica_id"), || Ok(self.replica_id))?;
        replica_id.inputize(cs.namespace(|| "replica_id_input"))?;
        let replica_id_bits =
            reverse_bit_numbering(replica_id.to_bits_le(cs.namespace(|| "replica_id_bits"))?);
        let comm_d = AllocatedNum::alloc(cs.namespace(|| "comm_d"), || Ok(self.comm_d))?;
        comm_d.inputize(cs.namespace(|| "comm_d_input"))?;
        let comm_r = AllocatedNum::alloc(cs.namespace(|| "comm_r"), || Ok(self.comm_r))?;
        comm_r.inputize(cs.namespace(|| "comm_r_input"))?;
        let comm_r_last =
            AllocatedNum::alloc(cs.namespace(|| "comm_r_last"), || Ok(self.comm_r_last))?;
        let comm_c = AllocatedNum::alloc(cs.namespace(|| "comm_c"), || Ok(self.comm_c))?;
        let h = <Tree::Hasher as Hasher>::Function::hash2_circuit(
            cs.namespace(|| "H_comm_c_comm_r_last"),
            &comm_c,
            &comm_r_last,
        )?;
        constraint::equal(cs, || "comm_r = H(comm_c || comm_r_last)", &comm_r, &h);
        for (i, challenge) in self.challenges.into_iter().enumerate() {
            challenge.synthesize::<Tree, _>(
                &mut cs.namespace(|| format!("challenge_{i}")),
                &comm_d,
                &comm_c,
                &comm_r_last,
                &replica_id_bits,
            )?;
        }
        Ok(())
    }
}

impl ColumnValues {
    /// `ColumnProof::alloc`: one number per layer.
    fn alloc<CS: ConstraintSystem<Fr>>(
        &self,
        cs: &mut CS,
    ) -> Result<Vec<AllocatedNum<Fr>>, SynthesisError> {
        self.rows
            .iter()
            .map(|&row| AllocatedNum::alloc(&mut *cs, || Ok(row)))
            .collect()
    }
}

impl ChallengeValues {
    /// `params::Proof::synthesize`.
    fn synthesize<Tree: 'static + MerkleTreeTrait, CS: ConstraintSystem<Fr>>(
        self,
        cs: &mut CS,
        comm_d: &AllocatedNum<Fr>,
        comm_c: &AllocatedNum<Fr>,
        comm_r_last: &AllocatedNum<Fr>,
        replica_id: &[Boolean],
    ) -> Result<(), SynthesisError> {
        let data_leaf = AllocatedNum::alloc(cs.namespace(|| "data_leaf"), || Ok(self.data_leaf))?;
        if cs.is_witness_generator() {
            comm_d_inclusion(
                &mut cs.namespace(|| "comm_d_inclusion"),
                &self.comm_d_path,
                &data_leaf,
            )?;
        } else {
            inclusion::<BinaryMerkleTree<DefaultPieceHasher>, _>(
                cs.namespace(|| "comm_d_inclusion"),
                self.comm_d_path,
                comm_d,
                &data_leaf,
            )?;
        }

        let parents = |columns: &[ColumnValues], cs: &mut CS| {
            columns
                .iter()
                .map(|column| {
                    let rows = column.alloc(cs)?;
                    let hash = hash_column(&mut *cs, &rows)?;
                    inclusion::<Tree, _>(&mut *cs, column.path.clone(), comm_c, &hash)?;
                    Ok(rows)
                })
                .collect::<Result<Vec<_>, SynthesisError>>()
        };
        let drg = parents(&self.drg_parents, cs)?;
        let exp = parents(&self.exp_parents, cs)?;
        let layers = drg.first().map_or(0, Vec::len);

        let challenge = UInt64::alloc(cs.namespace(|| "challenge"), Some(self.challenge))?;
        challenge.pack_into_input(cs.namespace(|| "challenge input"))?;

        let mut labels = Vec::with_capacity(layers);
        for layer in 1..=layers {
            let mut bits = Vec::new();
            for column in &drg {
                bits.push(reverse_bit_numbering(
                    column[layer - 1].to_bits_le(&mut *cs)?,
                ));
            }
            if layer > 1 {
                for column in &exp {
                    bits.push(reverse_bit_numbering(
                        column[layer - 2].to_bits_le(&mut *cs)?,
                    ));
                }
            }
            // The label hashes 37 parents: the 14 (or, on the first layer, 6) repeated.
            let mut expanded = bits.clone();
            if layer > 1 {
                expanded.extend_from_slice(&bits);
                expanded.extend_from_slice(&bits[..9]);
            } else {
                for _ in 0..5 {
                    expanded.extend_from_slice(&bits);
                }
                expanded.push(bits[0].clone());
            }
            labels.push(label(cs, replica_id, &expanded, layer as u32, &challenge)?);
        }

        let last = labels
            .last()
            .ok_or(SynthesisError::AssignmentMissing)?
            .clone();
        let encoded = encode(cs.namespace(|| "encode_node"), &last, &data_leaf)?;
        inclusion::<Tree, _>(&mut *cs, self.comm_r_last_path, comm_r_last, &encoded)?;
        let column_hash = hash_column(&mut *cs, &labels)?;
        inclusion::<Tree, _>(&mut *cs, self.comm_c_path, comm_c, &column_hash)?;
        Ok(())
    }
}

#[cfg(feature = "test-fixtures")]
fn random_column<Tree: 'static + MerkleTreeTrait>(
    layers: usize,
    nodes: usize,
    rng: &mut dyn rand_core::RngCore,
) -> ColumnValues {
    use super::random::{random_fr, random_path};
    ColumnValues {
        rows: (0..layers).map(|_| random_fr(rng)).collect(),
        path: random_path::<Tree>(nodes, rng),
    }
}

/// `create_label_circuit` (itself, where the system is not a witness generator): SHA-256 of
/// replica id, layer, node and the parents' labels, each padded to 32 bytes, packed into a
/// field element.
fn label<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    replica_id: &[Boolean],
    parents: &[Vec<Boolean>],
    layer: u32,
    node: &UInt64,
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    let pad = |bits: &mut Vec<Boolean>, to: usize| {
        while bits.len() % to != 0 {
            bits.push(Boolean::constant(false));
        }
    };
    if !cs.is_witness_generator() {
        return storage_proofs_porep::stacked::create_label_circuit(
            cs.namespace(|| "create_label"),
            replica_id,
            parents.to_vec(),
            bellperson::gadgets::uint32::UInt32::constant(layer),
            node.clone(),
        );
    }
    let mut preimage = replica_id.to_vec();
    pad(&mut preimage, 256);
    preimage.extend(
        (0..32)
            .rev()
            .map(|i| Boolean::constant((layer >> i) & 1 == 1)),
    );
    preimage.extend(node.to_bits_be());
    pad(&mut preimage, 512);
    for parent in parents {
        preimage.extend_from_slice(parent);
        pad(&mut preimage, 256);
    }
    let digest = sha256::sha256(cs, &preimage)?;
    let bits = reverse_bit_numbering(digest);
    sha256::pack_bits(cs, &bits[..Fr::CAPACITY as usize])
}

/// The comm_d inclusion for a witness generator: `PoRCircuit` over the binary SHA-256 data
/// tree (one index bit and one sibling per level, no sub or top tree), the path bits packed
/// into inputs. The root is comm_d, an equality only.
fn comm_d_inclusion<CS: ConstraintSystem<Fr>>(
    cs: &mut CS,
    path: &PathOptions,
    leaf: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    let mut cur = leaf.clone();
    let mut path_bits = Vec::with_capacity(path.len());
    for (siblings, index) in path {
        let bit = Boolean::from(AllocatedBit::alloc(&mut *cs, index.map(|i| i & 1 == 1))?);
        path_bits.push(bit.clone());
        let siblings = siblings
            .iter()
            .map(|s| AllocatedNum::alloc(&mut *cs, || s.ok_or(SynthesisError::AssignmentMissing)))
            .collect::<Result<Vec<_>, _>>()?;
        cur = sha256_tree::level(cs, &cur, bit, &siblings)?;
    }
    sha256::pack_into_inputs(cs, &path_bits)
}

/// storage-proofs-porep's `hash_single_column`: Poseidon of the column.
fn hash_column<CS: ConstraintSystem<Fr>>(
    cs: CS,
    column: &[AllocatedNum<Fr>],
) -> Result<AllocatedNum<Fr>, SynthesisError> {
    match column.len() {
        2 => poseidon::poseidon_hash::<CS, U2>(cs, column.to_vec(), &*POSEIDON_CONSTANTS_2),
        11 => poseidon::poseidon_hash::<CS, U11>(cs, column.to_vec(), &*POSEIDON_CONSTANTS_11),
        // storage-proofs panics here; its circuits only have these two.
        _ => Err(SynthesisError::Unsatisfiable),
    }
}

/// storage-proofs-porep's `enforce_inclusion` for a path in a tree of `Tree`'s shape (its
/// Poseidon hashes native on a witness generator: [`super::poseidon_path`]).
fn inclusion<Tree: 'static + MerkleTreeTrait, CS: ConstraintSystem<Fr>>(
    cs: CS,
    path: PathOptions,
    root: &AllocatedNum<Fr>,
    leaf: &AllocatedNum<Fr>,
) -> Result<(), SynthesisError> {
    super::poseidon_path::inclusion::<Tree, _>(cs, path, root, leaf)
}
