//! `cuzk_job`: starting a batch of partitions, and collecting its proofs.

use std::sync::Arc;

use super::args::{buffer, bytes, c_path, handle, out, read_sized, slice};
use super::boundary::{boundary, Failure, FfiResult};
use super::engine::{cuzk_engine, millis};
use super::srs::cuzk_srs;
use super::status::cuzk_status;
use crate::engine::{
    AdmissionPolicy, Job, JobInput, JobKind, JobRequest, JobStatus, Priority, RandomnessChoice,
};
use crate::groth16::scalars::{scalar_from_bytes, scalars_from_bytes, SCALAR_BYTES};
use crate::groth16::PROOF_BYTES;
use crate::groth16::{Assignment, Density, Evaluations, Randomness, ScalarEncoding, Witness};

/// A started job: its partitions queued or being proved. Created by `cuzk_prove_start`,
/// owned by the host, freed by `cuzk_job_free` (which cancels it if it has not ended).
/// `cuzk_prove_finish`, `cuzk_job_poll` and `cuzk_job_cancel` may be called from different
/// threads at once. A job does not need its engine or params handles to stay alive.
#[allow(non_camel_case_types)]
pub struct cuzk_job {
    pub(crate) job: Job,
}

impl cuzk_job {
    /// A new handle the host owns.
    pub(crate) fn new(job: Job) -> *mut cuzk_job {
        Box::into_raw(Box::new(cuzk_job { job }))
    }
}

/// One partition's synthesized circuit, as borrowed host buffers.
///
/// Scalars are `CUZK_SCALAR_BYTES` (32) bytes each, little-endian canonical integers below
/// the field modulus r (or blstrs' Montgomery form with `CUZK_PROVE_MONTGOMERY`); each
/// `*_len` counts scalars, not bytes. Density bitmaps are 64-bit words, bit i in word
/// i / 64 at position i % 64 (least significant first); `*_words` counts words and must be
/// ceil(`*_bits` / 64), with no bit set past `*_bits`. A pointer may be NULL only when its
/// length is 0.
///
/// The library reads these buffers only during `cuzk_prove_start`, which decodes and copies
/// all of them before it returns: the host may free or reuse them as soon as it has.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cuzk_partition {
    /// A evaluations, one per constraint (per-input constraints included).
    pub a: *const u8,
    /// Scalars in `a`.
    pub a_len: usize,
    /// B evaluations.
    pub b: *const u8,
    /// Scalars in `b` (equal to `a_len`).
    pub b_len: usize,
    /// C evaluations.
    pub c: *const u8,
    /// Scalars in `c` (equal to `a_len`).
    pub c_len: usize,
    /// Input assignment, the constant ONE first.
    pub input: *const u8,
    /// Scalars in `input`.
    pub input_len: usize,
    /// Aux (private) assignment.
    pub aux: *const u8,
    /// Scalars in `aux`.
    pub aux_len: usize,
    /// Which aux variables appear in some A.
    pub a_aux_density: *const u64,
    /// Words in `a_aux_density`.
    pub a_aux_density_words: usize,
    /// Bits in `a_aux_density` (equal to `aux_len`).
    pub a_aux_density_bits: usize,
    /// Which inputs appear in some B.
    pub b_input_density: *const u64,
    /// Words in `b_input_density`.
    pub b_input_density_words: usize,
    /// Bits in `b_input_density` (equal to `input_len`).
    pub b_input_density_bits: usize,
    /// Which aux variables appear in some B.
    pub b_aux_density: *const u64,
    /// Words in `b_aux_density`.
    pub b_aux_density_words: usize,
    /// Bits in `b_aux_density` (equal to `aux_len`).
    pub b_aux_density_bits: usize,
}

/// `cuzk_prove_options.priority`: the job's default class: `CUZK_PRIORITY_OTHER` for
/// `cuzk_prove_start` (so that zeroed options never jump the queue), the proof kind's for the
/// Filecoin kinds (WinningPoSt first, then WindowPoSt, then PoRep and SnapDeals).
pub const CUZK_PRIORITY_DEFAULT: u32 = 0;
/// WinningPoSt: runs before every other class.
pub const CUZK_PRIORITY_WINNING_POST: u32 = 1;
/// WindowPoSt.
pub const CUZK_PRIORITY_WINDOW_POST: u32 = 2;
/// PoRep (C2) and SnapDeals.
pub const CUZK_PRIORITY_POREP_SNAP: u32 = 3;
/// Anything else.
pub const CUZK_PRIORITY_OTHER: u32 = 4;

/// `cuzk_prove_options.flags`: every scalar buffer of the job (`a`, `b`, `c`, `input`,
/// `aux`, `r`, `s`) holds blstrs' in-memory Montgomery form (four little-endian u64 limbs
/// of x·2^256 mod r) instead of canonical integers: Rust hosts hand their `Scalar`s over
/// without converting them.
pub const CUZK_PROVE_MONTGOMERY: u32 = 1;
/// `cuzk_prove_options.flags`: fail at once with `CUZK_STATUS_RESOURCE_EXHAUSTED` when the
/// memory budget cannot take the job yet (overrides `admission_timeout_ms`).
pub const CUZK_PROVE_FAIL_FAST: u32 = 2;
/// `cuzk_prove_options.flags`, Filecoin kinds only: return proofs without verifying them
/// first (by default each is verified, and one that fails is never returned).
pub const CUZK_PROVE_NO_VERIFY: u32 = 4;

const KNOWN_PROVE_FLAGS: u32 = CUZK_PROVE_MONTGOMERY | CUZK_PROVE_FAIL_FAST | CUZK_PROVE_NO_VERIFY;

/// How to run a job. Every field's zero means its default, so a zeroed struct (or a NULL
/// pointer) gives a job of the default class, randomizers from the OS RNG and the engine's
/// admission policy. Read only during `cuzk_prove_start`.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct cuzk_prove_options {
    /// `sizeof(cuzk_prove_options)` as the host was compiled with (0: all defaults).
    pub size: usize,
    /// `CUZK_PRIORITY_*`.
    pub priority: u32,
    /// `CUZK_PROVE_*` flags, or-ed.
    pub flags: u32,
    /// The randomizers r, one scalar per partition, or NULL (with `s` NULL) to draw r and s
    /// from the operating system's RNG. Fixed r and s make proofs reproducible; production
    /// proofs must use fresh ones.
    pub r: *const u8,
    /// The randomizers s, one scalar per partition, or NULL with `r`.
    pub s: *const u8,
    /// Scalars in `r` and in `s` each: the number of partitions, or 0 when both are NULL.
    pub rs_len: usize,
    /// How long to wait for the memory budget, in milliseconds (0: the engine's policy;
    /// `CUZK_WAIT_FOREVER`: no limit). A wait that runs out fails with
    /// `CUZK_STATUS_TIMEOUT`.
    pub admission_timeout_ms: u64,
    // Added later; fields only ever go at the end.
    /// Filecoin kinds: the folder holding the params (`v28-<circuit id>.params`), a
    /// NUL-terminated path, or NULL for the Filecoin parameter cache
    /// (`FIL_PROOFS_PARAMETER_CACHE`, by default `/var/tmp/filecoin-proof-parameters`).
    pub params_dir: *const std::ffi::c_char,
}

/// What `cuzk_prove_options` says, decoded once for every kind of job.
pub(crate) struct JobOptions {
    /// `None`: the job's default class.
    pub(crate) priority: Option<Priority>,
    pub(crate) encoding: ScalarEncoding,
    pub(crate) admission: Option<AdmissionPolicy>,
    pub(crate) verify: bool,
    pub(crate) params_dir: Option<std::path::PathBuf>,
    options: cuzk_prove_options,
}

impl JobOptions {
    /// Decodes `options` (NULL: defaults).
    ///
    /// # Safety
    /// `options` NULL or valid for `options->size` bytes; its `params_dir` NULL or a
    /// NUL-terminated string.
    pub(crate) unsafe fn read(options: *const cuzk_prove_options) -> FfiResult<JobOptions> {
        let o = read_sized(options, "options")?;
        if o.flags & !KNOWN_PROVE_FLAGS != 0 {
            return Err(Failure::arg(
                "options",
                format!("has unknown flags {:#x}", o.flags & !KNOWN_PROVE_FLAGS),
            ));
        }
        let params_dir = c_path(o.params_dir, "options.params_dir")?;
        Ok(JobOptions {
            priority: priority(o.priority)?,
            encoding: if o.flags & CUZK_PROVE_MONTGOMERY != 0 {
                ScalarEncoding::Montgomery
            } else {
                ScalarEncoding::CanonicalLe
            },
            admission: if o.flags & CUZK_PROVE_FAIL_FAST != 0 {
                Some(AdmissionPolicy::FailFast)
            } else if o.admission_timeout_ms != 0 {
                Some(AdmissionPolicy::Wait(millis(o.admission_timeout_ms)))
            } else {
                None
            },
            verify: o.flags & CUZK_PROVE_NO_VERIFY == 0,
            params_dir,
            options: o,
        })
    }

    /// The (r, s) of `n` partitions.
    ///
    /// # Safety
    /// `r` and `s` NULL or readable for `rs_len` scalars.
    pub(crate) unsafe fn randomness(&self, n: usize) -> FfiResult<RandomnessChoice> {
        randomness(&self.options, n, self.encoding)
    }
}

fn priority(p: u32) -> FfiResult<Option<Priority>> {
    Ok(Some(match p {
        CUZK_PRIORITY_DEFAULT => return Ok(None),
        CUZK_PRIORITY_OTHER => Priority::Other,
        CUZK_PRIORITY_WINNING_POST => Priority::WinningPost,
        CUZK_PRIORITY_WINDOW_POST => Priority::WindowPost,
        CUZK_PRIORITY_POREP_SNAP => Priority::PorepSnap,
        other => {
            return Err(Failure::arg(
                "options",
                format!("has an unknown priority {other}"),
            ))
        }
    }))
}

/// A bitmap from host words; the name says which partition and which bitmap.
unsafe fn density(p: *const u64, words: usize, bits: usize, name: &str) -> FfiResult<Density> {
    if bits.div_ceil(64) != words {
        return Err(Failure::new(
            cuzk_status::InvalidAssignment,
            format!(
                "{name}: a bitmap of {bits} bits needs {} 64-bit words, got {words}",
                bits.div_ceil(64)
            ),
        ));
    }
    // Hosts need not align their bitmaps: read them as bytes.
    let raw = bytes(p.cast::<u8>(), words, 8, name)?;
    let words = raw
        .chunks_exact(8)
        .map(|w| u64::from_ne_bytes(w.try_into().expect("8 bytes")))
        .collect();
    Density::from_words(words, bits).map_err(|e| Failure::from(e.context(name)))
}

/// Decodes one host partition into an owned assignment (a full copy).
unsafe fn assignment(p: &cuzk_partition, i: usize, enc: ScalarEncoding) -> FfiResult<Assignment> {
    let scalars = |ptr: *const u8, len: usize, field: &str| -> FfiResult<Vec<blstrs::Scalar>> {
        let name = format!("partitions[{i}].{field}");
        let raw = bytes(ptr, len, SCALAR_BYTES, &name)?;
        Ok(scalars_from_bytes(raw, enc, &name)?)
    };
    Ok(Assignment {
        evaluations: Evaluations {
            a: scalars(p.a, p.a_len, "a")?,
            b: scalars(p.b, p.b_len, "b")?,
            c: scalars(p.c, p.c_len, "c")?,
        },
        witness: Witness {
            input: scalars(p.input, p.input_len, "input")?,
            aux: scalars(p.aux, p.aux_len, "aux")?,
            a_aux_density: density(
                p.a_aux_density,
                p.a_aux_density_words,
                p.a_aux_density_bits,
                &format!("partitions[{i}].a_aux_density"),
            )?,
            b_input_density: density(
                p.b_input_density,
                p.b_input_density_words,
                p.b_input_density_bits,
                &format!("partitions[{i}].b_input_density"),
            )?,
            b_aux_density: density(
                p.b_aux_density,
                p.b_aux_density_words,
                p.b_aux_density_bits,
                &format!("partitions[{i}].b_aux_density"),
            )?,
        },
    })
}

unsafe fn randomness(
    o: &cuzk_prove_options,
    n: usize,
    enc: ScalarEncoding,
) -> FfiResult<RandomnessChoice> {
    match (o.r.is_null(), o.s.is_null()) {
        (true, true) if o.rs_len == 0 => return Ok(RandomnessChoice::Random),
        (true, true) => {
            return Err(Failure::arg(
                "options",
                format!("has r and s NULL but rs_len {}", o.rs_len),
            ))
        }
        (true, false) | (false, true) => {
            return Err(Failure::arg(
                "options",
                "gives one of r and s: give both, or neither for random ones",
            ))
        }
        (false, false) => {}
    }
    if o.rs_len != n {
        return Err(Failure::arg(
            "options",
            format!("has rs_len {} for {n} partitions", o.rs_len),
        ));
    }
    let r = bytes(o.r, n, SCALAR_BYTES, "options.r")?;
    let s = bytes(o.s, n, SCALAR_BYTES, "options.s")?;
    let bad = |e: crate::Error| Failure::new(cuzk_status::InvalidArgument, e.message());
    (0..n)
        .map(|i| {
            let at = i * SCALAR_BYTES..(i + 1) * SCALAR_BYTES;
            Ok(Randomness {
                r: scalar_from_bytes(&r[at.clone()], enc, "options.r", i).map_err(bad)?,
                s: scalar_from_bytes(&s[at], enc, "options.s", i).map_err(bad)?,
            })
        })
        .collect::<FfiResult<Vec<_>>>()
        .map(RandomnessChoice::Given)
}

/// Starts proving `n` partitions of one circuit under `srs` on `engine`.
///
/// Validates every partition against the params first (one bad partition fails the whole
/// job, and the message names it), then waits for the memory budget as the admission
/// policy says, queues the partitions and returns. `partitions`, each buffer they point
/// at, and `options` (NULL: defaults) are read only during this call: everything is copied
/// before it returns, so the host may free them right after. The engine and params
/// handles may be freed while the job runs.
///
/// On success `*job` is a new handle the host owns and frees with `cuzk_job_free`; on
/// failure it is set to NULL and nothing was queued.
///
/// # Safety
/// `engine`, `srs` NULL or live handles; `partitions` NULL or `n` readable structs whose
/// pointers are each NULL or readable for their lengths; `options` NULL or valid for
/// `options->size` bytes; `job` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_prove_start(
    engine: *const cuzk_engine,
    srs: *const cuzk_srs,
    partitions: *const cuzk_partition,
    n: usize,
    options: *const cuzk_prove_options,
    job: *mut *mut cuzk_job,
) -> cuzk_status {
    boundary("cuzk_prove_start", || {
        let slot = out(job, "job")?;
        slot.write(std::ptr::null_mut());
        let e = handle(engine, "engine")?;
        let s = handle(srs, "srs")?;
        if n == 0 {
            return Err(Failure::arg(
                "n",
                "is 0: a job needs at least one partition",
            ));
        }
        let parts = slice(partitions, n, "partitions")?;
        let o = JobOptions::read(options)?;
        if o.params_dir.is_some() {
            return Err(Failure::arg(
                "options.params_dir",
                "is for the Filecoin kinds: cuzk_prove_start takes its params as a handle",
            ));
        }
        let rs = o.randomness(n)?;
        let assignments = parts
            .iter()
            .enumerate()
            .map(|(i, p)| assignment(p, i, o.encoding))
            .collect::<FfiResult<Vec<_>>>()?;
        let j = e.engine.submit(JobRequest {
            randomness: rs,
            priority: Some(o.priority.unwrap_or(Priority::Other)),
            admission: o.admission,
            verify: false,
            ..JobRequest::new(
                Arc::clone(&s.srs),
                JobInput::Ready(assignments),
                JobKind::Other,
            )
        })?;
        slot.write(cuzk_job::new(j));
        Ok(())
    })
}

/// Waits up to `timeout_ms` milliseconds (0: don't wait; `CUZK_WAIT_FOREVER`: no limit)
/// for the job to end, then writes its proofs, `CUZK_PROOF_BYTES` (192) each, in partition
/// order, into the host's buffer `proofs` of `len` bytes.
///
/// `len` is checked before waiting: less than 192 × the job's partitions fails with
/// `CUZK_STATUS_BUFFER_TOO_SMALL`. A job that failed returns its failure's status (and
/// message); a cancelled one `CUZK_STATUS_CANCELLED`. `CUZK_STATUS_TIMEOUT` leaves the job
/// running: call again to keep waiting. May be called again after success (same proofs).
///
/// # Safety
/// `job` NULL or a live job handle; `proofs` NULL or writable for `len` bytes.
#[no_mangle]
pub unsafe extern "C" fn cuzk_prove_finish(
    job: *const cuzk_job,
    timeout_ms: u64,
    proofs: *mut u8,
    len: usize,
) -> cuzk_status {
    boundary("cuzk_prove_finish", || {
        let j = &handle(job, "job")?.job;
        let need = j.partitions() * PROOF_BYTES;
        let buf = buffer(proofs, len, "proofs")?;
        if buf.len() < need {
            return Err(Failure::buffer_too_small("proofs", buf.len(), need));
        }
        let done = j.finish(millis(timeout_ms))?;
        for (chunk, proof) in buf.chunks_exact_mut(PROOF_BYTES).zip(&done) {
            chunk.copy_from_slice(&proof.to_bytes());
        }
        Ok(())
    })
}

/// Where a job stands (`cuzk_job_poll`).
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum cuzk_job_state {
    /// Still running.
    Pending = 0,
    /// Every proof is ready: `cuzk_prove_finish` returns them at once.
    Done = 1,
    /// The job failed: `cuzk_prove_finish` returns the failure.
    Failed = 2,
    /// The job was cancelled.
    Cancelled = 3,
}

/// Where the job stands, without waiting: `*state`, and (each optional, NULL to skip)
/// `*proved` partitions of `*total` proved so far.
///
/// # Safety
/// `job` NULL or a live job handle; `state` NULL or writable; `proved`, `total` NULL or
/// writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_job_poll(
    job: *const cuzk_job,
    state: *mut cuzk_job_state,
    proved: *mut usize,
    total: *mut usize,
) -> cuzk_status {
    boundary("cuzk_job_poll", || {
        let j = &handle(job, "job")?.job;
        let state = out(state, "state")?;
        let n = j.partitions();
        let (st, done) = match j.poll() {
            JobStatus::Pending { proved, .. } => (cuzk_job_state::Pending, proved),
            JobStatus::Done => (cuzk_job_state::Done, n),
            JobStatus::Failed(_) => (cuzk_job_state::Failed, 0),
            JobStatus::Cancelled => (cuzk_job_state::Cancelled, 0),
        };
        state.write(st);
        if let Some(p) = proved.as_mut() {
            *p = done;
        }
        if let Some(t) = total.as_mut() {
            *t = n;
        }
        Ok(())
    })
}

/// Partitions in the job, into `*n`.
///
/// # Safety
/// `job` NULL or a live job handle; `n` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_job_partitions(job: *const cuzk_job, n: *mut usize) -> cuzk_status {
    boundary("cuzk_job_partitions", || {
        let j = &handle(job, "job")?.job;
        out(n, "n")?.write(j.partitions());
        Ok(())
    })
}

/// Cancels the job unless it has already ended: its queued partitions leave the queue and
/// give their memory back at once; one on a device or finalizer is discarded when that step
/// ends. `cuzk_prove_finish` then returns `CUZK_STATUS_CANCELLED`. `*cancelled` (optional)
/// says whether this call cancelled it (false when it had already ended). The handle stays
/// the host's to free.
///
/// # Safety
/// `job` NULL or a live job handle; `cancelled` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_job_cancel(
    job: *const cuzk_job,
    cancelled: *mut bool,
) -> cuzk_status {
    boundary("cuzk_job_cancel", || {
        let j = &handle(job, "job")?.job;
        let did = j.cancel();
        if let Some(c) = cancelled.as_mut() {
            *c = did;
        }
        Ok(())
    })
}

/// Frees a job handle, cancelling the job first if it has not ended (nobody could collect
/// its proofs any more); NULL is accepted and does nothing. No other call may use `job`
/// during or after this one.
///
/// # Safety
/// `job` NULL or a handle from `cuzk_prove_start` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn cuzk_job_free(job: *mut cuzk_job) {
    let _ = boundary("cuzk_job_free", || {
        if !job.is_null() {
            drop(Box::from_raw(job));
        }
        Ok(())
    });
}
