//! Filecoin's proof kinds, from exactly the inputs Lotus and Curio hold (a C1 output, vanilla
//! proofs) to exactly the bytes filecoin-ffi returns.
//!
//! Each kind (one file here) decodes its inputs with Filecoin's own types, builds its
//! circuits with storage-proofs' own `CompoundProof::circuit` exactly as filecoin-proofs'
//! prover does (nothing is re-implemented), and submits them to the [`Engine`] as one
//! [`JobRequest`] of circuits to synthesize. The params come from the Filecoin parameter
//! cache under the names storage-proofs derives, loaded once per engine by its
//! [`ParamsRegistry`](crate::engine::ParamsRegistry). Proofs are verified before they are
//! returned unless [`ProofOptions::verify`] is off; [`proof_bytes`] concatenates a job's
//! partition proofs in partition order, filecoin-ffi's layout.
//!
//! ```text
//! host bytes ─► kind file: decode, check, Compound::setup, one closure per partition
//!            ─► Engine::submit(JobRequest { Synthesize(..) }) ─► Job ─► proof_bytes
//! ```

mod circuit;
mod porep;
mod porep_witness;
mod poseidon_path;
mod post;
mod post_witness;
#[cfg(feature = "test-fixtures")]
mod random;
mod registered;
mod sha256_tree;
mod snap;
mod snap_witness;

use std::path::PathBuf;

pub use circuit::CircuitSet;
pub use porep::{porep_c2_circuits, prove_porep_c2};
#[cfg(feature = "test-fixtures")]
pub use porep::{porep_c2_walk_circuits, porep_random_partition};
#[cfg(feature = "test-fixtures")]
pub use post::post_random_partition;
pub use post::{
    prove_window_post, prove_window_post_partition, prove_winning_post, window_post_circuits,
    window_post_partition_circuits, winning_post_circuits,
};
pub use registered::{post_proof, seal_proof, update_proof, ParamsFor};
pub use snap::{prove_snap, snap_circuits, SnapCommitments};
#[cfg(feature = "test-fixtures")]
pub use snap::{snap_random_partition, snap_walk_circuits};

pub use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};

use crate::engine::{AdmissionPolicy, Engine, Job, JobRequest, Priority, RandomnessChoice};
use crate::error::{Error, ErrorKind, Result};
use crate::groth16::{PointCheck, Proof, PROOF_BYTES};

/// How a Filecoin proof is made; the default is what filecoin-ffi does (fresh randomness,
/// verified before it is returned, the kind's priority).
#[derive(Clone, Debug)]
pub struct ProofOptions {
    /// The (r, s) of each partition's proof.
    pub randomness: RandomnessChoice,
    /// The queue class; `None` for the kind's (WinningPoSt first, then WindowPoSt, then
    /// PoRep and SnapDeals).
    pub priority: Option<Priority>,
    /// Verify each proof before returning it (on by default).
    pub verify: bool,
    /// How the params file's points are checked when it is loaded.
    pub point_check: PointCheck,
    /// Where the params live; `None` for the Filecoin parameter cache
    /// (`FIL_PROOFS_PARAMETER_CACHE`, by default `/var/tmp/filecoin-proof-parameters`).
    pub params_dir: Option<PathBuf>,
    /// This job's admission policy; `None` for the engine's.
    pub admission: Option<AdmissionPolicy>,
}

impl Default for ProofOptions {
    fn default() -> Self {
        ProofOptions {
            randomness: RandomnessChoice::Random,
            priority: None,
            verify: true,
            // Production params are checked against parameters.json by their digest when
            // they are fetched; decoding them without the subgroup check is what
            // filecoin-proofs does too.
            point_check: PointCheck::Unchecked,
            params_dir: None,
            admission: None,
        }
    }
}

/// Submits a kind's circuits to `engine`: loads (or finds) the params in the engine's
/// registry, then queues every partition for the synthesis stage.
pub fn submit(engine: &Engine, set: CircuitSet, options: ProofOptions) -> Result<Job> {
    let kind = set.kind;
    let path = set.params.params_path(options.params_dir.as_deref())?;
    let (srs, params_load) = engine.params().get(&path, options.point_check)?;
    engine.submit(JobRequest {
        randomness: options.randomness,
        priority: options.priority,
        admission: options.admission,
        verify: options.verify,
        params_load,
        ..JobRequest::new(srs, set.input(), kind)
    })
}

/// A job's proofs in filecoin-ffi's layout: each partition's 192 bytes, in partition order.
pub fn proof_bytes(proofs: &[Proof]) -> Vec<u8> {
    let mut out = Vec::with_capacity(proofs.len() * PROOF_BYTES);
    for p in proofs {
        out.extend_from_slice(&p.to_bytes());
    }
    out
}

/// The prover id filecoin-ffi passes down for a miner: the actor id's unsigned varint
/// (LEB128), zero-padded to 32 bytes.
pub fn prover_id_from_miner(miner: u64) -> [u8; 32] {
    let mut id = [0u8; 32];
    let (mut v, mut i) = (miner, 0);
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            id[i] = byte;
            break;
        }
        id[i] = byte | 0x80;
        i += 1;
    }
    id
}

/// A 32-byte array from a host's slice, or an `InvalidInput` naming it.
pub(crate) fn bytes32(what: &str, b: &[u8]) -> Result<[u8; 32]> {
    b.try_into()
        .map_err(|_| Error::invalid_input(format!("{what} must be 32 bytes, got {}", b.len())))
}

/// Decodes each host vanilla proof (bincode, as filecoin-proofs-api's generators write them)
/// as `T`; an error names the first one that is not `what` of this sector size.
pub(crate) fn decode_vanilla<T: serde::de::DeserializeOwned>(
    bytes: &[Vec<u8>],
    what: &str,
) -> Result<Vec<T>> {
    bytes
        .iter()
        .enumerate()
        .map(|(i, b)| {
            bincode::deserialize(b).map_err(|e| {
                fil_error(
                    ErrorKind::InvalidInput,
                    &format!("vanilla proof {i} is not {what} of this sector size"),
                    e,
                )
            })
        })
        .collect()
}

/// Checks that 32 bytes are a BLS12-381 scalar (little-endian, below the modulus r), as
/// every commitment, randomness and prover id the circuits take must be: the hashers'
/// `Domain::try_from_bytes` does not check it, and a value past r would only fail later, in
/// synthesis.
pub(crate) fn field_element(what: &str, b: &[u8; 32]) -> Result<()> {
    use ff::PrimeField;
    match blstrs::Scalar::from_repr_vartime(*b) {
        Some(_) => Ok(()),
        None => Err(Error::invalid_input(format!(
            "{what} is not a field element (not below the BLS12-381 scalar modulus)"
        ))),
    }
}

/// An error from Filecoin's crates (an `anyhow::Error`, rendered with its causes), as the
/// kind of failure it is to the host.
pub(crate) fn fil_error(kind: ErrorKind, what: &str, e: impl std::fmt::Display) -> Error {
    Error::new(kind, format!("{what}: {e:#}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prover_id_is_the_varint_of_the_actor_id() {
        assert_eq!(prover_id_from_miner(0)[..2], [0, 0]);
        assert_eq!(prover_id_from_miner(1000)[..3], [0xe8, 0x07, 0]);
        assert_eq!(prover_id_from_miner(127)[..2], [127, 0]);
        assert_eq!(prover_id_from_miner(128)[..3], [0x80, 0x01, 0]);
        let mut max = [0u8; 32];
        max[..10].copy_from_slice(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
        assert_eq!(prover_id_from_miner(u64::MAX), max);
    }
}
