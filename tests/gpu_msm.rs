//! GPU G1 MSM against the CPU backend (blst's Pippenger) and a naive sum. Skips without a GPU.

mod gpu_common;

use blstrs::{G1Affine, G1Projective, Scalar};
use ff::Field;
use group::{Curve, Group};

use gpu_common::*;

/// Runs one MSM on the GPU and compares it with the CPU (and with a naive sum when small).
fn check(ctx: &mut cuzk::gpu::GpuContext, what: &str, points: &[G1Affine], scalars: &[Scalar]) {
    let (got, t) = ctx
        .msm_g1_timed(points, scalars)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let want = cuzk::cpu::msm::msm_g1(points, scalars);
    assert_eq!(
        got.to_affine(),
        want.to_affine(),
        "{what}: GPU MSM differs from CPU (n = {})",
        points.len()
    );
    if points.len() <= 300 {
        assert_eq!(
            got,
            naive_msm(points, scalars),
            "{what}: differs from the naive sum"
        );
    }
    println!(
        "ok {what} n={} c={} total {:.2} ms",
        points.len(),
        t.window_bits,
        t.total_ms
    );
}

/// `n` seeded random points with the special points planted, and their copy on the device.
fn resident_points(
    ctx: &mut cuzk::gpu::GpuContext,
    n: usize,
    seed: u64,
) -> (Vec<G1Affine>, cuzk::gpu::DeviceG1Points) {
    let mut points = random_points(n, seed);
    plant_special_points(&mut points);
    let on_device = ctx.upload_g1_points(&points).expect("upload");
    (points, on_device)
}

/// Zero, one, then two of `rand`'s values, by index mod 4.
fn mixed_scalars(rand: &[Scalar]) -> Vec<Scalar> {
    rand.iter()
        .enumerate()
        .map(|(i, &r)| match i % 4 {
            0 => Scalar::ZERO,
            1 => Scalar::ONE,
            _ => r,
        })
        .collect()
}

#[test]
fn gpu_discovery_does_not_panic() {
    // Must answer (empty list or a reason) on machines without libcuda or without a GPU.
    match cuzk::gpu::discover() {
        Ok(d) => println!("devices: {d:?}"),
        Err(e) => println!("no devices: {e}"),
    }
    assert_eq!(
        cuzk::gpu::devices().is_empty(),
        cuzk::gpu::discover().map(|d| d.is_empty()).unwrap_or(true)
    );
    if cuzk::gpu::devices().is_empty() {
        assert!(cuzk::gpu::GpuContext::new(0).is_err());
    }
}

#[test]
fn gpu_msm_sizes_random() {
    let Some(mut ctx) = gpu() else { return };
    for (i, &n) in [1usize, 2, 3, 255, (1 << 10) + 7, 1 << 16, 1 << 20]
        .iter()
        .enumerate()
    {
        let mut points = random_points(n, 100 + i as u64);
        plant_special_points(&mut points);
        let scalars = random_scalars(n, 200 + i as u64);
        check(&mut ctx, "random", &points, &scalars);
    }
}

#[test]
fn gpu_msm_special_scalars() {
    let Some(mut ctx) = gpu() else { return };
    let r_minus_1 = -Scalar::ONE;
    for &n in &[3usize, 255, (1 << 10) + 7, 1 << 16] {
        let mut points = random_points(n, 300 + n as u64);
        plant_special_points(&mut points);
        let rand = random_scalars(n, 400 + n as u64);
        let cases: Vec<(&str, Vec<Scalar>)> = vec![
            ("zeros", vec![Scalar::ZERO; n]),
            ("ones", vec![Scalar::ONE; n]),
            ("r-1", vec![r_minus_1; n]),
            ("all-equal", vec![rand[0]; n]),
            // Filecoin witnesses are mostly bits: a skewed bucket distribution.
            (
                "bits-and-random",
                (0..n)
                    .map(|i| match i % 4 {
                        0 => Scalar::ZERO,
                        1 | 2 => Scalar::ONE,
                        _ => rand[i],
                    })
                    .collect(),
            ),
            (
                "small",
                (0..n).map(|i| Scalar::from((i as u64) % 1000)).collect(),
            ),
        ];
        for (what, scalars) in cases {
            check(&mut ctx, what, &points, &scalars);
        }
    }
}

#[test]
fn gpu_msm_cancelling_pairs() {
    let Some(mut ctx) = gpu() else { return };
    // P and -P with the same scalar in one MSM: the sum is the identity.
    let n = 1000;
    let half = random_points(n / 2, 7);
    let mut points = half.clone();
    points.extend(half.iter().map(|p| -*p));
    let s = random_scalars(n / 2, 8);
    let mut scalars = s.clone();
    scalars.extend(s);
    let got = ctx.msm_g1(&points, &scalars).expect("msm");
    assert!(
        bool::from(got.is_identity()),
        "P·s + (-P)·s must be the identity"
    );
    check(&mut ctx, "pairs", &points, &scalars);
}

#[test]
fn gpu_msm_rejects_bad_lengths() {
    let Some(mut ctx) = gpu() else { return };
    let points = random_points(4, 1);
    let scalars = random_scalars(3, 1);
    assert!(ctx.msm_g1(&points, &scalars).is_err());
    assert_eq!(
        ctx.msm_g1(&[], &[]).expect("empty msm"),
        G1Projective::identity()
    );
}

#[test]
fn gpu_msm_resident_points() {
    let Some(mut ctx) = gpu() else { return };
    // An SRS-like section uploaded once, MSMs over sub-ranges of it with fresh scalars.
    let n = (1 << 16) + 3;
    let (points, on_device) = resident_points(&mut ctx, n, 900);
    assert_eq!(on_device.len(), n);
    for (seed, start, len) in [
        (1u64, 0usize, n),
        (2, 5, 1000),
        (3, n - 17, 17),
        (4, 1 << 15, 1 << 15),
    ] {
        let scalars = random_scalars(len, 910 + seed);
        let (got, _) = ctx
            .msm_g1_resident(&on_device, start, &scalars)
            .expect("resident msm");
        let want = cuzk::cpu::msm::msm_g1(&points[start..start + len], &scalars);
        assert_eq!(
            got.to_affine(),
            want.to_affine(),
            "resident MSM at {start}..+{len}"
        );
    }
    assert!(ctx
        .msm_g1_resident(&on_device, n - 1, &random_scalars(2, 1))
        .is_err());
    println!("ok resident");
}

#[test]
fn gpu_msm_window_points() {
    let Some(mut ctx) = gpu() else { return };
    // Window points expanded on the device from a sub-range of resident points; MSMs over
    // them (every window in one bucket set) against the CPU, for every supported window
    // size's edge and the scalars that stress one bucket.
    let n = (1 << 14) + 5;
    let (points, on_device) = resident_points(&mut ctx, n + 9, 950);
    let section = &points[9..9 + n];
    let rand = random_scalars(n, 951);
    for c in [16u32, 20, 22, 24] {
        let wp = ctx
            .g1_window_points(&on_device, 9, n, c)
            .unwrap_or_else(|e| panic!("window points c = {c}: {e}"));
        assert_eq!((wp.len(), wp.window_bits()), (n, c));
        assert_eq!(wp.device_bytes(), 256usize.div_ceil(c as usize) * n * 96);
        let cases: Vec<(&str, Vec<Scalar>)> = vec![
            ("random", rand.clone()),
            ("ones", vec![Scalar::ONE; n]),
            ("r-1", vec![-Scalar::ONE; n]),
            ("mixed", mixed_scalars(&rand)),
        ];
        for (what, scalars) in cases {
            let (got, t) = ctx
                .msm_g1_windowed(&wp, &scalars)
                .unwrap_or_else(|e| panic!("{what}, c = {c}: {e}"));
            assert_eq!(t.window_bits, c);
            assert_eq!(
                got.to_affine(),
                cuzk::cpu::msm::msm_g1(section, &scalars).to_affine(),
                "windowed MSM ({what}, c = {c}) differs from the CPU"
            );
        }
        assert!(ctx.msm_g1_windowed(&wp, &rand[1..]).is_err());
    }
    // Window sizes outside the supported range and ranges past the points are refused.
    for c in [15u32, 25] {
        assert!(ctx.g1_window_points(&on_device, 0, n, c).is_err());
    }
    assert!(ctx.g1_window_points(&on_device, 10, n, 20).is_err());
    assert!(ctx.g1_window_points(&on_device, 0, 0, 20).is_err());
    println!("ok window points");
}

#[test]
fn gpu_msm_launch_splits_and_wide_windows() {
    let Some(mut ctx) = gpu() else { return };
    // The histogram and the scatter split into launches of a few windows, the scatter's
    // launches by each window's entries (0/1 scalars have digits in window 0 only, the mixed
    // ones few above it), and windows up to MAX_WINDOW_BITS, each over scalars from the host
    // and scalars already on the device.
    use cuzk::gpu::{MsmTuning, MAX_WINDOW_BITS};
    use cuzk::groth16::density::Selection;
    let n = (1 << 14) + 5;
    let (points, on_device) = resident_points(&mut ctx, n, 960);
    let rand = random_scalars(n, 961);
    let cases: Vec<(&str, Vec<Scalar>)> = vec![
        ("random", rand.clone()),
        (
            "bits",
            (0..n).map(|i| Scalar::from((i % 3 % 2) as u64)).collect(),
        ),
        ("mixed", mixed_scalars(&rand)),
        (
            // a PoRep witness's shape: windows above 0 hold n/32 entries, below the default
            // n/8 of a scatter launch of their own
            "sparse",
            (0..n)
                .map(|i| match i % 32 {
                    0 => rand[i],
                    _ => Scalar::from((i % 2) as u64),
                })
                .collect(),
        ),
        ("r-1", vec![-Scalar::ONE; n]),
    ];
    let tunings = [
        MsmTuning::default(),
        MsmTuning {
            hist_windows: Some(1),
            scatter_windows: Some(1),
            ..MsmTuning::default()
        },
        MsmTuning {
            window_bits: Some(16),
            hist_windows: Some(3),
            scatter_windows: Some(5),
            ..MsmTuning::default()
        },
        MsmTuning {
            window_bits: Some(22),
            hist_windows: Some(1),
            ..MsmTuning::default()
        },
        MsmTuning {
            window_bits: Some(MAX_WINDOW_BITS),
            ..MsmTuning::default()
        },
        // Every window with any entries alone, then (n / 1 entries) most of them together.
        MsmTuning {
            scatter_alone: Some(1 << 20),
            ..MsmTuning::default()
        },
        MsmTuning {
            window_bits: Some(13),
            scatter_alone: Some(1),
            ..MsmTuning::default()
        },
    ];
    for (what, scalars) in &cases {
        let want = cuzk::cpu::msm::msm_g1(&points, scalars).to_affine();
        let on_device_scalars = ctx.upload_scalars(scalars).expect("upload scalars");
        for tuning in tunings {
            ctx.set_msm_tuning(tuning);
            let (host, t) = ctx
                .msm_g1_resident(&on_device, 0, scalars)
                .unwrap_or_else(|e| panic!("{what}, {tuning:?}: {e}"));
            if let Some(c) = tuning.window_bits {
                assert_eq!(t.window_bits, c);
            }
            assert_eq!(host.to_affine(), want, "{what}, host scalars, {tuning:?}");
            let (dev, _) = ctx
                .msm_g1_resident_device_scalars(&on_device, &[], &on_device_scalars, Selection::All)
                .unwrap_or_else(|e| panic!("{what}, {tuning:?}: {e}"));
            assert_eq!(dev.to_affine(), want, "{what}, device scalars, {tuning:?}");
        }
    }
    ctx.set_msm_tuning(MsmTuning::default());
    println!("ok launch splits and wide windows");
}

#[test]
fn gpu_msm_affine_rounds() {
    let Some(mut ctx) = gpu() else { return };
    // Stage 3b (affine rounds, then the accumulation over their last list) against the CPU:
    // points repeated and negated (pairs that are a doubling or cancel, whole buckets of one
    // point), the infinity, skewed and uniform digits, several rounds, pairs per thread,
    // and window groups, with points and scalars from the host and on the device.
    use cuzk::gpu::MsmTuning;
    use cuzk::groth16::density::Selection;
    let n = (1 << 14) + 3;
    let base = random_points(n / 4 + 1, 970);
    let mut points: Vec<G1Affine> = (0..n)
        .map(|i| match i % 3 {
            2 => -base[i % base.len()],
            _ => base[i % base.len()],
        })
        .collect();
    plant_special_points(&mut points);
    let on_device = ctx.upload_g1_points(&points).expect("upload");
    let rand = random_scalars(n, 971);
    let cases: Vec<(&str, Vec<Scalar>)> = vec![
        ("random", rand.clone()),
        ("mixed", mixed_scalars(&rand)),
        ("all-equal", vec![rand[0]; n]),
        ("r-1", vec![-Scalar::ONE; n]),
        (
            "bits",
            (0..n).map(|i| Scalar::from((i % 3 % 2) as u64)).collect(),
        ),
    ];
    let tuning = |c, rounds, pairs, windows| MsmTuning {
        window_bits: Some(c),
        affine_rounds: Some(rounds),
        affine_pairs: pairs,
        affine_windows: windows,
        ..MsmTuning::default()
    };
    // The default pairs a thread, and counts that are odd, smaller than the forward pass's
    // batch, and 1.
    let tunings = [
        tuning(8, 1, None, None),
        tuning(6, 3, Some(7), Some(5)),
        tuning(6, 8, Some(1), Some(1)),
        tuning(11, 2, Some(64), Some(3)),
        tuning(4, 5, Some(300), None),
        tuning(8, 2, Some(13), None),
    ];
    for (what, scalars) in &cases {
        let want = cuzk::cpu::msm::msm_g1(&points, scalars).to_affine();
        let on_device_scalars = ctx.upload_scalars(scalars).expect("upload scalars");
        for tuning in tunings {
            ctx.set_msm_tuning(tuning);
            let (host, _) = ctx
                .msm_g1_timed(&points, scalars)
                .unwrap_or_else(|e| panic!("{what}, {tuning:?}: {e}"));
            assert_eq!(host.to_affine(), want, "{what}, host points, {tuning:?}");
            let (dev, _) = ctx
                .msm_g1_resident_device_scalars(&on_device, &[], &on_device_scalars, Selection::All)
                .unwrap_or_else(|e| panic!("{what}, {tuning:?}: {e}"));
            assert_eq!(dev.to_affine(), want, "{what}, device scalars, {tuning:?}");
        }
    }
    ctx.set_msm_tuning(MsmTuning::default());
    println!("ok affine rounds");
}
