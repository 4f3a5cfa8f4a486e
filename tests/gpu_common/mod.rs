//! Shared by the GPU tests: one context per test binary, and fast input generators.
#![allow(dead_code)]

use std::sync::{Mutex, MutexGuard, OnceLock};

use blstrs::{G1Affine, G1Projective, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

use cuzk::gpu::{self, GpuContext};

/// The test binary's context on device 0, or None (after printing `SKIP: ...`) without one.
pub fn gpu() -> Option<MutexGuard<'static, GpuContext>> {
    static CTX: OnceLock<Option<Mutex<GpuContext>>> = OnceLock::new();
    let ctx = CTX.get_or_init(|| match gpu::discover() {
        Ok(d) if !d.is_empty() => {
            eprintln!("GPU: {:?}", d[0]);
            Some(Mutex::new(
                GpuContext::new(0).expect("device 0 was discovered but does not open"),
            ))
        }
        Ok(_) => None,
        Err(e) => {
            eprintln!("discover: {e}");
            None
        }
    });
    match ctx {
        Some(m) => Some(m.lock().unwrap_or_else(|e| e.into_inner())),
        None => {
            println!("SKIP: no CUDA device");
            None
        }
    }
}

pub fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// n distinct-looking points: 64 runs of start + k·step, each from random multiples of the
/// generator (cheap: one addition per point instead of one scalar multiplication).
pub fn random_points(n: usize, seed: u64) -> Vec<G1Affine> {
    let runs = 64usize.min(n.max(1));
    let per = n.div_ceil(runs);
    let proj: Vec<G1Projective> = (0..runs)
        .into_par_iter()
        .flat_map_iter(|r| {
            let mut g = rng(seed ^ (r as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut p = G1Projective::generator() * Scalar::random(&mut g);
            let step = G1Projective::generator() * Scalar::random(&mut g);
            let len = per.min(n.saturating_sub(r * per));
            (0..len).map(move |_| {
                p += step;
                p
            })
        })
        .collect();
    let mut out = vec![G1Affine::identity(); proj.len()];
    G1Projective::batch_normalize(&proj, &mut out);
    out
}

/// Plants duplicates, negations (a point and its negation in one MSM) and infinities.
pub fn plant_special_points(points: &mut [G1Affine]) {
    let n = points.len();
    for i in 0..n {
        if i % 17 == 3 && i >= 1 {
            points[i] = points[i - 1];
        } else if i % 13 == 5 && i >= 2 {
            points[i] = -points[i - 2];
        } else if i % 101 == 50 {
            points[i] = G1Affine::identity();
        }
    }
}

pub fn random_scalars(n: usize, seed: u64) -> Vec<Scalar> {
    let chunk = 1 << 14;
    (0..n.div_ceil(chunk))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut g = rng(seed.wrapping_add(c as u64 * 7919));
            let len = chunk.min(n - c * chunk);
            (0..len)
                .map(move |_| Scalar::random(&mut g))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Σ sᵢ·Pᵢ the slow way, for small n.
pub fn naive_msm(points: &[G1Affine], scalars: &[Scalar]) -> G1Projective {
    points
        .iter()
        .zip(scalars)
        .map(|(p, s)| G1Projective::from(*p) * s)
        .sum()
}

pub fn small_random(g: &mut ChaCha20Rng) -> u64 {
    g.gen_range(0..1_000_000)
}

pub fn to_affine(p: &G1Projective) -> G1Affine {
    p.to_affine()
}
