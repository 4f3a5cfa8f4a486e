//! Multi-scalar multiplication on the CPU: blst's multi-threaded Pippenger.
//!
//! blstrs' affine points are `#[repr(transparent)]` wrappers of blst's, so the SRS slices go
//! to blst as they are; only the scalars are converted (Montgomery → canonical bytes), and
//! the density bitmap is applied during that conversion so unused variables cost nothing.

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine, MultiPoint};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Group;
use rayon::prelude::*;

use crate::groth16::density::Density;

const SCALAR_BITS: usize = 255;

/// Which scalars of a variable vector an MSM uses.
#[derive(Clone, Copy, Debug)]
pub enum Selection<'a> {
    /// All of them.
    All,
    /// Those whose bit is set.
    Dense(&'a Density),
}

/// Canonical little-endian bytes of the selected scalars of each part, concatenated.
pub fn scalar_bytes(parts: &[(&[Scalar], Selection<'_>)]) -> Vec<u8> {
    let mut picked: Vec<&Scalar> = Vec::new();
    for (scalars, sel) in parts {
        match sel {
            Selection::All => picked.extend(scalars.iter()),
            Selection::Dense(d) => picked.extend(d.iter_ones().map(|i| &scalars[i])),
        }
    }
    let mut out = vec![0u8; picked.len() * 32];
    out.par_chunks_mut(32)
        .zip(picked.par_iter())
        .with_min_len(1 << 12)
        .for_each(|(o, s)| o.copy_from_slice(&s.to_bytes_le()));
    out
}

/// Σ scalarᵢ·pointᵢ in G1; `scalar_bytes` as [`scalar_bytes`] makes it, one 32-byte scalar
/// per point.
pub fn msm_g1_bytes(points: &[G1Affine], scalar_bytes: &[u8]) -> G1Projective {
    assert_eq!(
        points.len() * 32,
        scalar_bytes.len(),
        "one scalar per point"
    );
    if points.is_empty() {
        return G1Projective::identity();
    }
    // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine, and G1Projective over
    // blst_p1.
    let pts: &[blst_p1_affine] =
        unsafe { std::slice::from_raw_parts(points.as_ptr().cast(), points.len()) };
    let r: blst_p1 = pts.mult(scalar_bytes, SCALAR_BITS);
    // SAFETY: G1Projective is #[repr(transparent)] over blst_p1.
    unsafe { std::mem::transmute::<blst_p1, G1Projective>(r) }
}

/// Σ scalarᵢ·pointᵢ in G2.
pub fn msm_g2_bytes(points: &[G2Affine], scalar_bytes: &[u8]) -> G2Projective {
    assert_eq!(
        points.len() * 32,
        scalar_bytes.len(),
        "one scalar per point"
    );
    if points.is_empty() {
        return G2Projective::identity();
    }
    // SAFETY: G2Affine is #[repr(transparent)] over blst_p2_affine.
    let pts: &[blst_p2_affine] =
        unsafe { std::slice::from_raw_parts(points.as_ptr().cast(), points.len()) };
    let r: blst_p2 = pts.mult(scalar_bytes, SCALAR_BITS);
    // SAFETY: G2Projective is #[repr(transparent)] over blst_p2.
    unsafe { std::mem::transmute::<blst_p2, G2Projective>(r) }
}

/// Σ scalarᵢ·pointᵢ in G1 over whole slices.
pub fn msm_g1(points: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    msm_g1_bytes(points, &scalar_bytes(&[(scalars, Selection::All)]))
}

/// Σ scalarᵢ·pointᵢ in G2 over whole slices.
pub fn msm_g2(points: &[G2Affine], scalars: &[Scalar]) -> G2Projective {
    msm_g2_bytes(points, &scalar_bytes(&[(scalars, Selection::All)]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ff::Field;
    use group::Curve;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn msm_matches_the_naive_sum_with_edge_scalars() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for n in [0usize, 1, 2, 3, 31, 33, 255] {
            let points: Vec<G1Affine> = (0..n)
                .map(|i| {
                    let p = G1Projective::random(&mut rng);
                    // duplicates and negations in the same MSM
                    if i % 5 == 4 {
                        -p
                    } else {
                        p
                    }
                })
                .map(|p| p.to_affine())
                .collect();
            let scalars: Vec<Scalar> = (0..n)
                .map(|i| match i % 4 {
                    0 => Scalar::ZERO,
                    1 => -Scalar::ONE,
                    2 => Scalar::ONE,
                    _ => Scalar::random(&mut rng),
                })
                .collect();
            let want: G1Projective = points.iter().zip(&scalars).map(|(p, s)| p * s).sum();
            assert_eq!(msm_g1(&points, &scalars), want, "n = {n}");
            let p2: Vec<G2Affine> = (0..n.min(40))
                .map(|_| G2Projective::random(&mut rng).to_affine())
                .collect();
            let want2: G2Projective = p2.iter().zip(&scalars).map(|(p, s)| p * s).sum();
            assert_eq!(msm_g2(&p2, &scalars[..p2.len()]), want2, "g2 n = {n}");
        }
    }

    #[test]
    fn selection_picks_dense_scalars_in_order() {
        let s: Vec<Scalar> = (0..10u64).map(Scalar::from).collect();
        let mut d = Density::new(10);
        d.set(2);
        d.set(7);
        let bytes = scalar_bytes(&[(&s[..3], Selection::All), (&s, Selection::Dense(&d))]);
        let got: Vec<u8> = bytes.chunks(32).map(|c| c[0]).collect();
        assert_eq!(got, vec![0, 1, 2, 2, 7]);
    }
}
