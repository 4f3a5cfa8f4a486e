//! GPU NTT against the CPU backend's `cpu::ntt::Domain`, and round trips, with both builds of
//! the tile kernels (radix-4 and radix-8 steps) in both tile geometries (2^10 and 2^11
//! elements; the larger where the device gives a block 64 KB). Skips without a GPU. `CUZK_TEST_MAX_LOG`
//! caps the sizes (the sanitizers run them smaller: `scripts/gpu-sanitize.sh`).

mod gpu_common;

use blstrs::Scalar;
use cuzk::cpu::ntt::Domain;
use cuzk::gpu::{GpuContext, NttKind, NttTuning};

use gpu_common::*;

/// The largest size a test runs: `CUZK_TEST_MAX_LOG` when set, else `default`.
fn max_log(default: u32) -> u32 {
    std::env::var("CUZK_TEST_MAX_LOG")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(default, |m: u32| m.min(default))
}

/// Both tile builds in both geometries, (radix, tile log); the H200's default (radix 4, tiles
/// of 2^11) last (the context is the test binary's, shared).
const BUILDS: [(u32, u32); 4] = [(8, 10), (4, 10), (8, 11), (4, 11)];

fn set_build(ctx: &mut GpuContext, (radix, tile_log): (u32, u32)) -> String {
    ctx.set_ntt_tuning(NttTuning {
        radix: Some(radix),
        tile_log: Some(tile_log),
    });
    format!("radix {radix} tiles 2^{tile_log}")
}

#[test]
fn gpu_ntt_matches_cpu() {
    let Some(mut ctx) = gpu() else { return };
    for build in BUILDS {
        let name = set_build(&mut ctx, build);
        matches_cpu(&mut ctx, &name);
    }
}

fn matches_cpu(ctx: &mut GpuContext, build: &str) {
    for log_n in 1..=max_log(22) {
        let n = 1usize << log_n;
        let input = random_scalars(n, 1000 + log_n as u64);
        let domain = Domain::new(log_n).expect("domain");
        for kind in [
            NttKind::Forward,
            NttKind::Inverse,
            NttKind::Coset,
            NttKind::InverseCoset,
        ] {
            let mut want = input.clone();
            match kind {
                NttKind::Forward => domain.ntt(&mut want),
                NttKind::Inverse => domain.intt(&mut want),
                NttKind::Coset => domain.coset_ntt(&mut want),
                NttKind::InverseCoset => domain.icoset_ntt(&mut want),
            }
            let mut got = input.clone();
            ctx.ntt(&mut got, kind)
                .unwrap_or_else(|e| panic!("{build}, 2^{log_n} {kind:?}: {e}"));
            if got != want {
                let bad = got.iter().zip(&want).position(|(a, b)| a != b).unwrap();
                panic!("{build}, 2^{log_n} {kind:?}: first difference at index {bad}");
            }
        }
        println!("ok {build} 2^{log_n}");
    }
}

#[test]
fn gpu_ntt_naive_dft_small() {
    use ff::{Field, PrimeField};
    let Some(mut ctx) = gpu() else { return };
    // An independent check of the conventions: X[k] = Σ x[j]·ω^(jk).
    for log_n in 1..=6u32 {
        let n = 1usize << log_n;
        let omega = Scalar::ROOT_OF_UNITY.pow_vartime([1u64 << (Scalar::S - log_n)]);
        let x = random_scalars(n, 77 + log_n as u64);
        let want: Vec<Scalar> = (0..n)
            .map(|k| {
                (0..n)
                    .map(|j| x[j] * omega.pow_vartime([(j * k) as u64]))
                    .sum()
            })
            .collect();
        let mut got = x.clone();
        ctx.ntt(&mut got, NttKind::Forward).expect("ntt");
        assert_eq!(got, want, "2^{log_n}");
        let _ = Scalar::ONE;
    }
}

#[test]
fn gpu_ntt_round_trips() {
    let Some(mut ctx) = gpu() else { return };
    for build in BUILDS {
        let name = set_build(&mut ctx, build);
        round_trips(&mut ctx, &name);
    }
}

fn round_trips(ctx: &mut GpuContext, build: &str) {
    let top = max_log(24);
    for log_n in [1u32, 2, 10, 11, 17, 23, 24]
        .into_iter()
        .filter(|&l| l <= top)
    {
        let n = 1usize << log_n;
        let input = random_scalars(n, 500 + log_n as u64);
        let mut v = input.clone();
        ctx.ntt(&mut v, NttKind::Forward).expect("forward");
        assert_ne!(v, input);
        ctx.ntt(&mut v, NttKind::Inverse).expect("inverse");
        assert_eq!(v, input, "inverse(forward(x)) != x at 2^{log_n}");
        ctx.ntt(&mut v, NttKind::Coset).expect("coset");
        ctx.ntt(&mut v, NttKind::InverseCoset)
            .expect("inverse coset");
        assert_eq!(v, input, "icoset(coset(x)) != x at 2^{log_n}");
        println!("ok round trip {build} 2^{log_n}");
    }
}

#[test]
fn gpu_ntt_rejects_bad_sizes() {
    let Some(mut ctx) = gpu() else { return };
    let mut v = random_scalars(6, 1);
    assert!(ctx.ntt(&mut v, NttKind::Forward).is_err());
    let mut one = random_scalars(1, 1);
    let before = one.clone();
    ctx.ntt(&mut one, NttKind::InverseCoset).expect("size 1");
    assert_eq!(one, before);
}

#[test]
fn gpu_h_coefficients_match_cpu() {
    let Some(mut ctx) = gpu() else { return };
    let top = max_log(22);
    for log_n in (1..=16u32).chain([20, 22]).filter(|&l| l <= top) {
        let n = 1usize << log_n;
        let a = random_scalars(n, 3000 + log_n as u64);
        let b = random_scalars(n, 4000 + log_n as u64);
        let c = random_scalars(n, 5000 + log_n as u64);
        let domain = Domain::new(log_n).expect("domain");
        let want = cuzk::cpu::ntt::h_coefficients(&domain, a.clone(), b.clone(), c.clone());
        let mut got = a.clone();
        let t = ctx.h_coefficients(&mut got, &b, &c).expect("gpu h");
        assert_eq!(got[n - 1], <Scalar as ff::Field>::ZERO);
        got.truncate(n - 1);
        assert!(got == want, "h coefficients differ at 2^{log_n}");
        println!("ok h 2^{log_n} ({:.2} ms)", t.total_ms);
    }
    assert!(ctx
        .h_coefficients(
            &mut random_scalars(4, 1),
            &random_scalars(2, 1),
            &random_scalars(4, 1)
        )
        .is_err());
}

/// The H step of a start phase without staging: b and c go up on the copy stream while the
/// transforms of the vector before them run, and the witness's aux values while c's and the
/// quotient's run. Every size here takes the pinned, pieced path (over 4 MB a vector), up to
/// 2^24 (16 pieces a vector, as a 2^24 proof has). Each overlapped run must give the H of
/// the in-order run, which must be the CPU quotient's, and leave the same aux values on the
/// device; repeated, because a missing order between the copies and the kernels shows only
/// in some runs.
#[test]
fn gpu_h_step_overlapped_uploads_match_in_order() {
    use cuzk::groth16::density::Selection;
    let Some(mut ctx) = gpu() else { return };
    let top = max_log(24);
    for log_n in [18u32, 20, 22, 24].into_iter().filter(|&l| l <= top) {
        let n = 1usize << log_n;
        let a = random_scalars(n, 6000 + log_n as u64);
        let b = random_scalars(n, 7000 + log_n as u64);
        let c = random_scalars(n, 8000 + log_n as u64);
        let aux = random_scalars(n - n / 8, 9000 + log_n as u64);
        // 2^16 distinct points, repeated: the MSMs only have to be the same MSM each time.
        let distinct = random_points(1 << 16, log_n as u64);
        let points: Vec<_> = distinct.iter().copied().cycle().take(n).collect();
        let aux_points = ctx.upload_g1_points(&points[..aux.len()]).expect("points");
        let points = ctx.upload_g1_points(&points).expect("points");
        let aux_msm = |ctx: &mut GpuContext, d: &cuzk::gpu::DeviceScalars| {
            ctx.msm_g1_resident_device_scalars(&aux_points, &[], d, Selection::All)
                .expect("aux msm")
                .0
        };

        ctx.set_overlap_uploads(false);
        let (want, _, _, d_aux) = ctx
            .h_msm_g1_resident_uploading([&a, &b, &c], &points, &aux)
            .expect("in order");
        let want_aux = ctx.msm_g1_resident(&aux_points, 0, &aux).expect("aux").0;
        assert_eq!(
            aux_msm(&mut ctx, &d_aux),
            want_aux,
            "2^{log_n}: aux in order"
        );
        // The stub build's buffers hold nothing to free; the CUDA build's do.
        #[allow(clippy::drop_non_drop)]
        drop(d_aux);
        // The in-order H against the CPU's quotient through the MSM with host scalars.
        let domain = Domain::new(log_n).expect("domain");
        let h = cuzk::cpu::ntt::h_coefficients(&domain, a.clone(), b.clone(), c.clone());
        let (cpu_h, _) = ctx.msm_g1_resident(&points, 0, &h).expect("h msm");
        assert_eq!(
            want, cpu_h,
            "2^{log_n}: in-order H against the CPU quotient"
        );

        ctx.set_overlap_uploads(true);
        for run in 0..4 {
            let (got, nt, _, d_aux) = ctx
                .h_msm_g1_resident_uploading([&a, &b, &c], &points, &aux)
                .expect("overlapped");
            assert_eq!(got, want, "2^{log_n} run {run}: overlapped H");
            assert_eq!(
                aux_msm(&mut ctx, &d_aux),
                want_aux,
                "2^{log_n} run {run}: overlapped aux"
            );
            assert!(
                nt.overlapped_upload_ms > 0.0,
                "2^{log_n}: nothing overlapped"
            );
            println!(
                "ok overlapped H step 2^{log_n} run {run}: upload waited {:.2} ms, {:.2} ms under the kernels",
                nt.upload_ms, nt.overlapped_upload_ms
            );
        }
    }
}
