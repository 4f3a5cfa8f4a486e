//! Plain data types of the GPU API, the same with and without compiled kernels.

use std::time::Duration;

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

/// The NTT's build choice, for benchmarking: `radix` 4 or 8 picks the tile kernels whose
/// threads run radix-4 or radix-8 steps in registers (`cuda/cuzk.cu`); `None` keeps the
/// default. Like [`MsmTuning`], a value the context is given (`GpuContext::set_ntt_tuning`);
/// `gpu_bench` takes it from `CUZK_NTT_RADIX`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NttTuning {
    /// Elements per thread of a tile step: 4 or 8.
    pub radix: Option<u32>,
}

impl NttTuning {
    /// The environment variable [`NttTuning::from_env`] reads.
    pub const VAR: &'static str = "CUZK_NTT_RADIX";

    /// `CUZK_NTT_RADIX` (unparsable or unsupported values are ignored).
    pub fn from_env() -> Self {
        let radix = std::env::var(Self::VAR)
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|r| matches!(r, 4 | 8));
        NttTuning { radix }
    }
}

/// Overrides of the MSM's size-derived parameters, for benchmarking (`gpu_bench sweep`);
/// `None` keeps the default tuned for the size. A context starts with none and takes the value
/// it is given (`GpuContext::set_msm_tuning`); the library never reads the environment for it
/// (`gpu_bench` passes `MsmTuning::from_env()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsmTuning {
    /// The window size c in bits, 4..=20 (`CUZK_MSM_WINDOW`).
    pub window_bits: Option<u32>,
    /// Sorted entries per accumulation thread, 1..=4096 (`CUZK_MSM_SLICE`).
    pub slice: Option<u32>,
    /// Bucket-reduction threads over all windows, 2..=2^24 (`CUZK_MSM_REDUCE_THREADS`).
    pub reduce_threads: Option<u32>,
}

impl MsmTuning {
    /// The environment variables, in the order of the fields.
    pub const VARS: [&'static str; 3] = [
        "CUZK_MSM_WINDOW",
        "CUZK_MSM_SLICE",
        "CUZK_MSM_REDUCE_THREADS",
    ];

    /// The overrides the environment sets (unparsable values are ignored).
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok().and_then(|v| v.parse().ok());
        MsmTuning {
            window_bits: var(Self::VARS[0]),
            slice: var(Self::VARS[1]),
            reduce_threads: var(Self::VARS[2]),
        }
    }

    /// Parses `default` or `VAR=value,...` (the variables of [`Self::VARS`]).
    pub fn parse(config: &str) -> Result<Self, String> {
        let mut t = MsmTuning::default();
        for kv in config.split(',').map(str::trim) {
            if kv == "default" || kv.is_empty() {
                continue;
            }
            let (k, v) = kv
                .split_once('=')
                .ok_or(format!("{kv}: configuration items are VAR=value"))?;
            let v: u32 = v.parse().map_err(|e| format!("{kv}: {e}"))?;
            match Self::VARS.iter().position(|&n| n == k) {
                Some(0) => t.window_bits = Some(v),
                Some(1) => t.slice = Some(v),
                Some(2) => t.reduce_threads = Some(v),
                _ => return Err(format!("{k} is not an MSM tuning variable")),
            }
        }
        Ok(t)
    }
}

/// The device's kernel time over one stretch of launches (a start phase).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelTime {
    /// Time a kernel was running: the sum of the pairs.
    pub active: Duration,
    /// From the first kernel's start to the last one's end. `span - active` is the time the
    /// device waited inside the stretch (host work between launches, synchronous copies,
    /// waits on the copy stream); the rest of a mutex hold is host work before the first
    /// launch and after the last.
    pub span: Duration,
}

#[cfg(test)]
mod tests {
    use super::MsmTuning;

    #[test]
    fn msm_tuning_parses_sweep_configurations() {
        assert_eq!(MsmTuning::parse("default"), Ok(MsmTuning::default()));
        assert_eq!(
            MsmTuning::parse("CUZK_MSM_WINDOW=18, CUZK_MSM_SLICE=64"),
            Ok(MsmTuning {
                window_bits: Some(18),
                slice: Some(64),
                reduce_threads: None
            })
        );
        assert!(MsmTuning::parse("CUZK_MSM_WINDOWS=18").is_err());
        assert!(MsmTuning::parse("CUZK_MSM_SLICE").is_err());
        assert!(MsmTuning::parse("CUZK_MSM_SLICE=x").is_err());
    }
}
