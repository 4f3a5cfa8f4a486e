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
    /// Shared memory of one multiprocessor, in bytes (what decides how many NTT tiles of a
    /// size run on it at once).
    pub shared_memory_per_multiprocessor: u32,
    /// The most shared memory one block may have, in bytes, once a kernel opts in.
    pub shared_memory_per_block_optin: u32,
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

impl MsmTimings {
    /// The device stages after the scalars are in: sort, accumulation, merge and reduction
    /// (what `gpu_bench` prints as an MSM's kernels).
    pub fn kernels_ms(&self) -> f32 {
        self.sort_ms + self.accumulate_ms + self.merge_ms + self.reduce_ms
    }
}

/// Where an NTT's time went, in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NttTimings {
    /// Values host → device, as long as the device waited for them (the H step's a: b and c
    /// go up under the transforms before them).
    pub upload_ms: f32,
    /// Host → device copies that ran under the kernels (the H step's b and c, and what went
    /// up beside them), host wall time.
    pub overlapped_upload_ms: f32,
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
/// threads run radix-4 or radix-8 steps in registers (`cuda/cuzk.cu`); `tile_log` 10 or 11
/// the tiles' size in shared memory (`cuda/ntt.cuh`: 11 takes three passes over memory where
/// 10 takes four at 2^22..2^27, and needs 64 KB a block); `None` keeps the default (for the
/// tiles, the device's: 11 where three such blocks fit a multiprocessor). Like
/// [`MsmTuning`], a value the context is given (`GpuContext::set_ntt_tuning`); `gpu_bench`
/// takes it from `CUZK_NTT_RADIX` and `CUZK_NTT_TILE`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NttTuning {
    /// Elements per thread of a tile step: 4 or 8.
    pub radix: Option<u32>,
    /// Log of a tile's elements: 10 or 11 (11 only where the device allows a block 64 KB).
    pub tile_log: Option<u32>,
}

impl NttTuning {
    /// The environment variables [`NttTuning::from_env`] reads.
    pub const VAR: &'static str = "CUZK_NTT_RADIX";
    pub const TILE_VAR: &'static str = "CUZK_NTT_TILE";

    /// `CUZK_NTT_RADIX` and `CUZK_NTT_TILE` (unparsable or unsupported values are ignored).
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().and_then(|v| v.parse::<u32>().ok());
        NttTuning {
            radix: var(Self::VAR).filter(|r| matches!(r, 4 | 8)),
            tile_log: var(Self::TILE_VAR).filter(|t| matches!(t, 10 | 11)),
        }
    }
}

/// The NTT's tile geometry (`ntt_geometry_t` in `cuda/ntt.cuh`, the same figures): the
/// first pass runs the first `tile_log` stages over tiles of 2^`tile_log` consecutive
/// elements; each later pass up to `mid_max` stages over rows of 2^`low` consecutive elements
/// times 2^`mid_max` sub-transforms.
// Only the kernels' launches use it: a build without them does not.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NttGeometry {
    pub tile_log: u32,
    pub low: u32,
    pub mid_max: u32,
}

#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
impl NttGeometry {
    /// 2^10-element tiles: 32 KB of shared memory a block, three blocks on any SM.
    pub const SMALL: NttGeometry = NttGeometry {
        tile_log: 10,
        low: 4,
        mid_max: 6,
    };
    /// 2^11-element tiles: 64 KB a block; 2^22..2^27 in three passes over memory, not four.
    pub const LARGE: NttGeometry = NttGeometry {
        tile_log: 11,
        low: 3,
        mid_max: 8,
    };
    /// Shared memory of a tile of 2^`log` elements.
    pub const fn tile_bytes(log: u32) -> u32 {
        32 << log
    }

    /// Whether the device gives one block the large tiles' shared memory (once the kernel
    /// opts in, which the context does when this holds).
    pub fn large_allowed(info: &DeviceInfo) -> bool {
        info.shared_memory_per_block_optin >= Self::tile_bytes(Self::LARGE.tile_log)
    }

    /// `tile_log` 11 (or 10) when asked for and the device allows it, else the device's
    /// default: the large tiles where three of their blocks fit one multiprocessor (H100,
    /// H200: 228 KB; on an A100's 164 KB or the 100 KB of sm_86/sm_89 only one or two would,
    /// fewer warps than three small ones).
    pub fn for_device(tile_log: Option<u32>, info: &DeviceInfo) -> NttGeometry {
        let large_fits = Self::large_allowed(info);
        // The driver keeps 1 KB of each block's shared memory for itself.
        let three_large =
            info.shared_memory_per_multiprocessor >= 3 * (Self::tile_bytes(11) + 1024);
        match tile_log {
            Some(11) if large_fits => Self::LARGE,
            Some(_) => Self::SMALL,
            None if large_fits && three_large => Self::LARGE,
            None => Self::SMALL,
        }
    }

    /// Stages of the later pass that starts at stage `s0` (`ntt_mid_pass_stages`): the rest
    /// split as evenly as possible over as few passes as hold them.
    pub fn mid_pass_stages(&self, log_n: u32, s0: u32) -> u32 {
        let rest = log_n - s0;
        rest.div_ceil(rest.div_ceil(self.mid_max))
    }
}

/// The largest MSM window, in bits: 2^23 buckets a window (their histogram's scan keeps about
/// 2049 chunk sums a window however large c is, `scan_chunk` in msm.rs).
pub const MAX_WINDOW_BITS: u32 = 24;

/// Window sizes c that window points (`GpuContext::g1_window_points`) support: at most 16
/// windows (`CUZK_WINDOW_POINTS_MAX` in cuda/msm.cuh).
pub const WINDOW_POINTS_BITS: std::ops::RangeInclusive<u32> = 16..=MAX_WINDOW_BITS;

/// Overrides of the MSM's size-derived parameters, for benchmarking (`gpu_bench sweep`);
/// `None` keeps the default tuned for the size. A context starts with none and takes the value
/// it is given (`GpuContext::set_msm_tuning`); the library never reads the environment for it
/// (`gpu_bench` passes `MsmTuning::from_env()`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsmTuning {
    /// The window size c in bits, 4..=[`MAX_WINDOW_BITS`] (`CUZK_MSM_WINDOW`).
    pub window_bits: Option<u32>,
    /// Sorted entries per accumulation thread, 1..=4096 (`CUZK_MSM_SLICE`).
    pub slice: Option<u32>,
    /// Bucket-reduction threads over all windows, 2..=2^24 (`CUZK_MSM_REDUCE_THREADS`).
    pub reduce_threads: Option<u32>,
    /// Windows per scatter launch, 1..=nwin, whatever their entries
    /// (`CUZK_MSM_SCATTER_WINDOWS`); by default a launch for each window with many entries
    /// and one for the rest (all of them in one over window points).
    pub scatter_windows: Option<u32>,
    /// Windows per histogram launch over scalars already on the device (the start phase's
    /// H MSM), 1..=nwin (`CUZK_MSM_HIST_WINDOWS`); by default all of them. Scalars from the
    /// host are counted piece by piece under their upload, every window at once.
    pub hist_windows: Option<u32>,
    /// A window has a scatter launch of its own when it holds at least n / this many entries
    /// (`CUZK_MSM_SCATTER_ALONE`, default 8); the windows with fewer share one launch.
    pub scatter_alone: Option<u32>,
    /// Affine rounds before the accumulation (`CUZK_MSM_AFFINE_ROUNDS`, G1; 0 for none):
    /// each adds every bucket's entries in pairs with one inversion per thread's pairs. By
    /// default from the windows' mean entries a bucket: 1 from 16, 2 from 128, 3 from 192
    /// (uniform scalars at c = 20: 2^24 points 1, 2^27 3; a mostly 0/1 witness none).
    pub affine_rounds: Option<u32>,
    /// Pairs per thread of an affine round, sharing its inversion (`CUZK_MSM_AFFINE_PAIRS`).
    /// Set, every round takes it; by default a round takes 1,024, or fewer where that would
    /// leave part of the device idle.
    pub affine_pairs: Option<u32>,
    /// Windows whose affine rounds run at once (`CUZK_MSM_AFFINE_WINDOWS`); by default as
    /// many as half the device memory still free to the context holds (none when one
    /// window does not fit: the MSM then runs without them).
    pub affine_windows: Option<u32>,
}

impl MsmTuning {
    /// The environment variables, in the order of the fields.
    pub const VARS: [&'static str; 9] = [
        "CUZK_MSM_WINDOW",
        "CUZK_MSM_SLICE",
        "CUZK_MSM_REDUCE_THREADS",
        "CUZK_MSM_SCATTER_WINDOWS",
        "CUZK_MSM_HIST_WINDOWS",
        "CUZK_MSM_SCATTER_ALONE",
        "CUZK_MSM_AFFINE_ROUNDS",
        "CUZK_MSM_AFFINE_PAIRS",
        "CUZK_MSM_AFFINE_WINDOWS",
    ];

    /// The field of variable `VARS[i]`.
    fn field(&mut self, i: usize) -> Option<&mut Option<u32>> {
        Some(match i {
            0 => &mut self.window_bits,
            1 => &mut self.slice,
            2 => &mut self.reduce_threads,
            3 => &mut self.scatter_windows,
            4 => &mut self.hist_windows,
            5 => &mut self.scatter_alone,
            6 => &mut self.affine_rounds,
            7 => &mut self.affine_pairs,
            8 => &mut self.affine_windows,
            _ => return None,
        })
    }

    /// The overrides the environment sets (unparsable values are ignored).
    pub fn from_env() -> Self {
        let mut t = MsmTuning::default();
        for (i, k) in Self::VARS.iter().enumerate() {
            if let Some(f) = t.field(i) {
                *f = std::env::var(k).ok().and_then(|v| v.parse().ok());
            }
        }
        t
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
            let field = Self::VARS
                .iter()
                .position(|&n| n == k)
                .and_then(|i| t.field(i));
            *field.ok_or(format!("{k} is not an MSM tuning variable"))? = Some(v);
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
                ..MsmTuning::default()
            })
        );
        assert_eq!(
            MsmTuning::parse(
                "CUZK_MSM_HIST_WINDOWS=1,CUZK_MSM_SCATTER_WINDOWS=2,CUZK_MSM_SCATTER_ALONE=4"
            ),
            Ok(MsmTuning {
                hist_windows: Some(1),
                scatter_windows: Some(2),
                scatter_alone: Some(4),
                ..MsmTuning::default()
            })
        );
        assert_eq!(
            MsmTuning::parse(
                "CUZK_MSM_AFFINE_ROUNDS=3,CUZK_MSM_AFFINE_PAIRS=128,CUZK_MSM_AFFINE_WINDOWS=2"
            ),
            Ok(MsmTuning {
                affine_rounds: Some(3),
                affine_pairs: Some(128),
                affine_windows: Some(2),
                ..MsmTuning::default()
            })
        );
        assert!(MsmTuning::parse("CUZK_MSM_WINDOWS=18").is_err());
        assert!(MsmTuning::parse("CUZK_MSM_SLICE").is_err());
        assert!(MsmTuning::parse("CUZK_MSM_SLICE=x").is_err());
    }
}
