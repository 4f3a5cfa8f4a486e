//! The one panic boundary every export runs in, and the thread-local last error.

use std::cell::RefCell;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::status::cuzk_status;
use crate::engine::panic_message;
use crate::error::Error;

/// A failed export: the status it returns and the message `cuzk_last_error()` then gives.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: cuzk_status,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn new(status: cuzk_status, message: impl Into<String>) -> Self {
        Failure {
            status,
            message: message.into(),
        }
    }

    /// `CUZK_STATUS_INVALID_ARGUMENT` about argument `arg`.
    pub(crate) fn arg(arg: &str, what: impl std::fmt::Display) -> Self {
        Failure::new(
            cuzk_status::InvalidArgument,
            format!("argument `{arg}` {what}"),
        )
    }

    pub(crate) fn buffer_too_small(arg: &str, len: usize, needed: usize) -> Self {
        Failure::new(
            cuzk_status::BufferTooSmall,
            format!("argument `{arg}` holds {len} bytes but {needed} are needed"),
        )
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure {
            status: e.kind().into(),
            message: e.message().to_owned(),
        }
    }
}

pub(crate) type FfiResult<T> = Result<T, Failure>;

thread_local! {
    // A CString, so the pointer cuzk_last_error() hands out stays valid until the next
    // failure on this thread replaces it.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: String) {
    // Interior NULs (from a path, say) would cut the C string short.
    let bytes: Vec<u8> = message
        .into_bytes()
        .into_iter()
        .map(|b| if b == 0 { b'?' } else { b })
        .collect();
    let c = CString::new(bytes).unwrap_or_default();
    // `try_with`: during thread teardown the slot may be gone; the status still tells.
    let _ = LAST_ERROR.try_with(|slot| *slot.borrow_mut() = c);
}

/// The one place a panic is caught: runs `body`, and turns a panic (which must never unwind
/// into the host: that is undefined behaviour) into its message, recorded as this thread's
/// last error, prefixed with the export's name.
fn catch<T>(export: &str, body: impl FnOnce() -> T) -> Option<T> {
    // AssertUnwindSafe: after a panic the export returns CUZK_STATUS_PANIC (or its fallback
    // value), whose documented meaning is that the object the call worked on may be
    // inconsistent and should be freed.
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(v) => Some(v),
        Err(payload) => {
            let msg = panic_message(payload.as_ref());
            tracing::error!(export, "panic: {msg}");
            set_last_error(format!("{export}: internal panic: {msg}"));
            None
        }
    }
}

/// Runs an export's body inside the panic boundary: a failure becomes its status, with its
/// message (prefixed with the export's name) as this thread's last error; a panic becomes
/// `CUZK_STATUS_PANIC`.
pub(crate) fn boundary(export: &str, body: impl FnOnce() -> FfiResult<()>) -> cuzk_status {
    match catch(export, body) {
        Some(Ok(())) => cuzk_status::Ok,
        Some(Err(f)) => {
            tracing::debug!(export, status = ?f.status, "{}", f.message);
            set_last_error(format!("{export}: {}", f.message));
            f.status
        }
        None => cuzk_status::Panic,
    }
}

/// Like [`boundary`] for the few exports that return a value instead of a status (and
/// cannot fail): a panic yields `fallback`.
pub(crate) fn boundary_value<T>(export: &str, fallback: T, body: impl FnOnce() -> T) -> T {
    catch(export, body).unwrap_or(fallback)
}

/// The message of the last failed cuzk call on this thread, prefixed with the name of the
/// function that failed; an empty string when no call on this thread has failed.
///
/// The string belongs to the library: never free it. It stays valid until the next cuzk
/// call on this thread (calls that succeed do not change it today, but do not rely on
/// that); copy it to keep it. `cuzk_last_error` and `cuzk_status_name` themselves never
/// change it.
#[no_mangle]
pub extern "C" fn cuzk_last_error() -> *const c_char {
    boundary_value("cuzk_last_error", c"".as_ptr(), || {
        LAST_ERROR
            .try_with(|slot| slot.borrow().as_ptr())
            .unwrap_or(c"".as_ptr())
    })
}

/// Exposed for the FFI tests: runs `body` inside the export boundary, so that a test can
/// panic inside it (nothing in the library panics on purpose).
#[doc(hidden)]
pub fn boundary_for_tests(export: &str, body: impl FnOnce() -> Result<(), Error>) -> cuzk_status {
    boundary(export, || body().map_err(Failure::from))
}
