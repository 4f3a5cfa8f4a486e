//! cuzk against bellperson 0.27, the oracle: the same circuit, params, r and s must give the
//! same 192 proof bytes, and each prover's verifier must accept the other's proofs.

use bellperson::groth16 as bp;
use blstrs::{Bls12, G1Projective, G2Projective, Scalar};
use cuzk::cpu::CpuStart;
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::groth16::{
    prove, prove_batch, synthesize, verify_proof, PointCheck, Proof, Randomness, Srs,
};
use ff::Field;
use group::Group;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

fn bellperson_params(circuit: SampleCircuit, w: &ToxicWaste) -> bp::Parameters<Bls12> {
    bp::generate_parameters::<Bls12, _>(
        circuit,
        G1Projective::generator(),
        G2Projective::generator(),
        w.alpha,
        w.beta,
        w.gamma,
        w.delta,
        w.tau,
    )
    .expect("bellperson generates params")
}

fn params_bytes(p: &bp::Parameters<Bls12>) -> Vec<u8> {
    let mut out = Vec::new();
    p.write(&mut out).unwrap();
    out
}

fn proof_bytes(p: &bp::Proof<Bls12>) -> Vec<u8> {
    let mut out = Vec::new();
    p.write(&mut out).unwrap();
    out
}

fn rs(seed: u64) -> Randomness {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    Randomness {
        r: Scalar::random(&mut rng),
        s: Scalar::random(&mut rng),
    }
}

#[test]
fn proofs_equal_bellperson_for_every_shape() {
    for (i, (name, circuit)) in SampleCircuit::shapes().into_iter().enumerate() {
        let waste = ToxicWaste::from_seed(100 + i as u64);
        let bp_params = bellperson_params(circuit.clone(), &waste);
        let bytes = params_bytes(&bp_params);

        // Our generator writes the very same params bellperson does.
        let ours = generate_srs(circuit.clone(), &waste).unwrap();
        assert!(
            ours.to_bytes() == bytes,
            "{name}: generated params differ from bellperson's"
        );

        let srs = Srs::from_bytes(&bytes, PointCheck::Checked).unwrap();
        assert_eq!(srs.to_bytes(), bytes, "{name}: params round trip");

        let rs = rs(i as u64);
        let assignment = synthesize(circuit.clone()).unwrap();
        let inputs = assignment.witness.input[1..].to_vec();
        let proof = prove(&CpuStart, &srs, assignment, rs).unwrap();

        let bp_proof = bp::create_proof::<Bls12, _, _>(circuit, &bp_params, rs.r, rs.s).unwrap();
        assert_eq!(
            proof.to_bytes().to_vec(),
            proof_bytes(&bp_proof),
            "{name}: proof bytes"
        );

        let pvk = bp::prepare_verifying_key(&bp_params.vk);
        let decoded = bp::Proof::<Bls12>::read(&proof.to_bytes()[..]).unwrap();
        assert!(
            bp::verify_proof(&pvk, &decoded, &inputs).unwrap(),
            "{name}: bellperson verifies"
        );
        assert!(
            verify_proof(&srs.vk.prepare(), &proof, &inputs).unwrap(),
            "{name}: cuzk verifies"
        );
    }
}

#[test]
fn shapes_cover_what_they_claim() {
    let shapes: std::collections::HashMap<_, _> = SampleCircuit::shapes().into_iter().collect();
    let shape = |n: &str| synthesize(shapes[n].clone()).unwrap();
    assert_eq!(shape("one-constraint").shape().constraints, 1 + 2);
    let inputs_only = shape("inputs-only");
    assert!(inputs_only.witness.aux.is_empty());
    assert_eq!(inputs_only.shape().constraints, inputs_only.shape().inputs);
    assert_eq!(shape("just-above-power-of-two").shape().constraints, 513);
    let random = shape("random-2^12");
    assert!(random.shape().constraints > 1 << 12);
    let sparse = shape("aux-never-in-a-or-b");
    assert!(sparse.witness.a_aux_density.count_ones() < sparse.witness.aux.len() / 2);
    // Only x (in x·x) is in B.
    assert_eq!(sparse.witness.b_aux_density.count_ones(), 1);
    assert!(shape("many-inputs").shape().inputs > 200);
    let booleans = shape("boolean-heavy");
    assert!(booleans.witness.b_aux_density.count_ones() >= 300);
}

#[test]
fn another_seed_changes_the_witness_not_the_constraints() {
    for (name, circuit) in SampleCircuit::shapes() {
        let a = synthesize(circuit.clone()).unwrap();
        let b = synthesize(circuit.with_seed(12345)).unwrap();
        assert_eq!(a.shape(), b.shape(), "{name}");
        assert_eq!(a.witness.a_aux_density, b.witness.a_aux_density, "{name}");
        assert_eq!(
            a.witness.b_input_density, b.witness.b_input_density,
            "{name}"
        );
        assert_eq!(a.witness.b_aux_density, b.witness.b_aux_density, "{name}");
        if !a.witness.aux.is_empty() {
            assert_ne!(a.witness.aux, b.witness.aux, "{name}");
        }
    }
}

#[test]
fn batch_proofs_equal_bellperson_batch() {
    let circuit = SampleCircuit::BooleanHeavy { bits: 200, seed: 0 };
    let waste = ToxicWaste::from_seed(7);
    let bp_params = bellperson_params(circuit.clone(), &waste);
    let srs = Srs::from_bytes(&params_bytes(&bp_params), PointCheck::Unchecked).unwrap();
    let circuits: Vec<_> = (0..3).map(|i| circuit.with_seed(50 + i)).collect();
    let rss: Vec<Randomness> = (0..3).map(|i| rs(1000 + i)).collect();

    let assignments: Vec<_> = circuits
        .iter()
        .cloned()
        .map(|c| synthesize(c).unwrap())
        .collect();
    let inputs: Vec<Vec<Scalar>> = assignments
        .iter()
        .map(|a| a.witness.input[1..].to_vec())
        .collect();
    let ours = prove_batch(&CpuStart, &srs, assignments, &rss).unwrap();
    let theirs = bp::create_proof_batch::<Bls12, _, _>(
        circuits,
        &bp_params,
        rss.iter().map(|x| x.r).collect(),
        rss.iter().map(|x| x.s).collect(),
    )
    .unwrap();
    let pvk = srs.vk.prepare();
    for ((a, b), inputs) in ours.iter().zip(&theirs).zip(&inputs) {
        assert_eq!(a.to_bytes().to_vec(), proof_bytes(b));
        assert!(verify_proof(&pvk, a, inputs).unwrap());
    }
    // Partitions with different witnesses give different proofs and public inputs.
    assert_ne!(ours[0], ours[1]);
    assert_ne!(inputs[0], inputs[1]);
    // A proof does not verify against another partition's inputs.
    assert!(!verify_proof(&pvk, &ours[0], &inputs[1]).unwrap());
}

#[test]
fn a_flipped_byte_is_rejected() {
    let circuit = SampleCircuit::ManyInputs { inputs: 5, seed: 9 };
    let srs = generate_srs(circuit.clone(), &ToxicWaste::from_seed(3)).unwrap();
    let a = synthesize(circuit).unwrap();
    let inputs = a.witness.input[1..].to_vec();
    let proof = prove(&CpuStart, &srs, a, rs(5)).unwrap();
    let pvk = srs.vk.prepare();
    let bytes = proof.to_bytes();
    assert!(verify_proof(&pvk, &Proof::from_bytes(&bytes).unwrap(), &inputs).unwrap());
    for pos in [0usize, 20, 47, 48, 100, 143, 144, 191] {
        for bit in [0u8, 3, 7] {
            let mut bad = bytes;
            bad[pos] ^= 1 << bit;
            // Either the bytes no longer decode to a valid point, or the proof fails.
            if let Ok(p) = Proof::from_bytes(&bad) {
                assert!(
                    !verify_proof(&pvk, &p, &inputs).unwrap(),
                    "byte {pos} bit {bit}"
                );
            }
        }
    }
    // A wrong public input is rejected too.
    let mut wrong = inputs.clone();
    wrong[2] += Scalar::ONE;
    assert!(!verify_proof(&pvk, &proof, &wrong).unwrap());
}
