//! Multi-scalar multiplication on the CPU: blst's multi-threaded Pippenger, plus a fast path
//! for the scalars 0 and 1.
//!
//! blstrs' affine points are `#[repr(transparent)]` wrappers of blst's, so SRS slices go to
//! blst as they are. Filecoin's circuits are mostly bits: in a typical assignment most aux
//! values are 0 or 1. A zero costs nothing and a one costs a single point addition, while
//! Pippenger spends about 255/c additions on every point whatever its scalar; so those
//! scalars are split off first and only the rest goes through Pippenger.

use std::ops::{Add, AddAssign};

use blst::{blst_p1, blst_p1_affine, blst_p2, blst_p2_affine, MultiPoint};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::Group;
use rayon::prelude::*;

pub use crate::groth16::density::Selection;

const SCALAR_BITS: usize = 255;
/// Below this share of "other" scalars, gathering the points for Pippenger pays off.
const SPLIT_THRESHOLD: f64 = 0.85;

/// A group the CPU MSM runs in.
pub trait MsmGroup {
    /// Affine points (the SRS form).
    type Affine: Copy + Send + Sync;
    /// Projective results.
    type Projective: Group
        + Send
        + Sync
        + for<'a> Add<&'a Self::Affine, Output = Self::Projective>
        + AddAssign;
    /// blst's Pippenger over canonical 32-byte little-endian scalars.
    fn pippenger(points: &[Self::Affine], scalar_bytes: &[u8]) -> Self::Projective;
}

/// G1.
pub enum G1 {}
/// G2.
pub enum G2 {}

impl MsmGroup for G1 {
    type Affine = G1Affine;
    type Projective = G1Projective;
    fn pippenger(points: &[G1Affine], scalar_bytes: &[u8]) -> G1Projective {
        if points.is_empty() {
            return G1Projective::identity();
        }
        // SAFETY: G1Affine is #[repr(transparent)] over blst_p1_affine, G1Projective over
        // blst_p1.
        let pts: &[blst_p1_affine] =
            unsafe { std::slice::from_raw_parts(points.as_ptr().cast(), points.len()) };
        let r: blst_p1 = pts.mult(scalar_bytes, SCALAR_BITS);
        unsafe { std::mem::transmute::<blst_p1, G1Projective>(r) }
    }
}

impl MsmGroup for G2 {
    type Affine = G2Affine;
    type Projective = G2Projective;
    fn pippenger(points: &[G2Affine], scalar_bytes: &[u8]) -> G2Projective {
        if points.is_empty() {
            return G2Projective::identity();
        }
        // SAFETY: as for G1, with blst_p2_affine and blst_p2.
        let pts: &[blst_p2_affine] =
            unsafe { std::slice::from_raw_parts(points.as_ptr().cast(), points.len()) };
        let r: blst_p2 = pts.mult(scalar_bytes, SCALAR_BITS);
        unsafe { std::mem::transmute::<blst_p2, G2Projective>(r) }
    }
}

/// The selected scalars of each part, concatenated: the i-th pairs with the i-th point.
fn selected<'a>(parts: &[(&'a [Scalar], Selection<'_>)]) -> Vec<&'a Scalar> {
    let mut picked: Vec<&Scalar> = Vec::new();
    for (scalars, sel) in parts {
        match sel {
            Selection::All => picked.extend(scalars.iter()),
            Selection::Dense(d) => picked.extend(d.iter_ones().map(|i| &scalars[i])),
        }
    }
    picked
}

/// The selected scalars of `parts`, copied into one vector (what a device upload needs).
pub fn gather(parts: &[(&[Scalar], Selection<'_>)]) -> Vec<Scalar> {
    selected(parts).into_iter().copied().collect()
}

fn to_bytes(scalars: &[&Scalar]) -> Vec<u8> {
    let mut out = vec![0u8; scalars.len() * 32];
    out.par_chunks_mut(32)
        .zip(scalars.par_iter())
        .with_min_len(1 << 12)
        .for_each(|(o, s)| o.copy_from_slice(&s.to_bytes_le()));
    out
}

/// Σ pointᵢ over `indices`.
fn sum_points<C: MsmGroup>(points: &[C::Affine], indices: &[usize]) -> C::Projective {
    indices
        .par_chunks(1 << 12)
        .map(|chunk| {
            chunk
                .iter()
                .fold(C::Projective::identity(), |acc, &i| acc + &points[i])
        })
        .reduce(C::Projective::identity, |mut a, b| {
            a += b;
            a
        })
}

/// Σ scalarᵢ·pointᵢ where the scalars are the selected ones of `parts`, in order, one per
/// point. Panics when their count differs from the points' (callers validate first).
pub fn msm<C: MsmGroup>(
    points: &[C::Affine],
    parts: &[(&[Scalar], Selection<'_>)],
) -> C::Projective {
    let scalars = selected(parts);
    assert_eq!(scalars.len(), points.len(), "one scalar per point");
    let one = Scalar::ONE;
    let ones: Vec<usize> = (0..scalars.len()).filter(|&i| *scalars[i] == one).collect();
    let zeros = scalars.iter().filter(|s| bool::from(s.is_zero())).count();
    let others = scalars.len() - ones.len() - zeros;
    if others as f64 >= SPLIT_THRESHOLD * scalars.len() as f64 {
        return C::pippenger(points, &to_bytes(&scalars));
    }
    let (mut pts, mut sc) = (Vec::with_capacity(others), Vec::with_capacity(others));
    for (p, s) in points.iter().zip(&scalars) {
        if **s != one && !bool::from(s.is_zero()) {
            pts.push(*p);
            sc.push(*s);
        }
    }
    let (rest, unit) = rayon::join(
        || C::pippenger(&pts, &to_bytes(&sc)),
        || sum_points::<C>(points, &ones),
    );
    rest + unit
}

/// Σ scalarᵢ·pointᵢ in G1 over whole slices.
pub fn msm_g1(points: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    msm::<G1>(points, &[(scalars, Selection::All)])
}

/// Σ scalarᵢ·pointᵢ in G2 over whole slices.
pub fn msm_g2(points: &[G2Affine], scalars: &[Scalar]) -> G2Projective {
    msm::<G2>(points, &[(scalars, Selection::All)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::groth16::density::Density;
    use group::Curve;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn naive_g1(points: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
        points.iter().zip(scalars).map(|(p, s)| p * s).sum()
    }

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
            assert_eq!(
                msm_g1(&points, &scalars),
                naive_g1(&points, &scalars),
                "n = {n}"
            );
            let p2: Vec<G2Affine> = (0..n.min(40))
                .map(|_| G2Projective::random(&mut rng).to_affine())
                .collect();
            let want2: G2Projective = p2.iter().zip(&scalars).map(|(p, s)| p * s).sum();
            assert_eq!(msm_g2(&p2, &scalars[..p2.len()]), want2, "g2 n = {n}");
        }
    }

    #[test]
    fn bit_heavy_and_random_scalars_take_both_paths_correctly() {
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        let n = 3000;
        let points: Vec<G1Affine> = (0..n)
            .map(|_| G1Projective::random(&mut rng).to_affine())
            .collect();
        // Mostly bits (the split path), then all random (the plain path), then all ones.
        let bits: Vec<Scalar> = (0..n)
            .map(|i| {
                if i % 10 == 0 {
                    Scalar::random(&mut rng)
                } else {
                    Scalar::from((i % 3 == 0) as u64)
                }
            })
            .collect();
        let random: Vec<Scalar> = (0..n).map(|_| Scalar::random(&mut rng)).collect();
        let ones = vec![Scalar::ONE; n];
        for s in [&bits, &random, &ones] {
            assert_eq!(msm_g1(&points, s), naive_g1(&points, s));
        }
    }

    #[test]
    fn selection_pairs_dense_scalars_with_points_in_order() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let s: Vec<Scalar> = (0..10).map(|_| Scalar::random(&mut rng)).collect();
        let mut d = Density::new(10);
        d.set(2);
        d.set(7);
        let points: Vec<G1Affine> = (0..5)
            .map(|_| G1Projective::random(&mut rng).to_affine())
            .collect();
        let got = msm::<G1>(
            &points,
            &[(&s[..3], Selection::All), (&s, Selection::Dense(&d))],
        );
        let picked = [s[0], s[1], s[2], s[2], s[7]];
        assert_eq!(got, naive_g1(&points, &picked));
    }
}
