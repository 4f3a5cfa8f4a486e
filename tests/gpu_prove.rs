//! Whole proofs on the GPU: GPU = CPU = bellperson, byte for byte, on the sample circuit
//! shapes, in a batch through the engine, and at 2^20 constraints. Skips cleanly (and says
//! so) without a CUDA device; CI compiles it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bellperson::groth16 as bp;
use blstrs::{Bls12, Scalar};
use cuzk::cpu::CpuStart;
use cuzk::engine::{Device, Engine, EngineConfig, Priority, RandomnessChoice};
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::gpu::{self, GpuStart};
use cuzk::groth16::{finish, prove, synthesize, verify_proof, BackendKind, Randomness, StartPhase};
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn gpu_start() -> Option<GpuStart> {
    match gpu::discover() {
        Ok(d) if !d.is_empty() => {
            Some(GpuStart::new(0).expect("device 0 was discovered but does not open"))
        }
        other => {
            println!("SKIP: no CUDA device ({other:?})");
            None
        }
    }
}

fn rs(seed: u64) -> Randomness {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Randomness {
        r: Scalar::random(&mut rng),
        s: Scalar::random(&mut rng),
    }
}

#[test]
fn gpu_equals_cpu_equals_bellperson_on_every_shape() {
    let Some(gpu) = gpu_start() else { return };
    for (i, (name, circuit)) in SampleCircuit::shapes().into_iter().enumerate() {
        let srs = generate_srs(circuit.clone(), &ToxicWaste::from_seed(i as u64)).unwrap();
        let bp_params = bp::Parameters::<Bls12>::read(&srs.to_bytes()[..], false).unwrap();
        let rs = rs(100 + i as u64);
        let a = synthesize(circuit.clone()).unwrap();
        let inputs = a.witness.input[1..].to_vec();
        let on_gpu = prove(&gpu, &srs, a.clone(), rs).unwrap();
        let on_cpu = prove(&CpuStart, &srs, a, rs).unwrap();
        let theirs = bp::create_proof::<Bls12, _, _>(circuit, &bp_params, rs.r, rs.s).unwrap();
        let mut bp_bytes = Vec::new();
        theirs.write(&mut bp_bytes).unwrap();
        assert_eq!(on_gpu.to_bytes(), on_cpu.to_bytes(), "{name}: GPU vs CPU");
        assert_eq!(
            on_gpu.to_bytes().to_vec(),
            bp_bytes,
            "{name}: GPU vs bellperson"
        );
        assert!(
            verify_proof(&srs.vk.prepare(), &on_gpu, &inputs).unwrap(),
            "{name}"
        );
        println!("{name}: GPU = CPU = bellperson");
    }
}

#[test]
fn engine_on_the_gpu_proves_a_batch_like_the_cpu() {
    let Some(gpu) = gpu_start() else { return };
    let circuit = SampleCircuit::BooleanHeavy {
        bits: 5000,
        seed: 0,
    };
    let srs = Arc::new(generate_srs(circuit.clone(), &ToxicWaste::from_seed(9)).unwrap());
    let parts: Vec<_> = (0..6)
        .map(|i| synthesize(circuit.with_seed(i)).unwrap())
        .collect();
    let rss: Vec<Randomness> = (0..6).map(rs).collect();
    let engine = Engine::new(EngineConfig {
        devices: vec![Device::new("cuda0", Arc::new(gpu))],
        ..EngineConfig::default()
    })
    .unwrap();
    let job = engine
        .prove_start(
            srs.clone(),
            parts.clone(),
            RandomnessChoice::Given(rss.clone()),
            Priority::PorepSnap,
        )
        .unwrap();
    let proofs = job.finish(Duration::from_secs(600)).unwrap();
    for ((p, a), rs) in proofs.iter().zip(parts).zip(rss) {
        let inputs = a.witness.input[1..].to_vec();
        assert_eq!(*p, prove(&CpuStart, &srs, a, rs).unwrap());
        assert!(verify_proof(&srs.vk.prepare(), p, &inputs).unwrap());
    }
    let stats = engine.stats();
    println!("{stats:?}");
    // The stats name the device and time each stage of every start phase, transfers too.
    let d = stats.devices()[0];
    assert_eq!((d.backend, d.gpu_ordinal), (BackendKind::Cuda, 0));
    for (stage, h) in stats.start_stages() {
        println!("{stage}: p50 {:.3} ms", h.p50_ns as f64 / 1e6);
        assert_eq!(h.count, 6, "{stage}");
        assert!(h.sum_ns <= stats.mutex_hold.sum_ns + 1_000_000, "{stage}");
    }
    // With the SRS resident (it is here) the quotient goes from the transforms into the H
    // MSM on the device: nothing is downloaded in between.
    assert_eq!(stats.start_ntt_download.sum_ns, 0);
    for h in [
        stats.start_host_to_device,
        stats.start_device_to_host,
        stats.start_msm_h,
    ] {
        assert!(h.p50_ns > 0, "{h:?}");
    }
    // The first partitions (the device not warm for this SRS yet: at most one per worker)
    // upload a, b and c inside their start phase; the others were staged before the device
    // mutex and upload nothing there.
    assert!(stats.start_ntt_upload.max_ns > 0);
    assert!(
        stats.partitions_staged >= 4 && stats.partitions_staged == stats.staging.count,
        "{} staged of 6",
        stats.partitions_staged
    );
}

/// Inputs staged ahead of a start phase (`StartPhase::stage`: outside the device mutex, on
/// the device's own staging stream through pooled pinned buffers) prove what unstaged ones
/// do: host evaluations (a, b, c zero-padded to the domain, and the aux values) and a
/// recorded circuit's witness (the aux values; a, b, c made on the device from them). Nothing
/// is staged for an SRS the device has not proved with yet.
#[test]
fn staged_inputs_prove_the_same_bytes() {
    let Some(gpu) = gpu_start() else { return };
    // Over 2^17 aux values (4 MB), so the copies go through the pinned buffers, in pieces.
    let circuit = SampleCircuit::BooleanHeavy {
        bits: 1 << 18,
        seed: 0,
    };
    let srs = generate_srs(circuit.clone(), &ToxicWaste::from_seed(21)).unwrap();
    let (recorded, _) = cuzk::r1cs::record(circuit.clone()).unwrap();
    let first = synthesize(circuit.with_seed(1)).unwrap();
    assert!(first.witness.aux.len() > 1 << 17);
    assert!(
        gpu.stage(&srs, Some(&first.evaluations), &first.witness)
            .unwrap()
            .is_none(),
        "staged for an SRS the device has not proved with"
    );
    prove(&gpu, &srs, first, rs(1)).unwrap();
    for seed in 2..4 {
        let a = synthesize(circuit.with_seed(seed)).unwrap();
        let want = prove(&CpuStart, &srs, a.clone(), rs(seed)).unwrap();
        let staged = gpu
            .stage(&srs, Some(&a.evaluations), &a.witness)
            .unwrap()
            .expect("staged: the device is warm for this SRS");
        let (partial, t) = gpu
            .start_staged(&srs, a.evaluations.clone(), &a.witness, staged)
            .unwrap();
        assert_eq!(t.matvec, Duration::ZERO, "a, b and c came from the host");
        let host = finish(&srs, &a.witness, &partial, rs(seed)).unwrap();
        assert_eq!(host, want, "seed {seed}: staged host evaluations");
        let staged = gpu.stage(&srs, None, &a.witness).unwrap().expect("staged");
        let (partial, t) = gpu
            .start_deferred_staged(&srs, &recorded, &a.witness, staged)
            .unwrap();
        let deferred = finish(&srs, &a.witness, &partial, rs(seed)).unwrap();
        assert_eq!(
            deferred, want,
            "seed {seed}: staged witness, a, b, c on the device"
        );
        assert_eq!(
            t.ntt_upload,
            Duration::ZERO,
            "nothing uploaded for the H step"
        );
        assert!(t.matvec > Duration::ZERO, "the device's mat-vec is timed");
    }
    assert_eq!(gpu.staging_counts(), (4, 0));
}

/// The engine's multi-device path on one GPU: two logical devices (two contexts, two device
/// mutexes) share it. Every proof must reach its own job, and the per-device stats must add
/// up to the total.
#[test]
fn two_logical_devices_on_one_gpu_share_a_backlog() {
    let Some(first) = gpu_start() else { return };
    let second = GpuStart::new(0).unwrap();
    let circuit = SampleCircuit::BooleanHeavy {
        bits: 3000,
        seed: 0,
    };
    let srs = Arc::new(generate_srs(circuit.clone(), &ToxicWaste::from_seed(11)).unwrap());
    let engine = Engine::new(EngineConfig {
        devices: vec![
            Device::new("cuda0a", Arc::new(first)),
            Device::new("cuda0b", Arc::new(second)),
        ],
        ..EngineConfig::default()
    })
    .unwrap();
    let pvk = srs.vk.prepare();
    let jobs: Vec<_> = (0..8u64)
        .map(|j| {
            let parts: Vec<_> = (0..4)
                .map(|i| synthesize(circuit.with_seed(j * 10 + i)).unwrap())
                .collect();
            let inputs: Vec<Vec<Scalar>> = parts
                .iter()
                .map(|a| a.witness.input[1..].to_vec())
                .collect();
            let job = engine
                .prove_start(
                    srs.clone(),
                    parts,
                    RandomnessChoice::Random,
                    Priority::PorepSnap,
                )
                .unwrap();
            (job, inputs)
        })
        .collect();
    for (job, inputs) in jobs {
        let proofs = job.finish(Duration::from_secs(600)).unwrap();
        for (p, inputs) in proofs.iter().zip(&inputs) {
            assert!(
                verify_proof(&pvk, p, inputs).unwrap(),
                "a proof reached the wrong caller"
            );
        }
    }
    let st = engine.stats();
    assert_eq!(st.partitions_proved, 32);
    let per_device: Vec<u64> = st.devices[..st.device_count as usize]
        .iter()
        .map(|d| d.partitions)
        .collect();
    assert_eq!(per_device.iter().sum::<u64>(), 32);
    println!("two logical devices on one GPU: partitions per device {per_device:?}");
}

/// Resident SRS copies: with room for one SRS only, alternating between two evicts and
/// re-uploads, and every proof still equals the CPU's.
#[test]
fn resident_srs_cache_evicts_and_stays_correct() {
    if gpu_start().is_none() {
        return;
    }
    let circuits = [
        SampleCircuit::BooleanHeavy {
            bits: 4000,
            seed: 0,
        },
        SampleCircuit::Random {
            constraints: 3000,
            seed: 0,
        },
    ];
    let srss: Vec<_> = circuits
        .iter()
        .enumerate()
        .map(|(i, c)| generate_srs(c.clone(), &ToxicWaste::from_seed(30 + i as u64)).unwrap())
        .collect();
    // The resident copy holds the G1 sections and B_g2.
    let g1 = |s: &cuzk::groth16::Srs| {
        96 * (s.h.len() + s.l.len() + s.a.len() + s.b_g1.len()) + 192 * s.b_g2.len()
    };
    let budget = g1(&srss[0]).max(g1(&srss[1])) + 1;
    let gpu = GpuStart::with_resident_budget(0, Some(budget)).unwrap();
    for (round, which) in [0usize, 0, 1, 0, 1, 1].into_iter().enumerate() {
        let a = synthesize(circuits[which].with_seed(round as u64)).unwrap();
        let rs = rs(round as u64);
        let on_gpu = prove(&gpu, &srss[which], a.clone(), rs).unwrap();
        assert_eq!(
            on_gpu,
            prove(&CpuStart, &srss[which], a, rs).unwrap(),
            "round {round}"
        );
        assert_eq!(
            gpu.resident_bytes(),
            g1(&srss[which]),
            "only the last SRS is kept"
        );
    }
    // An SRS larger than the budget is proved without a resident copy.
    let tiny = GpuStart::with_resident_budget(0, Some(1000)).unwrap();
    let a = synthesize(circuits[0].clone()).unwrap();
    assert_eq!(
        prove(&tiny, &srss[0], a.clone(), rs(7)).unwrap(),
        prove(&CpuStart, &srss[0], a, rs(7)).unwrap()
    );
    assert_eq!(tiny.resident_bytes(), 0);
}

#[test]
fn gpu_equals_cpu_at_2_pow_20() {
    let Some(gpu) = gpu_start() else { return };
    // Filecoin-like: 2^20 − (packing and input constraints) booleans.
    let bits = (1usize << 20) * 64 / 66 - 2;
    let circuit = SampleCircuit::BooleanHeavy { bits, seed: 20 };
    let t = Instant::now();
    let srs = generate_srs(circuit.clone(), &ToxicWaste::from_seed(20)).unwrap();
    println!("srs generated in {:?}", t.elapsed());
    let a = synthesize(circuit).unwrap();
    assert!(a.shape().constraints <= 1 << 20 && a.shape().constraints > 1 << 19);
    let inputs = a.witness.input[1..].to_vec();
    let rs = rs(20);
    let t = Instant::now();
    let on_gpu = prove(&gpu, &srs, a.clone(), rs).unwrap();
    let first = t.elapsed();
    // The second proof finds the SRS resident on the device.
    let t = Instant::now();
    let again = prove(&gpu, &srs, a.clone(), rs).unwrap();
    let tg = t.elapsed();
    assert_eq!(on_gpu, again);
    println!("2^20 proof on the gpu: first (uploads the SRS) {first:?}, then {tg:?}");
    // The opt-in order: b, c and the aux values copied under the H step's kernels.
    gpu.set_overlap_uploads(true);
    let overlapped = prove(&gpu, &srs, a.clone(), rs);
    gpu.set_overlap_uploads(false);
    assert_eq!(
        on_gpu,
        overlapped.unwrap(),
        "H-step copies under the kernels"
    );
    let t = Instant::now();
    let on_cpu = prove(&CpuStart, &srs, a, rs).unwrap();
    println!("2^20 proof: gpu {tg:?}, cpu {:?}", t.elapsed());
    assert_eq!(on_gpu, on_cpu);
    assert!(verify_proof(&srs.vk.prepare(), &on_gpu, &inputs).unwrap());
}
