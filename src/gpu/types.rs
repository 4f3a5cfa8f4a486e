//! Plain data types of the GPU API, the same with and without compiled kernels.

/// One CUDA device as discovery saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// Driver ordinal, the argument of [`super::GpuContext::new`].
    pub ordinal: usize,
    /// The device's name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (u32, u32),
    /// Device memory in bytes.
    pub total_memory: usize,
    /// Streaming multiprocessors.
    pub multiprocessors: u32,
}

/// Which transform [`super::GpuContext::ntt`] computes, over a domain of size n = 2^k with
/// ω of order n (`Scalar::ROOT_OF_UNITY^(2^(32-k))`) and g = 7, the field's multiplicative
/// generator; the same conventions as `cpu::ntt::Domain`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttKind {
    /// Coefficients → evaluations at ω^i.
    Forward,
    /// Evaluations at ω^i → coefficients (includes the 1/n).
    Inverse,
    /// Coefficients → evaluations at g·ω^i.
    Coset,
    /// Evaluations at g·ω^i → coefficients.
    InverseCoset,
}

/// Where an MSM's time went, in milliseconds. Device stages are timed with CUDA events.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MsmTimings {
    /// Points and scalars host → device. Scalars from the host are converted and counted
    /// into the digit histogram piece by piece as they arrive, so this includes that stage.
    pub upload_ms: f32,
    /// Histogram scan and counting sort (and the scalar conversion and digit histogram when
    /// the scalars were already on the device).
    pub sort_ms: f32,
    /// Bucket accumulation (mixed additions of the sorted points).
    pub accumulate_ms: f32,
    /// Merge of the buckets that were split across accumulation threads.
    pub merge_ms: f32,
    /// Per-window bucket reduction (running sums) and the per-window tree sum.
    pub reduce_ms: f32,
    /// Window sums device → host.
    pub download_ms: f32,
    /// Window combination on the host.
    pub host_ms: f32,
    /// Wall time of the whole call, allocation included.
    pub total_ms: f32,
    /// Window size in bits that was used.
    pub window_bits: u32,
}

/// Where an NTT's time went, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NttTimings {
    /// Values host → device.
    pub upload_ms: f32,
    /// Twiddle table generation (zero when it was cached).
    pub twiddles_ms: f32,
    /// The transform and its scalings.
    pub kernels_ms: f32,
    /// Values device → host.
    pub download_ms: f32,
    /// Wall time of the whole call.
    pub total_ms: f32,
}
