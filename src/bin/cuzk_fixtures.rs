//! Writes the fixture the C, C++ and Go host tests prove against: params, partitions as raw
//! little-endian files, fixed randomizers and the proofs cuzk's CPU prover makes from them
//! (the prover the oracle tests check byte for byte against bellperson).
//!
//! ```text
//! cargo run --features test-fixtures --bin cuzk_fixtures -- OUT_DIR [PARTITIONS] [CONSTRAINTS]
//! ```
//!
//! Layout of `OUT_DIR` (all integers little-endian):
//! - `fixture.txt`: `key value` lines: `partitions`, `constraints`, `inputs` (ONE included),
//!   `aux`, `public_inputs`, `domain_size`;
//! - `params.bin`: the `.params` file; `vk.bin`: its verifying key;
//! - `r.bin`, `s.bin`: one 32-byte canonical scalar per partition;
//! - `proofs.bin`: 192 bytes per partition, the expected proofs for those r and s;
//! - `p<i>/{a,b,c,input,aux}.bin`: 32-byte canonical scalars; `p<i>/{a_aux,b_input,
//!   b_aux}_density.bin`: the bitmaps' u64 words (bit counts: `aux`, `inputs`, `aux`);
//!   `p<i>/public.bin`: the public inputs a verifier takes (ONE excluded).
//!
//! Test-only params (known toxic waste): never for production.
//!
//! ## `filecoin-inputs`
//!
//! ```text
//! cargo run --features test-fixtures --bin cuzk_fixtures -- filecoin-inputs OUT_DIR [PARAMS_DIR]
//! ```
//!
//! Seals two real 2KiB sectors (miner 1000, sector ids 1 and 2, fixed seeds; see
//! `cuzk::fixtures::sector`) under `OUT_DIR/sectors/s<id>/` and writes the inputs filecoin-ffi's
//! proving calls take. Same output on every run. Files:
//! - `porep_c1.json`: sector 1's C1 output, the exact bytes filecoin-ffi passes to
//!   `SealCommitPhase2` (serde_json of `SealCommitPhase1Output`);
//! - `winning_vanilla_<i>.bin`: bincode `FallbackPoStSectorProof`, one per challenged sector
//!   (`i` from 0, in challenge order), for `GenerateWinningPoStWithVanilla`;
//! - `window_vanilla_<i>.bin`: the same, one per sector in ascending sector id order, for
//!   `GenerateWindowPoStWithVanilla` (partition `k` takes files
//!   `k*sectors_per_partition ..` for `GenerateSinglePartitionWindowPoStWithVanilla`);
//! - `snap_vanilla_<i>.bin`: bincode `PartitionProof`, one per update partition, as
//!   `GenerateUpdateVanillaProofs` returns them (sector 1 updated with new random data);
//! - `porep.txt`, `winning.txt`, `window.txt`, `snap.txt`: `key=value` lines, no spaces.
//!   Byte strings are lowercase hex (no `0x`), 32 bytes each; integers are decimal.
//!   Registered proofs are given twice: `registered_*_proof=` the filecoin-proofs-api enum
//!   index (the number filecoin-ffi and go-state-types' `abi` use: PoRep
//!   `StackedDrg2KiBV1_1`=5, WinningPoSt `StackedDrgWinning2KiBV1`=0, WindowPoSt
//!   `StackedDrgWindow2KiBV1_2`=10, i.e. go-state-types' `StackedDrgWindow2KiBV1_1`, update
//!   `StackedDrg2KiBV1`=0) and `registered_*_proof_name=` its Rust variant name.
//!   - `porep.txt`: `registered_proof`, `registered_proof_name`, `sector_size`, `sector_id`,
//!     `miner`, `prover_id`, `comm_r`, `comm_d`, `ticket`, `seed`;
//!   - `winning.txt` / `window.txt`: `registered_post_proof`, `registered_post_proof_name`,
//!     `miner`, `prover_id`, `randomness` (already with `[31] &= 0x3f`), `vanilla_proofs`
//!     (the file count), then per file `sector_<i>_id`, `sector_<i>_comm_r`; `window.txt`
//!     adds `sectors_per_partition` and `partitions`;
//!   - `snap.txt`: `registered_update_proof`, `registered_update_proof_name`, `sector_id`,
//!     `comm_r_old`, `comm_r_new`, `comm_d_new`, `vanilla_proofs` (the file count).
//!
//! With `PARAMS_DIR`, the test params of the four 2KiB circuits are made there (once: a
//! later run finds them; see `cuzk::fixtures::filecoin_params`), and for each kind `K` in
//! `porep`, `winning`, `window` (the whole window), `snap` the fixture adds `K_r.bin`,
//! `K_s.bin` (one 32-byte canonical scalar per partition) and `K_proof.bin`: the proof
//! bytes cuzk's engine makes with that r and s on the CPU, each accepted by filecoin-proofs'
//! own verifier before it is written. A host that proves the same inputs with the same r
//! and s must get exactly these bytes.
//!
//! Sealing needs no Groth16 params but writes the SDR parents cache under
//! `FIL_PROOFS_PARENT_CACHE` (default `/var/tmp/filecoin-parents`).

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use cuzk::cpu::CpuStart;
use cuzk::fixtures::sector::{self, to_hex};
use cuzk::fixtures::{generate_srs, SampleCircuit, ToxicWaste};
use cuzk::groth16::scalars::scalars_to_bytes;
use cuzk::groth16::{prove, synthesize, verify_proof, Randomness};
use ff::Field;
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

fn words(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn write(path: &Path, data: &[u8]) -> Result<(), String> {
    fs::write(path, data).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// `cuzk_fixtures filecoin-inputs OUT_DIR [PARAMS_DIR]`: see the crate doc.
fn filecoin_inputs(out: &Path, params_dir: Option<&Path>) -> Result<(), String> {
    const MINER: u64 = 1000;
    fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    if let Some(dir) = params_dir {
        // filecoin-proofs reads its settings once, at its first use: its verifiers must
        // find the test verifying keys.
        std::env::set_var("FIL_PROOFS_PARAMETER_CACHE", dir);
    }
    let prover_id = sector::prover_id_from_miner(MINER);
    let t = std::time::Instant::now();
    let mut sectors = Vec::new();
    for (sector_id, seed) in [(1u64, 1u64), (2, 2)] {
        let dir = out.join("sectors").join(format!("s{sector_id}"));
        let s = sector::seal_2kib(&dir, sector::SEAL_2KIB, sector_id, prover_id, seed)
            .map_err(|e| format!("sealing sector {sector_id}: {e}"))?;
        sectors.push(s);
    }
    let sealed_in = t.elapsed();

    let s1 = &sectors[0];
    write(&out.join("porep_c1.json"), &s1.c1_output)?;
    let mut txt = String::new();
    let _ = writeln!(txt, "registered_proof={}", s1.registered_proof as u64);
    let _ = writeln!(txt, "registered_proof_name={:?}", s1.registered_proof);
    let _ = writeln!(
        txt,
        "sector_size={}",
        u64::from(s1.registered_proof.sector_size())
    );
    let _ = writeln!(txt, "sector_id={}", s1.sector_id);
    let _ = writeln!(txt, "miner={MINER}");
    for (k, v) in [
        ("prover_id", &s1.prover_id),
        ("comm_r", &s1.comm_r),
        ("comm_d", &s1.comm_d),
        ("ticket", &s1.ticket),
        ("seed", &s1.seed),
    ] {
        let _ = writeln!(txt, "{k}={}", to_hex(v));
    }
    write(&out.join("porep.txt"), txt.as_bytes())?;

    // Both PoSt kinds share one layout: header, then the vanilla files and their sectors.
    let post_txt = |proof: filecoin_proofs_api::RegisteredPoStProof,
                    randomness: &[u8; 32],
                    prefix: &str,
                    vanilla: &[Vec<u8>],
                    ids: &[(u64, [u8; 32])]|
     -> Result<String, String> {
        let mut txt = String::new();
        let _ = writeln!(txt, "registered_post_proof={}", proof as u64);
        let _ = writeln!(txt, "registered_post_proof_name={proof:?}");
        let _ = writeln!(txt, "miner={MINER}");
        let _ = writeln!(txt, "prover_id={}", to_hex(&prover_id));
        let _ = writeln!(txt, "randomness={}", to_hex(randomness));
        let _ = writeln!(txt, "vanilla_proofs={}", vanilla.len());
        for (i, (v, (id, comm_r))) in vanilla.iter().zip(ids).enumerate() {
            write(&out.join(format!("{prefix}_vanilla_{i}.bin")), v)?;
            let _ = writeln!(txt, "sector_{i}_id={id}");
            let _ = writeln!(txt, "sector_{i}_comm_r={}", to_hex(comm_r));
        }
        Ok(txt)
    };

    let mut winning_randomness = [0u8; 32];
    for (i, b) in winning_randomness.iter_mut().enumerate() {
        *b = i as u8;
    }
    let w = sector::winning_post_inputs(s1, winning_randomness)
        .map_err(|e| format!("winning PoSt inputs: {e}"))?;
    let txt = post_txt(
        w.registered_post_proof,
        &w.randomness,
        "winning",
        &w.vanilla_proofs,
        &w.sectors,
    )?;
    write(&out.join("winning.txt"), txt.as_bytes())?;

    let mut window_randomness = [0u8; 32];
    for (i, b) in window_randomness.iter_mut().enumerate() {
        *b = (i as u8).wrapping_mul(7).wrapping_add(3);
    }
    let refs: Vec<&sector::SealedSector> = sectors.iter().collect();
    let win = sector::window_post_inputs(&refs, window_randomness)
        .map_err(|e| format!("window PoSt inputs: {e}"))?;
    let mut txt = post_txt(
        win.registered_post_proof,
        &win.randomness,
        "window",
        &win.vanilla_proofs,
        &win.sectors,
    )?;
    let _ = writeln!(txt, "sectors_per_partition={}", win.sectors_per_partition());
    let _ = writeln!(txt, "partitions={}", win.partitions());
    write(&out.join("window.txt"), txt.as_bytes())?;

    let snap = sector::snap_inputs(s1, 3).map_err(|e| format!("snap inputs: {e}"))?;
    let mut txt = String::new();
    let _ = writeln!(
        txt,
        "registered_update_proof={}",
        snap.registered_update_proof as u64
    );
    let _ = writeln!(
        txt,
        "registered_update_proof_name={:?}",
        snap.registered_update_proof
    );
    let _ = writeln!(txt, "sector_id={}", s1.sector_id);
    for (k, v) in [
        ("comm_r_old", &snap.comm_r_old),
        ("comm_r_new", &snap.comm_r_new),
        ("comm_d_new", &snap.comm_d_new),
    ] {
        let _ = writeln!(txt, "{k}={}", to_hex(v));
    }
    let _ = writeln!(txt, "vanilla_proofs={}", snap.vanilla_proofs.len());
    for (i, v) in snap.vanilla_proofs.iter().enumerate() {
        write(&out.join(format!("snap_vanilla_{i}.bin")), v)?;
    }
    write(&out.join("snap.txt"), txt.as_bytes())?;

    if let Some(dir) = params_dir {
        expected_proofs(out, dir, s1, &w, &win, &snap)?;
    }

    println!(
        "sealed {} 2KiB sectors in {sealed_in:?}; wrote PoRep C1, {} winning, {} window and {} snap vanilla proofs to {}",
        sectors.len(),
        w.vanilla_proofs.len(),
        win.vanilla_proofs.len(),
        snap.vanilla_proofs.len(),
        out.display()
    );
    Ok(())
}

/// For each kind: fixed r and s per partition, and the proof bytes cuzk's engine makes
/// with them on the CPU, each accepted by filecoin-proofs' own verifier before it is written.
fn expected_proofs(
    out: &Path,
    params_dir: &Path,
    s1: &sector::SealedSector,
    w: &sector::WinningPostInputs,
    win: &sector::WindowPostInputs,
    snap: &sector::SnapInputs,
) -> Result<(), String> {
    use cuzk::filecoin::{self, ParamsFor, ProofOptions, SnapCommitments};
    use cuzk::fixtures::filecoin_params::ensure_test_params;
    let e = |e: cuzk::Error| e.to_string();
    let engine = cuzk::Engine::new(cuzk::EngineConfig {
        devices: cuzk::Device::cpu(1),
        ..cuzk::EngineConfig::default()
    })
    .map_err(e)?;
    let snap_c = SnapCommitments {
        comm_r_old: snap.comm_r_old,
        comm_r_new: snap.comm_r_new,
        comm_d_new: snap.comm_d_new,
    };
    let kinds = [
        (
            "porep",
            ParamsFor::Seal(s1.registered_proof),
            filecoin::porep_c2_circuits(&s1.c1_output, s1.sector_id, s1.prover_id),
        ),
        (
            "winning",
            ParamsFor::PoSt(w.registered_post_proof),
            filecoin::winning_post_circuits(
                w.registered_post_proof,
                &w.randomness,
                w.prover_id,
                &w.vanilla_proofs,
            ),
        ),
        (
            "window",
            ParamsFor::PoSt(win.registered_post_proof),
            filecoin::window_post_circuits(
                win.registered_post_proof,
                &win.randomness,
                win.prover_id,
                &win.vanilla_proofs,
            ),
        ),
        (
            "snap",
            ParamsFor::Update(snap.registered_update_proof),
            filecoin::snap_circuits(snap.registered_update_proof, &snap.vanilla_proofs, snap_c),
        ),
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for (name, params, set) in kinds {
        let t = std::time::Instant::now();
        let (_, made) = ensure_test_params(params, params_dir).map_err(e)?;
        let set = set.map_err(e)?;
        let rs: Vec<Randomness> = (0..set.partitions.len())
            .map(|_| Randomness {
                r: blstrs::Scalar::random(&mut rng),
                s: blstrs::Scalar::random(&mut rng),
            })
            .collect();
        let job = filecoin::submit(
            &engine,
            set,
            ProofOptions {
                randomness: cuzk::RandomnessChoice::Given(rs.clone()),
                params_dir: Some(params_dir.to_path_buf()),
                ..ProofOptions::default()
            },
        )
        .map_err(e)?;
        let proof = filecoin::proof_bytes(&job.finish(std::time::Duration::MAX).map_err(e)?);
        let verified = match name {
            "porep" => sector::verify_seal(s1, &proof),
            "winning" => sector::verify_winning_post(w, &proof),
            "window" => sector::verify_window_post(win, &proof),
            _ => sector::verify_snap(snap, &proof),
        }
        .map_err(e)?;
        if !verified {
            return Err(format!(
                "{name}: filecoin-proofs rejects the expected proof"
            ));
        }
        let r: Vec<u8> = rs.iter().flat_map(|x| x.r.to_bytes_le()).collect();
        let s: Vec<u8> = rs.iter().flat_map(|x| x.s.to_bytes_le()).collect();
        write(&out.join(format!("{name}_r.bin")), &r)?;
        write(&out.join(format!("{name}_s.bin")), &s)?;
        write(&out.join(format!("{name}_proof.bin")), &proof)?;
        println!(
            "{name}: params {} ({:.1} s to make), proof of {} partitions verified ({:.1} s in all)",
            if made.is_zero() { "found" } else { "made" },
            made.as_secs_f64(),
            rs.len(),
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let out = args.next().ok_or(
        "usage: cuzk_fixtures OUT_DIR [PARTITIONS] [CONSTRAINTS] | cuzk_fixtures filecoin-inputs OUT_DIR",
    )?;
    if out == "filecoin-inputs" {
        let out = args
            .next()
            .ok_or("usage: cuzk_fixtures filecoin-inputs OUT_DIR [PARAMS_DIR]")?;
        let params = args.next();
        return filecoin_inputs(Path::new(&out), params.as_deref().map(Path::new));
    }
    let partitions: usize = args
        .next()
        .map_or(Ok(3), |a| a.parse())
        .map_err(|e| format!("PARTITIONS: {e}"))?;
    let constraints: usize = args
        .next()
        .map_or(Ok(300), |a| a.parse())
        .map_err(|e| format!("CONSTRAINTS: {e}"))?;
    let out = Path::new(&out);
    fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;

    // A random sparse R1CS: public inputs, and A/B densities with holes, so a host that
    // passes a bitmap wrong gets a wrong proof rather than a lucky right one.
    let circuit = SampleCircuit::Random {
        constraints,
        seed: 0,
    };
    let srs =
        generate_srs(circuit.clone(), &ToxicWaste::from_seed(2024)).map_err(|e| e.to_string())?;
    let pvk = srs.vk.prepare();
    write(&out.join("params.bin"), &srs.to_bytes())?;
    write(&out.join("vk.bin"), &srs.vk.to_bytes())?;

    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let (mut r_all, mut s_all, mut proofs) = (Vec::new(), Vec::new(), Vec::new());
    let mut shape = None;
    for i in 0..partitions {
        let a = synthesize(circuit.with_seed(100 + i as u64)).map_err(|e| e.to_string())?;
        let public = a.witness.input[1..].to_vec();
        shape = Some(a.shape());
        let dir = out.join(format!("p{i}"));
        fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let e = &a.evaluations;
        let w = &a.witness;
        for (name, data) in [
            ("a.bin", scalars_to_bytes(&e.a)),
            ("b.bin", scalars_to_bytes(&e.b)),
            ("c.bin", scalars_to_bytes(&e.c)),
            ("input.bin", scalars_to_bytes(&w.input)),
            ("aux.bin", scalars_to_bytes(&w.aux)),
            ("a_aux_density.bin", words(w.a_aux_density.words())),
            ("b_input_density.bin", words(w.b_input_density.words())),
            ("b_aux_density.bin", words(w.b_aux_density.words())),
            ("public.bin", scalars_to_bytes(&public)),
        ] {
            write(&dir.join(name), &data)?;
        }
        let rs = Randomness {
            r: blstrs::Scalar::random(&mut rng),
            s: blstrs::Scalar::random(&mut rng),
        };
        r_all.extend(rs.r.to_bytes_le());
        s_all.extend(rs.s.to_bytes_le());
        let proof = prove(&CpuStart, &srs, a, rs).map_err(|e| e.to_string())?;
        if !verify_proof(&pvk, &proof, &public).map_err(|e| e.to_string())? {
            return Err(format!("partition {i}: the expected proof does not verify"));
        }
        proofs.extend(proof.to_bytes());
    }
    write(&out.join("r.bin"), &r_all)?;
    write(&out.join("s.bin"), &s_all)?;
    write(&out.join("proofs.bin"), &proofs)?;
    let shape = shape.ok_or("PARTITIONS must be at least 1")?;
    let manifest = format!(
        "partitions {partitions}\nconstraints {}\ninputs {}\naux {}\npublic_inputs {}\ndomain_size {}\n",
        shape.constraints,
        shape.inputs,
        shape.aux,
        shape.inputs - 1,
        srs.domain_size(),
    );
    write(&out.join("fixture.txt"), manifest.as_bytes())?;
    println!(
        "wrote {partitions} partitions of {} constraints to {}",
        shape.constraints,
        out.display()
    );
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("cuzk_fixtures: {e}");
        std::process::exit(1);
    }
}
