//! The crate-wide error type.
//!
//! Every failure a host can cause (bad params, bad assignments, bad arguments) or meet
//! (cancellation, timeouts, device faults) is a value of [`Error`]; nothing in the library
//! panics on host input. The C ABI maps each variant to a stable `cuzk_status` number
//! ([`Error::kind`]), so the variants are grouped by [`ErrorKind`].

use std::fmt;

/// What kind of failure an [`Error`] is; the C ABI turns each into a stable status code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// An argument is wrong in itself (NULL, zero length, unknown flag).
    InvalidArgument,
    /// A params/SRS file or buffer is malformed (truncated, wrong count, bad point).
    InvalidParams,
    /// An assignment does not fit its SRS or is malformed (lengths, bitmaps, scalars).
    InvalidAssignment,
    /// The circuit has no constraints or no inputs.
    EmptyCircuit,
    /// Synthesis of a Rust circuit failed.
    Synthesis,
    /// A proof's bytes do not decode.
    InvalidProof,
    /// Reading a file failed.
    Io,
    /// The job was cancelled.
    Cancelled,
    /// A wait ran out (admission or finish).
    Timeout,
    /// The memory budget cannot ever hold the job, or admission failed fast.
    ResourceExhausted,
    /// The engine is shutting down.
    ShuttingDown,
    /// A GPU call failed.
    Gpu,
    /// A bug: an internal invariant broke.
    Internal,
    /// A Filecoin input (C1 output, vanilla proofs, commitments) is malformed or of the
    /// wrong kind.
    InvalidInput,
    /// A params file the circuit needs is not where it is expected.
    ParamsNotFound,
    /// The input is for a sector size other than its registered proof's.
    SectorSizeMismatch,
    /// A computed proof failed its own verification and was not returned.
    VerificationFailed,
}

/// A cuzk error: its kind and a message that names what was wrong and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// Result with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// Shorthand for [`ErrorKind::InvalidArgument`].
    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }

    /// Shorthand for [`ErrorKind::InvalidParams`].
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidParams, message)
    }

    /// Shorthand for [`ErrorKind::InvalidAssignment`].
    pub fn invalid_assignment(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidAssignment, message)
    }

    /// Shorthand for [`ErrorKind::InvalidInput`].
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidInput, message)
    }

    /// Shorthand for [`ErrorKind::Internal`].
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }

    /// The error's kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The error's message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error with `context: ` put before its message.
    pub fn context(self, context: impl fmt::Display) -> Self {
        Error {
            kind: self.kind,
            message: format!("{context}: {}", self.message),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<bellpepper_core::SynthesisError> for Error {
    fn from(e: bellpepper_core::SynthesisError) -> Self {
        Error::new(ErrorKind::Synthesis, format!("synthesis failed: {e}"))
    }
}
