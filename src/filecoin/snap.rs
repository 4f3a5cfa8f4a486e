//! SnapDeals (empty sector update): from the vanilla partition proofs (one bincode
//! `PartitionProof` per partition, as `GenerateUpdateVanillaProofs` gives them) and the three
//! commitments, as filecoin-proofs' `generate_empty_sector_update_proof_with_vanilla` builds
//! the circuits.

use std::sync::Arc;

use filecoin_hashers::{Domain, Hasher};
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::types::{MerkleTreeTrait, SectorUpdateConfig, TreeRHasher};
use filecoin_proofs::with_shape;
use filecoin_proofs_api::RegisteredUpdateProof;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_core::parameter_cache::CacheableParameters;
use storage_proofs_update::{
    EmptySectorUpdate, EmptySectorUpdateCompound, PartitionProof, PublicInputs, SetupParams,
};

use super::snap_witness::SnapPartition;
use super::{fil_error, submit, CircuitSet, ParamsFor, ProofOptions};
use crate::engine::{Engine, Job, JobKind, PartitionCircuit};
use crate::error::{Error, ErrorKind, Result};

/// The commitments of a sector update, as filecoin-ffi's `GenerateUpdateProofWithVanilla`
/// takes them (the CIDs' 32-byte digests).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SnapCommitments {
    /// The sealed sector's comm_r before the update.
    pub comm_r_old: [u8; 32],
    /// comm_r after the update.
    pub comm_r_new: [u8; 32],
    /// The new data's comm_d.
    pub comm_d_new: [u8; 32],
}

/// Proves a SnapDeals update on `engine`; the proofs concatenated are the update proof.
pub fn prove_snap(
    engine: &Engine,
    proof: RegisteredUpdateProof,
    vanilla_proofs: &[Vec<u8>],
    commitments: SnapCommitments,
    options: ProofOptions,
) -> Result<Job> {
    let set = snap_circuits(proof, vanilla_proofs, commitments)?;
    submit(engine, set, options)
}

/// The circuits of a SnapDeals update proof, one per partition.
pub fn snap_circuits(
    proof: RegisteredUpdateProof,
    vanilla_proofs: &[Vec<u8>],
    commitments: SnapCommitments,
) -> Result<CircuitSet> {
    circuits(proof, vanilla_proofs, commitments, false)
}

/// As [`snap_circuits`], walked by every constraint system, not only a witness generator
/// (`snap_witness.rs`). For the test that the walk's R1CS is storage-proofs-update's own.
#[cfg(feature = "test-fixtures")]
pub fn snap_walk_circuits(
    proof: RegisteredUpdateProof,
    vanilla_proofs: &[Vec<u8>],
    commitments: SnapCommitments,
) -> Result<CircuitSet> {
    circuits(proof, vanilla_proofs, commitments, true)
}

fn circuits(
    proof: RegisteredUpdateProof,
    vanilla_proofs: &[Vec<u8>],
    commitments: SnapCommitments,
    walk_always: bool,
) -> Result<CircuitSet> {
    if proof.major_version() != 1 {
        return Err(Error::invalid_input(format!(
            "{proof:?} is not a v1 update proof"
        )));
    }
    let partitions = with_shape!(
        u64::from(proof.sector_size()),
        partitions_of,
        proof,
        vanilla_proofs,
        commitments,
        walk_always,
    )?;
    CircuitSet::new(JobKind::SnapDeals, ParamsFor::Update(proof), partitions)
}

struct Context<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>> {
    public_inputs: PublicInputs,
    public_params: compound_proof::PublicParams<'static, EmptySectorUpdate<Tree>>,
}

fn partitions_of<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    proof: RegisteredUpdateProof,
    vanilla_bytes: &[Vec<u8>],
    c: SnapCommitments,
    walk_always: bool,
) -> Result<Vec<PartitionCircuit>> {
    let config = SectorUpdateConfig::from_porep_config(&proof.as_v1_config());
    let partitions = usize::from(config.update_partitions);
    let vanilla: Vec<PartitionProof<Tree>> =
        super::decode_vanilla(vanilla_bytes, "an update PartitionProof")?;
    if vanilla.len() != partitions {
        return Err(Error::invalid_input(format!(
            "{} vanilla partition proofs where {proof:?} has {partitions} partitions",
            vanilla.len()
        )));
    }
    super::field_element("comm_r_old", &c.comm_r_old)?;
    super::field_element("comm_r_new", &c.comm_r_new)?;
    super::field_element("comm_d_new", &c.comm_d_new)?;
    let domain = |what: &str, b: &[u8; 32]| {
        <TreeRHasher as Hasher>::Domain::try_from_bytes(b)
            .map_err(|e| fil_error(ErrorKind::InvalidInput, what, e))
    };
    let public_inputs = PublicInputs {
        k: partitions,
        comm_r_old: domain("comm_r_old", &c.comm_r_old)?,
        comm_d_new: <DefaultPieceHasher as Hasher>::Domain::try_from_bytes(&c.comm_d_new)
            .map_err(|e| fil_error(ErrorKind::InvalidInput, "comm_d_new", e))?,
        comm_r_new: domain("comm_r_new", &c.comm_r_new)?,
        h: config.h,
    };
    let public_params = EmptySectorUpdateCompound::<Tree>::setup(&compound_proof::SetupParams {
        vanilla_params: SetupParams {
            sector_bytes: u64::from(config.sector_size),
        },
        partitions: Some(partitions),
        priority: false,
    })
    .map_err(|e| fil_error(ErrorKind::Internal, "update public params", e))?;
    let ctx = Arc::new(Context::<Tree> {
        public_inputs,
        public_params,
    });
    Ok(vanilla
        .into_iter()
        .enumerate()
        .map(|(k, proof)| {
            let ctx = ctx.clone();
            PartitionCircuit::build(move || {
                let circuit = <EmptySectorUpdateCompound<Tree> as CompoundProof<
                    EmptySectorUpdate<Tree>,
                    _,
                >>::circuit(
                    &ctx.public_inputs,
                    (),
                    &proof,
                    &ctx.public_params.vanilla_params,
                    Some(k),
                )
                .map_err(|e| fil_error(ErrorKind::InvalidInput, "update circuit", e))?;
                // The same circuit, whose witness run skips the SHA-256 gadgets.
                Ok(SnapPartition::new(circuit, walk_always))
            })
        })
        .collect())
}

/// Partition 0 of `proof`'s update circuit, any sector size, with random values
/// (`random.rs`): random commitments, apex leaves and tree paths, one partition path shared
/// by every challenge, and each challenge's new replica leaf derived as the circuit checks
/// it (`leaf_r_old + leaf_d_new * rho`, rho of the challenge the circuit derives from
/// comm_r_new), so that synthesis runs to the end. Every system walks it
/// (`snap_witness.rs`), as the PoRep's random partition. The synthesis bench's 32GiB
/// partition.
#[cfg(feature = "test-fixtures")]
pub fn snap_random_partition(proof: RegisteredUpdateProof, seed: u64) -> Result<PartitionCircuit> {
    fn random<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
        proof: RegisteredUpdateProof,
        seed: u64,
    ) -> Result<PartitionCircuit> {
        let config = SectorUpdateConfig::from_porep_config(&proof.as_v1_config());
        let h = config.h;
        let public_params =
            storage_proofs_update::PublicParams::from_sector_size(u64::from(config.sector_size));
        Ok(PartitionCircuit::build(move || {
            let circuit = random_update_circuit::<Tree>(public_params, h, seed);
            Ok(SnapPartition::new(circuit, true))
        }))
    }
    let key = ParamsFor::Update(proof).shape_key()?;
    let p = with_shape!(u64::from(proof.sector_size()), random, proof, seed)?;
    Ok(p.with_shape_key(key))
}

#[cfg(feature = "test-fixtures")]
fn random_update_circuit<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
    public_params: storage_proofs_update::PublicParams,
    h: usize,
    seed: u64,
) -> storage_proofs_update::EmptySectorUpdateCircuit<Tree> {
    use super::random::{random_fr, seeded};
    use blstrs::Scalar as Fr;
    use storage_proofs_update::circuit::{self, EmptySectorUpdateCircuit};
    use storage_proofs_update::constants::{TreeDDomain, TreeRDomain};
    use storage_proofs_update::{phi, rho, Challenges};

    let mut rng = seeded(seed);
    let rng = &mut rng;
    let sector_nodes = public_params.sector_nodes;
    let k = 0;
    let comm_r_old = TreeRDomain::from(random_fr(rng));
    let comm_d_new = TreeDDomain::from(random_fr(rng));
    let comm_r_new = TreeRDomain::from(random_fr(rng));
    let pub_inputs =
        circuit::PublicInputs::new(sector_nodes, k, h, comm_r_old, comm_d_new, comm_r_new);

    let mut fill = |v: &mut Option<Fr>| *v = Some(random_fr(rng));
    let mut priv_inputs = circuit::PrivateInputs::<Tree>::empty(sector_nodes);
    fill(&mut priv_inputs.comm_c);
    fill(&mut priv_inputs.root_r_old);
    fill(&mut priv_inputs.root_r_new);
    priv_inputs.apex_leafs.iter_mut().for_each(&mut fill);
    for c in priv_inputs.challenge_proofs.iter_mut() {
        fill(&mut c.leaf_r_old);
        fill(&mut c.leaf_d_new);
        for path in [&mut c.path_r_old, &mut c.path_d_new, &mut c.path_r_new] {
            path.iter_mut().flatten().for_each(&mut fill);
        }
    }
    // Every challenge lies in partition k: its TreeD path ends in the same partition path.
    let partition_from = public_params.challenge_bit_len - public_params.partition_bit_len;
    let partition_path = priv_inputs.challenge_proofs[0].path_d_new[partition_from..].to_vec();
    let phi = phi(&comm_d_new, &comm_r_old);
    let shr = public_params.challenge_bit_len - h;
    let challenges = Challenges::new(sector_nodes, comm_r_new, k);
    for (c, proof) in challenges.zip(priv_inputs.challenge_proofs.iter_mut()) {
        proof.path_d_new[partition_from..].clone_from_slice(&partition_path);
        let rho = rho(&phi, c >> shr);
        proof.leaf_r_new = Some(proof.leaf_r_old.unwrap() + proof.leaf_d_new.unwrap() * rho);
    }
    EmptySectorUpdateCircuit {
        pub_params: public_params,
        pub_inputs,
        priv_inputs,
    }
}

/// Test-only params for `proof`'s circuit from known toxic waste (its blank circuit).
#[cfg(feature = "test-fixtures")]
pub(crate) fn test_srs(
    proof: RegisteredUpdateProof,
    waste: &crate::fixtures::ToxicWaste,
) -> Result<crate::groth16::Srs> {
    fn blank<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
        proof: RegisteredUpdateProof,
        waste: &crate::fixtures::ToxicWaste,
    ) -> Result<crate::groth16::Srs> {
        let config = SectorUpdateConfig::from_porep_config(&proof.as_v1_config());
        let public_params =
            EmptySectorUpdateCompound::<Tree>::setup(&compound_proof::SetupParams {
                vanilla_params: SetupParams {
                    sector_bytes: u64::from(config.sector_size),
                },
                partitions: Some(usize::from(config.update_partitions)),
                priority: false,
            })
            .map_err(|e| fil_error(ErrorKind::Internal, "update public params", e))?;
        let circuit = <EmptySectorUpdateCompound<Tree> as CompoundProof<
            EmptySectorUpdate<Tree>,
            _,
        >>::blank_circuit(&public_params.vanilla_params);
        crate::fixtures::generate_srs(circuit, waste)
    }
    with_shape!(u64::from(proof.sector_size()), blank, proof, waste,)
}

/// storage-proofs' identifier of `proof`'s circuit, as filecoin-proofs' update prover and
/// verifier derive it (`EmptySectorUpdateCompound`'s cache identifier of the update's public
/// params). filecoin-proofs-api's `RegisteredUpdateProof::circuit_identifier` is not that: it
/// goes through the PoRep config and names the PoRep circuit.
pub(crate) fn circuit_id(proof: RegisteredUpdateProof) -> String {
    fn id<Tree: 'static + MerkleTreeTrait<Hasher = TreeRHasher>>(
        proof: RegisteredUpdateProof,
    ) -> String {
        let public_params =
            storage_proofs_update::PublicParams::from_sector_size(u64::from(proof.sector_size()));
        <EmptySectorUpdateCompound<Tree> as CacheableParameters<
            storage_proofs_update::EmptySectorUpdateCircuit<Tree>,
            _,
        >>::cache_identifier(&public_params)
    }
    with_shape!(u64::from(proof.sector_size()), id, proof)
}
