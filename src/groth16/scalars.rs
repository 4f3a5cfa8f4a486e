//! Decoding host scalar buffers into `blstrs::Scalar`, rejecting values that are not reduced.
//!
//! Two encodings: 32-byte little-endian canonical integers (the portable default), and the
//! Montgomery form blstrs keeps in memory (four little-endian u64 limbs of `x·2^256 mod r`),
//! which Rust hosts can hand over without a conversion pass.

use blstrs::Scalar;
use rayon::prelude::*;

use crate::error::{Error, Result};

/// Bytes of one encoded scalar.
pub const SCALAR_BYTES: usize = 32;

/// How a host buffer encodes its scalars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum ScalarEncoding {
    /// 32-byte little-endian integers `< r`.
    #[default]
    CanonicalLe,
    /// blstrs' in-memory form: four little-endian u64 limbs of the Montgomery value `< r`.
    Montgomery,
}

/// The BLS12-381 scalar field modulus r, little-endian limbs.
const MODULUS: [u64; 4] = [
    0xffff_ffff_0000_0001,
    0x53bd_a402_fffe_5bfe,
    0x3339_d808_09a1_d805,
    0x73ed_a753_299d_7d48,
];

fn limbs_le(bytes: &[u8]) -> [u64; 4] {
    std::array::from_fn(|i| u64::from_le_bytes(bytes[8 * i..8 * i + 8].try_into().expect("8")))
}

fn is_reduced(limbs: &[u64; 4]) -> bool {
    for i in (0..4).rev() {
        if limbs[i] != MODULUS[i] {
            return limbs[i] < MODULUS[i];
        }
    }
    false
}

/// Decodes one scalar; `what` and `index` name it in the error.
pub fn scalar_from_bytes(
    bytes: &[u8],
    encoding: ScalarEncoding,
    what: &str,
    index: usize,
) -> Result<Scalar> {
    if bytes.len() != SCALAR_BYTES {
        return Err(Error::invalid_assignment(format!(
            "{what}[{index}]: a scalar is {SCALAR_BYTES} bytes, got {}",
            bytes.len()
        )));
    }
    let limbs = limbs_le(bytes);
    if !is_reduced(&limbs) {
        return Err(Error::invalid_assignment(format!(
            "{what}[{index}]: scalar is not reduced (it is >= the field modulus r)"
        )));
    }
    Ok(match encoding {
        ScalarEncoding::CanonicalLe => {
            Option::from(Scalar::from_u64s_le(&limbs)).expect("reduced limbs always decode")
        }
        ScalarEncoding::Montgomery => Scalar::from(blst::blst_fr { l: limbs }),
    })
}

/// Decodes a buffer of `bytes.len() / 32` scalars in parallel.
pub fn scalars_from_bytes(
    bytes: &[u8],
    encoding: ScalarEncoding,
    what: &str,
) -> Result<Vec<Scalar>> {
    if bytes.len() % SCALAR_BYTES != 0 {
        return Err(Error::invalid_assignment(format!(
            "{what}: {} bytes is not a whole number of {SCALAR_BYTES}-byte scalars",
            bytes.len()
        )));
    }
    bytes
        .par_chunks_exact(SCALAR_BYTES)
        .enumerate()
        .map(|(i, b)| scalar_from_bytes(b, encoding, what, i))
        .collect()
}

/// Encodes scalars as 32-byte little-endian canonical integers.
pub fn scalars_to_bytes(scalars: &[Scalar]) -> Vec<u8> {
    scalars.iter().flat_map(|s| s.to_bytes_le()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;

    #[test]
    fn canonical_and_montgomery_round_trip_and_reject_r() {
        let x = Scalar::from(123456789u64) * Scalar::from(987654321u64).invert().unwrap();
        let canonical = x.to_bytes_le();
        assert_eq!(
            scalar_from_bytes(&canonical, ScalarEncoding::CanonicalLe, "a", 0).unwrap(),
            x
        );
        let mont = blst::blst_fr::from(x);
        let mont_bytes: Vec<u8> = mont.l.iter().flat_map(|l| l.to_le_bytes()).collect();
        assert_eq!(
            scalar_from_bytes(&mont_bytes, ScalarEncoding::Montgomery, "a", 0).unwrap(),
            x
        );

        let r: Vec<u8> = MODULUS.iter().flat_map(|l| l.to_le_bytes()).collect();
        let err = scalar_from_bytes(&r, ScalarEncoding::CanonicalLe, "aux", 7).unwrap_err();
        assert!(err.message().contains("aux[7]") && err.message().contains("not reduced"));
        assert!(scalar_from_bytes(&r, ScalarEncoding::Montgomery, "aux", 7).is_err());
        let minus_one = (-Scalar::ONE).to_bytes_le();
        assert_eq!(
            scalar_from_bytes(&minus_one, ScalarEncoding::CanonicalLe, "a", 0).unwrap(),
            -Scalar::ONE
        );
        assert!(scalars_from_bytes(&[0u8; 33], ScalarEncoding::CanonicalLe, "c").is_err());
    }
}
