//! Device memory on the GPU: a start phase that runs out of device memory evicts what is
//! resident and runs again instead of failing; a device memory limit holds with several
//! circuits in turn; an engine gives back every device allocation it made when it goes; the
//! free-memory fill (a diagnostic for a neighbour in the process) gives back what it took.
//! Skips cleanly (and says so) without a CUDA device; CI compiles it.
//!
//! Run under compute-sanitizer's leak check (`scripts/gpu-sanitize.sh`), the give-back test
//! also shows that nothing the engine allocated outlives it.

use std::sync::Arc;
use std::time::Duration;

use blstrs::Scalar;
use cuzk::cpu::CpuStart;
use cuzk::engine::{Device, Engine, EngineConfig, Priority, RandomnessChoice};
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::gpu::{self, GpuStart};
use cuzk::groth16::{prove, synthesize, verify_proof, Randomness, Srs};
use ff::Field;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn have_gpu() -> bool {
    match gpu::discover() {
        Ok(d) if !d.is_empty() => true,
        other => {
            println!("SKIP: no CUDA device ({other:?})");
            false
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

fn circuits() -> [(SampleCircuit, Srs); 2] {
    [3000usize, 9000].map(|bits| {
        let c = SampleCircuit::BooleanHeavy { bits, seed: 0 };
        let srs = generate_srs(c.clone(), &ToxicWaste::from_seed(bits as u64)).unwrap();
        (c, srs)
    })
}

#[test]
fn out_of_device_memory_evicts_and_runs_the_partition_again() {
    if !have_gpu() {
        return;
    }
    let [(circuit, srs), _] = circuits();
    let gpu = GpuStart::new(0).unwrap();
    let a = synthesize(circuit.clone()).unwrap();
    let warm = prove(&gpu, &srs, a.clone(), rs(1)).unwrap();
    assert_eq!(warm, prove(&CpuStart, &srs, a.clone(), rs(1)).unwrap());
    let resident = gpu.resident_bytes();
    assert!(resident > 0, "the SRS is resident after a proof");
    // The next allocation (a warm start phase still uploads its witness) is refused as if
    // the device were full: the start phase gives back the resident SRS and its scratch,
    // runs again, and the proof is still right.
    gpu.refuse_allocations(1);
    let again = prove(&gpu, &srs, a.clone(), rs(2)).unwrap();
    assert_eq!(again, prove(&CpuStart, &srs, a.clone(), rs(2)).unwrap());
    assert_eq!(gpu.evictions(), 1);
    assert_eq!(
        gpu.resident_bytes(),
        resident,
        "made resident again by the rerun"
    );
    // Refused on the rerun too: the partition fails with an error that says why, and the
    // device goes on proving.
    gpu.refuse_allocations(usize::MAX);
    let e = prove(&gpu, &srs, a.clone(), rs(3)).unwrap_err();
    println!("{e}");
    assert!(
        e.to_string().contains("device memory") && e.to_string().contains("evicting"),
        "{e}"
    );
    gpu.refuse_allocations(0);
    assert_eq!(
        prove(&gpu, &srs, a.clone(), rs(4)).unwrap(),
        prove(&CpuStart, &srs, a, rs(4)).unwrap()
    );
}

#[test]
fn a_device_memory_limit_holds_with_circuits_in_turn() {
    if !have_gpu() {
        return;
    }
    let set = circuits();
    // Each circuit's own peak, with the device to itself.
    let peaks: Vec<usize> = set
        .iter()
        .map(|(c, srs)| {
            let gpu = GpuStart::new(0).unwrap();
            prove(&gpu, srs, synthesize(c.clone()).unwrap(), rs(0)).unwrap();
            gpu.memory_peak()
        })
        .collect();
    // Room for the larger one alone, not for both: the resident SRSs may take all of it, so
    // keeping both runs into the limit.
    let limit = peaks.iter().max().unwrap() + (1 << 20);
    let gpu = GpuStart::with_limits(0, Some(limit), Some(limit)).unwrap();
    for (round, which) in [0usize, 1, 0, 1, 1, 0].into_iter().enumerate() {
        let (c, srs) = &set[which];
        let a = synthesize(c.with_seed(round as u64)).unwrap();
        let inputs = a.witness.input[1..].to_vec();
        let p = prove(&gpu, srs, a.clone(), rs(round as u64)).unwrap();
        assert_eq!(p, prove(&CpuStart, srs, a, rs(round as u64)).unwrap());
        assert!(verify_proof(&srs.vk.prepare(), &p, &inputs).unwrap());
        assert!(
            gpu.memory_peak() <= limit,
            "peak {} over {limit}",
            gpu.memory_peak()
        );
    }
    println!(
        "peaks alone {peaks:?}, limit {limit}, peak {}, evictions {}",
        gpu.memory_peak(),
        gpu.evictions()
    );
}

#[test]
fn a_dropped_engine_gives_back_its_device_memory() {
    if !have_gpu() {
        return;
    }
    // No context of this process is alive before the engine nor after it: what the engine
    // made (its buffers, and the primary context it retained, with the local memory its
    // kernels grew) must all be back. (A host that holds the primary context itself keeps
    // the context's own memory, which the driver gives back only with the context.)
    let [(circuit, srs), _] = circuits();
    let srs = Arc::new(srs);
    let before = gpu::memory_info(0).unwrap();
    let engine = Engine::new(EngineConfig {
        devices: vec![Device::new("cuda0", Arc::new(GpuStart::new(0).unwrap()))],
        ..EngineConfig::default()
    })
    .unwrap();
    let parts: Vec<_> = (0..3)
        .map(|i| synthesize(circuit.with_seed(i)).unwrap())
        .collect();
    let job = engine
        .prove_start(
            srs.clone(),
            parts,
            RandomnessChoice::Random,
            Priority::PorepSnap,
        )
        .unwrap();
    assert_eq!(job.finish(Duration::from_secs(600)).unwrap().len(), 3);
    let during = gpu::memory_info(0).unwrap();
    let srs_bytes = 96 * (srs.h.len() + srs.l.len() + srs.a.len() + srs.b_g1.len());
    assert!(
        during.free + srs_bytes <= before.free,
        "the engine holds device memory while it lives: {before:?} then {during:?}"
    );
    drop(engine);
    let after = gpu::memory_info(0).unwrap();
    println!(
        "free before {} during {} after {}",
        before.free, during.free, after.free
    );
    // The driver hands memory out in pages; allow a few of them.
    assert!(
        after.free + (4 << 20) >= before.free,
        "device memory not given back: {} bytes free before the engine, {} after",
        before.free,
        after.free
    );
}

#[test]
fn the_free_memory_fill_gives_back_what_it_took() {
    if !have_gpu() {
        return;
    }
    // peer_bench's `--dirty-device` diagnostic between two proofs: it must take all the free
    // memory (else it dirties only part of what a neighbour gets next), give all of it back,
    // and leave the device proving as before. (Run with --test-threads 1, as the device
    // suite does: a test allocating beside it could be refused.)
    let [(circuit, srs), _] = circuits();
    let gpu = GpuStart::new(0).unwrap();
    let a = synthesize(circuit).unwrap();
    let warm = prove(&gpu, &srs, a.clone(), rs(1)).unwrap();
    let before = gpu::memory_info(0).unwrap();
    let (plain, pooled) = gpu.fill_free_memory(0xff).unwrap();
    let after = gpu::memory_info(0).unwrap();
    println!(
        "free before {} after {}; filled {plain} plain, {pooled} through the pool",
        before.free, after.free
    );
    // 256 MiB are left free on purpose; the driver hands memory out in pages.
    let left = (256 << 20) + (64 << 20);
    assert!(
        plain + left >= before.free && pooled + left >= before.free,
        "the fill took {plain} and {pooled} bytes of {} free",
        before.free
    );
    assert!(
        after.free + (4 << 20) >= before.free,
        "the fill kept memory: {} bytes free before it, {} after",
        before.free,
        after.free
    );
    assert_eq!(prove(&gpu, &srs, a.clone(), rs(1)).unwrap(), warm);
    assert_eq!(
        prove(&gpu, &srs, a.clone(), rs(2)).unwrap(),
        prove(&CpuStart, &srs, a, rs(2)).unwrap()
    );
}
