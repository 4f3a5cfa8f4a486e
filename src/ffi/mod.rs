//! The C ABI: the only `extern "C"` code in the crate. `include/cuzk.h` is generated from
//! this module by cbindgen (`scripts/check-header.sh`).
//!
//! Conventions, the same for every export:
//! - Every export returns a [`cuzk_status`] (stable numbers, `CUZK_STATUS_OK` = 0) and writes
//!   results through out-pointers; the exceptions, which cannot fail, are the string
//!   accessors (`cuzk_version`, `cuzk_last_error`, `cuzk_status_name`) and the frees.
//! - Every export body runs inside one panic boundary (`boundary.rs`): no panic unwinds into
//!   the host; a panic becomes `CUZK_STATUS_PANIC`.
//! - Every pointer and length is checked; a bad one fails with
//!   `CUZK_STATUS_INVALID_ARGUMENT` and a message naming the argument, read with
//!   `cuzk_last_error()`.
//! - Handles (`cuzk_engine`, `cuzk_srs`, `cuzk_job`) are opaque, owned by the host that
//!   created them, freed by their `*_free`, which accepts NULL.
//! - Structs that may grow (`cuzk_config`, `cuzk_prove_options`, `cuzk_stats`) start with a
//!   `size` field.
//! - Input buffers are read only during the call that takes them; nothing the host passes
//!   is kept.

#![allow(clippy::missing_safety_doc)] // each export's doc has its own "Safety" section

mod args;
mod boundary;
mod engine;
mod filecoin;
mod job;
mod srs;
// Generated (src/stats/codegen.rs), laid out as rustfmt would not keep it.
#[rustfmt::skip]
mod stats_layout;
mod status;

pub use boundary::{boundary_for_tests, cuzk_last_error};
pub use engine::{
    cuzk_backend, cuzk_config, cuzk_engine, cuzk_engine_free, cuzk_engine_new, cuzk_get_stats,
    cuzk_latency, cuzk_stats_prometheus, CUZK_CONFIG_ADMISSION_FAIL_FAST,
    CUZK_CONFIG_TRIM_DISABLED, CUZK_JOB_KINDS, CUZK_MAX_DEVICES, CUZK_NO_GPU_ORDINAL,
    CUZK_PRIORITY_CLASSES, CUZK_WAIT_FOREVER,
};
pub use filecoin::{
    cuzk_bytes, cuzk_job_get_timings, cuzk_job_proof_bytes, cuzk_job_timings, cuzk_params_evict,
    cuzk_params_path, cuzk_params_preload, cuzk_prove_porep_c2_start, cuzk_prove_snap_start,
    cuzk_prove_window_post_start, cuzk_prove_winning_post_start, CUZK_CIRCUIT_POST,
    CUZK_CIRCUIT_SEAL, CUZK_CIRCUIT_UPDATE, CUZK_WHOLE_WINDOW,
};
pub use job::{
    cuzk_job, cuzk_job_cancel, cuzk_job_free, cuzk_job_partitions, cuzk_job_poll, cuzk_job_state,
    cuzk_partition, cuzk_prove_finish, cuzk_prove_options, cuzk_prove_start, CUZK_PRIORITY_DEFAULT,
    CUZK_PRIORITY_OTHER, CUZK_PRIORITY_POREP_SNAP, CUZK_PRIORITY_WINDOW_POST,
    CUZK_PRIORITY_WINNING_POST, CUZK_PROVE_FAIL_FAST, CUZK_PROVE_MONTGOMERY, CUZK_PROVE_NO_VERIFY,
};
pub use srs::{
    cuzk_circuit_shape, cuzk_srs, cuzk_srs_free, cuzk_srs_from_bytes, cuzk_srs_load,
    cuzk_srs_shape, cuzk_srs_verify, cuzk_srs_verifying_key, cuzk_verify, CUZK_PROOF_BYTES,
    CUZK_SCALAR_BYTES,
};
pub use stats_layout::{cuzk_device_backend, cuzk_device_stats, cuzk_kind_stats, cuzk_stats};
pub use status::{cuzk_status, cuzk_status_name};

use std::ffi::{c_char, CString};
use std::sync::OnceLock;

use boundary::{boundary, boundary_value, Failure};

// Handles are shared between host threads (an engine by every submitter, a job by a waiter
// and a canceller): what they wrap must be safe for that.
const _: fn() = || {
    fn shared_between_threads<T: Send + Sync>() {}
    shared_between_threads::<crate::engine::Engine>();
    shared_between_threads::<crate::engine::Job>();
    shared_between_threads::<crate::groth16::Srs>();
    shared_between_threads::<crate::groth16::PreparedVerifyingKey>();
};

/// The library's major version (Cargo.toml's).
pub const CUZK_VERSION_MAJOR: u32 = 0;
/// The library's minor version.
pub const CUZK_VERSION_MINOR: u32 = 1;
/// The library's patch version.
pub const CUZK_VERSION_PATCH: u32 = 0;

const fn parse_u32(s: &str) -> u32 {
    let b = s.as_bytes();
    let mut i = 0;
    let mut v = 0u32;
    while i < b.len() {
        v = v * 10 + (b[i] - b'0') as u32;
        i += 1;
    }
    v
}

// cbindgen writes the macros from the literals above; these make a version bump in
// Cargo.toml that forgets them a compile error.
const _: () = assert!(CUZK_VERSION_MAJOR == parse_u32(env!("CARGO_PKG_VERSION_MAJOR")));
const _: () = assert!(CUZK_VERSION_MINOR == parse_u32(env!("CARGO_PKG_VERSION_MINOR")));
const _: () = assert!(CUZK_VERSION_PATCH == parse_u32(env!("CARGO_PKG_VERSION_PATCH")));

fn version_string() -> String {
    // What a default engine (zeroed config) uses: every CUDA device, else the CPU.
    let (backend, gpu) = if !crate::gpu::KERNELS_COMPILED {
        ("cpu".to_owned(), "gpu kernels not compiled".to_owned())
    } else {
        match crate::gpu::discover() {
            Ok(d) if !d.is_empty() => {
                let names: Vec<_> = d.iter().map(|d| d.name.as_str()).collect();
                (
                    format!("cuda x{}", d.len()),
                    format!("gpu kernels compiled, CUDA devices: {}", names.join(", ")),
                )
            }
            Ok(_) => (
                "cpu".to_owned(),
                "gpu kernels compiled, no CUDA device".to_owned(),
            ),
            Err(e) => (
                "cpu".to_owned(),
                format!("gpu kernels compiled, no CUDA device: {e}"),
            ),
        }
    };
    format!(
        "cuzk {} (backend in use: {backend}; {gpu})",
        env!("CARGO_PKG_VERSION")
    )
}

/// The library's version and the backend it runs on, e.g.
/// `"cuzk 0.1.0 (backend in use: cpu; gpu kernels not compiled)"`. Computed once (the
/// first call probes for CUDA devices); the string is static: never free it.
#[no_mangle]
pub extern "C" fn cuzk_version() -> *const c_char {
    static VERSION: OnceLock<CString> = OnceLock::new();
    boundary_value("cuzk_version", c"cuzk".as_ptr(), || {
        VERSION
            .get_or_init(|| CString::new(version_string()).unwrap_or_default())
            .as_ptr()
    })
}

type FilterHandle =
    tracing_subscriber::reload::Handle<tracing_subscriber::EnvFilter, tracing_subscriber::Registry>;

/// Turns on the library's tracing output (to stderr), filtered by `env_filter` in
/// `RUST_LOG` syntax (e.g. `"cuzk=debug"`, `"info"`); NULL uses the `RUST_LOG` environment
/// variable, or `"info"` without it. The first call installs the process-wide subscriber;
/// later calls change the filter. Fails with `CUZK_STATUS_INVALID_ARGUMENT` on a filter that
/// does not parse, or when another tracing subscriber already owns the process. `env_filter`
/// is read only during the call.
///
/// # Safety
/// `env_filter` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn cuzk_tracing_init(env_filter: *const c_char) -> cuzk_status {
    use tracing_subscriber::prelude::*;
    use tracing_subscriber::{fmt, reload, EnvFilter};
    static HANDLE: OnceLock<Result<FilterHandle, String>> = OnceLock::new();
    boundary("cuzk_tracing_init", || {
        let filter = if env_filter.is_null() {
            EnvFilter::try_from_default_env().or_else(|_| EnvFilter::try_new("info"))
        } else {
            let text = args::c_str(env_filter, "env_filter")?;
            EnvFilter::try_new(String::from_utf8_lossy(text))
        }
        .map_err(|e| Failure::arg("env_filter", format!("does not parse: {e}")))?;
        // The first call's filter goes into the subscriber it installs; later calls reload.
        let mut first = Some(filter);
        let installed = HANDLE.get_or_init(|| {
            let (layer, handle) = reload::Layer::new(first.take().expect("first call"));
            tracing_subscriber::registry()
                .with(layer)
                .with(fmt::layer().with_writer(std::io::stderr))
                .try_init()
                .map(|()| handle)
                .map_err(|e| e.to_string())
        });
        match (installed, first) {
            (Err(e), _) => Err(Failure::arg(
                "env_filter",
                format!("cannot be applied: another tracing subscriber is installed ({e})"),
            )),
            (Ok(_), None) => Ok(()),
            (Ok(handle), Some(filter)) => handle.reload(filter).map_err(|e| {
                Failure::new(
                    cuzk_status::Internal,
                    format!("cannot change the filter: {e}"),
                )
            }),
        }
    })
}
