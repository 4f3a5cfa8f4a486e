//! `cuzk_srs`: a circuit's params (proving key), and verification.

use std::sync::{Arc, OnceLock};

use super::args::{bytes, c_str, handle, out, write_sized};
use super::boundary::{boundary, Failure, FfiResult};
use super::status::cuzk_status;
use crate::groth16::scalars::{scalars_from_bytes, SCALAR_BYTES};
use crate::groth16::{
    verify_proof, PointCheck, PreparedVerifyingKey, Proof, ScalarEncoding, Srs, VerifyingKey,
    PROOF_BYTES,
};

/// Bytes of one encoded proof (compressed A ‖ B ‖ C, bellperson's layout).
pub const CUZK_PROOF_BYTES: usize = 192;
/// Bytes of one scalar in every buffer the library takes.
pub const CUZK_SCALAR_BYTES: usize = 32;

const _: () = assert!(CUZK_PROOF_BYTES == PROOF_BYTES);
const _: () = assert!(CUZK_SCALAR_BYTES == SCALAR_BYTES);

/// A circuit's params, decoded in memory, with its verifying key. Created by
/// `cuzk_srs_load` or `cuzk_srs_from_bytes`, owned by the host, freed by `cuzk_srs_free`.
/// Immutable, so safe to share between threads and engines. Jobs keep what they need of it
/// alive on their own: the host may free it while jobs that use it still run.
#[allow(non_camel_case_types)]
pub struct cuzk_srs {
    pub(crate) srs: Arc<Srs>,
    /// Prepared on the first `cuzk_srs_verify`: a pairing, worth doing once per key.
    pvk: OnceLock<PreparedVerifyingKey>,
}

fn check_mode(checked: bool) -> PointCheck {
    if checked {
        PointCheck::Checked
    } else {
        PointCheck::Unchecked
    }
}

unsafe fn finish_load(
    slot: *mut *mut cuzk_srs,
    load: impl FnOnce() -> FfiResult<Srs>,
) -> FfiResult<()> {
    let slot = out(slot, "srs")?;
    slot.write(std::ptr::null_mut());
    let srs = load()?;
    tracing::info!(
        domain = srs.domain_size(),
        inputs = srs.num_inputs(),
        aux = srs.num_aux(),
        bytes = srs.memory_bytes(),
        "params loaded"
    );
    slot.write(Box::into_raw(Box::new(cuzk_srs {
        srs: Arc::new(srs),
        pvk: OnceLock::new(),
    })));
    Ok(())
}

/// Reads a `.params` file (bellperson's `Parameters::write` layout) through a memory map.
///
/// `checked`: true checks every point is in its prime-order subgroup (slow; for params
/// from an untrusted source); false checks each is well formed and on the curve only (for
/// params whose digest the host has verified, as Filecoin nodes do). `path` is read only
/// during the call. On success `*srs` is a new handle the host owns and frees with
/// `cuzk_srs_free`; on failure it is set to NULL.
///
/// # Safety
/// `path` NULL or a NUL-terminated string; `srs` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_srs_load(
    path: *const std::ffi::c_char,
    checked: bool,
    srs: *mut *mut cuzk_srs,
) -> cuzk_status {
    boundary("cuzk_srs_load", || {
        finish_load(srs, || {
            let path = c_str(path, "path")?;
            if path.is_empty() {
                return Err(Failure::arg("path", "is empty"));
            }
            // Paths are bytes on Unix; no UTF-8 requirement.
            #[cfg(unix)]
            let path = std::path::PathBuf::from(
                <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(path),
            );
            #[cfg(not(unix))]
            let path = std::path::PathBuf::from(String::from_utf8_lossy(path).into_owned());
            Ok(Srs::load(&path, check_mode(checked))?)
        })
    })
}

/// Decodes params from `len` bytes at `data` (the `.params` layout). The bytes are read
/// only during the call (they are decoded into the handle). Ownership as `cuzk_srs_load`.
///
/// # Safety
/// `data` NULL or readable for `len` bytes; `srs` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_srs_from_bytes(
    data: *const u8,
    len: usize,
    checked: bool,
    srs: *mut *mut cuzk_srs,
) -> cuzk_status {
    boundary("cuzk_srs_from_bytes", || {
        finish_load(srs, || {
            let data = bytes(data, len, 1, "data")?;
            if data.is_empty() {
                return Err(Failure::arg("len", "is 0"));
            }
            Ok(Srs::from_bytes(data, check_mode(checked))?)
        })
    })
}

/// Frees a params handle; NULL is accepted and does nothing. Jobs started with it are not
/// affected.
///
/// # Safety
/// `srs` NULL or a handle from `cuzk_srs_load`/`cuzk_srs_from_bytes` not yet freed.
#[no_mangle]
pub unsafe extern "C" fn cuzk_srs_free(srs: *mut cuzk_srs) {
    let _ = boundary("cuzk_srs_free", || {
        if !srs.is_null() {
            drop(Box::from_raw(srs));
        }
        Ok(())
    });
}

/// The shape of the circuit the params are for.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct cuzk_circuit_shape {
    /// The evaluation domain size (a power of two); a partition's `a`, `b`, `c` hold at most
    /// this many scalars (and more than half of it).
    pub domain_size: usize,
    /// Inputs, the constant ONE included: a partition's `input_len`.
    pub num_inputs: usize,
    /// Aux variables: a partition's `aux_len`.
    pub num_aux: usize,
    /// Public inputs a proof is verified against (`num_inputs - 1`).
    pub num_public_inputs: usize,
}

/// Writes the shape of the circuit `srs` is for into `*shape`.
///
/// # Safety
/// `srs` NULL or a live params handle; `shape` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_srs_shape(
    srs: *const cuzk_srs,
    shape: *mut cuzk_circuit_shape,
) -> cuzk_status {
    boundary("cuzk_srs_shape", || {
        let s = &handle(srs, "srs")?.srs;
        out(shape, "shape")?.write(cuzk_circuit_shape {
            domain_size: s.domain_size(),
            num_inputs: s.num_inputs(),
            num_aux: s.num_aux(),
            num_public_inputs: s.vk.num_public_inputs(),
        });
        Ok(())
    })
}

/// Writes the verifying key (bellperson's `VerifyingKey::write` layout, what `cuzk_verify`
/// takes) into the host's buffer `buf` of `len` bytes. `*needed` is always set to its size;
/// when `len` is smaller the call fails with `CUZK_STATUS_BUFFER_TOO_SMALL` and writes
/// nothing into `buf` (which may be NULL when `len` is 0, to ask for the size).
///
/// # Safety
/// `srs` NULL or a live params handle; `buf` NULL or writable for `len` bytes; `needed`
/// NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_srs_verifying_key(
    srs: *const cuzk_srs,
    buf: *mut u8,
    len: usize,
    needed: *mut usize,
) -> cuzk_status {
    boundary("cuzk_srs_verifying_key", || {
        let s = handle(srs, "srs")?;
        write_sized(&s.srs.vk.to_bytes(), buf, len, needed, "buf")
    })
}

/// Decodes a proof and public inputs (canonical little-endian scalars) for verification.
unsafe fn proof_and_inputs(
    proof: *const u8,
    proof_len: usize,
    inputs: *const u8,
    inputs_len: usize,
) -> FfiResult<(Proof, Vec<blstrs::Scalar>)> {
    let proof_bytes = bytes(proof, proof_len, 1, "proof")?;
    if proof_len != PROOF_BYTES {
        return Err(Failure::arg(
            "proof_len",
            format!("is {proof_len}, a proof is {PROOF_BYTES} bytes"),
        ));
    }
    let proof = Proof::from_bytes(proof_bytes)?;
    let inputs = bytes(inputs, inputs_len, SCALAR_BYTES, "inputs")?;
    let inputs = scalars_from_bytes(inputs, ScalarEncoding::CanonicalLe, "inputs")
        .map_err(|e| Failure::new(cuzk_status::InvalidArgument, e.message()))?;
    Ok((proof, inputs))
}

unsafe fn write_ok(
    ok: *mut bool,
    pvk: &PreparedVerifyingKey,
    proof: &Proof,
    inputs: &[blstrs::Scalar],
) -> FfiResult<()> {
    let ok = out(ok, "ok")?;
    ok.write(false);
    ok.write(verify_proof(pvk, proof, inputs)?);
    Ok(())
}

/// Verifies a proof against a verifying key.
///
/// `vk`/`vk_len`: a verifying key as `cuzk_srs_verifying_key` writes it. `proof`: 192
/// bytes. `inputs`: `inputs_len` public inputs (the constant ONE not included), 32-byte
/// little-endian canonical scalars each. On `CUZK_STATUS_OK`, `*ok` says whether the
/// proof verifies; a failure status means the arguments themselves are malformed (a
/// proof that does not decode is `CUZK_STATUS_INVALID_PROOF`). Everything is read only
/// during the call.
///
/// # Safety
/// Each pointer NULL or readable for its length; `ok` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cuzk_verify(
    vk: *const u8,
    vk_len: usize,
    proof: *const u8,
    proof_len: usize,
    inputs: *const u8,
    inputs_len: usize,
    ok: *mut bool,
) -> cuzk_status {
    boundary("cuzk_verify", || {
        let vk = bytes(vk, vk_len, 1, "vk")?;
        if vk.is_empty() {
            return Err(Failure::arg("vk_len", "is 0"));
        }
        let vk = VerifyingKey::from_bytes(vk)
            .map_err(|e| Failure::new(cuzk_status::InvalidArgument, format!("vk: {e}")))?;
        let (proof, inputs) = proof_and_inputs(proof, proof_len, inputs, inputs_len)?;
        write_ok(ok, &vk.prepare(), &proof, &inputs)
    })
}

/// As `cuzk_verify`, with the verifying key of `srs` (prepared once per handle, so cheaper
/// per proof).
///
/// # Safety
/// `srs` NULL or a live params handle; the rest as `cuzk_verify`.
#[no_mangle]
pub unsafe extern "C" fn cuzk_srs_verify(
    srs: *const cuzk_srs,
    proof: *const u8,
    proof_len: usize,
    inputs: *const u8,
    inputs_len: usize,
    ok: *mut bool,
) -> cuzk_status {
    boundary("cuzk_srs_verify", || {
        let s = handle(srs, "srs")?;
        let (proof, inputs) = proof_and_inputs(proof, proof_len, inputs, inputs_len)?;
        let pvk = s.pvk.get_or_init(|| s.srs.vk.prepare());
        write_ok(ok, pvk, &proof, &inputs)
    })
}
