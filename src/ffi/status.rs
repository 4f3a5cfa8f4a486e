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
        }
    }
}

impl cuzk_status {
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
        }
    }
}

/// The C name of `status` (e.g. `"CUZK_STATUS_TIMEOUT"`), or `"CUZK_STATUS_UNKNOWN"` for a
/// number this library does not know. The string is static: never free it.
#[no_mangle]
pub extern "C" fn cuzk_status_name(status: u32) -> *const c_char {
    // Takes a plain u32: a host may hand back any number, and an out-of-range value must
    // not be materialized as the Rust enum.
    let name: &'static [u8] = match status {
        0 => cuzk_status::Ok.name(),
        1 => cuzk_status::Panic.name(),
        2 => cuzk_status::InvalidArgument.name(),
        3 => cuzk_status::InvalidParams.name(),
        4 => cuzk_status::InvalidAssignment.name(),
        5 => cuzk_status::EmptyCircuit.name(),
        6 => cuzk_status::Synthesis.name(),
        7 => cuzk_status::InvalidProof.name(),
        8 => cuzk_status::Io.name(),
        9 => cuzk_status::Cancelled.name(),
        10 => cuzk_status::Timeout.name(),
        11 => cuzk_status::ResourceExhausted.name(),
        12 => cuzk_status::ShuttingDown.name(),
        13 => cuzk_status::Gpu.name(),
        14 => cuzk_status::Internal.name(),
        15 => cuzk_status::BufferTooSmall.name(),
        _ => b"CUZK_STATUS_UNKNOWN\0",
    };
    name.as_ptr().cast()
}
