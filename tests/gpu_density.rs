//! Density gathers on the device (`GpuContext::msm_g1_resident_device_scalars`): the MSM of
//! the scalars selected on the device must equal the CPU MSM of the host gather
//! (`cpu::msm::gather`), for bitmaps all ones, all zeros, alternating, random and sparse, sizes
//! that are not multiples of 64, and front parts like A's (every input) and B's (inputs
//! selected by their own density). Skips without a GPU.

mod gpu_common;

use blstrs::{G1Affine, Scalar};
use ff::Field;
use group::{Curve, Group};
use rand::Rng;

use cuzk::cpu::msm::{gather, msm_g1};
use cuzk::gpu::{DeviceScalars, GpuContext, GpuError};
use cuzk::groth16::density::{Density, Selection};

use gpu_common::*;

#[derive(Clone, Copy, Debug)]
enum Pattern {
    Ones,
    Zeros,
    Alternating,
    Random,
    Sparse,
}

const PATTERNS: [Pattern; 5] = [
    Pattern::Ones,
    Pattern::Zeros,
    Pattern::Alternating,
    Pattern::Random,
    Pattern::Sparse,
];

fn density(n: usize, pattern: Pattern, seed: u64) -> Density {
    let mut g = rng(seed);
    let mut d = Density::new(0);
    for i in 0..n {
        d.push(match pattern {
            Pattern::Ones => true,
            Pattern::Zeros => false,
            Pattern::Alternating => i % 2 == 1,
            Pattern::Random => g.gen_bool(0.5),
            Pattern::Sparse => g.gen_ratio(1, 16),
        });
    }
    d
}

/// The public inputs: ONE, then random values.
fn inputs(k: usize, seed: u64) -> Vec<Scalar> {
    let mut v = random_scalars(k, seed);
    v[0] = Scalar::ONE;
    v
}

/// Runs `query` (its aux part being `on_device`) on the GPU with the selection applied on the
/// device, and compares with the CPU MSM of the host gather.
fn check(
    ctx: &mut GpuContext,
    what: &str,
    query: [(&[Scalar], Selection<'_>); 2],
    on_device: &DeviceScalars,
    seed: u64,
) {
    let scalars = gather(&query);
    let points = random_points(scalars.len(), seed);
    let d_points = ctx.upload_g1_points(&points).expect("upload points");
    let front = gather(&query[..1]);
    let (got, t) = ctx
        .msm_g1_resident_device_scalars(&d_points, &front, on_device, query[1].1)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let want = msm_g1(&points, &scalars);
    assert_eq!(
        got.to_affine(),
        want.to_affine(),
        "{what}: device-gathered MSM differs from the CPU MSM of the host gather ({} of {} aux \
         scalars, {} in front)",
        scalars.len() - front.len(),
        on_device.len(),
        front.len()
    );
    if scalars.len() <= 64 {
        assert_eq!(got, naive_msm(&points, &scalars), "{what}: naive sum");
    }
    println!(
        "ok {what}: {} scalars ({} in front), gather {:.3} ms, total {:.2} ms",
        scalars.len(),
        front.len(),
        t.upload_ms,
        t.total_ms
    );
}

#[test]
fn gpu_density_gather_patterns_and_sizes() {
    let Some(mut ctx) = gpu() else { return };
    let input = inputs(3, 7);
    let b_inputs = [
        ("b inputs all", Density::full(3)),
        ("b inputs 1,0,1", {
            let mut d = Density::new(3);
            d.set(0);
            d.set(2);
            d
        }),
        ("b inputs none", Density::new(3)),
    ];
    for (si, &n) in [1usize, 63, 64, 65, 1000, 4097, (1 << 16) + 13]
        .iter()
        .enumerate()
    {
        let aux = random_scalars(n, 100 + si as u64);
        let on_device = ctx.upload_scalars(&aux).expect("upload aux");
        assert_eq!(on_device.len(), n);
        let seed = 1000 * si as u64;
        let all: [(&[Scalar], Selection<'_>); 2] = [(&[], Selection::All), (&aux, Selection::All)];
        check(&mut ctx, &format!("n={n} L"), all, &on_device, seed);
        for (pi, &pattern) in PATTERNS.iter().enumerate() {
            let d = density(n, pattern, seed + pi as u64);
            let a_query = [
                (&input[..], Selection::All),
                (&aux[..], Selection::Dense(&d)),
            ];
            let what = format!("n={n} {pattern:?} A");
            check(&mut ctx, &what, a_query, &on_device, seed + 10 + pi as u64);
            for (bi, (name, bd)) in b_inputs.iter().enumerate() {
                if d.count_ones() == 0 && bd.count_ones() == 0 {
                    continue; // nothing selected: gpu_density_gather_empty_selection
                }
                let b_query = [
                    (&input[..], Selection::Dense(bd)),
                    (&aux[..], Selection::Dense(&d)),
                ];
                let what = format!("n={n} {pattern:?} B, {name}");
                check(&mut ctx, &what, b_query, &on_device, seed + 20 + bi as u64);
            }
        }
        // The MSMs convert their scalars in place: the uploaded aux must still be intact.
        check(&mut ctx, &format!("n={n} L again"), all, &on_device, seed);
    }
}

#[test]
fn gpu_density_gather_large() {
    let Some(mut ctx) = gpu() else { return };
    let n = (1 << 20) + 5;
    let input = inputs(5, 8);
    let aux = random_scalars(n, 200);
    let on_device = ctx.upload_scalars(&aux).expect("upload aux");
    for (pi, pattern) in [Pattern::Random, Pattern::Sparse, Pattern::Ones]
        .into_iter()
        .enumerate()
    {
        let d = density(n, pattern, 300 + pi as u64);
        let bd = density(5, Pattern::Alternating, 0);
        let a_query = [
            (&input[..], Selection::All),
            (&aux[..], Selection::Dense(&d)),
        ];
        let b_query = [
            (&input[..], Selection::Dense(&bd)),
            (&aux[..], Selection::Dense(&d)),
        ];
        check(
            &mut ctx,
            &format!("2^20+5 {pattern:?} A"),
            a_query,
            &on_device,
            400,
        );
        check(
            &mut ctx,
            &format!("2^20+5 {pattern:?} B"),
            b_query,
            &on_device,
            401,
        );
    }
}

#[test]
fn gpu_density_gather_empty_selection() {
    let Some(mut ctx) = gpu() else { return };
    let aux = random_scalars(100, 500);
    let on_device = ctx.upload_scalars(&aux).expect("upload aux");
    let none = Density::new(100);
    let no_points = ctx.upload_g1_points(&[]).expect("upload no points");
    let (got, _) = ctx
        .msm_g1_resident_device_scalars(&no_points, &[], &on_device, Selection::Dense(&none))
        .expect("empty selection");
    assert_eq!(got, blstrs::G1Projective::identity());
}

#[test]
fn gpu_density_gather_rejects_bad_arguments() {
    let Some(mut ctx) = gpu() else { return };
    let aux = random_scalars(100, 600);
    let on_device = ctx.upload_scalars(&aux).expect("upload aux");
    let d = density(100, Pattern::Alternating, 0);
    let points: Vec<G1Affine> = random_points(50, 601);
    let d_points = ctx.upload_g1_points(&points).expect("upload points");
    let invalid = |r: Result<_, GpuError>| matches!(r, Err(GpuError::InvalidArgument(_)));
    // A bitmap of the wrong length.
    let short = density(99, Pattern::Ones, 0);
    assert!(invalid(ctx.msm_g1_resident_device_scalars(
        &d_points,
        &[],
        &on_device,
        Selection::Dense(&short)
    )));
    // One scalar more than there are points.
    assert!(invalid(ctx.msm_g1_resident_device_scalars(
        &d_points,
        &[Scalar::ONE],
        &on_device,
        Selection::Dense(&d)
    )));
    // Every aux value for 50 points.
    assert!(invalid(ctx.msm_g1_resident_device_scalars(
        &d_points,
        &[],
        &on_device,
        Selection::All
    )));
    // The right count works.
    let (got, _) = ctx
        .msm_g1_resident_device_scalars(&d_points, &[], &on_device, Selection::Dense(&d))
        .expect("50 of 100");
    let want = msm_g1(&points, &gather(&[(&aux, Selection::Dense(&d))]));
    assert_eq!(got.to_affine(), want.to_affine());
}
