//! PoRep C2: from the C1 output (serde_json of filecoin-proofs-api's
//! `SealCommitPhase1Output`), the sector number and the prover id, to the partitions' proofs
//! concatenated, as filecoin-proofs' `seal_commit_phase2` makes them.
//!
//! For NI-PoRep registered proofs this gives the raw circuit proofs
//! (`seal_commit_phase2_circuit_proofs`), not their SnarkPack aggregate.

use std::sync::Arc;

use filecoin_hashers::Domain;
use filecoin_proofs::constants::DefaultPieceHasher;
use filecoin_proofs::parameters::setup_params;
use filecoin_proofs::types::{MerkleTreeTrait, VanillaSealProof as RawVanillaSealProof};
use filecoin_proofs::with_shape;
use filecoin_proofs_api::seal::{SealCommitPhase1Output, VanillaSealProof};
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_porep::stacked::{self, generate_replica_id, StackedCompound, StackedDrg};

use super::porep_witness::PorepPartition;
use super::{fil_error, submit, CircuitSet, ParamsFor, ProofOptions};
use crate::engine::{Engine, Job, JobKind, PartitionCircuit};
use crate::error::{Error, ErrorKind, Result};

/// Proves a PoRep C2 on `engine`; the job's proofs, through
/// [`proof_bytes`](super::proof_bytes), are what filecoin-ffi's `SealCommitPhase2` returns.
pub fn prove_porep_c2(
    engine: &Engine,
    c1_output: &[u8],
    sector_number: u64,
    prover_id: [u8; 32],
    options: ProofOptions,
) -> Result<Job> {
    let set = porep_c2_circuits(c1_output, sector_number, prover_id)?;
    submit(engine, set, options)
}

/// The circuits of a PoRep C2, one per partition, built as filecoin-proofs builds them.
pub fn porep_c2_circuits(
    c1_output: &[u8],
    sector_number: u64,
    prover_id: [u8; 32],
) -> Result<CircuitSet> {
    circuits(c1_output, sector_number, prover_id, false)
}

/// As [`porep_c2_circuits`], with storage-proofs' `StackedCircuit` left out: every
/// constraint system, not only a witness generator, walks cuzk's copy of it. For the test
/// that its R1CS is storage-proofs' own.
#[cfg(feature = "test-fixtures")]
pub fn porep_c2_walk_circuits(
    c1_output: &[u8],
    sector_number: u64,
    prover_id: [u8; 32],
) -> Result<CircuitSet> {
    circuits(c1_output, sector_number, prover_id, true)
}

/// One partition of `proof`'s PoRep circuit, any sector size, with random values: the
/// circuit's whole work (its shape does not depend on the values), not a provable statement.
/// The synthesis bench's stand-in for a partition of a sector size no test seals (32GiB).
#[cfg(feature = "test-fixtures")]
pub fn porep_random_partition(
    proof: filecoin_proofs_api::RegisteredSealProof,
    seed: u64,
) -> Result<PartitionCircuit> {
    fn random<Tree: 'static + MerkleTreeTrait>(
        config: filecoin_proofs::types::PoRepConfig,
        seed: u64,
    ) -> Result<PartitionCircuit> {
        let public_params = public_params::<Tree>(&config)?;
        Ok(PartitionCircuit::build(move || {
            let mut rng = super::random::seeded(seed);
            Ok(PorepPartition::<Tree>::random(
                &public_params.vanilla_params,
                &mut rng,
            ))
        }))
    }
    let key = ParamsFor::Seal(proof).shape_key()?;
    let p = with_shape!(
        u64::from(proof.sector_size()),
        random,
        proof.as_v1_config(),
        seed,
    )?;
    Ok(p.with_shape_key(key))
}

fn circuits(
    c1_output: &[u8],
    sector_number: u64,
    prover_id: [u8; 32],
    walk_only: bool,
) -> Result<CircuitSet> {
    let c1: SealCommitPhase1Output = serde_json::from_slice(c1_output).map_err(|e| {
        fil_error(
            ErrorKind::InvalidInput,
            "C1 output is not valid JSON of a SealCommitPhase1Output",
            e,
        )
    })?;
    let registered = c1.registered_proof;
    let proofs_size = vanilla_sector_size(&c1.vanilla_proofs);
    let registered_size = u64::from(registered.sector_size());
    if proofs_size != registered_size {
        return Err(Error::new(
            ErrorKind::SectorSizeMismatch,
            format!(
                "C1 output's vanilla proofs are for a {proofs_size}-byte sector but its \
                 registered proof {registered:?} is for {registered_size} bytes"
            ),
        ));
    }
    if registered.major_version() != 1 {
        return Err(Error::invalid_input(format!(
            "registered proof {registered:?} is not a v1 PoRep"
        )));
    }
    let partitions = with_shape!(
        registered_size,
        partitions_of,
        c1,
        sector_number,
        prover_id,
        walk_only,
    )?;
    CircuitSet::new(JobKind::PoRep, ParamsFor::Seal(registered), partitions)
}

fn vanilla_sector_size(p: &VanillaSealProof) -> u64 {
    use filecoin_proofs::constants::*;
    match p {
        VanillaSealProof::StackedDrg2KiBV1(_) => SECTOR_SIZE_2_KIB,
        VanillaSealProof::StackedDrg8MiBV1(_) => SECTOR_SIZE_8_MIB,
        VanillaSealProof::StackedDrg512MiBV1(_) => SECTOR_SIZE_512_MIB,
        VanillaSealProof::StackedDrg32GiBV1(_) => SECTOR_SIZE_32_GIB,
        VanillaSealProof::StackedDrg64GiBV1(_) => SECTOR_SIZE_64_GIB,
    }
}

type PublicParams<Tree> =
    compound_proof::PublicParams<'static, StackedDrg<'static, Tree, DefaultPieceHasher>>;
type PublicInputs<Tree> = stacked::PublicInputs<
    <<Tree as MerkleTreeTrait>::Hasher as filecoin_hashers::Hasher>::Domain,
    <DefaultPieceHasher as filecoin_hashers::Hasher>::Domain,
>;

/// storage-proofs' public params of `config`'s circuit, as filecoin-proofs sets them up.
fn public_params<Tree: 'static + MerkleTreeTrait>(
    config: &filecoin_proofs::types::PoRepConfig,
) -> Result<PublicParams<Tree>> {
    StackedCompound::<Tree, DefaultPieceHasher>::setup(&compound_proof::SetupParams {
        vanilla_params: setup_params(config)
            .map_err(|e| fil_error(ErrorKind::InvalidInput, "PoRep setup params", e))?,
        partitions: Some(usize::from(config.partitions)),
        priority: false,
    })
    .map_err(|e| fil_error(ErrorKind::Internal, "PoRep public params", e))
}

/// What every partition of one C2 shares.
struct Context<Tree: 'static + MerkleTreeTrait> {
    public_inputs: PublicInputs<Tree>,
    public_params: PublicParams<Tree>,
}

fn partitions_of<Tree: 'static + MerkleTreeTrait>(
    c1: SealCommitPhase1Output,
    sector_number: u64,
    prover_id: [u8; 32],
    walk_only: bool,
) -> Result<Vec<PartitionCircuit>> {
    let SealCommitPhase1Output {
        registered_proof,
        vanilla_proofs,
        comm_r,
        comm_d,
        replica_id,
        seed,
        ticket,
    } = c1;
    let config = registered_proof.as_v1_config();
    let bad = |what: &str| Error::invalid_input(format!("C1 output: {what}"));
    if comm_d == [0; 32] {
        return Err(bad("comm_d is all zero"));
    }
    if comm_r == [0; 32] {
        return Err(bad("comm_r is all zero"));
    }
    if seed == [0; 32] {
        return Err(bad("the seed is all zero"));
    }
    let vanilla: Vec<Vec<RawVanillaSealProof<Tree>>> = vanilla_proofs.try_into().map_err(|e| {
        fil_error(
            ErrorKind::SectorSizeMismatch,
            "C1 output's vanilla proofs",
            e,
        )
    })?;
    let expected = usize::from(config.partitions);
    if vanilla.len() != expected || vanilla.iter().any(|p| p.is_empty()) {
        return Err(bad(&format!(
            "{} partitions of vanilla proofs (some may be empty) where {registered_proof:?} has {expected}",
            vanilla.len()
        )));
    }
    super::field_element("C1 output's comm_r", &comm_r)?;
    super::field_element("C1 output's comm_d", &comm_d)?;
    let comm_r_safe = filecoin_proofs::as_safe_commitment(&comm_r, "comm_r")
        .map_err(|e| fil_error(ErrorKind::InvalidInput, "C1 output", e))?;
    let comm_d_safe =
        <DefaultPieceHasher as filecoin_hashers::Hasher>::Domain::try_from_bytes(&comm_d)
            .map_err(|e| fil_error(ErrorKind::InvalidInput, "C1 output's comm_d", e))?;
    // As filecoin-proofs-api does: the C1's replica id is the default tree hasher's domain,
    // the tree's may be another type over the same field.
    let replica_id: blstrs::Scalar = replica_id.into();
    let replica_id: <Tree::Hasher as filecoin_hashers::Hasher>::Domain = replica_id.into();
    // The circuit takes the replica id from the C1 output; the verifier derives it from the
    // sector number and prover id. A mismatch can only give a proof that fails, so say so
    // now rather than after a device has proved it.
    let derived = generate_replica_id::<Tree::Hasher, _>(
        &prover_id,
        sector_number,
        &ticket,
        comm_d_safe,
        &config.porep_id,
    );
    if derived != replica_id {
        return Err(Error::invalid_input(format!(
            "C1 output's replica id is not that of sector {sector_number} of this prover id \
             (with the C1's ticket and comm_d)"
        )));
    }

    let public_params = public_params::<Tree>(&config)?;
    let ctx = Arc::new(Context::<Tree> {
        public_inputs: stacked::PublicInputs {
            replica_id,
            tau: Some(stacked::Tau {
                comm_d: comm_d_safe,
                comm_r: comm_r_safe,
            }),
            k: None,
            seed: Some(seed),
        },
        public_params,
    });
    Ok(vanilla
        .into_iter()
        .enumerate()
        .map(|(k, proofs)| {
            let ctx = ctx.clone();
            PartitionCircuit::build(move || {
                let circuit = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
                    StackedDrg<'_, Tree, DefaultPieceHasher>,
                    _,
                >>::circuit(
                    &ctx.public_inputs,
                    (),
                    &proofs,
                    &ctx.public_params.vanilla_params,
                    Some(k),
                )
                .map_err(|e| fil_error(ErrorKind::InvalidInput, "PoRep circuit", e))?;
                // The same circuit, whose witness run skips the SHA-256 gadgets.
                PorepPartition::new((!walk_only).then_some(circuit), &ctx.public_inputs, &proofs)
            })
        })
        .collect())
}

/// Test-only params for `proof`'s circuit from known toxic waste (the blank circuit, as
/// storage-proofs generates params from it).
#[cfg(feature = "test-fixtures")]
pub(crate) fn test_srs(
    proof: filecoin_proofs_api::RegisteredSealProof,
    waste: &crate::fixtures::ToxicWaste,
) -> Result<crate::groth16::Srs> {
    fn blank<Tree: 'static + MerkleTreeTrait>(
        config: filecoin_proofs::types::PoRepConfig,
        waste: &crate::fixtures::ToxicWaste,
    ) -> Result<crate::groth16::Srs> {
        let public_params = public_params::<Tree>(&config)?;
        let circuit = <StackedCompound<Tree, DefaultPieceHasher> as CompoundProof<
            StackedDrg<'_, Tree, DefaultPieceHasher>,
            _,
        >>::blank_circuit(&public_params.vanilla_params);
        crate::fixtures::generate_srs(circuit, waste)
    }
    with_shape!(
        u64::from(proof.sector_size()),
        blank,
        proof.as_v1_config(),
        waste,
    )
}
