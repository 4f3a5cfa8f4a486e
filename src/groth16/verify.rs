//! Groth16 verification: e(A, B) = e(α, β) · e(Σ inputᵢ·ICᵢ, γ) · e(C, δ).

use blstrs::{Bls12, G1Projective, G2Prepared, Scalar};
use group::Curve;
use pairing::{MillerLoopResult, MultiMillerLoop};

use super::proof::Proof;
use super::verifying_key::PreparedVerifyingKey;
use crate::error::{Error, Result};

/// Checks `proof` against `public_inputs` (not including ONE). `Ok(false)` means the proof
/// is well formed but does not verify; `Err` means the inputs don't fit the key.
pub fn verify_proof(
    pvk: &PreparedVerifyingKey,
    proof: &Proof,
    public_inputs: &[Scalar],
) -> Result<bool> {
    if public_inputs.len() + 1 != pvk.ic.len() {
        return Err(Error::invalid_argument(format!(
            "the verifying key takes {} public inputs, got {}",
            pvk.ic.len() - 1,
            public_inputs.len()
        )));
    }
    let mut acc = G1Projective::from(pvk.ic[0]);
    for (x, base) in public_inputs.iter().zip(&pvk.ic[1..]) {
        acc += base * x;
    }
    let acc = acc.to_affine();
    let b = G2Prepared::from(proof.b);
    let ml = Bls12::multi_miller_loop(&[
        (&proof.a, &b),
        (&acc, &pvk.neg_gamma_g2),
        (&proof.c, &pvk.neg_delta_g2),
    ]);
    Ok(ml.final_exponentiation() == pvk.alpha_g1_beta_g2)
}
