//! PoRep C2 from real 2KiB C1 outputs and SnapDeals from real vanilla partition proofs,
//! through the engine: filecoin-proofs' verifiers accept the proofs and, for fixed r and s,
//! the bytes equal bellperson 0.27's on the same circuits, synthetic and non-interactive
//! PoRep included (NI's proofs also aggregated by filecoin-proofs where a GPU proves all
//! 13 partitions). Bad C1 outputs get clear errors;
//! a WinningPoSt submitted behind a PoRep backlog overtakes it; a mixed backlog gives the
//! same bytes on one device and on two.

mod filecoin_common;

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use cuzk::engine::{Device, Hooks, JobKind};
use cuzk::filecoin::{
    porep_c2_circuits, proof_bytes, prove_porep_c2, prove_snap, prove_winning_post, snap_circuits,
    ParamsFor, ProofOptions, SnapCommitments,
};
use cuzk::fixtures::backlog::Backlog;
use cuzk::fixtures::sector::{self, SEAL_2KIB, UPDATE_2KIB, WINDOW_POST_2KIB, WINNING_POST_2KIB};
use cuzk::groth16::Randomness;
use cuzk::{Engine, EngineConfig, ErrorKind, Job, RandomnessChoice};
use filecoin_common::*;
use filecoin_proofs_api::RegisteredSealProof;

fn options(rs: Option<Vec<cuzk::groth16::Randomness>>) -> ProofOptions {
    ProofOptions {
        randomness: rs.map_or(RandomnessChoice::Random, RandomnessChoice::Given),
        params_dir: Some(fixture().params_dir.clone()),
        ..ProofOptions::default()
    }
}

#[test]
fn porep_c2_verifies_and_equals_bellperson() {
    let f = fixture();
    ensure(ParamsFor::Seal(SEAL_2KIB));
    let s = &f.sectors[0];
    let engine = engine();
    let rs = randomness(3, 1);
    let t = Instant::now();
    let (job, bytes) = prove_c2(&engine, s, &rs);
    eprintln!(
        "2KiB PoRep C2 through the engine: {:.1} s, {:?}",
        t.elapsed().as_secs_f64(),
        job.timings()
    );
    assert_eq!(bytes.len(), 192);
    assert!(
        sector::verify_seal(s, &bytes).unwrap(),
        "filecoin-proofs' verify_seal"
    );
    let set = porep_c2_circuits(&s.c1_output, s.sector_id, s.prover_id).unwrap();
    assert_eq!(set.partitions.len(), 1);
    assert_eq!(bellperson_proofs(set, &rs), bytes, "bellperson's bytes");
    let k = engine.stats().kinds[JobKind::PoRep.index()];
    assert_eq!((k.jobs_finished, k.partitions_proved), (1, 1));
}

/// The C2 of `s` through `engine` with (r, s) `rs`: the job and its proof bytes.
fn prove_c2(engine: &Engine, s: &sector::SealedSector, rs: &[Randomness]) -> (Job, Vec<u8>) {
    let job = prove_porep_c2(
        engine,
        &s.c1_output,
        s.sector_id,
        s.prover_id,
        options(Some(rs.to_vec())),
    )
    .unwrap();
    let bytes = proof_bytes(&job.finish(PATIENCE).unwrap());
    (job, bytes)
}

/// A 2KiB sector sealed with `registered` (its own folder and sector id).
fn seal_as(registered: RegisteredSealProof, id: u64) -> sector::SealedSector {
    let dir = tempdir(&format!("porep-{id}"));
    let prover_id = sector::prover_id_from_miner(MINER);
    sector::seal_2kib(&dir, registered, id, prover_id, id).expect("seal a 2KiB sector")
}

/// bellperson's proof of partition `k` alone, with `rs`.
fn bellperson_partition(s: &sector::SealedSector, k: usize, rs: &Randomness) -> Vec<u8> {
    let mut set = porep_c2_circuits(&s.c1_output, s.sector_id, s.prover_id).unwrap();
    set.partitions = vec![set.partitions.swap_remove(k)];
    bellperson_proofs(set, std::slice::from_ref(rs))
}

#[test]
fn synthetic_porep_c2_verifies_and_equals_bellperson() {
    // Synthetic PoRep proves the interactive PoRep's circuit (the same circuit id, so the
    // same params); only how C1 picked its challenges' proofs differs.
    ensure(ParamsFor::Seal(SEAL_2KIB));
    let registered = RegisteredSealProof::StackedDrg2KiBV1_1_Feat_SyntheticPoRep;
    let s = seal_as(registered, 20);
    let rs = randomness(41, 1);
    let engine = engine();
    let (_, bytes) = prove_c2(&engine, &s, &rs);
    assert_eq!(bytes.len(), 192);
    assert!(
        sector::verify_seal(&s, &bytes).unwrap(),
        "filecoin-proofs' verify_seal"
    );
    assert_eq!(
        bellperson_partition(&s, 0, &rs[0]),
        bytes,
        "bellperson's bytes"
    );
}

#[test]
fn non_interactive_porep_c2_verifies_and_equals_bellperson() {
    // NI-PoRep: the same circuit, 13 partitions at 2KiB whose challenges come from comm_r
    // and the replica id (the seed is not used), and a C2 output filecoin-proofs aggregates.
    ensure(ParamsFor::Seal(SEAL_2KIB));
    let registered = RegisteredSealProof::StackedDrg2KiBV1_2_Feat_NonInteractivePoRep;
    let s = seal_as(registered, 21);
    let n = usize::from(registered.as_v1_config().partitions);
    assert_eq!(n, 13);
    let rs = randomness(42, n);
    // Relabelled as the interactive PoRep, its 13 partitions of vanilla proofs are refused.
    let mut c1: serde_json::Value = serde_json::from_slice(&s.c1_output).unwrap();
    c1["registered_proof"] = serde_json::json!("StackedDrg2KiBV1_1");
    let e = porep_c2_circuits(&serde_json::to_vec(&c1).unwrap(), s.sector_id, s.prover_id)
        .expect_err("13 partitions for a 1-partition proof");
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.message().contains("13 partitions"), "{e}");
    // The public inputs filecoin-proofs derives for each partition.
    let inputs = filecoin_proofs_api::seal::get_seal_inputs(
        registered,
        s.comm_r,
        s.comm_d,
        s.prover_id,
        filecoin_proofs_api::SectorId::from(s.sector_id),
        s.ticket,
        s.seed,
    )
    .unwrap();
    assert_eq!(inputs.len(), n);
    let vk_path = ParamsFor::Seal(registered)
        .vk_path(Some(&fixture().params_dir))
        .unwrap();
    let vk = bellperson::groth16::VerifyingKey::<blstrs::Bls12>::read(
        std::fs::File::open(vk_path).unwrap(),
    )
    .unwrap();
    let pvk = bellperson::groth16::prepare_verifying_key(&vk);
    let verifies = |proof: &[u8], k: usize| {
        let p = bellperson::groth16::Proof::<blstrs::Bls12>::read(proof).unwrap();
        bellperson::groth16::verify_proof(&pvk, &p, &inputs[k]).unwrap()
    };
    let engine = engine();
    let last = n - 1;
    // `CUZK_TEST_WHOLE_NI=1` proves the whole C2 on the CPU too (many minutes).
    let whole = Device::gpus().is_ok_and(|g| !g.is_empty())
        || std::env::var_os("CUZK_TEST_WHOLE_NI").is_some();
    if whole {
        // The whole C2, as a host submits it.
        let (_, bytes) = prove_c2(&engine, &s, &rs);
        assert_eq!(bytes.len(), 192 * n);
        assert!(
            sector::verify_seal_circuit_proofs(&s, &bytes).unwrap(),
            "filecoin-proofs' verify_batch_seal"
        );
        for (k, proof) in bytes.chunks(192).enumerate() {
            assert!(verifies(proof, k), "partition {k}");
        }
        assert!(
            !verifies(&bytes[..192], 1),
            "partition 0's proof for partition 1"
        );
        // What filecoin-ffi's SealCommitPhase2 returns for NI-PoRep is these proofs'
        // SnarkPack aggregate: the host's AggregateSealProofs (filecoin-proofs'
        // aggregate_seal_commit_proofs, SnarkPack v2) makes it, and verify_seal takes it.
        cuzk::fixtures::filecoin_params::ensure_test_aggregation_srs(&fixture().params_dir)
            .unwrap();
        let aggregate = filecoin_proofs_api::seal::aggregate_seal_commit_proofs(
            registered,
            filecoin_proofs_api::RegisteredAggregationProof::SnarkPackV2,
            &[s.comm_r],
            &[s.seed],
            &[filecoin_proofs_api::seal::SealCommitPhase2Output {
                proof: bytes.clone(),
            }],
        )
        .unwrap();
        assert!(
            sector::verify_seal(&s, &aggregate).unwrap(),
            "filecoin-proofs' verify_seal of the aggregate"
        );
        assert_eq!(
            bellperson_partition(&s, last, &rs[last]),
            bytes[192 * last..]
        );
    } else {
        // Thirteen 2KiB partitions take many minutes on two cores: the CPU proves the last
        // one alone (the whole C2 runs where there is a GPU, this same test, or with
        // CUZK_TEST_WHOLE_NI set).
        eprintln!("no GPU: proving NI-PoRep partition {last} of {n} alone");
        let mut set = porep_c2_circuits(&s.c1_output, s.sector_id, s.prover_id).unwrap();
        assert_eq!(set.partitions.len(), n);
        set.partitions.drain(..last);
        let job = cuzk::filecoin::submit(&engine, set, options(Some(rs[last..].to_vec()))).unwrap();
        let bytes = proof_bytes(&job.finish(PATIENCE).unwrap());
        assert!(verifies(&bytes, last), "partition {last}");
        assert!(
            !verifies(&bytes, last - 1),
            "partition {last}'s proof for {}",
            last - 1
        );
        assert_eq!(bellperson_partition(&s, last, &rs[last]), bytes);
    }
}

#[test]
fn snap_deals_verify_and_equal_bellperson() {
    let f = fixture();
    ensure(ParamsFor::Update(UPDATE_2KIB));
    let inputs = sector::snap_inputs(&f.sectors[1], 21).unwrap();
    let c = SnapCommitments {
        comm_r_old: inputs.comm_r_old,
        comm_r_new: inputs.comm_r_new,
        comm_d_new: inputs.comm_d_new,
    };
    let engine = engine();
    let n = inputs.vanilla_proofs.len();
    let rs = randomness(4, n);
    let job = prove_snap(
        &engine,
        inputs.registered_update_proof,
        &inputs.vanilla_proofs,
        c,
        options(Some(rs.clone())),
    )
    .unwrap();
    let bytes = proof_bytes(&job.finish(PATIENCE).unwrap());
    assert_eq!(bytes.len(), 192 * n);
    assert!(
        sector::verify_snap(&inputs, &bytes).unwrap(),
        "verify_empty_sector_update_proof"
    );
    let set = snap_circuits(inputs.registered_update_proof, &inputs.vanilla_proofs, c).unwrap();
    assert_eq!(bellperson_proofs(set, &rs), bytes, "bellperson's bytes");

    // The wrong comm_d_new: no valid proof exists, so none is returned (the update circuit
    // itself asserts that its labels agree, which the synthesis stage turns into an error).
    let wrong = SnapCommitments {
        comm_d_new: inputs.comm_r_new,
        ..c
    };
    let e = match prove_snap(
        &engine,
        inputs.registered_update_proof,
        &inputs.vanilla_proofs,
        wrong,
        options(None),
    ) {
        Err(e) => e,
        Ok(j) => j.finish(PATIENCE).expect_err("wrong commitments"),
    };
    assert!(
        matches!(
            e.kind(),
            ErrorKind::InvalidInput | ErrorKind::Synthesis | ErrorKind::VerificationFailed
        ),
        "{e}"
    );
}

#[test]
fn bad_c1_outputs_get_clear_errors() {
    let f = fixture();
    let s = &f.sectors[0];
    let c1 = &s.c1_output;
    let fails = |bytes: &[u8], sector: u64, prover: [u8; 32]| {
        porep_c2_circuits(bytes, sector, prover).expect_err("must be refused")
    };
    let e = fails(&c1[..c1.len() / 2], s.sector_id, s.prover_id);
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "truncated: {e}");
    assert!(e.message().contains("C1 output"), "{e}");
    let e = fails(
        b"{\"registered_proof\": 7, \"garbage\": [",
        s.sector_id,
        s.prover_id,
    );
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "garbled: {e}");
    let e = fails(b"", s.sector_id, s.prover_id);
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "empty: {e}");

    // The registered proof says 8MiB, the vanilla proofs are a 2KiB sector's.
    let text = String::from_utf8(c1.clone()).unwrap();
    let other = text.replacen("\"StackedDrg2KiBV1_1\"", "\"StackedDrg8MiBV1_1\"", 1);
    assert_ne!(other, text, "the C1 names its registered proof");
    let e = fails(other.as_bytes(), s.sector_id, s.prover_id);
    assert_eq!(e.kind(), ErrorKind::SectorSizeMismatch, "{e}");

    // Another sector's number or another prover: the replica id gives it away.
    let e = fails(c1, s.sector_id + 1, s.prover_id);
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.message().contains("replica id"), "{e}");
    let e = fails(c1, s.sector_id, sector::prover_id_from_miner(MINER + 1));
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");

    // Snap vanilla proofs where PoSt ones belong, and the wrong count of them.
    let snap = sector::snap_inputs(&f.sectors[2], 8).unwrap();
    let c = SnapCommitments {
        comm_r_old: snap.comm_r_old,
        comm_r_new: snap.comm_r_new,
        comm_d_new: snap.comm_d_new,
    };
    let e = snap_circuits(UPDATE_2KIB, &[], c).expect_err("no partitions");
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    let winning = sector::winning_post_inputs(&f.sectors[2], [1; 32]).unwrap();
    let e =
        snap_circuits(UPDATE_2KIB, &winning.vanilla_proofs, c).expect_err("PoSt vanilla proofs");
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
}

#[test]
fn winning_post_overtakes_a_porep_backlog() {
    let f = fixture();
    ensure(ParamsFor::Seal(SEAL_2KIB));
    ensure(ParamsFor::PoSt(WINNING_POST_2KIB));
    let inputs = sector::winning_post_inputs(&f.sectors[1], [5; 32]).unwrap();
    // The one synthesis thread is held in its first partition (the first PoRep's) until
    // every job is queued, so what it takes next is up to the queue's order, not to how
    // fast this thread submits; the devices' start order is logged.
    let (open, gate) = crossbeam_channel::unbounded::<()>();
    let held = Arc::new(AtomicBool::new(false));
    let started = Arc::new(Mutex::new(Vec::<u64>::new()));
    let hooks = Hooks {
        on_synthesis_start: Some({
            let held = held.clone();
            Arc::new(move |_, _| {
                if !held.swap(true, SeqCst) {
                    let _ = gate.recv_timeout(PATIENCE);
                }
            })
        }),
        on_device_start: Some({
            let started = started.clone();
            Arc::new(move |job, _| started.lock().unwrap().push(job))
        }),
        ..Hooks::default()
    };
    let engine = Engine::new(EngineConfig {
        devices: Device::cpu(1),
        synthesis_threads: 1,
        hooks,
        ..EngineConfig::default()
    })
    .unwrap();
    let s = &f.sectors[0];
    let porep: Vec<_> = (0..3)
        .map(|_| {
            prove_porep_c2(
                &engine,
                &s.c1_output,
                s.sector_id,
                s.prover_id,
                options(None),
            )
            .unwrap()
        })
        .collect();
    let winning = prove_winning_post(
        &engine,
        inputs.registered_post_proof,
        &inputs.randomness,
        inputs.prover_id,
        &inputs.vanilla_proofs,
        options(None),
    )
    .unwrap();
    open.send(()).unwrap();
    let proof = proof_bytes(&winning.finish(PATIENCE).unwrap());
    assert!(sector::verify_winning_post(&inputs, &proof).unwrap());
    // Only the PoRep partition the synthesis thread was held in may reach the device
    // before the WinningPoSt; the other two jobs come after it.
    let order = started.lock().unwrap().clone();
    let at = order.iter().position(|&j| j == winning.seq()).unwrap();
    assert!(
        order[..at].iter().all(|&j| j == porep[0].seq()),
        "device start order {order:?}: the WinningPoSt (job {}) was overtaken",
        winning.seq()
    );
    for j in &porep {
        j.cancel();
    }
    let st = engine.shutdown();
    assert_eq!(st.kinds[JobKind::WinningPost.index()].jobs_finished, 1);
}

/// k devices: logical devices on the first GPU where there is one (the multi-device path
/// of a four-GPU machine, on one), else logical CPU devices.
fn devices(k: usize) -> Vec<Device> {
    match Device::logical_gpus(k, 1) {
        Ok(gpus) if !gpus.is_empty() => gpus,
        _ => Device::cpu(k),
    }
}

#[test]
fn a_backlog_gives_the_same_bytes_on_one_device_and_on_two() {
    let f = fixture();
    ensure(ParamsFor::Seal(SEAL_2KIB));
    ensure(ParamsFor::PoSt(WINDOW_POST_2KIB));
    // A PoRep C2 and a WindowPoSt over its sector (fixed r, s per partition).
    let backlog = Backlog::new(&f.sectors[..1], 1, f.params_dir.clone(), 11).unwrap();
    assert_eq!(backlog.params().len(), 2);
    let runs: Vec<_> = [1, 2]
        .into_iter()
        .map(|k| {
            let engine = Engine::new(EngineConfig {
                devices: devices(k),
                synthesis_threads: 2,
                ..EngineConfig::default()
            })
            .unwrap();
            let run = backlog.run(&engine).unwrap();
            assert_eq!(run.devices.len(), k);
            assert_eq!(run.proofs.len(), 2);
            // Every partition ran on exactly one device, and the shares add up.
            assert_eq!(
                run.devices.iter().map(|d| d.partitions).sum::<u64>(),
                run.partitions as u64
            );
            assert_eq!(run.partitions, 2);
            assert!(run.devices.iter().all(|d| d.held <= run.wall));
            assert!(run.synthesis_busy_fraction() > 0.0 && run.synthesis_busy_fraction() <= 1.0);
            run
        })
        .collect();
    assert_eq!(
        runs[0].proofs, runs[1].proofs,
        "the bytes depend on the device count"
    );
    backlog.verify(&runs[1].proofs).unwrap();
    // The verifiers are really asked: the two proofs swapped (192 bytes each) are rejected.
    let mut swapped = runs[1].proofs.clone();
    swapped.swap(0, 1);
    let e = backlog.verify(&swapped).unwrap_err();
    assert!(e.to_string().contains("verify_seal rejects"), "{e}");
}
