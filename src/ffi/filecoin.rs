//! The Filecoin proof kinds through the C ABI: each takes exactly what a host holds (a C1
//! output, vanilla proofs) and gives a `cuzk_job` whose `cuzk_prove_finish` writes exactly
//! the bytes filecoin-ffi returns (`cuzk_job_proof_bytes` says how many).
//!
//! Registered proofs are the numbers filecoin-ffi and go-state-types' `abi` use (for seal
//! proofs 5 is `StackedDrg2KiBV1_1`, 8 `StackedDrg32GiBV1_1`; for PoSt 0–4 are WinningPoSt,
//! 10–14 WindowPoSt V1_1; for updates 0–4, 2KiB to 64GiB).

use std::time::Duration;

use super::args::{bytes, c_path, handle, out, slice, write_sized_struct};
use super::boundary::{boundary, Failure, FfiResult};
use super::engine::cuzk_engine;
use super::job::{cuzk_job, cuzk_prove_options, JobOptions};
use crate::filecoin::{self, ProofOptions, SnapCommitments};

/// One borrowed byte string (a vanilla proof), read only during the call that takes it.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cuzk_bytes {
    /// The bytes; NULL only when `len` is 0.
    pub data: *const u8,
    /// How many.
    pub len: usize,
}

/// `cuzk_prove_window_post_start`'s `partition_index` for the whole window: every partition
/// of the sectors' vanilla proofs, their proofs concatenated (`GenerateWindowPoStWithVanilla`).
pub const CUZK_WHOLE_WINDOW: u64 = u64::MAX;

/// Bytes a 32-byte argument must have.
const BYTES32: usize = 32;

unsafe fn bytes32(p: *const u8, arg: &str) -> FfiResult<[u8; 32]> {
    let b = bytes(p, 1, BYTES32, arg)?;
    if b.is_empty() {
        return Err(Failure::arg(arg, "is NULL"));
    }
    Ok(b.try_into().expect("32 bytes"))
}

unsafe fn vanilla(p: *const cuzk_bytes, n: usize) -> FfiResult<Vec<Vec<u8>>> {
    slice(p, n, "vanilla_proofs")?
        .iter()
        .enumerate()
        .map(|(i, b)| Ok(bytes(b.data, b.len, 1, &format!("vanilla_proofs[{i}]"))?.to_vec()))
        .collect()
}

/// Submits a kind's circuits: `n` is known only once the inputs are decoded, and the
/// options' `r`/`s` (if any) must have one scalar per partition.
unsafe fn start(
    engine: *const cuzk_engine,
    options: *const cuzk_prove_options,
    job: *mut *mut cuzk_job,
    circuits: impl FnOnce() -> crate::Result<filecoin::CircuitSet>,
) -> FfiResult<()> {
    let slot = out(job, "job")?;
    slot.write(std::ptr::null_mut());
    let e = handle(engine, "engine")?;
    // Read once, before the (possibly slow) decoding, so a bad options struct fails first;
    // its r and s can be checked only once the partition count is known.
    let o = JobOptions::read(options)?;
    let set = circuits()?;
    let options = ProofOptions {
        randomness: o.randomness(set.partitions.len())?,
        priority: o.priority,
        verify: o.verify,
        params_dir: o.params_dir,
        admission: o.admission,
        ..ProofOptions::default()
    };
    let j = filecoin::submit(&e.engine, set, options)?;
    slot.write(cuzk_job::new(j));
    Ok(())
}

/// Starts a PoRep C2: `c1_output` is the C1 output exactly as filecoin-ffi's
/// `SealCommitPhase2` takes it (serde_json of filecoin-proofs-api's
/// `SealCommitPhase1Output`, `c1_len` bytes), `prover_id` 32 bytes (the miner's actor id as
/// an unsigned varint, zero-padded). The job's proofs are the partitions' 192 bytes each,
/// concatenated: what `SealCommitPhase2` returns for interactive and synthetic PoRep. For
/// NI-PoRep they are the circuit proofs, which `SealCommitPhase2` would aggregate: the host
/// passes them to filecoin-ffi's `AggregateSealProofs` (SnarkPack v2, this one sector) for
/// the bytes `VerifySeal` takes.
///
/// Fails with `CUZK_STATUS_INVALID_INPUT` for JSON that does not parse or a C1 of another
/// sector (its replica id does not match `sector_number` and `prover_id`),
/// `CUZK_STATUS_SECTOR_SIZE_MISMATCH` when its vanilla proofs are of another sector size than
/// its registered proof, `CUZK_STATUS_PARAMS_NOT_FOUND` (the message names the path) when the
/// params are missing. Every input is read only during the call.
///
/// # Safety
/// `engine` NULL or live; `c1_output` readable for `c1_len` bytes; `prover_id` NULL or 32
/// readable bytes; `options` NULL or valid; `job` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_prove_porep_c2_start(
    engine: *const cuzk_engine,
    c1_output: *const u8,
    c1_len: usize,
    sector_number: u64,
    prover_id: *const u8,
    options: *const cuzk_prove_options,
    job: *mut *mut cuzk_job,
) -> crate::ffi::cuzk_status {
    boundary("cuzk_prove_porep_c2_start", || {
        let c1 = bytes(c1_output, c1_len, 1, "c1_output")?;
        let prover = bytes32(prover_id, "prover_id")?;
        start(engine, options, job, || {
            filecoin::porep_c2_circuits(c1, sector_number, prover)
        })
    })
}

/// Starts a SnapDeals update proof: `registered_update_proof` the update proof's number,
/// `vanilla_proofs` its `n` partition proofs (bincode `PartitionProof`s, as
/// `GenerateUpdateVanillaProofs` gives them), and the 32-byte commitments. The proofs are the
/// partitions' concatenated (`GenerateUpdateProofWithVanilla`).
///
/// # Safety
/// As `cuzk_prove_porep_c2_start`; `vanilla_proofs` `n` readable entries, each readable for
/// its `len`; the commitments NULL or 32 readable bytes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuzk_prove_snap_start(
    engine: *const cuzk_engine,
    registered_update_proof: u64,
    vanilla_proofs: *const cuzk_bytes,
    n: usize,
    comm_r_old: *const u8,
    comm_r_new: *const u8,
    comm_d_new: *const u8,
    options: *const cuzk_prove_options,
    job: *mut *mut cuzk_job,
) -> crate::ffi::cuzk_status {
    boundary("cuzk_prove_snap_start", || {
        let proof = filecoin::update_proof(registered_update_proof)?;
        let v = vanilla(vanilla_proofs, n)?;
        let c = SnapCommitments {
            comm_r_old: bytes32(comm_r_old, "comm_r_old")?,
            comm_r_new: bytes32(comm_r_new, "comm_r_new")?,
            comm_d_new: bytes32(comm_d_new, "comm_d_new")?,
        };
        start(engine, options, job, || {
            filecoin::snap_circuits(proof, &v, c)
        })
    })
}

/// Starts a WindowPoSt: `vanilla_proofs` the sectors' `n` bincode `FallbackPoStSectorProof`s
/// (`GenerateSingleVanillaProof`), `randomness` the 32-byte challenge randomness. With
/// `partition_index` `CUZK_WHOLE_WINDOW` it proves every partition
/// (`GenerateWindowPoStWithVanilla`); otherwise the one partition whose sectors `vanilla_proofs`
/// are (`GenerateSinglePartitionWindowPoStWithVanilla`), 192 bytes.
///
/// # Safety
/// As `cuzk_prove_snap_start`; `randomness` readable for `randomness_len` bytes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuzk_prove_window_post_start(
    engine: *const cuzk_engine,
    registered_post_proof: u64,
    randomness: *const u8,
    randomness_len: usize,
    prover_id: *const u8,
    vanilla_proofs: *const cuzk_bytes,
    n: usize,
    partition_index: u64,
    options: *const cuzk_prove_options,
    job: *mut *mut cuzk_job,
) -> crate::ffi::cuzk_status {
    boundary("cuzk_prove_window_post_start", || {
        let proof = filecoin::post_proof(registered_post_proof)?;
        let r = bytes(randomness, randomness_len, 1, "randomness")?;
        let prover = bytes32(prover_id, "prover_id")?;
        let v = vanilla(vanilla_proofs, n)?;
        start(engine, options, job, || match partition_index {
            CUZK_WHOLE_WINDOW => filecoin::window_post_circuits(proof, r, prover, &v),
            k => filecoin::window_post_partition_circuits(
                proof,
                r,
                prover,
                &v,
                usize::try_from(k).map_err(|_| {
                    crate::Error::invalid_argument(format!("partition_index {k} is too large"))
                })?,
            ),
        })
    })
}

/// Starts a WinningPoSt (`GenerateWinningPoStWithVanilla`): 192 bytes.
///
/// # Safety
/// As `cuzk_prove_window_post_start`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuzk_prove_winning_post_start(
    engine: *const cuzk_engine,
    registered_post_proof: u64,
    randomness: *const u8,
    randomness_len: usize,
    prover_id: *const u8,
    vanilla_proofs: *const cuzk_bytes,
    n: usize,
    options: *const cuzk_prove_options,
    job: *mut *mut cuzk_job,
) -> crate::ffi::cuzk_status {
    boundary("cuzk_prove_winning_post_start", || {
        let proof = filecoin::post_proof(registered_post_proof)?;
        let r = bytes(randomness, randomness_len, 1, "randomness")?;
        let prover = bytes32(prover_id, "prover_id")?;
        let v = vanilla(vanilla_proofs, n)?;
        start(engine, options, job, || {
            filecoin::winning_post_circuits(proof, r, prover, &v)
        })
    })
}

/// The bytes `cuzk_prove_finish` writes for this job (192 per partition), into `*bytes`.
///
/// # Safety
/// `job` NULL or live; `bytes` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_job_proof_bytes(
    job: *const cuzk_job,
    bytes: *mut usize,
) -> crate::ffi::cuzk_status {
    boundary("cuzk_job_proof_bytes", || {
        let j = &handle(job, "job")?.job;
        out(bytes, "bytes")?.write(j.partitions() * crate::groth16::PROOF_BYTES);
        Ok(())
    })
}

/// Where one job's time went (`cuzk_job_get_timings`), in nanoseconds, summed over its partitions (so with several
/// partitions in flight at once a stage can exceed `total_ns`).
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cuzk_job_timings {
    /// In: `sizeof(cuzk_job_timings)` as the host knows it. Out: the bytes written.
    pub size: usize,
    /// Waiting in the engine's queues (for synthesis and its memory, then for a device).
    pub queue_wait_ns: u64,
    /// Loading the params, when this job loaded them (0 when they were loaded already).
    pub params_load_ns: u64,
    /// Synthesis.
    pub synthesis_ns: u64,
    /// On the device (its mutex held).
    pub device_ns: u64,
    /// On the finalizers (assembly, verification).
    pub finalize_ns: u64,
    /// From submission to the job's end (so far, while it runs).
    pub total_ns: u64,
}

/// The job's timings so far (final once it has ended), into `*timings`; the host sets
/// `timings->size = sizeof(cuzk_job_timings)` first.
///
/// # Safety
/// `job` NULL or live; `timings` NULL or writable for `timings->size` bytes.
#[no_mangle]
pub unsafe extern "C" fn cuzk_job_get_timings(
    job: *const cuzk_job,
    timings: *mut cuzk_job_timings,
) -> crate::ffi::cuzk_status {
    boundary("cuzk_job_get_timings", || {
        let j = &handle(job, "job")?.job;
        let t = j.timings();
        let ns = |d: Duration| d.as_nanos().min(u64::MAX as u128) as u64;
        let value = cuzk_job_timings {
            size: std::mem::size_of::<cuzk_job_timings>(),
            queue_wait_ns: ns(t.queue_wait),
            params_load_ns: ns(t.params_load),
            synthesis_ns: ns(t.synthesis),
            device_ns: ns(t.device),
            finalize_ns: ns(t.finalize),
            total_ns: ns(t.total),
        };
        write_sized_struct(&value, timings, "timings")
    })
}

/// `cuzk_params_path`'s `circuit`: a seal (PoRep) proof's circuit.
pub const CUZK_CIRCUIT_SEAL: u32 = 0;
/// A PoSt (WinningPoSt or WindowPoSt) proof's circuit.
pub const CUZK_CIRCUIT_POST: u32 = 1;
/// A SnapDeals update proof's circuit.
pub const CUZK_CIRCUIT_UPDATE: u32 = 2;

fn params_for(circuit: u32, registered_proof: u64) -> FfiResult<filecoin::ParamsFor> {
    Ok(match circuit {
        CUZK_CIRCUIT_SEAL => filecoin::ParamsFor::Seal(filecoin::seal_proof(registered_proof)?),
        CUZK_CIRCUIT_POST => filecoin::ParamsFor::PoSt(filecoin::post_proof(registered_proof)?),
        CUZK_CIRCUIT_UPDATE => {
            filecoin::ParamsFor::Update(filecoin::update_proof(registered_proof)?)
        }
        other => {
            return Err(Failure::arg(
                "circuit",
                format!("is {other}, not a CUZK_CIRCUIT_*"),
            ))
        }
    })
}

/// The params file a circuit needs (`v28-<circuit id>.params`, the name storage-proofs
/// derives) in `params_dir` (NULL: the Filecoin parameter cache), NUL-terminated, into the
/// host's buffer `buf` of `len` bytes. `*needed` is always set to the bytes the path takes,
/// its NUL included; a smaller `len` fails with `CUZK_STATUS_BUFFER_TOO_SMALL` (`buf` may be
/// NULL with `len` 0 to ask for the size).
///
/// # Safety
/// `params_dir` NULL or NUL-terminated; `buf` NULL or writable for `len` bytes; `needed`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_params_path(
    circuit: u32,
    registered_proof: u64,
    params_dir: *const std::ffi::c_char,
    buf: *mut std::ffi::c_char,
    len: usize,
    needed: *mut usize,
) -> crate::ffi::cuzk_status {
    boundary("cuzk_params_path", || {
        let p = params_for(circuit, registered_proof)?;
        let path = p.params_path(c_path(params_dir, "params_dir")?.as_deref())?;
        let mut text = path.to_string_lossy().into_owned().into_bytes();
        text.push(0);
        super::args::write_sized(&text, buf.cast(), len, needed, "buf")
    })
}

/// Loads a circuit's params into the engine now (a host's start-up preload), so that no job
/// of that circuit waits for them later; they stay loaded, shared by every job, until
/// `cuzk_params_evict`. Missing params fail with `CUZK_STATUS_PARAMS_NOT_FOUND`.
///
/// # Safety
/// `engine` NULL or live; `params_dir` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn cuzk_params_preload(
    engine: *const cuzk_engine,
    circuit: u32,
    registered_proof: u64,
    params_dir: *const std::ffi::c_char,
) -> crate::ffi::cuzk_status {
    boundary("cuzk_params_preload", || {
        let e = handle(engine, "engine")?;
        let path = params_for(circuit, registered_proof)?
            .params_path(c_path(params_dir, "params_dir")?.as_deref())?;
        e.engine
            .preload_params(&path, crate::groth16::PointCheck::Unchecked)?;
        Ok(())
    })
}

/// Drops the engine's hold on a circuit's params; `*evicted` (optional) says whether they
/// were loaded. Jobs running keep them until they end; the next job loads them again.
///
/// # Safety
/// `engine` NULL or live; `params_dir` NULL or NUL-terminated; `evicted` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_params_evict(
    engine: *const cuzk_engine,
    circuit: u32,
    registered_proof: u64,
    params_dir: *const std::ffi::c_char,
    evicted: *mut bool,
) -> crate::ffi::cuzk_status {
    boundary("cuzk_params_evict", || {
        let e = handle(engine, "engine")?;
        let path = params_for(circuit, registered_proof)?
            .params_path(c_path(params_dir, "params_dir")?.as_deref())?;
        let did = e.engine.params().evict(&path);
        if let Some(out) = evicted.as_mut() {
            *out = did;
        }
        Ok(())
    })
}
