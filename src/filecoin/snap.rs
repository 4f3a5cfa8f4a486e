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
                <EmptySectorUpdateCompound<Tree> as CompoundProof<
                    EmptySectorUpdate<Tree>,
                    _,
                >>::circuit(
                    &ctx.public_inputs,
                    Default::default(),
                    &proof,
                    &ctx.public_params.vanilla_params,
                    Some(k),
                )
                .map_err(|e| fil_error(ErrorKind::InvalidInput, "update circuit", e))
            })
        })
        .collect())
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
