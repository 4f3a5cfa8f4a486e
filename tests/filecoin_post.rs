//! WinningPoSt and WindowPoSt from real 2KiB sectors' vanilla proofs, through the engine:
//! filecoin-proofs' verifiers accept the proofs and, for fixed r and s, the bytes equal
//! bellperson 0.27's for the same circuits. Bad inputs get clear errors.

mod filecoin_common;

use cuzk::engine::{Device, JobKind};
use cuzk::filecoin::{
    proof_bytes, prove_window_post, prove_window_post_partition, prove_winning_post,
    window_post_circuits, window_post_partition_circuits, winning_post_circuits, ParamsFor,
    ProofOptions,
};
use cuzk::fixtures::sector::{self, WINDOW_POST_2KIB, WINNING_POST_2KIB};
use cuzk::{Engine, EngineConfig, ErrorKind, RandomnessChoice};
use filecoin_common::*;
use group::Group as _;

fn randomness_bytes(seed: u8) -> [u8; 32] {
    let mut r = [seed; 32];
    r[31] &= 0x3f; // a field element, as filecoin-ffi's Go side makes it
    r
}

#[test]
fn winning_post_verifies_and_equals_bellperson() {
    let f = fixture();
    ensure(ParamsFor::PoSt(WINNING_POST_2KIB));
    let inputs = sector::winning_post_inputs(&f.sectors[0], randomness_bytes(7)).unwrap();
    let engine = engine();
    let rs = randomness(1, 1);
    let job = prove_winning_post(
        &engine,
        inputs.registered_post_proof,
        &inputs.randomness,
        inputs.prover_id,
        &inputs.vanilla_proofs,
        ProofOptions {
            randomness: RandomnessChoice::Given(rs.clone()),
            params_dir: Some(f.params_dir.clone()),
            ..ProofOptions::default()
        },
    )
    .unwrap();
    assert_eq!(job.kind(), JobKind::WinningPost);
    let bytes = proof_bytes(&job.finish(PATIENCE).unwrap());
    assert_eq!(bytes.len(), 192);
    assert!(sector::verify_winning_post(&inputs, &bytes).unwrap());

    let set = winning_post_circuits(
        inputs.registered_post_proof,
        &inputs.randomness,
        inputs.prover_id,
        &inputs.vanilla_proofs,
    )
    .unwrap();
    assert_eq!(bellperson_proofs(set, &rs), bytes, "bellperson's bytes");

    let t = job.timings();
    assert!(t.synthesis > std::time::Duration::ZERO && t.device > std::time::Duration::ZERO);
    assert!(t.total >= t.synthesis, "{t:?}");
    let s = engine.stats();
    let k = s.kinds[JobKind::WinningPost.index()];
    assert_eq!(
        (k.jobs_admitted, k.jobs_finished, k.partitions_proved),
        (1, 1, 1)
    );
    assert_eq!(s.synthesis.count, 1);
    assert_eq!(s.params_load.count, 1, "params loaded once");

    // A second proof of the same circuit reuses the loaded params.
    let again = prove_winning_post(
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
    assert!(
        sector::verify_winning_post(&inputs, &proof_bytes(&again.finish(PATIENCE).unwrap()))
            .unwrap()
    );
    assert_eq!(again.timings().params_load, std::time::Duration::ZERO);
    assert_eq!(engine.stats().params_load.count, 1);
    assert_eq!(engine.params().loaded().len(), 1);
}

#[test]
fn window_post_whole_and_by_partition() {
    let f = fixture();
    ensure(ParamsFor::PoSt(WINDOW_POST_2KIB));
    let sectors: Vec<_> = f.sectors.iter().collect();
    let inputs = sector::window_post_inputs(&sectors, randomness_bytes(9)).unwrap();
    assert_eq!(inputs.partitions(), 2);
    let engine = engine();
    let options = |rs: Vec<_>| ProofOptions {
        randomness: RandomnessChoice::Given(rs),
        params_dir: Some(f.params_dir.clone()),
        ..ProofOptions::default()
    };
    let rs = randomness(2, 2);
    let whole = prove_window_post(
        &engine,
        inputs.registered_post_proof,
        &inputs.randomness,
        inputs.prover_id,
        &inputs.vanilla_proofs,
        options(rs.clone()),
    )
    .unwrap();
    let whole = proof_bytes(&whole.finish(PATIENCE).unwrap());
    assert_eq!(whole.len(), 2 * 192);
    assert!(sector::verify_window_post(&inputs, &whole).unwrap());
    let set = window_post_circuits(
        inputs.registered_post_proof,
        &inputs.randomness,
        inputs.prover_id,
        &inputs.vanilla_proofs,
    )
    .unwrap();
    assert_eq!(bellperson_proofs(set, &rs), whole, "bellperson's bytes");

    // Each partition alone, with its own (r, s), gives that partition's part of the whole.
    let mut parts = Vec::new();
    for (k, r) in rs.iter().enumerate() {
        let job = prove_window_post_partition(
            &engine,
            inputs.registered_post_proof,
            &inputs.randomness,
            inputs.prover_id,
            inputs.partition_vanilla_proofs(k),
            k,
            options(vec![*r]),
        )
        .unwrap();
        parts.extend(proof_bytes(&job.finish(PATIENCE).unwrap()));
        let set = window_post_partition_circuits(
            inputs.registered_post_proof,
            &inputs.randomness,
            inputs.prover_id,
            inputs.partition_vanilla_proofs(k),
            k,
        )
        .unwrap();
        assert_eq!(set.partitions.len(), 1);
    }
    assert_eq!(
        parts, whole,
        "the partitions concatenated are the whole window"
    );
}

#[test]
fn bad_post_inputs_get_clear_errors() {
    let f = fixture();
    ensure(ParamsFor::PoSt(WINNING_POST_2KIB));
    let inputs = sector::winning_post_inputs(&f.sectors[0], randomness_bytes(3)).unwrap();
    let engine = engine();
    let opts = || ProofOptions {
        params_dir: Some(f.params_dir.clone()),
        ..ProofOptions::default()
    };
    // Refused at submission, or (where only synthesis can tell) failed by its job.
    let err = |r: cuzk::Result<cuzk::Job>| match r {
        Err(e) => e,
        Ok(job) => job.finish(PATIENCE).expect_err("must fail"),
    };

    let e = err(prove_winning_post(
        &engine,
        inputs.registered_post_proof,
        &[],
        inputs.prover_id,
        &inputs.vanilla_proofs,
        opts(),
    ));
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.message().contains("randomness"), "{e}");

    let e = err(prove_winning_post(
        &engine,
        inputs.registered_post_proof,
        &inputs.randomness,
        inputs.prover_id,
        &[],
        opts(),
    ));
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");

    let garbled = vec![inputs.vanilla_proofs[0][..40].to_vec()];
    let e = err(prove_winning_post(
        &engine,
        inputs.registered_post_proof,
        &inputs.randomness,
        inputs.prover_id,
        &garbled,
        opts(),
    ));
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
    assert!(e.message().contains("vanilla proof 0"), "{e}");

    let two = vec![inputs.vanilla_proofs[0].clone(); 2];
    let e = err(prove_winning_post(
        &engine,
        inputs.registered_post_proof,
        &inputs.randomness,
        inputs.prover_id,
        &two,
        opts(),
    ));
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");

    // A WindowPoSt proof type for WinningPoSt inputs.
    let e = err(prove_winning_post(
        &engine,
        WINDOW_POST_2KIB,
        &inputs.randomness,
        inputs.prover_id,
        &inputs.vanilla_proofs,
        opts(),
    ));
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");

    // Snap vanilla proofs handed over as PoSt ones.
    let snap = sector::snap_inputs(&f.sectors[1], 5).unwrap();
    let e = err(prove_winning_post(
        &engine,
        inputs.registered_post_proof,
        &inputs.randomness,
        inputs.prover_id,
        &snap.vanilla_proofs,
        opts(),
    ));
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");

    // No params where the options say they are: the path is named.
    let empty = tempdir("no-params");
    let e = err(prove_winning_post(
        &engine,
        inputs.registered_post_proof,
        &inputs.randomness,
        inputs.prover_id,
        &inputs.vanilla_proofs,
        ProofOptions {
            params_dir: Some(empty.clone()),
            ..ProofOptions::default()
        },
    ));
    assert_eq!(e.kind(), ErrorKind::ParamsNotFound, "{e}");
    assert!(
        e.message().contains(&*empty.to_string_lossy()) && e.message().contains(".params"),
        "{e}"
    );

    // A corrupt params file: named, and the engine goes on proving.
    let corrupt = tempdir("corrupt-params");
    let path = ParamsFor::PoSt(WINNING_POST_2KIB)
        .params_path(Some(&corrupt))
        .unwrap();
    let good = std::fs::read(
        ParamsFor::PoSt(WINNING_POST_2KIB)
            .params_path(Some(&f.params_dir))
            .unwrap(),
    )
    .unwrap();
    std::fs::write(&path, &good[..good.len() / 2]).unwrap();
    let e = err(prove_winning_post(
        &engine,
        inputs.registered_post_proof,
        &inputs.randomness,
        inputs.prover_id,
        &inputs.vanilla_proofs,
        ProofOptions {
            params_dir: Some(corrupt.clone()),
            ..ProofOptions::default()
        },
    ));
    assert_eq!(e.kind(), ErrorKind::InvalidParams, "{e}");
    let _ = std::fs::remove_dir_all(&corrupt);

    let ok = prove_winning_post(
        &engine,
        inputs.registered_post_proof,
        &inputs.randomness,
        inputs.prover_id,
        &inputs.vanilla_proofs,
        opts(),
    )
    .unwrap();
    assert!(
        sector::verify_winning_post(&inputs, &proof_bytes(&ok.finish(PATIENCE).unwrap())).unwrap()
    );
}

/// A backend whose start phase is off by one generator in A: what a faulty device would
/// hand back.
struct CorruptStart;

impl cuzk::groth16::StartPhase for CorruptStart {
    fn name(&self) -> &'static str {
        "corrupt"
    }
    fn start(
        &self,
        srs: &cuzk::groth16::Srs,
        evaluations: cuzk::groth16::Evaluations,
        witness: &cuzk::groth16::Witness,
    ) -> cuzk::Result<(cuzk::groth16::PartialProof, cuzk::groth16::StartTimings)> {
        let (mut p, t) = cuzk::cpu::CpuStart.start(srs, evaluations, witness)?;
        p.a += blstrs::G1Projective::generator();
        Ok((p, t))
    }
}

#[test]
fn a_proof_that_fails_verification_is_never_returned() {
    let f = fixture();
    ensure(ParamsFor::PoSt(WINNING_POST_2KIB));
    let inputs = sector::winning_post_inputs(&f.sectors[0], randomness_bytes(11)).unwrap();
    let engine = Engine::new(EngineConfig {
        devices: vec![Device::new("corrupt", std::sync::Arc::new(CorruptStart))],
        synthesis_threads: 1,
        // Every attempt fails verification, so the device leaves rotation: probe it soon.
        faults: cuzk::engine::FaultPolicy {
            probe_delay: std::time::Duration::from_millis(50),
            ..Default::default()
        },
        ..EngineConfig::default()
    })
    .unwrap();
    let opts = |verify| ProofOptions {
        params_dir: Some(f.params_dir.clone()),
        verify,
        ..ProofOptions::default()
    };
    let prove = |verify| {
        prove_winning_post(
            &engine,
            inputs.registered_post_proof,
            &inputs.randomness,
            inputs.prover_id,
            &inputs.vanilla_proofs,
            opts(verify),
        )
        .unwrap()
        .finish(PATIENCE)
    };
    let e = prove(true).expect_err("a corrupt proof must not be returned");
    assert_eq!(e.kind(), ErrorKind::VerificationFailed, "{e}");
    assert!(e.message().contains("partition 0"), "{e}");
    // Retried on the only device, then failed with each attempt named.
    assert!(e.message().contains("failed on all 3 attempts"), "{e}");
    assert_eq!(
        engine.stats().kinds[JobKind::WinningPost.index()].jobs_failed,
        1
    );
    // With verification off the same fault reaches the host, and filecoin-proofs rejects it:
    // the check above is what stands between them.
    let unchecked = prove(false).expect("unverified proofs are returned");
    assert!(!sector::verify_winning_post(&inputs, &proof_bytes(&unchecked)).unwrap());

    // Vanilla proofs made for other randomness are refused before anything is proved.
    let e = prove_winning_post(
        &engine,
        inputs.registered_post_proof,
        &randomness_bytes(12),
        inputs.prover_id,
        &inputs.vanilla_proofs,
        opts(true),
    )
    .expect_err("vanilla proofs of other randomness");
    assert_eq!(e.kind(), ErrorKind::InvalidInput, "{e}");
}

#[test]
fn a_small_budget_holds_with_synthesis_included() {
    let f = fixture();
    ensure(ParamsFor::PoSt(WINDOW_POST_2KIB));
    let sectors: Vec<_> = f.sectors.iter().collect();
    let inputs = sector::window_post_inputs(&sectors, randomness_bytes(13)).unwrap();
    let path = ParamsFor::PoSt(WINDOW_POST_2KIB)
        .params_path(Some(&f.params_dir))
        .unwrap();
    let srs = cuzk::groth16::Srs::load(&path, cuzk::groth16::PointCheck::Unchecked).unwrap();
    // One partition's reservation, from the shape the engine reserves by.
    let shape = cuzk::groth16::CircuitShape {
        constraints: srs.domain_size(),
        inputs: srs.num_inputs(),
        aux: srs.num_aux(),
    };
    let one = (shape.evaluation_bytes() + shape.witness_bytes() + 192) as u64;
    let budget = one + one / 2; // room for one partition at a time
    let engine = Engine::new(EngineConfig {
        devices: Device::cpu(1),
        synthesis_threads: 2,
        memory_budget: Some(budget),
        ..EngineConfig::default()
    })
    .unwrap();
    let jobs: Vec<_> = (0..3)
        .map(|_| {
            prove_window_post(
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
            .unwrap()
        })
        .collect();
    for j in &jobs {
        assert!(
            sector::verify_window_post(&inputs, &proof_bytes(&j.finish(PATIENCE).unwrap()))
                .unwrap()
        );
    }
    let s = engine.stats();
    assert!(
        s.memory_peak_bytes <= budget,
        "peak {} > budget {budget}",
        s.memory_peak_bytes
    );
    assert!(
        s.memory_peak_bytes >= one,
        "synthesis reserved its partition"
    );
    // Every partition's share is back; what stays is the recorded circuit's charge.
    assert_eq!(
        s.memory_reserved_bytes,
        engine.recorded_circuits().bytes() as u64
    );
    assert_eq!(s.kinds[JobKind::WindowPost.index()].partitions_proved, 6);
}
