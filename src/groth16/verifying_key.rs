//! The Groth16 verifying key, in bellperson's byte layout.

use blstrs::{Bls12, G1Affine, G2Affine, G2Prepared, Gt};
use pairing::{MillerLoopResult, MultiMillerLoop};

use super::encoding::{write_section, ParamsReader, PointCheck, UncompressedPoint};
use crate::error::Result;

/// A Groth16 verifying key: the first section of a `.params` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyingKey {
    /// α in G1.
    pub alpha_g1: G1Affine,
    /// β in G1.
    pub beta_g1: G1Affine,
    /// β in G2.
    pub beta_g2: G2Affine,
    /// γ in G2.
    pub gamma_g2: G2Affine,
    /// δ in G1.
    pub delta_g1: G1Affine,
    /// δ in G2.
    pub delta_g2: G2Affine,
    /// One point per public input, the constant ONE first.
    pub ic: Vec<G1Affine>,
}

impl VerifyingKey {
    pub(crate) fn read(r: &mut ParamsReader<'_>) -> Result<Self> {
        Ok(VerifyingKey {
            alpha_g1: r.point("vk.alpha_g1", true)?,
            beta_g1: r.point("vk.beta_g1", true)?,
            beta_g2: r.point("vk.beta_g2", true)?,
            gamma_g2: r.point("vk.gamma_g2", true)?,
            delta_g1: r.point("vk.delta_g1", true)?,
            delta_g2: r.point("vk.delta_g2", true)?,
            ic: r.section("vk.ic")?,
        })
    }

    /// Decodes a verifying key written by [`VerifyingKey::to_bytes`] (or bellperson's
    /// `VerifyingKey::write`), with every point fully checked.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let mut r = ParamsReader::new(bytes, PointCheck::Checked);
        let vk = Self::read(&mut r)?;
        r.finish().map_err(|e| e.context("verifying key"))?;
        Ok(vk)
    }

    /// bellperson's `VerifyingKey::write` layout: six uncompressed points, then `ic`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(96 * 3 + 192 * 3 + 4 + 96 * self.ic.len());
        self.write_into(&mut out);
        out
    }

    pub(crate) fn write_into(&self, out: &mut Vec<u8>) {
        self.alpha_g1.encode(out);
        self.beta_g1.encode(out);
        self.beta_g2.encode(out);
        self.gamma_g2.encode(out);
        self.delta_g1.encode(out);
        self.delta_g2.encode(out);
        write_section(out, &self.ic);
    }

    /// Number of public inputs a proof under this key takes (not counting ONE).
    pub fn num_public_inputs(&self) -> usize {
        self.ic.len().saturating_sub(1)
    }

    /// Precomputes what every verification under this key needs.
    pub fn prepare(&self) -> PreparedVerifyingKey {
        PreparedVerifyingKey {
            alpha_g1_beta_g2: Bls12::multi_miller_loop(&[(
                &self.alpha_g1,
                &G2Prepared::from(self.beta_g2),
            )])
            .final_exponentiation(),
            neg_gamma_g2: G2Prepared::from(-self.gamma_g2),
            neg_delta_g2: G2Prepared::from(-self.delta_g2),
            ic: self.ic.clone(),
        }
    }
}

/// A verifying key with the pairing of α and β and the negated G2 points precomputed.
#[derive(Clone, Debug)]
pub struct PreparedVerifyingKey {
    pub(crate) alpha_g1_beta_g2: Gt,
    pub(crate) neg_gamma_g2: G2Prepared,
    pub(crate) neg_delta_g2: G2Prepared,
    pub(crate) ic: Vec<G1Affine>,
}
