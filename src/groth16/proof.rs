//! A Groth16 proof and its 192-byte encoding (bellperson's `Proof::write`: compressed A‖B‖C).

use blstrs::{G1Affine, G2Affine};
use group::prime::PrimeCurveAffine;

use crate::error::{Error, ErrorKind, Result};

/// Bytes of an encoded proof.
pub const PROOF_BYTES: usize = 192;

/// A Groth16 proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Proof {
    /// A in G1.
    pub a: G1Affine,
    /// B in G2.
    pub b: G2Affine,
    /// C in G1.
    pub c: G1Affine,
}

impl Proof {
    /// Compressed A (48 bytes) ‖ B (96) ‖ C (48).
    pub fn to_bytes(&self) -> [u8; PROOF_BYTES] {
        let mut out = [0u8; PROOF_BYTES];
        out[..48].copy_from_slice(&self.a.to_compressed());
        out[48..144].copy_from_slice(&self.b.to_compressed());
        out[144..].copy_from_slice(&self.c.to_compressed());
        out
    }

    /// Decodes a proof, checking each point is on the curve, in the subgroup and not the
    /// identity (as bellperson's `Proof::read` does).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let bad = |m: String| Error::new(ErrorKind::InvalidProof, m);
        if bytes.len() != PROOF_BYTES {
            return Err(bad(format!(
                "a proof is {PROOF_BYTES} bytes, got {}",
                bytes.len()
            )));
        }
        let a: Option<G1Affine> =
            G1Affine::from_compressed(bytes[..48].try_into().expect("48")).into();
        let b: Option<G2Affine> =
            G2Affine::from_compressed(bytes[48..144].try_into().expect("96")).into();
        let c: Option<G1Affine> =
            G1Affine::from_compressed(bytes[144..].try_into().expect("48")).into();
        let a = a.ok_or_else(|| bad("proof point A is not a valid G1 point".into()))?;
        let b = b.ok_or_else(|| bad("proof point B is not a valid G2 point".into()))?;
        let c = c.ok_or_else(|| bad("proof point C is not a valid G1 point".into()))?;
        if bool::from(a.is_identity() | b.is_identity() | c.is_identity()) {
            return Err(bad("proof has a point at infinity".into()));
        }
        Ok(Proof { a, b, c })
    }
}
