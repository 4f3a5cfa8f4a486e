//! WinningPoSt and WindowPoSt from vanilla proofs: one bincode `FallbackPoStSectorProof` per
//! sector (what `GenerateSingleVanillaProof` gives a host), the randomness and the prover id,
//! as filecoin-proofs' `generate_winning_post_with_vanilla`,
//! `generate_window_post_with_vanilla` and `generate_single_window_post_with_vanilla` build
//! their circuits.

use std::sync::Arc;

use filecoin_hashers::Hasher;
use filecoin_proofs::parameters::{window_post_setup_params, winning_post_setup_params};
use filecoin_proofs::types::{MerkleTreeTrait, PoStConfig};
use filecoin_proofs::{
    as_safe_commitment, partition_vanilla_proofs, single_partition_vanilla_proofs, with_shape,
    FallbackPoStSectorProof, PoStType,
};
use filecoin_proofs_api::RegisteredPoStProof;
use storage_proofs_core::compound_proof::{self, CompoundProof};
use storage_proofs_post::fallback::{
    self, FallbackPoSt, FallbackPoStCompound, PublicSector, SetupParams,
};

use super::post_witness::PostPartition;
use super::{bytes32, fil_error, submit, CircuitSet, ParamsFor, ProofOptions};
use crate::engine::{Engine, Job, JobKind, PartitionCircuit};
use crate::error::{Error, ErrorKind, Result};

/// Proves a WinningPoSt (filecoin-ffi's `GenerateWinningPoStWithVanilla`): one partition.
pub fn prove_winning_post(
    engine: &Engine,
    proof: RegisteredPoStProof,
    randomness: &[u8],
    prover_id: [u8; 32],
    vanilla_proofs: &[Vec<u8>],
    options: ProofOptions,
) -> Result<Job> {
    let set = winning_post_circuits(proof, randomness, prover_id, vanilla_proofs)?;
    submit(engine, set, options)
}

/// Proves a whole WindowPoSt (`GenerateWindowPoStWithVanilla`): every partition of the
/// sectors' vanilla proofs, the proofs concatenated in partition order.
pub fn prove_window_post(
    engine: &Engine,
    proof: RegisteredPoStProof,
    randomness: &[u8],
    prover_id: [u8; 32],
    vanilla_proofs: &[Vec<u8>],
    options: ProofOptions,
) -> Result<Job> {
    let set = window_post_circuits(proof, randomness, prover_id, vanilla_proofs)?;
    submit(engine, set, options)
}

/// Proves one WindowPoSt partition (`GenerateSinglePartitionWindowPoStWithVanilla`):
/// `vanilla_proofs` are that partition's sectors'.
pub fn prove_window_post_partition(
    engine: &Engine,
    proof: RegisteredPoStProof,
    randomness: &[u8],
    prover_id: [u8; 32],
    vanilla_proofs: &[Vec<u8>],
    partition_index: usize,
    options: ProofOptions,
) -> Result<Job> {
    let set = window_post_partition_circuits(
        proof,
        randomness,
        prover_id,
        vanilla_proofs,
        partition_index,
    )?;
    submit(engine, set, options)
}

/// Which of the three calls a request is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Winning,
    Window,
    WindowPartition(usize),
}

/// The circuit of a WinningPoSt.
pub fn winning_post_circuits(
    proof: RegisteredPoStProof,
    randomness: &[u8],
    prover_id: [u8; 32],
    vanilla_proofs: &[Vec<u8>],
) -> Result<CircuitSet> {
    circuits(proof, randomness, prover_id, vanilla_proofs, Form::Winning)
}

/// The circuits of a whole WindowPoSt, one per partition.
pub fn window_post_circuits(
    proof: RegisteredPoStProof,
    randomness: &[u8],
    prover_id: [u8; 32],
    vanilla_proofs: &[Vec<u8>],
) -> Result<CircuitSet> {
    circuits(proof, randomness, prover_id, vanilla_proofs, Form::Window)
}

/// The circuit of one WindowPoSt partition.
pub fn window_post_partition_circuits(
    proof: RegisteredPoStProof,
    randomness: &[u8],
    prover_id: [u8; 32],
    vanilla_proofs: &[Vec<u8>],
    partition_index: usize,
) -> Result<CircuitSet> {
    circuits(
        proof,
        randomness,
        prover_id,
        vanilla_proofs,
        Form::WindowPartition(partition_index),
    )
}

fn circuits(
    proof: RegisteredPoStProof,
    randomness: &[u8],
    prover_id: [u8; 32],
    vanilla_proofs: &[Vec<u8>],
    form: Form,
) -> Result<CircuitSet> {
    let (want, kind) = match form {
        Form::Winning => (PoStType::Winning, JobKind::WinningPost),
        _ => (PoStType::Window, JobKind::WindowPost),
    };
    if proof.typ() != want {
        return Err(Error::invalid_input(format!(
            "{proof:?} is not a {want:?} PoSt proof"
        )));
    }
    let randomness = bytes32("randomness", randomness)?;
    super::field_element("randomness", &randomness)?;
    super::field_element("prover_id", &prover_id)?;
    if vanilla_proofs.is_empty() {
        return Err(Error::invalid_input("no vanilla proofs"));
    }
    let partitions = with_shape!(
        u64::from(proof.sector_size()),
        partitions_of,
        proof.as_v1_config(),
        randomness,
        prover_id,
        vanilla_proofs,
        form,
    )?;
    CircuitSet::new(kind, ParamsFor::PoSt(proof), partitions)
}

type Domain<Tree> = <<Tree as MerkleTreeTrait>::Hasher as Hasher>::Domain;

struct Context<Tree: 'static + MerkleTreeTrait> {
    public_inputs: fallback::PublicInputs<Domain<Tree>>,
    public_params: compound_proof::PublicParams<'static, FallbackPoSt<'static, Tree>>,
}

fn partitions_of<Tree: 'static + MerkleTreeTrait>(
    config: PoStConfig,
    randomness: [u8; 32],
    prover_id: [u8; 32],
    vanilla_bytes: &[Vec<u8>],
    form: Form,
) -> Result<Vec<PartitionCircuit>> {
    let vanilla: Vec<FallbackPoStSectorProof<Tree>> =
        super::decode_vanilla(vanilla_bytes, "a FallbackPoStSectorProof")?;
    let bad = |e| fil_error(ErrorKind::InvalidInput, "PoSt inputs", e);
    let randomness_safe: Domain<Tree> =
        as_safe_commitment(&randomness, "randomness").map_err(bad)?;
    let prover_id_safe: Domain<Tree> = as_safe_commitment(&prover_id, "prover_id").map_err(bad)?;

    let partitions = match form {
        Form::Winning => {
            if vanilla.len() != config.sector_count {
                return Err(Error::invalid_input(format!(
                    "{} vanilla proofs where a WinningPoSt takes {}",
                    vanilla.len(),
                    config.sector_count
                )));
            }
            None
        }
        Form::Window | Form::WindowPartition(_) => {
            window_partitions(vanilla.len(), config.sector_count)
        }
    };
    // `circuits` checked that the proof's type is the form's.
    let vanilla_params = setup_params(&config)?;
    let public_params = FallbackPoStCompound::<Tree>::setup(&compound_proof::SetupParams {
        vanilla_params,
        partitions,
        priority: config.priority,
    })
    .map_err(|e| fil_error(ErrorKind::Internal, "PoSt public params", e))?;
    let public_inputs = fallback::PublicInputs {
        randomness: randomness_safe,
        prover_id: prover_id_safe,
        sectors: vanilla
            .iter()
            .map(|p| PublicSector {
                id: p.sector_id,
                comm_r: p.comm_r,
            })
            .collect(),
        k: match form {
            Form::WindowPartition(k) => Some(k),
            _ => None,
        },
    };
    let partitioned = match form {
        Form::WindowPartition(_) => vec![single_partition_vanilla_proofs(
            &config,
            &public_params.vanilla_params,
            &public_inputs,
            &vanilla,
        )
        .map_err(|e| fil_error(ErrorKind::InvalidInput, "WindowPoSt partition", e))?],
        _ => partition_vanilla_proofs(
            &config,
            &public_params.vanilla_params,
            &public_inputs,
            public_params.partitions.unwrap_or(1),
            &vanilla,
        )
        .map_err(|e| fil_error(ErrorKind::InvalidInput, "PoSt vanilla proofs", e))?,
    };
    let ctx = Arc::new(Context::<Tree> {
        public_inputs,
        public_params,
    });
    Ok(partitioned
        .into_iter()
        .enumerate()
        .map(|(k, proof)| {
            let ctx = ctx.clone();
            PartitionCircuit::build(move || {
                let circuit = <FallbackPoStCompound<Tree> as CompoundProof<
                    FallbackPoSt<'_, Tree>,
                    _,
                >>::circuit(
                    &ctx.public_inputs,
                    Default::default(),
                    &proof,
                    &ctx.public_params.vanilla_params,
                    Some(k),
                )
                .map_err(|e| fil_error(ErrorKind::InvalidInput, "PoSt circuit", e))?;
                // The same circuit, whose witness run skips the Poseidon gadgets.
                PostPartition::new(
                    circuit,
                    &ctx.public_inputs,
                    &proof,
                    ctx.public_params.vanilla_params.sector_count,
                    k,
                )
            })
        })
        .collect())
}

/// One partition of `proof`'s PoSt circuit (WinningPoSt or WindowPoSt), any sector size,
/// with random values (`random.rs`): every sector of a full partition, each with its
/// challenges' leaves and tree paths. The synthesis bench's 32GiB WindowPoSt partition.
#[cfg(feature = "test-fixtures")]
pub fn post_random_partition(proof: RegisteredPoStProof, seed: u64) -> Result<PartitionCircuit> {
    fn random<Tree: 'static + MerkleTreeTrait>(
        config: PoStConfig,
        seed: u64,
    ) -> Result<PartitionCircuit> {
        let params = setup_params(&config)?;
        let nodes = params.sector_size as usize / storage_proofs_core::util::NODE_SIZE;
        Ok(PartitionCircuit::build(move || {
            let mut rng = super::random::seeded(seed);
            Ok(PostPartition::<Tree>::random(
                params.sector_count,
                params.challenge_count,
                nodes,
                &mut rng,
            ))
        }))
    }
    let key = ParamsFor::PoSt(proof).shape_key()?;
    let p = with_shape!(
        u64::from(proof.sector_size()),
        random,
        proof.as_v1_config(),
        seed,
    )?;
    Ok(p.with_shape_key(key))
}

/// The vanilla setup params of `config`'s circuit, as filecoin-proofs derives them per type.
fn setup_params(config: &PoStConfig) -> Result<SetupParams> {
    Ok(match config.typ {
        PoStType::Winning => winning_post_setup_params(config)
            .map_err(|e| fil_error(ErrorKind::InvalidInput, "WinningPoSt setup", e))?,
        PoStType::Window => window_post_setup_params(config),
    })
}

/// filecoin-proofs' rule for a WindowPoSt's partition count (its function is crate-private):
/// one partition per `sector_count` sectors, and `None` (one) unless that is more than one.
fn window_partitions(sectors: usize, sector_count: usize) -> Option<usize> {
    let partitions = sectors.div_ceil(sector_count);
    (partitions > 1).then_some(partitions)
}

/// Test-only params for `proof`'s circuit from known toxic waste (its blank circuit).
#[cfg(feature = "test-fixtures")]
pub(crate) fn test_srs(
    proof: RegisteredPoStProof,
    waste: &crate::fixtures::ToxicWaste,
) -> Result<crate::groth16::Srs> {
    fn blank<Tree: 'static + MerkleTreeTrait>(
        config: PoStConfig,
        waste: &crate::fixtures::ToxicWaste,
    ) -> Result<crate::groth16::Srs> {
        let vanilla_params = setup_params(&config)?;
        let public_params = FallbackPoStCompound::<Tree>::setup(&compound_proof::SetupParams {
            vanilla_params,
            partitions: None,
            priority: config.priority,
        })
        .map_err(|e| fil_error(ErrorKind::Internal, "PoSt public params", e))?;
        let circuit =
            <FallbackPoStCompound<Tree> as CompoundProof<FallbackPoSt<'_, Tree>, _>>::blank_circuit(
                &public_params.vanilla_params,
            );
        crate::fixtures::generate_srs(circuit, waste)
    }
    with_shape!(
        u64::from(proof.sector_size()),
        blank,
        proof.as_v1_config(),
        waste,
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn window_partitions_as_filecoin_proofs_counts_them() {
        use super::window_partitions;
        // filecoin-proofs: ceil(sectors as f32 / sector_count as f32), None unless > 1.
        assert_eq!(window_partitions(1, 2), None);
        assert_eq!(window_partitions(2, 2), None);
        assert_eq!(window_partitions(3, 2), Some(2));
        assert_eq!(window_partitions(4700, 2349), Some(3));
        assert_eq!(window_partitions(2349, 2349), None);
    }
}
