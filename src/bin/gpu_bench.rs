//! GPU benchmark: G1 MSM and Fr NTT timings per stage on device 0.
//!
//! `gpu_bench [msm|g2|ntt|all] [--runs N] [--msm-logs 16,20,22,24] [--scalars random|bits|witness]
//! [--g2-logs 16,18,20] [--ntt-logs 20,...,26]`
//! `--scalars` picks the G1 MSM's scalars: uniform (the H MSM), 0/1 (a Boolean witness), or
//! three quarters 0/1 and a quarter uniform (a Filecoin partition's L, A and B).
//! `gpu_bench sweep --msm-logs 22,24 --configs "default;CUZK_MSM_WINDOW=18,CUZK_MSM_SLICE=64"`
//! times the G1 MSM (points resident) under each configuration of the MSM's tuning variables
//! in one process, on the same inputs, and checks every configuration's result against the
//! first one's; `--scalars` picks its scalars, and `--device-scalars` puts them on the device
//! first (as the start phase's H MSM has them), so that the sort includes their histogram.
//! `gpu_bench windowed --msm-logs 24 --window-bits 20,22,24` times the G1 MSM over window
//! points (every window's digits in one bucket set) for each window size, next to the MSM
//! over the same points resident as they are, on the same scalars, and checks the results
//! equal.
//! Prints the median of N timed runs after one warm-up run for each size. Inputs are random;
//! the first MSM of each size is also checked against the CPU backend (sizes <= 2^20). The
//! G2 MSM (B_g2) is timed next to the CPU backend's in the same process.

use std::time::Instant;

use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use ff::Field;
use group::prime::PrimeCurveAffine;
use group::{Curve, Group};
use rand_core::RngCore;
use rayon::prelude::*;

use cuzk::gpu::{self, GpuContext, MsmTimings, MsmTuning, NttKind, NttTimings};
use cuzk::groth16::density::Selection;

/// SplitMix64: a seeded generator for benchmark inputs (no dev-dependencies in a bin).
struct SplitMix(u64);

impl SplitMix {
    fn seed_from_u64(s: u64) -> Self {
        SplitMix(s)
    }
}

impl RngCore for SplitMix {
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        rand_core::impls::fill_bytes_via_next(self, dest)
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

fn points(n: usize) -> Vec<G1Affine> {
    let runs = 256usize.min(n);
    let per = n.div_ceil(runs);
    let proj: Vec<G1Projective> = (0..runs)
        .into_par_iter()
        .flat_map_iter(|r| {
            let mut g = SplitMix::seed_from_u64(r as u64);
            let mut p = G1Projective::generator() * Scalar::random(&mut g);
            let step = G1Projective::generator() * Scalar::random(&mut g);
            let len = per.min(n.saturating_sub(r * per));
            (0..len).map(move |_| {
                p += step;
                p
            })
        })
        .collect();
    let mut out = vec![G1Affine::identity(); n];
    out.par_chunks_mut(1 << 16)
        .zip(proj.par_chunks(1 << 16))
        .for_each(|(o, p)| G1Projective::batch_normalize(p, o));
    out
}

/// G2 points the same way as [`points`].
fn g2_points(n: usize) -> Vec<G2Affine> {
    let runs = 256usize.min(n);
    let per = n.div_ceil(runs);
    let proj: Vec<G2Projective> = (0..runs)
        .into_par_iter()
        .flat_map_iter(|r| {
            let mut g = SplitMix::seed_from_u64(1000 + r as u64);
            let mut p = G2Projective::generator() * Scalar::random(&mut g);
            let step = G2Projective::generator() * Scalar::random(&mut g);
            let len = per.min(n.saturating_sub(r * per));
            (0..len).map(move |_| {
                p += step;
                p
            })
        })
        .collect();
    let mut out = vec![G2Affine::identity(); n];
    out.par_chunks_mut(1 << 16)
        .zip(proj.par_chunks(1 << 16))
        .for_each(|(o, p)| G2Projective::batch_normalize(p, o));
    out
}

/// What the MSM's scalars look like (`--scalars`).
#[derive(Clone, Copy, PartialEq)]
enum ScalarSet {
    /// Uniform in Fr: the H MSM's quotient coefficients.
    Random,
    /// 0 or 1, half each: a Boolean-heavy witness (SHA-256 gadgets).
    Bits,
    /// Three quarters 0 or 1, one quarter uniform: a Filecoin partition's aux values (L, A,
    /// B), mostly bits with field elements (Poseidon, hash outputs) between them.
    Witness,
}

impl ScalarSet {
    fn parse(s: &str) -> ScalarSet {
        match s {
            "random" => ScalarSet::Random,
            "bits" => ScalarSet::Bits,
            "witness" => ScalarSet::Witness,
            _ => panic!("--scalars random|bits|witness, not {s}"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            ScalarSet::Random => "random",
            ScalarSet::Bits => "bits (0 or 1, half each)",
            ScalarSet::Witness => "witness (3/4 bits, 1/4 random)",
        }
    }
}

fn scalars(n: usize, seed: u64) -> Vec<Scalar> {
    scalar_set(n, seed, ScalarSet::Random)
}

fn scalar_set(n: usize, seed: u64, set: ScalarSet) -> Vec<Scalar> {
    (0..n.div_ceil(1 << 14))
        .into_par_iter()
        .flat_map_iter(|c| {
            let mut g = SplitMix::seed_from_u64(seed ^ (c as u64) << 20);
            let len = (1usize << 14).min(n - c * (1 << 14));
            (0..len)
                .map(move |_| {
                    let r = g.next_u32();
                    match set {
                        ScalarSet::Bits => Scalar::from((r & 1) as u64),
                        ScalarSet::Witness if r % 4 != 0 => Scalar::from(((r >> 2) & 1) as u64),
                        _ => Scalar::random(&mut g),
                    }
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

fn median(mut v: Vec<f32>) -> f32 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn logs(arg: Option<&String>, default: &[u32]) -> Vec<u32> {
    arg.map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| default.to_vec())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let what = args.get(1).map(String::as_str).unwrap_or("all");
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
    };
    let runs: usize = opt("--runs").and_then(|s| s.parse().ok()).unwrap_or(5);
    let msm_logs = logs(opt("--msm-logs"), &[16, 20, 22, 24]);
    let msm_scalars = ScalarSet::parse(opt("--scalars").map(String::as_str).unwrap_or("random"));
    let ntt_logs = logs(opt("--ntt-logs"), &[20, 21, 22, 23, 24, 25, 26]);
    let g2_logs = logs(opt("--g2-logs"), &[16, 18, 20]);

    let devs = match gpu::discover() {
        Ok(d) if !d.is_empty() => d,
        Ok(_) => {
            println!("SKIP: no CUDA device");
            return;
        }
        Err(e) => {
            println!("SKIP: {e}");
            return;
        }
    };
    println!("device: {:?}", devs[0]);
    let mut ctx = GpuContext::new(0).expect("open device 0");
    // The library reads no tuning from the environment; the bench takes its overrides there.
    ctx.set_msm_tuning(MsmTuning::from_env());
    ctx.set_ntt_tuning(gpu::NttTuning::from_env());

    if what == "windowed" {
        let bits = logs(opt("--window-bits"), &[20, 22, 24]);
        windowed(&mut ctx, &msm_logs, &bits, runs);
        return;
    }

    if what == "sweep" {
        let configs = opt("--configs").map(String::as_str).unwrap_or("default");
        let device_scalars = args.iter().any(|a| a == "--device-scalars");
        sweep(
            &mut ctx,
            &msm_logs,
            configs,
            msm_scalars,
            device_scalars,
            runs,
        );
        return;
    }

    if what == "msm" || what == "all" {
        println!(
            "\nG1 MSM, scalars {} (median of {runs} after 1 warm-up; ms)",
            msm_scalars.name()
        );
        println!(
            "{:>5} {:>3} {:>9} {:>8} {:>8} {:>9} {:>7} {:>8} {:>7} {:>6} {:>9}",
            "log n",
            "c",
            "total",
            "upload",
            "sort",
            "accum",
            "merge",
            "reduce",
            "down",
            "host",
            "kernels"
        );
        for &lg in &msm_logs {
            let n = 1usize << lg;
            let tg = Instant::now();
            let p = points(n);
            let s = scalar_set(n, lg as u64, msm_scalars);
            eprintln!("inputs 2^{lg}: {:.1} s", tg.elapsed().as_secs_f32());
            let (r, _) = ctx.msm_g1_timed(&p, &s).expect("msm");
            if lg <= 20 {
                let want = cuzk::cpu::msm::msm_g1(&p, &s);
                assert_eq!(
                    r.to_affine(),
                    want.to_affine(),
                    "GPU MSM differs from CPU at 2^{lg}"
                );
            }
            let ts: Vec<MsmTimings> = (0..runs)
                .map(|_| ctx.msm_g1_timed(&p, &s).expect("msm").1)
                .collect();
            let m = |f: fn(&MsmTimings) -> f32| median(ts.iter().map(f).collect());
            println!(
                "{:>5} {:>3} {:>9.2} {:>8.2} {:>8.2} {:>9.2} {:>7.2} {:>8.2} {:>7.2} {:>6.2} {:>9.2}",
                lg,
                ts[0].window_bits,
                m(|t| t.total_ms),
                m(|t| t.upload_ms),
                m(|t| t.sort_ms),
                m(|t| t.accumulate_ms),
                m(|t| t.merge_ms),
                m(|t| t.reduce_ms),
                m(|t| t.download_ms),
                m(|t| t.host_ms),
                m(MsmTimings::kernels_ms),
            );
            // Points resident on the device (the SRS case): only scalars travel.
            let on_device = ctx.upload_g1_points(&p).expect("upload points");
            let ts: Vec<MsmTimings> = (0..runs)
                .map(|_| {
                    ctx.msm_g1_resident(&on_device, 0, &s)
                        .expect("resident msm")
                        .1
                })
                .collect();
            let m = |f: fn(&MsmTimings) -> f32| median(ts.iter().map(f).collect());
            println!(
                "{:>5} {:>3} {:>9.2} {:>8.2}   (points resident on the device: total, scalar upload)",
                lg,
                ts[0].window_bits,
                m(|t| t.total_ms),
                m(|t| t.upload_ms),
            );
            drop(on_device);
        }
        ctx.release_scratch();
    }

    if what == "g2" || what == "all" {
        println!("\nG2 MSM, points resident (median of {runs} after 1 warm-up; ms), next to the CPU backend");
        println!(
            "{:>5} {:>3} {:>9} {:>8} {:>9} {:>9} {:>9} {:>8}",
            "log n", "c", "total", "upload", "accum", "kernels", "cpu", "cpu/gpu"
        );
        for &lg in &g2_logs {
            let n = 1usize << lg;
            let p = g2_points(n);
            let s = scalars(n, 500 + lg as u64);
            let on_device = ctx.upload_g2_points(&p).expect("upload G2 points");
            let (r, _) = ctx.msm_g2_resident(&on_device, 0, &s).expect("g2 msm");
            let tc = Instant::now();
            let want = cuzk::cpu::msm::msm_g2(&p, &s);
            let mut cpu_ms = vec![tc.elapsed().as_secs_f32() * 1e3];
            assert_eq!(
                r.to_affine(),
                want.to_affine(),
                "GPU G2 MSM differs from CPU at 2^{lg}"
            );
            for _ in 1..runs.min(3) {
                let tc = Instant::now();
                std::hint::black_box(cuzk::cpu::msm::msm_g2(&p, &s));
                cpu_ms.push(tc.elapsed().as_secs_f32() * 1e3);
            }
            let ts: Vec<MsmTimings> = (0..runs)
                .map(|_| ctx.msm_g2_resident(&on_device, 0, &s).expect("g2 msm").1)
                .collect();
            let m = |f: fn(&MsmTimings) -> f32| median(ts.iter().map(f).collect());
            let cpu = median(cpu_ms);
            println!(
                "{:>5} {:>3} {:>9.2} {:>8.2} {:>9.2} {:>9.2} {:>9.2} {:>7.1}x",
                lg,
                ts[0].window_bits,
                m(|t| t.total_ms),
                m(|t| t.upload_ms),
                m(|t| t.accumulate_ms),
                m(MsmTimings::kernels_ms),
                cpu,
                cpu / m(|t| t.total_ms)
            );
        }
        ctx.release_scratch();
    }

    if what == "ntt" || what == "all" {
        println!(
            "\nFr NTT (median of {runs} after 1 warm-up; ms; {:?}, None: the device's default)",
            gpu::NttTuning::from_env()
        );
        println!(
            "{:>5} {:>13} {:>9} {:>8} {:>8} {:>8}",
            "log n", "kind", "total", "upload", "kernels", "down"
        );
        for &lg in &ntt_logs {
            let n = 1usize << lg;
            let input = scalars(n, 99 + lg as u64);
            for kind in [
                NttKind::Forward,
                NttKind::Inverse,
                NttKind::Coset,
                NttKind::InverseCoset,
            ] {
                let mut v = input.clone();
                ctx.ntt_timed(&mut v, kind).expect("ntt warm-up");
                let ts: Vec<NttTimings> = (0..runs)
                    .map(|_| {
                        v.copy_from_slice(&input);
                        ctx.ntt_timed(&mut v, kind).expect("ntt")
                    })
                    .collect();
                let m = |f: fn(&NttTimings) -> f32| median(ts.iter().map(f).collect());
                println!(
                    "{:>5} {:>13} {:>9.2} {:>8.2} {:>8.2} {:>8.2}",
                    lg,
                    format!("{kind:?}"),
                    m(|t| t.total_ms),
                    m(|t| t.upload_ms),
                    m(|t| t.kernels_ms),
                    m(|t| t.download_ms)
                );
            }
            // The whole quotient step (2 x (iNTT + coset NTT), a·b, inverse coset NTT, iNTT of c).
            let b = scalars(n, 199 + lg as u64);
            let c = scalars(n, 299 + lg as u64);
            let mut a = input.clone();
            ctx.h_coefficients(&mut a, &b, &c).expect("h warm-up");
            let ts: Vec<NttTimings> = (0..runs)
                .map(|_| {
                    a.copy_from_slice(&input);
                    ctx.h_coefficients(&mut a, &b, &c).expect("h")
                })
                .collect();
            let m = |f: fn(&NttTimings) -> f32| median(ts.iter().map(f).collect());
            println!(
                "{:>5} {:>13} {:>9.2} {:>8.2} {:>8.2} {:>8.2}",
                lg,
                "H (6 NTTs)",
                m(|t| t.total_ms),
                m(|t| t.upload_ms),
                m(|t| t.kernels_ms),
                m(|t| t.download_ms)
            );
        }
    }
}

/// G1 MSM with resident points under each `;`-separated configuration (`VAR=value,...` or
/// `default`), same inputs; every result is checked against the first configuration's. With
/// `device_scalars` the scalars are on the device too (uploaded once, as the start phase's H
/// MSM finds them), and the sort includes their digit histogram.
fn sweep(
    ctx: &mut GpuContext,
    msm_logs: &[u32],
    configs: &str,
    set: ScalarSet,
    device_scalars: bool,
    runs: usize,
) {
    println!(
        "\nG1 MSM sweep, points resident, scalars {}{} (median of {runs} after 1 warm-up; ms)",
        set.name(),
        if device_scalars { " on the device" } else { "" }
    );
    println!(
        "{:>5} {:>3} {:>9} {:>8} {:>9} {:>7} {:>8} {:>9}  config",
        "log n", "c", "total", "sort", "accum", "merge", "reduce", "kernels"
    );
    for &lg in msm_logs {
        let n = 1usize << lg;
        let p = points(n);
        let s = scalar_set(n, lg as u64, set);
        let on_device = ctx.upload_g1_points(&p).expect("upload points");
        drop(p);
        let s_on_device = device_scalars.then(|| ctx.upload_scalars(&s).expect("upload scalars"));
        let msm = |ctx: &mut GpuContext| match &s_on_device {
            Some(d) => ctx
                .msm_g1_resident_device_scalars(&on_device, &[], d, Selection::All)
                .expect("msm"),
            None => ctx.msm_g1_resident(&on_device, 0, &s).expect("msm"),
        };
        let mut reference = None;
        for config in configs.split(';').map(str::trim).filter(|c| !c.is_empty()) {
            ctx.set_msm_tuning(MsmTuning::parse(config).unwrap_or_else(|e| panic!("{e}")));
            let (r, _) = msm(ctx);
            match &reference {
                None => reference = Some(r),
                Some(want) => assert_eq!(
                    r, *want,
                    "2^{lg} under {config} differs from the first configuration"
                ),
            }
            let ts: Vec<MsmTimings> = (0..runs).map(|_| msm(ctx).1).collect();
            let m = |f: fn(&MsmTimings) -> f32| median(ts.iter().map(f).collect());
            println!(
                "{:>5} {:>3} {:>9.2} {:>8.2} {:>9.2} {:>7.2} {:>8.2} {:>9.2}  {config}",
                lg,
                ts[0].window_bits,
                m(|t| t.total_ms),
                m(|t| t.sort_ms),
                m(|t| t.accumulate_ms),
                m(|t| t.merge_ms),
                m(|t| t.reduce_ms),
                m(MsmTimings::kernels_ms),
            );
        }
        ctx.set_msm_tuning(MsmTuning::default());
        drop(s_on_device);
        drop(on_device);
        ctx.release_scratch();
    }
}

/// The G1 MSM over window points for each window size in `bits`, next to the plain MSM over
/// the same resident points (random scalars, the same for both; results compared).
fn windowed(ctx: &mut GpuContext, msm_logs: &[u32], bits: &[u32], runs: usize) {
    println!("\nG1 MSM over window points, random scalars (median of {runs} after 1 warm-up; ms)");
    println!(
        "{:>5} {:>3} {:>9} {:>8} {:>9} {:>7} {:>8} {:>9} {:>8} {:>7}  points",
        "log n", "c", "total", "sort", "accum", "merge", "reduce", "kernels", "build", "GB"
    );
    for &lg in msm_logs {
        let n = 1usize << lg;
        let p = points(n);
        let s = scalars(n, lg as u64);
        let on_device = ctx.upload_g1_points(&p).expect("upload points");
        drop(p);
        let (want, _) = ctx.msm_g1_resident(&on_device, 0, &s).expect("msm");
        let row = |c: u32, ts: &[MsmTimings], build_ms: f32, gb: f64, what: &str| {
            let m = |f: fn(&MsmTimings) -> f32| median(ts.iter().map(f).collect());
            println!(
                "{:>5} {:>3} {:>9.2} {:>8.2} {:>9.2} {:>7.2} {:>8.2} {:>9.2} {:>8.1} {:>7.2}  {what}",
                lg,
                c,
                m(|t| t.total_ms),
                m(|t| t.sort_ms),
                m(|t| t.accumulate_ms),
                m(|t| t.merge_ms),
                m(|t| t.reduce_ms),
                m(MsmTimings::kernels_ms),
                build_ms,
                gb,
            );
        };
        let ts: Vec<MsmTimings> = (0..runs)
            .map(|_| ctx.msm_g1_resident(&on_device, 0, &s).expect("msm").1)
            .collect();
        let gb = on_device.device_bytes() as f64 / 1e9;
        row(
            ts[0].window_bits,
            &ts,
            0.0,
            gb,
            "resident (per-window buckets)",
        );
        for &c in bits {
            let tb = Instant::now();
            let wp = match ctx.g1_window_points(&on_device, 0, n, c) {
                Ok(wp) => wp,
                Err(e) => {
                    println!("{lg:>5} {c:>3} skipped: {e}");
                    continue;
                }
            };
            let build_ms = tb.elapsed().as_secs_f32() * 1e3;
            let (got, _) = ctx.msm_g1_windowed(&wp, &s).expect("windowed msm");
            assert_eq!(
                got, want,
                "2^{lg}: the MSM over window points (c = {c}) differs"
            );
            let ts: Vec<MsmTimings> = (0..runs)
                .map(|_| ctx.msm_g1_windowed(&wp, &s).expect("windowed msm").1)
                .collect();
            row(
                c,
                &ts,
                build_ms,
                wp.device_bytes() as f64 / 1e9,
                "window points",
            );
            drop(wp);
            ctx.release_scratch();
        }
        drop(on_device);
        ctx.release_scratch();
    }
}
