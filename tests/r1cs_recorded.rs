//! Synthesis from a recorded R1CS equals the synthesizer's (bellperson's) exactly: a, b, c,
//! inputs, aux and the density bitmaps, for the sample circuits and every 2KiB Filecoin
//! circuit (PoRep C2, SnapDeals, WinningPoSt, WindowPoSt). The recording comes from one
//! circuit of a shape and is used for another (other sector, other randomness), through the
//! cache the engine uses. A witness of another shape is rejected. Every Filecoin circuit's
//! witness run (with its fast paths: the PoRep's and SnapDeals' native SHA-256) equals,
//! value for value, the run in which every gadget computes its own values.

mod filecoin_common;

use std::sync::Arc;

use cuzk::engine::PartitionCircuit;
use cuzk::filecoin::{
    porep_c2_circuits, porep_c2_walk_circuits, porep_random_partition, post_random_partition,
    proof_bytes, prove_winning_post, snap_random_partition, CircuitSet, ParamsFor, ProofOptions,
    RegisteredSealProof,
};
use cuzk::fixtures::sector;
use cuzk::fixtures::SampleCircuit;
use cuzk::groth16::{synthesize, Assignment};
use cuzk::r1cs::{record, witness, R1csCache, ShapeKey, WitnessValues};
use cuzk::ErrorKind;
use filecoin_common::*;

/// Field by field, naming the first difference (a whole-assignment `assert_eq` would print
/// millions of scalars).
fn assert_same(what: &str, got: &Assignment, want: &Assignment) {
    let (g, w) = (&got.evaluations, &want.evaluations);
    for (name, x, y) in [("a", &g.a, &w.a), ("b", &g.b, &w.b), ("c", &g.c, &w.c)] {
        assert_eq!(x.len(), y.len(), "{what}: length of {name}");
        if let Some(i) = (0..x.len()).find(|&i| x[i] != y[i]) {
            panic!("{what}: {name}[{i}] differs");
        }
    }
    let (g, w) = (&got.witness, &want.witness);
    assert!(g.input == w.input, "{what}: inputs differ");
    assert!(g.aux == w.aux, "{what}: aux differ");
    assert_eq!(g.a_aux_density, w.a_aux_density, "{what}: a_aux_density");
    assert_eq!(
        g.b_input_density, w.b_input_density,
        "{what}: b_input_density"
    );
    assert_eq!(g.b_aux_density, w.b_aux_density, "{what}: b_aux_density");
    assert!(got == want, "{what}: assignments differ");
}

/// Every constraint holds: a·b = c row by row (the assignment of the recording run, which
/// no synthesizer run is compared with, is at least a satisfying one).
fn assert_satisfied(what: &str, a: &Assignment) {
    let e = &a.evaluations;
    if let Some(i) = (0..e.a.len()).find(|&i| e.a[i] * e.b[i] != e.c[i]) {
        panic!("{what}: constraint {i} does not hold");
    }
}

#[test]
fn sample_circuits_equal_the_synthesizer() {
    for (name, circuit) in SampleCircuit::shapes() {
        // The recording run's own witness.
        let (recorded, values) = record(circuit.clone()).unwrap();
        let want = synthesize(circuit.clone()).unwrap();
        assert_eq!(recorded.shape(), want.shape(), "{name}");
        assert_same(name, &recorded.evaluate(values).unwrap(), &want);
        // Another witness of the same shape, witness-only.
        let other = circuit.with_seed(1000);
        let want = synthesize(other.clone()).unwrap();
        let values = witness(other.clone()).unwrap();
        assert_same(name, &recorded.evaluate(values).unwrap(), &want);
        assert_same(name, &recorded.synthesize(other).unwrap(), &want);
    }
}

#[test]
fn the_cache_records_a_key_once_under_concurrent_first_uses() {
    let cache = Arc::new(R1csCache::new());
    let key = ShapeKey::new("random-2^12");
    let shape = SampleCircuit::Random {
        constraints: 4200,
        seed: 0,
    };
    let threads: Vec<_> = (0..4u64)
        .map(|i| {
            let (cache, key, circuit) = (cache.clone(), key.clone(), shape.with_seed(i));
            std::thread::spawn(move || {
                let got = cache.synthesize(&key, circuit.clone()).unwrap();
                assert_same("concurrent", &got, &synthesize(circuit).unwrap());
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(cache.recordings(), 1);
    assert_eq!(cache.keys(), vec![key.clone()]);
    assert!(cache.bytes() > 0);
    // Through a keyed partition, as the engine synthesizes it.
    let circuit = shape.with_seed(9);
    let got = PartitionCircuit::new(circuit.clone())
        .with_shape_key(key.clone())
        .synthesize_recorded(&cache)
        .unwrap();
    assert_same("keyed partition", &got, &synthesize(circuit).unwrap());
    assert_eq!(cache.recordings(), 1);
    // Held elsewhere (a partition proving with it): not removed as idle.
    let held = cache.get(&key).unwrap();
    assert!(cache.remove_if_idle(&key).is_none());
    assert!(cache.get(&key).is_some());
    drop(held);
    assert!(cache.remove_if_idle(&key).is_some());
    assert!(cache.get(&key).is_none());
    cache.synthesize(&key, shape.with_seed(10)).unwrap();
    assert_eq!(cache.recordings(), 2);
    assert!(cache.remove(&key).is_some());
    assert!(cache.get(&key).is_none());
}

#[test]
fn a_witness_of_another_shape_is_rejected() {
    let (recorded, _) = record(SampleCircuit::BooleanHeavy { bits: 300, seed: 1 }).unwrap();
    for other in [
        SampleCircuit::BooleanHeavy { bits: 301, seed: 1 },
        SampleCircuit::BooleanHeavy { bits: 299, seed: 1 },
        // As many aux variables (300 bits), one input fewer.
        SampleCircuit::BooleanHeavy { bits: 256, seed: 1 },
    ] {
        let e = recorded
            .evaluate(witness(other.clone()).unwrap())
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Synthesis, "{e}");
        assert!(e.message().contains("not of the recorded shape"), "{e}");
        assert!(recorded.synthesize(other).is_err());
    }
    // Through the cache: a circuit under another circuit's key.
    let cache = R1csCache::new();
    let key = ShapeKey::new("boolean-heavy-300");
    cache
        .synthesize(&key, SampleCircuit::BooleanHeavy { bits: 300, seed: 1 })
        .unwrap();
    let e = cache
        .synthesize(&key, SampleCircuit::ManyInputs { inputs: 3, seed: 1 })
        .unwrap_err();
    assert!(e.message().contains("recorded circuit has"), "{e}");
}

/// The one partition of `record_from` records the key in a fresh cache (its assignment must
/// satisfy the constraints); each partition of `check` (built twice: once for the recorded
/// path, once for the synthesizer) must then give the synthesizer's assignment exactly.
fn check_filecoin(
    what: &str,
    record_from: CircuitSet,
    check: impl Fn() -> CircuitSet,
    partitions: usize,
) {
    let cache = R1csCache::new();
    let first = record_from.partitions.into_iter().next().unwrap();
    assert!(first.shape_key().is_some(), "{what}: partitions are keyed");
    let t = std::time::Instant::now();
    assert_satisfied(what, &first.synthesize_recorded(&cache).unwrap());
    eprintln!("{what}: recorded in {:.1} s", t.elapsed().as_secs_f64());
    assert_eq!(cache.recordings(), 1);
    let recorded = cache.get(&cache.keys()[0]).unwrap();
    let stats = recorded.coefficient_stats();
    eprintln!(
        "{what}: {:?}, nnz {:?}, {} bytes, {stats:?}",
        recorded.shape(),
        recorded.nnz(),
        recorded.bytes()
    );
    let ours = check().partitions;
    let theirs = check().partitions;
    assert_eq!(ours.len(), partitions, "{what}: partitions");
    for (k, (ours, theirs)) in ours.into_iter().zip(theirs).enumerate() {
        let got = ours.synthesize_recorded(&cache).unwrap();
        let want = theirs.synthesize().unwrap();
        assert_same(&format!("{what} partition {k}"), &got, &want);
    }
    assert_eq!(cache.recordings(), 1, "{what}: recorded once");
    // The witness run's fast paths (the PoRep's and SnapDeals' native SHA-256) give every
    // gadget's value.
    let fast = check().partitions;
    let gadgets = check().partitions;
    for (k, (fast, gadgets)) in fast.into_iter().zip(gadgets).enumerate() {
        let t = std::time::Instant::now();
        let got = fast.witness().unwrap();
        let t_fast = t.elapsed();
        let t = std::time::Instant::now();
        let want = gadgets.witness_through_gadgets().unwrap();
        eprintln!(
            "{what} partition {k}: witness {:.3} s, through the gadgets {:.3} s",
            t_fast.as_secs_f64(),
            t.elapsed().as_secs_f64()
        );
        assert_same_values(&format!("{what} partition {k}"), &got, &want);
    }
}

/// Value for value, naming the first difference.
fn assert_same_values(what: &str, got: &WitnessValues, want: &WitnessValues) {
    for (name, x, y) in [
        ("input", &got.input, &want.input),
        ("aux", &got.aux, &want.aux),
    ] {
        if let Some(i) = (0..x.len().min(y.len())).find(|&i| x[i] != y[i]) {
            panic!(
                "{what}: {name}[{i}] differs (of {} and {})",
                x.len(),
                y.len()
            );
        }
        assert_eq!(x.len(), y.len(), "{what}: {name} count");
    }
}

#[test]
fn porep_c2_equals_the_synthesizer() {
    let f = fixture();
    let set = |s: &sector::SealedSector| {
        porep_c2_circuits(&s.c1_output, s.sector_id, s.prover_id).unwrap()
    };
    check_filecoin(
        "2KiB PoRep C2",
        set(&f.sectors[0]),
        || set(&f.sectors[1]),
        1,
    );
}

/// cuzk's walk of the PoRep circuit (its witness path, and the random-valued partitions the
/// synthesis bench uses for sector sizes no test seals) has storage-proofs' R1CS exactly.
#[test]
fn the_porep_walk_has_storage_proofs_r1cs() {
    let f = fixture();
    let s = &f.sectors[0];
    let first = |set: CircuitSet| set.partitions.into_iter().next().unwrap();
    let (theirs, their_values) =
        first(porep_c2_circuits(&s.c1_output, s.sector_id, s.prover_id).unwrap())
            .record()
            .unwrap();
    let (walked, walked_values) =
        first(porep_c2_walk_circuits(&s.c1_output, s.sector_id, s.prover_id).unwrap())
            .record()
            .unwrap();
    assert!(
        walked == theirs,
        "the walk's R1CS differs from StackedCircuit's"
    );
    assert!(
        walked_values == their_values,
        "the walk's recorded values differ"
    );
    let (random, _) = porep_random_partition(RegisteredSealProof::StackedDrg2KiBV1_1, 3)
        .unwrap()
        .record()
        .unwrap();
    assert!(
        random == theirs,
        "a random-valued partition has another R1CS"
    );
    eprintln!(
        "2KiB PoRep: {:?}, walk and random-valued partition alike",
        theirs.shape()
    );
}

#[test]
fn snap_deals_equal_the_synthesizer() {
    let f = fixture();
    let first = sector::snap_inputs(&f.sectors[1], 31).unwrap();
    let second = sector::snap_inputs(&f.sectors[2], 32).unwrap();
    check_filecoin(
        "2KiB SnapDeals",
        first.circuits().unwrap(),
        || second.circuits().unwrap(),
        1,
    );

    // The witness run is the walk, its TreeD hashes without the SHA-256 gadget: by
    // namespace, the circuit's hashes are there (the 2KiB apex tree's 7, each of the 10
    // challenges' 3 path levels) and the gadget's "hash" under none of them. Were the
    // circuit itself run, `Sha256Function`'s "hash" namespace would be under each.
    let partition = second.circuits().unwrap().partitions.remove(0);
    let (values, profile) = partition.witness_profile(3).unwrap();
    let plain = second.circuits().unwrap().partitions.remove(0).witness();
    assert!(values == plain.unwrap(), "the profiled witness differs");
    let calls = |path: &str| {
        profile
            .entries
            .iter()
            .find(|e| e.path == path)
            .map(|e| (e.calls, e.aux > 0))
    };
    assert_eq!(
        calls("apex_gadget/apex_tree generation hash (tree_row=#, siblings=#)"),
        Some((7, true))
    );
    assert_eq!(
        calls("por to_apex_leaf (c_index=#)/merkle proof hash (height=#)"),
        Some((30, true))
    );
    let gadget: Vec<&str> = profile
        .entries
        .iter()
        .map(|e| e.path.as_str())
        .filter(|p| {
            (p.starts_with("apex_gadget/") || p.starts_with("por to_apex_leaf"))
                && p.ends_with("/hash")
        })
        .collect();
    assert!(
        gadget.is_empty(),
        "SHA-256 gadgets in the witness run: {gadget:?}"
    );
}

/// cuzk's walk of the SnapDeals circuit (its witness path, and the random-valued partition
/// the synthesis bench uses for 32GiB) has storage-proofs-update's R1CS exactly; the
/// random-valued partition's is checked in
/// `random_valued_update_and_post_partitions_have_the_real_r1cs`.
#[test]
fn the_snap_walk_has_storage_proofs_r1cs() {
    let f = fixture();
    let snap = sector::snap_inputs(&f.sectors[2], 34).unwrap();
    let first = |set: CircuitSet| set.partitions.into_iter().next().unwrap();
    let (theirs, their_values) = first(snap.circuits().unwrap()).record().unwrap();
    let (walked, walked_values) = first(snap.walk_circuits().unwrap()).record().unwrap();
    assert!(
        walked == theirs,
        "the walk's R1CS differs from EmptySectorUpdateCircuit's"
    );
    assert!(
        walked_values == their_values,
        "the walk's recorded values differ"
    );
    eprintln!("2KiB SnapDeals: {:?}, the walk alike", theirs.shape());
}

fn randomness_bytes(seed: u8) -> [u8; 32] {
    let mut r = [seed; 32];
    r[31] &= 0x3f;
    r
}

#[test]
fn winning_post_equals_the_synthesizer() {
    let f = fixture();
    let first = sector::winning_post_inputs(&f.sectors[0], randomness_bytes(7)).unwrap();
    let second = sector::winning_post_inputs(&f.sectors[1], randomness_bytes(8)).unwrap();
    check_filecoin(
        "2KiB WinningPoSt",
        first.circuits().unwrap(),
        || second.circuits().unwrap(),
        1,
    );
}

#[test]
fn window_post_equals_the_synthesizer() {
    let f = fixture();
    let sectors: Vec<_> = f.sectors.iter().collect();
    let first = sector::window_post_inputs(&sectors, randomness_bytes(9)).unwrap();
    let second = sector::window_post_inputs(&sectors, randomness_bytes(10)).unwrap();
    // Both partitions, the second padded with a repeated sector as filecoin-proofs pads it.
    check_filecoin(
        "2KiB WindowPoSt",
        first.circuits().unwrap(),
        || second.circuits().unwrap(),
        2,
    );
}

/// The synthesis bench's random-valued SnapDeals, WinningPoSt and WindowPoSt partitions
/// (its 32GiB rows) record, at 2KiB, exactly the real circuits' R1CS, and their witness runs
/// fit it.
#[test]
fn random_valued_update_and_post_partitions_have_the_real_r1cs() {
    let f = fixture();
    let first = |set: CircuitSet| set.partitions.into_iter().next().unwrap();
    let snap = sector::snap_inputs(&f.sectors[1], 33).unwrap();
    let real_snap = first(snap.circuits().unwrap());
    let winning = sector::winning_post_inputs(&f.sectors[0], randomness_bytes(5)).unwrap();
    let real_winning = first(winning.circuits().unwrap());
    let sectors: Vec<_> = f.sectors.iter().collect();
    let window = sector::window_post_inputs(&sectors, randomness_bytes(6)).unwrap();
    let real_window = first(window.circuits().unwrap());
    let cases = [
        (
            "SnapDeals",
            real_snap,
            snap_random_partition(snap.registered_update_proof, 4).unwrap(),
        ),
        (
            "WinningPoSt",
            real_winning,
            post_random_partition(winning.registered_post_proof, 5).unwrap(),
        ),
        (
            "WindowPoSt",
            real_window,
            post_random_partition(window.registered_post_proof, 6).unwrap(),
        ),
    ];
    for (what, real, random) in cases {
        let (theirs, _) = real.record().unwrap();
        let (ours, _) = random.record().unwrap();
        assert!(
            ours == theirs,
            "2KiB {what}: the random-valued partition has another R1CS"
        );
        eprintln!(
            "2KiB {what}: {:?}, random-valued partition alike",
            theirs.shape()
        );
    }
    // A witness run (not only a recording) of a random partition goes to the end and fits,
    // and its native SHA-256 gives the walk's values through the gadgets.
    let (recorded, _) = snap_random_partition(snap.registered_update_proof, 7)
        .unwrap()
        .record()
        .unwrap();
    let values = snap_random_partition(snap.registered_update_proof, 8)
        .unwrap()
        .witness()
        .unwrap();
    recorded.check(&values).unwrap();
    let through_gadgets = snap_random_partition(snap.registered_update_proof, 8)
        .unwrap()
        .witness_through_gadgets()
        .unwrap();
    assert_same_values("2KiB random SnapDeals", &values, &through_gadgets);
}

#[test]
fn the_engine_records_each_circuit_once() {
    let f = fixture();
    let proof = sector::WINNING_POST_2KIB;
    ensure(ParamsFor::PoSt(proof));
    let engine = engine();
    for seed in [11, 12] {
        let inputs = sector::winning_post_inputs(&f.sectors[0], randomness_bytes(seed)).unwrap();
        let job = prove_winning_post(
            &engine,
            inputs.registered_post_proof,
            &inputs.randomness,
            inputs.prover_id,
            &inputs.vanilla_proofs,
            ProofOptions {
                params_dir: Some(f.params_dir.clone()),
                ..ProofOptions::default()
            },
        )
        .unwrap();
        let bytes = proof_bytes(&job.finish(PATIENCE).unwrap());
        assert!(sector::verify_winning_post(&inputs, &bytes).unwrap());
    }
    let recorded = engine.recorded_circuits();
    assert_eq!(recorded.recordings(), 1);
    let key = ShapeKey::new(ParamsFor::PoSt(proof).circuit_id().unwrap());
    assert_eq!(recorded.keys(), vec![key]);
}

#[test]
fn the_coefficient_table_is_shared_and_small() {
    let (recorded, _) = record(SampleCircuit::BooleanHeavy { bits: 300, seed: 1 }).unwrap();
    let s = recorded.coefficient_stats();
    // 300 booleans (b, 1 − b, ...) and 5 packings with coefficients 2^0 .. 2^63.
    assert_eq!(s.entries, s.plus_one + s.minus_one + s.powers_of_two);
    assert_eq!(s.distinct_powers_of_two, 63);
    assert_eq!(s.distinct, 65);
}

/// A recording as the start phase's deferred evaluations (`DeferredEvaluations`): its host
/// evaluation equals the synthesizer's a, b and c, its matrices are the recorded ones, and a
/// witness of another shape is refused.
#[test]
fn deferred_evaluations_equal_the_synthesizer() {
    use cuzk::groth16::DeferredEvaluations;
    let circuit = SampleCircuit::BooleanHeavy { bits: 300, seed: 3 };
    let (recorded, _) = record(circuit.clone()).unwrap();
    let other = circuit.with_seed(77);
    let want = synthesize(other.clone()).unwrap();
    let w = recorded.witness_only(witness(other).unwrap()).unwrap();
    assert!(
        w == want.witness,
        "witness_only gives the synthesizer's witness"
    );
    let got = DeferredEvaluations::evaluate(&recorded, &w).unwrap();
    assert!(got == want.evaluations, "deferred evaluation differs");
    assert_eq!(
        DeferredEvaluations::rows(&recorded),
        want.evaluations.a.len()
    );
    assert_eq!(
        recorded.variables(),
        (want.witness.input.len(), want.witness.aux.len())
    );
    let ([a, b, c], table) = DeferredEvaluations::matrices(&recorded);
    let m = recorded.matrices();
    for (v, m) in [a, b, c].iter().zip(m) {
        assert_eq!(v.row_start, m.row_start());
        assert_eq!(v.cols, m.cols());
        assert_eq!(v.codes, m.codes());
    }
    assert_eq!(table, recorded.coefficients().table());
    // A clone is a recording of its own (a device keys its resident matrices on the id).
    assert_ne!(recorded.clone().id(), recorded.id());
    let mut short = w.clone();
    short.aux.pop();
    assert_eq!(
        DeferredEvaluations::evaluate(&recorded, &short)
            .unwrap_err()
            .kind(),
        ErrorKind::Synthesis
    );
}

/// The engine with deferred evaluations (the witness only reaches the devices, a, b and c are
/// the start phase's: the device's own mat-vec on a GPU, the host's on the CPU) proves the
/// same bytes as the engine that synthesizes them, for the same (r, s), and filecoin-proofs
/// accepts them.
#[test]
fn deferred_evaluations_prove_the_same_bytes() {
    let f = fixture();
    let proof = sector::WINNING_POST_2KIB;
    ensure(ParamsFor::PoSt(proof));
    let inputs = sector::winning_post_inputs(&f.sectors[0], randomness_bytes(21)).unwrap();
    let prove = |defer: bool| {
        let engine = cuzk::Engine::new(cuzk::EngineConfig {
            devices: cuzk::engine::Device::detect(),
            synthesis_threads: 2,
            defer_evaluations: Some(defer),
            ..cuzk::EngineConfig::default()
        })
        .unwrap();
        let job = prove_winning_post(
            &engine,
            inputs.registered_post_proof,
            &inputs.randomness,
            inputs.prover_id,
            &inputs.vanilla_proofs,
            ProofOptions {
                params_dir: Some(f.params_dir.clone()),
                randomness: cuzk::RandomnessChoice::Given(randomness(5, 1)),
                ..ProofOptions::default()
            },
        )
        .unwrap();
        let bytes = proof_bytes(&job.finish(PATIENCE).unwrap());
        // The start phase's mat-vec is a figure of its own: a deferred partition's a, b and
        // c are made there; a synthesized one's in synthesis, which it does not count.
        let matvec = engine.stats().start_matvec;
        assert_eq!(matvec.count, 1, "one start phase");
        assert_eq!(
            matvec.sum_ns > 0,
            defer,
            "the start phase's mat-vec, deferred {defer}"
        );
        bytes
    };
    let deferred = prove(true);
    assert!(sector::verify_winning_post(&inputs, &deferred).unwrap());
    assert_eq!(
        deferred,
        prove(false),
        "deferred and synthesized bytes differ"
    );
}

/// A recording on disk (`r1cs::file`): read back equal; refused when made with other params
/// (stale), truncated anywhere, or with a flipped byte (corrupt); and through the cache, a
/// refused file is recorded again and rewritten, a good one is used without recording.
#[test]
fn recording_files_are_reused_and_refused_when_stale_or_corrupt() {
    use cuzk::r1cs::file::{load, save, Loaded};
    let dir = tempdir("recording-files");
    let circuit = SampleCircuit::BooleanHeavy { bits: 200, seed: 4 };
    let (recorded, _) = record(circuit.clone()).unwrap();
    let (vk, other_vk) = (vec![7u8; 100], vec![8u8; 100]);
    let path = dir.join("r.cuzk-r1cs");
    assert!(matches!(load(&vk, &path).unwrap(), Loaded::Missing));
    save(&recorded, &vk, &path).unwrap();
    match load(&vk, &path).unwrap() {
        Loaded::Recording(r) => assert!(r == recorded, "read back differs"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(load(&other_vk, &path).unwrap(), Loaded::Stale(_)));
    let bytes = std::fs::read(&path).unwrap();
    let bad = dir.join("bad.cuzk-r1cs");
    for cut in [
        0,
        5,
        20,
        120,
        bytes.len() / 2,
        bytes.len() - 9,
        bytes.len() - 1,
    ] {
        std::fs::write(&bad, &bytes[..cut]).unwrap();
        match load(&vk, &bad).unwrap() {
            Loaded::Corrupt(_) => {}
            other => panic!("truncated at {cut}: {other:?}"),
        }
    }
    for at in [3, 150, bytes.len() / 3, bytes.len() - 3] {
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x10;
        std::fs::write(&bad, &flipped).unwrap();
        match load(&vk, &bad).unwrap() {
            Loaded::Corrupt(_) => {}
            other => panic!("byte {at} flipped: {other:?}"),
        }
    }

    // Through the cache: the first cache records and writes, a second one reads the file.
    let key = ShapeKey::new("boolean-heavy-200");
    let vk_of = || vk.clone();
    let vk_of: &dyn Fn() -> Vec<u8> = &vk_of;
    let first = R1csCache::with_dir(&dir);
    let file = first.file_of(&key).unwrap();
    let want = synthesize(circuit.with_seed(5)).unwrap();
    let got = first
        .synthesize_with(&key, circuit.with_seed(5), Some(vk_of))
        .unwrap();
    assert_same("recorded", &got, &want);
    assert_eq!((first.recordings(), first.loaded_from_files()), (1, 0));
    assert!(file.exists());
    let second = R1csCache::with_dir(&dir);
    let got = second
        .synthesize_with(&key, circuit.with_seed(5), Some(vk_of))
        .unwrap();
    assert_same("from the file", &got, &want);
    assert_eq!((second.recordings(), second.loaded_from_files()), (0, 1));
    // A corrupt file is recorded again and rewritten; so is a stale one.
    let len = std::fs::metadata(&file).unwrap().len();
    std::fs::write(&file, &std::fs::read(&file).unwrap()[..len as usize / 2]).unwrap();
    let third = R1csCache::with_dir(&dir);
    assert_same(
        "after a corrupt file",
        &third
            .synthesize_with(&key, circuit.with_seed(5), Some(vk_of))
            .unwrap(),
        &want,
    );
    assert_eq!((third.recordings(), third.loaded_from_files()), (1, 0));
    assert!(matches!(load(&vk, &file).unwrap(), Loaded::Recording(_)));
    let other_of = || other_vk.clone();
    let other_of: &dyn Fn() -> Vec<u8> = &other_of;
    let fourth = R1csCache::with_dir(&dir);
    fourth
        .synthesize_with(&key, circuit.with_seed(5), Some(other_of))
        .unwrap();
    assert_eq!((fourth.recordings(), fourth.loaded_from_files()), (1, 0));
    assert!(matches!(
        load(&other_vk, &file).unwrap(),
        Loaded::Recording(_)
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A CPU start phase that says a, b and c are made off the host, as a GPU does; it notes the
/// budget's reserved bytes at every start phase.
struct OffHost {
    budget: std::sync::OnceLock<cuzk::engine::MemoryBudget>,
    reserved_at_start: std::sync::Mutex<Vec<u64>>,
}

impl cuzk::groth16::StartPhase for OffHost {
    fn name(&self) -> &'static str {
        "cpu-off-host"
    }

    fn start(
        &self,
        srs: &cuzk::groth16::Srs,
        evaluations: cuzk::groth16::Evaluations,
        witness: &cuzk::groth16::Witness,
    ) -> cuzk::Result<(cuzk::groth16::PartialProof, cuzk::groth16::StartTimings)> {
        cuzk::cpu::CpuStart.start(srs, evaluations, witness)
    }

    fn start_deferred(
        &self,
        srs: &cuzk::groth16::Srs,
        deferred: &dyn cuzk::groth16::DeferredEvaluations,
        witness: &cuzk::groth16::Witness,
    ) -> cuzk::Result<(cuzk::groth16::PartialProof, cuzk::groth16::StartTimings)> {
        let reserved = self.budget.get().map_or(0, |b| b.reserved());
        self.reserved_at_start.lock().unwrap().push(reserved);
        cuzk::cpu::CpuStart.start_deferred(srs, deferred, witness)
    }

    fn evaluates_deferred_off_host(&self) -> bool {
        true
    }
}

/// Where every device makes a, b and c off the host, a deferred partition holds only its
/// witness in the host budget, and each recorded shape is charged to the budget once, for
/// the engine's life.
#[test]
fn a_deferred_partition_reserves_only_its_witness() {
    let f = fixture();
    let proof = sector::WINNING_POST_2KIB;
    ensure(ParamsFor::PoSt(proof));
    let device = Arc::new(OffHost {
        budget: Default::default(),
        reserved_at_start: Default::default(),
    });
    let engine = cuzk::Engine::new(cuzk::EngineConfig {
        devices: vec![cuzk::engine::Device::new("offhost", device.clone())],
        synthesis_threads: 1,
        defer_evaluations: Some(true),
        ..cuzk::EngineConfig::default()
    })
    .unwrap();
    let _ = device.budget.set(engine.memory_budget().clone());
    for seed in [31, 32] {
        let inputs = sector::winning_post_inputs(&f.sectors[0], randomness_bytes(seed)).unwrap();
        let opts = ProofOptions {
            params_dir: Some(f.params_dir.clone()),
            ..ProofOptions::default()
        };
        let job = prove_winning_post(
            &engine,
            inputs.registered_post_proof,
            &inputs.randomness,
            inputs.prover_id,
            &inputs.vanilla_proofs,
            opts,
        )
        .unwrap();
        let bytes = proof_bytes(&job.finish(PATIENCE).unwrap());
        assert!(sector::verify_winning_post(&inputs, &bytes).unwrap());
    }
    let recording = engine.recorded_circuits().bytes() as u64;
    let key = ShapeKey::new(ParamsFor::PoSt(proof).circuit_id().unwrap());
    let evaluation_bytes = engine
        .recorded_circuits()
        .get(&key)
        .unwrap()
        .shape()
        .evaluation_bytes() as u64;
    let seen = device.reserved_at_start.lock().unwrap().clone();
    println!(
        "recording {recording} B, a/b/c {evaluation_bytes} B, reserved at each start {seen:?}"
    );
    assert!(recording > 0 && recording < evaluation_bytes);
    assert_eq!(seen.len(), 2, "one start phase per proof");
    for r in &seen {
        // The recording's charge and one witness; with a, b and c reserved it would be more
        // than the evaluations alone.
        assert!(
            *r >= recording && *r < evaluation_bytes,
            "{r} reserved at a start phase"
        );
    }
    // Every partition's share is back; the recording's charge stays.
    assert_eq!(engine.memory_budget().reserved(), recording);
}
