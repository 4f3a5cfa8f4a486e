//! GPU G2 MSM (the B_g2 section) against the CPU backend and a naive sum. Skips without a GPU.

mod gpu_common;

use blstrs::{G2Affine, G2Projective, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rayon::prelude::*;

use gpu_common::*;

/// n points: runs of start + k·step from random multiples of the generator, with
/// duplicates, negations and infinities planted as in the G1 tests.
fn g2_points(n: usize, seed: u64) -> Vec<G2Affine> {
    let runs = 32usize.min(n.max(1));
    let per = n.div_ceil(runs);
    let proj: Vec<G2Projective> = (0..runs)
        .into_par_iter()
        .flat_map_iter(|r| {
            let mut g = rng(seed ^ (r as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            let mut p = G2Projective::generator() * Scalar::random(&mut g);
            let step = G2Projective::generator() * Scalar::random(&mut g);
            let len = per.min(n.saturating_sub(r * per));
            (0..len).map(move |_| {
                p += step;
                p
            })
        })
        .collect();
    let mut out = vec![G2Affine::identity(); proj.len()];
    G2Projective::batch_normalize(&proj, &mut out);
    for i in 0..n {
        if i % 17 == 3 && i >= 1 {
            out[i] = out[i - 1];
        } else if i % 13 == 5 && i >= 2 {
            out[i] = -out[i - 2];
        } else if i % 101 == 50 {
            out[i] = G2Affine::identity();
        }
    }
    out
}

fn check(ctx: &mut cuzk::gpu::GpuContext, what: &str, points: &[G2Affine], scalars: &[Scalar]) {
    let (got, t) = ctx
        .msm_g2_timed(points, scalars)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let want = cuzk::cpu::msm::msm_g2(points, scalars);
    assert_eq!(
        got.to_affine(),
        want.to_affine(),
        "{what}: GPU G2 MSM differs from CPU (n = {})",
        points.len()
    );
    if points.len() <= 300 {
        let naive: G2Projective = points
            .iter()
            .zip(scalars)
            .map(|(p, s)| G2Projective::from(*p) * s)
            .sum();
        assert_eq!(got, naive, "{what}: differs from the naive sum");
    }
    println!(
        "ok {what} n={} c={} total {:.2} ms (accumulate {:.2} ms)",
        points.len(),
        t.window_bits,
        t.total_ms,
        t.accumulate_ms
    );
}

#[test]
fn gpu_msm_g2_sizes_and_special_scalars() {
    let Some(mut ctx) = gpu() else { return };
    for (i, &n) in [1usize, 2, 3, 255, (1 << 10) + 7, 1 << 16, 1 << 18]
        .iter()
        .enumerate()
    {
        let points = g2_points(n, 40 + i as u64);
        check(
            &mut ctx,
            "random",
            &points,
            &random_scalars(n, 50 + i as u64),
        );
    }
    let n = 4099;
    let points = g2_points(n, 7);
    let minus_one = -Scalar::ONE;
    let mut g = rng(3);
    let mixed: Vec<Scalar> = (0..n)
        .map(|i| match i % 5 {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            2 => minus_one,
            3 => Scalar::from(small_random(&mut g)),
            _ => Scalar::random(&mut g),
        })
        .collect();
    check(&mut ctx, "0/1/r-1/small/random", &points, &mixed);
    check(&mut ctx, "all zero", &points, &vec![Scalar::ZERO; n]);
    check(&mut ctx, "all one", &points, &vec![Scalar::ONE; n]);
    check(&mut ctx, "all r-1", &points, &vec![minus_one; n]);
    check(
        &mut ctx,
        "all equal",
        &points,
        &vec![Scalar::from(123_456_789u64); n],
    );
    assert!(ctx.msm_g2_timed(&points[..3], &mixed[..2]).is_err());
    assert_eq!(
        ctx.msm_g2_timed(&[], &[]).expect("empty msm").0,
        G2Projective::identity()
    );
}

#[test]
fn gpu_msm_g2_resident_points() {
    let Some(mut ctx) = gpu() else { return };
    let n = (1 << 14) + 3;
    let points = g2_points(n, 900);
    let on_device = ctx.upload_g2_points(&points).expect("upload");
    assert_eq!(on_device.len(), n);
    for (seed, start, len) in [(1u64, 0usize, n), (2, 5, 1000), (3, n - 17, 17)] {
        let scalars = random_scalars(len, 910 + seed);
        let (got, _) = ctx
            .msm_g2_resident(&on_device, start, &scalars)
            .expect("resident msm");
        let want = cuzk::cpu::msm::msm_g2(&points[start..start + len], &scalars);
        assert_eq!(
            got.to_affine(),
            want.to_affine(),
            "resident G2 MSM at {start}..+{len}"
        );
    }
    assert!(ctx
        .msm_g2_resident(&on_device, n - 1, &random_scalars(2, 1))
        .is_err());
    println!("ok resident G2");
}
