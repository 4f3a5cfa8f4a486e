//! Registered proofs: the numbers hosts pass (filecoin-ffi's and go-state-types' `abi`
//! values, which are filecoin-proofs-api's enum order) and the params files they name.

use std::path::{Path, PathBuf};

use filecoin_proofs_api::{RegisteredPoStProof, RegisteredSealProof, RegisteredUpdateProof};
use serde::de::DeserializeOwned;
use storage_proofs_core::parameter_cache::{parameter_id, verifying_key_id};

use super::fil_error;
use crate::error::{Error, ErrorKind, Result};

/// filecoin-proofs-api's registered-proof enums are append-only and their numbers are their
/// variants' indices, which bincode writes as a little-endian u32: decoding that index is
/// the enum's own mapping, with no table here to fall out of date.
fn registered<T: DeserializeOwned>(n: u64, what: &str) -> Result<T> {
    u32::try_from(n)
        .ok()
        .and_then(|i| bincode::deserialize(&i.to_le_bytes()).ok())
        .ok_or_else(|| Error::invalid_argument(format!("{n} is not a registered {what} proof")))
}

/// The seal proof numbered `n` (`RegisteredSealProof` in go-state-types: 5 is
/// `StackedDrg2KiBV1_1`, 8 `StackedDrg32GiBV1_1`).
pub fn seal_proof(n: u64) -> Result<RegisteredSealProof> {
    registered(n, "seal")
}

/// The PoSt proof numbered `n` (`RegisteredPoStProof`: 0–4 WinningPoSt, 5–9 WindowPoSt
/// V1, 10–14 WindowPoSt V1_1 in go-state-types, which filecoin-proofs-api calls V1_2).
pub fn post_proof(n: u64) -> Result<RegisteredPoStProof> {
    registered(n, "PoSt")
}

/// The update proof numbered `n` (`RegisteredUpdateProof`: 0 is 2KiB … 4 is 64GiB).
pub fn update_proof(n: u64) -> Result<RegisteredUpdateProof> {
    registered(n, "update")
}

/// Which circuit's params a proof needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamsFor {
    /// A PoRep (its C2).
    Seal(RegisteredSealProof),
    /// A WinningPoSt or WindowPoSt.
    PoSt(RegisteredPoStProof),
    /// A SnapDeals update.
    Update(RegisteredUpdateProof),
}

impl ParamsFor {
    /// storage-proofs' identifier of the circuit (`<prefix>-<sha256 of its public params>`).
    pub fn circuit_id(self) -> Result<String> {
        match self {
            ParamsFor::Seal(p) => p.circuit_identifier(),
            ParamsFor::PoSt(p) => p.circuit_identifier(),
            ParamsFor::Update(p) => return Ok(super::snap::circuit_id(p)),
        }
        .map_err(|e| fil_error(ErrorKind::InvalidArgument, "circuit identifier", e))
    }

    /// The shape key the engine records this circuit under: its circuit id (every
    /// partition of every proof of one circuit id has the same R1CS).
    pub(crate) fn shape_key(self) -> Result<crate::r1cs::ShapeKey> {
        Ok(crate::r1cs::ShapeKey::new(self.circuit_id()?))
    }

    /// The params file: `v28-<circuit id>.params` in `dir`, or in the Filecoin parameter
    /// cache when `dir` is `None`.
    pub fn params_path(self, dir: Option<&Path>) -> Result<PathBuf> {
        Ok(cache_dir(dir).join(parameter_id(&self.circuit_id()?)))
    }

    /// The verifying key file beside it (`v28-<circuit id>.vk`), what filecoin-proofs'
    /// verifiers read.
    pub fn vk_path(self, dir: Option<&Path>) -> Result<PathBuf> {
        Ok(cache_dir(dir).join(verifying_key_id(&self.circuit_id()?)))
    }
}

fn cache_dir(dir: Option<&Path>) -> PathBuf {
    dir.map_or_else(
        storage_proofs_core::parameter_cache::parameter_cache_dir,
        Path::to_path_buf,
    )
}

#[cfg(feature = "test-fixtures")]
impl ParamsFor {
    /// Test-only params for this circuit from known toxic waste: never for production.
    pub fn test_srs(self, waste: &crate::fixtures::ToxicWaste) -> Result<crate::groth16::Srs> {
        match self {
            ParamsFor::Seal(p) => super::porep::test_srs(p, waste),
            ParamsFor::PoSt(p) => super::post::test_srs(p, waste),
            ParamsFor::Update(p) => super::snap::test_srs(p, waste),
        }
    }
}
