//! The GPU backend's error type.

use std::fmt;

/// A GPU failure. Every CUDA call's failure becomes one of these, naming the call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuError {
    /// The library was built without CUDA kernels (`cuda` feature off, or no nvcc at build time).
    NotCompiled,
    /// No usable CUDA driver on this machine (missing `libcuda`, or too old for the kernels).
    NoDriver(String),
    /// No device with this ordinal.
    NoDevice(usize),
    /// A CUDA driver call failed: the call's name and the driver's error name.
    Cuda {
        /// The failing call, e.g. `cuMemAlloc` or `cuLaunchKernel(cuzk_msm_accumulate)`.
        call: String,
        /// The driver's error name, e.g. `CUDA_ERROR_OUT_OF_MEMORY`.
        error: String,
    },
    /// An argument the caller passed is not valid (lengths, sizes).
    InvalidArgument(String),
    /// A device allocation did not fit: over the context's limit (`limit`), or refused by
    /// the driver (`None`: other contexts or processes hold the rest of the device).
    OutOfMemory {
        /// Bytes the allocation asked for.
        requested: usize,
        /// Bytes the context held at the time.
        in_use: usize,
        /// The context's limit, when it was the limit that refused.
        limit: Option<usize>,
    },
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::NotCompiled => write!(
                f,
                "cuzk was built without CUDA kernels (feature `cuda` off, or nvcc not found at build time)"
            ),
            GpuError::NoDriver(why) => write!(f, "no usable CUDA driver: {why}"),
            GpuError::NoDevice(i) => write!(f, "no CUDA device with ordinal {i}"),
            GpuError::Cuda { call, error } => write!(f, "{call} failed: {error}"),
            GpuError::InvalidArgument(m) => write!(f, "invalid argument: {m}"),
            GpuError::OutOfMemory {
                requested,
                in_use,
                limit: Some(limit),
            } => write!(
                f,
                "device memory: {requested} bytes asked for with {in_use} of this context's limit of {limit} in use"
            ),
            GpuError::OutOfMemory {
                requested,
                in_use,
                limit: None,
            } => write!(
                f,
                "device memory: the driver refused {requested} bytes (CUDA_ERROR_OUT_OF_MEMORY) with {in_use} held by this context; other contexts or processes hold the rest"
            ),
        }
    }
}

impl std::error::Error for GpuError {}

impl From<GpuError> for crate::Error {
    fn from(e: GpuError) -> Self {
        let kind = match e {
            GpuError::InvalidArgument(_) => crate::ErrorKind::InvalidArgument,
            _ => crate::ErrorKind::Gpu,
        };
        crate::Error::new(kind, e.to_string())
    }
}
