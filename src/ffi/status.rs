//! `cuzk_status`: the stable numbers every export returns.

use std::ffi::c_char;

use crate::error::ErrorKind;

/// What an export did. The numbers are stable: a code is never renumbered, and a retired
/// one is left here as a comment so that it is never reused.
///
/// `CUZK_STATUS_OK` is 0; every other value is a failure whose message
/// `cuzk_last_error()` returns on the same thread.
#[allow(non_camel_case_types)]
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum cuzk_status {
    /// Success.
    Ok = 0,
    /// A bug inside cuzk panicked; the call was abandoned. The library stays usable (the
    /// panic was contained), but the object the call worked on may be in any state: free it.
    Panic = 1,
    /// An argument is wrong in itself: NULL, zero or wrong length, unknown flag, bad size
    /// field. The message names the argument.
    InvalidArgument = 2,
    /// A params (SRS) file or buffer is malformed: truncated, wrong count, bad point.
    InvalidParams = 3,
    /// An assignment does not fit its params or is malformed: lengths, bitmaps, scalars
    /// not below the field modulus r.
    InvalidAssignment = 4,
    /// A circuit has no constraints or no inputs.
    EmptyCircuit = 5,
    /// Synthesis of a circuit failed.
    Synthesis = 6,
    /// A proof's bytes do not decode.
    InvalidProof = 7,
    /// Reading a file failed.
    Io = 8,
    /// The job was cancelled.
    Cancelled = 9,
    /// A wait ran out: admission to the memory budget, or `cuzk_prove_finish`. A finish that
    /// times out leaves the job running.
    Timeout = 10,
    /// The memory budget can never hold the job, or admission was set to fail fast.
    ResourceExhausted = 11,
    /// The engine is shutting down (it was freed while the job was queued).
    ShuttingDown = 12,
    /// A GPU call failed.
    Gpu = 13,
    /// An internal invariant broke (a bug).
    Internal = 14,
    /// An output buffer is too small; `*needed` says how many bytes it must have.
    BufferTooSmall = 15,
    /// A Filecoin input is malformed or of the wrong kind: C1 output JSON that does not
    /// parse, vanilla proofs that do not decode or are of another proof kind or count, a
    /// commitment that is not a field element, empty randomness.
    InvalidInput = 16,
    /// A params file the proof needs is missing; the message names the path expected.
    ParamsNotFound = 17,
    /// The input is for another sector size than its registered proof.
    SectorSizeMismatch = 18,
    /// A computed proof failed its own verification, so it was not returned (a device or
    /// prover fault, or inputs that cannot give a valid proof).
    VerificationFailed = 19,
}

impl From<ErrorKind> for cuzk_status {
    fn from(kind: ErrorKind) -> Self {
        // Exhaustive on purpose: a new ErrorKind must get its own status number here.
        match kind {
            ErrorKind::InvalidArgument => cuzk_status::InvalidArgument,
            ErrorKind::InvalidParams => cuzk_status::InvalidParams,
            ErrorKind::InvalidAssignment => cuzk_status::InvalidAssignment,
            ErrorKind::EmptyCircuit => cuzk_status::EmptyCircuit,
            ErrorKind::Synthesis => cuzk_status::Synthesis,
            ErrorKind::InvalidProof => cuzk_status::InvalidProof,
            ErrorKind::Io => cuzk_status::Io,
            ErrorKind::Cancelled => cuzk_status::Cancelled,
            ErrorKind::Timeout => cuzk_status::Timeout,
            ErrorKind::ResourceExhausted => cuzk_status::ResourceExhausted,
            ErrorKind::ShuttingDown => cuzk_status::ShuttingDown,
            ErrorKind::Gpu => cuzk_status::Gpu,
            ErrorKind::Internal => cuzk_status::Internal,
            ErrorKind::InvalidInput => cuzk_status::InvalidInput,
            ErrorKind::ParamsNotFound => cuzk_status::ParamsNotFound,
            ErrorKind::SectorSizeMismatch => cuzk_status::SectorSizeMismatch,
            ErrorKind::VerificationFailed => cuzk_status::VerificationFailed,
        }
    }
}

impl cuzk_status {
    /// Every status, for looking one up by number.
    const ALL: [cuzk_status; 20] = [
        cuzk_status::Ok,
        cuzk_status::Panic,
        cuzk_status::InvalidArgument,
        cuzk_status::InvalidParams,
        cuzk_status::InvalidAssignment,
        cuzk_status::EmptyCircuit,
        cuzk_status::Synthesis,
        cuzk_status::InvalidProof,
        cuzk_status::Io,
        cuzk_status::Cancelled,
        cuzk_status::Timeout,
        cuzk_status::ResourceExhausted,
        cuzk_status::ShuttingDown,
        cuzk_status::Gpu,
        cuzk_status::Internal,
        cuzk_status::BufferTooSmall,
        cuzk_status::InvalidInput,
        cuzk_status::ParamsNotFound,
        cuzk_status::SectorSizeMismatch,
        cuzk_status::VerificationFailed,
    ];

    /// The status's C name, NUL-terminated.
    pub(crate) fn name(self) -> &'static [u8] {
        match self {
            cuzk_status::Ok => b"CUZK_STATUS_OK\0",
            cuzk_status::Panic => b"CUZK_STATUS_PANIC\0",
            cuzk_status::InvalidArgument => b"CUZK_STATUS_INVALID_ARGUMENT\0",
            cuzk_status::InvalidParams => b"CUZK_STATUS_INVALID_PARAMS\0",
            cuzk_status::InvalidAssignment => b"CUZK_STATUS_INVALID_ASSIGNMENT\0",
            cuzk_status::EmptyCircuit => b"CUZK_STATUS_EMPTY_CIRCUIT\0",
            cuzk_status::Synthesis => b"CUZK_STATUS_SYNTHESIS\0",
            cuzk_status::InvalidProof => b"CUZK_STATUS_INVALID_PROOF\0",
            cuzk_status::Io => b"CUZK_STATUS_IO\0",
            cuzk_status::Cancelled => b"CUZK_STATUS_CANCELLED\0",
            cuzk_status::Timeout => b"CUZK_STATUS_TIMEOUT\0",
            cuzk_status::ResourceExhausted => b"CUZK_STATUS_RESOURCE_EXHAUSTED\0",
            cuzk_status::ShuttingDown => b"CUZK_STATUS_SHUTTING_DOWN\0",
            cuzk_status::Gpu => b"CUZK_STATUS_GPU\0",
            cuzk_status::Internal => b"CUZK_STATUS_INTERNAL\0",
            cuzk_status::BufferTooSmall => b"CUZK_STATUS_BUFFER_TOO_SMALL\0",
            cuzk_status::InvalidInput => b"CUZK_STATUS_INVALID_INPUT\0",
            cuzk_status::ParamsNotFound => b"CUZK_STATUS_PARAMS_NOT_FOUND\0",
            cuzk_status::SectorSizeMismatch => b"CUZK_STATUS_SECTOR_SIZE_MISMATCH\0",
            cuzk_status::VerificationFailed => b"CUZK_STATUS_VERIFICATION_FAILED\0",
        }
    }
}

/// The C name of `status` (e.g. `"CUZK_STATUS_TIMEOUT"`), or `"CUZK_STATUS_UNKNOWN"` for a
/// number this library does not know. The string is static: never free it.
#[no_mangle]
pub extern "C" fn cuzk_status_name(status: u32) -> *const c_char {
    // Takes a plain u32: a host may hand back any number, and an out-of-range value must
    // not be materialized as the Rust enum.
    let name = cuzk_status::ALL
        .iter()
        .find(|s| **s as u32 == status)
        .map_or(&b"CUZK_STATUS_UNKNOWN\0"[..], |s| s.name());
    name.as_ptr().cast()
}
