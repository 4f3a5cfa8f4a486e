//! G1 and G2 MSMs on the device: the launch sequence of `cuda/msm.cuh` and the host's window
//! sum. One generic pipeline ([`DeviceCurve`] says what differs: point sizes, kernel names,
//! the conversion of a window sum).

use std::time::Instant;

use blst::{
    blst_fp, blst_fp2, blst_fp2_mul, blst_fp2_sqr, blst_fp_mul, blst_fp_sqr, blst_p1, blst_p2,
};
use blstrs::{G1Affine, G1Projective, G2Affine, G2Projective, Scalar};
use group::Group;

use super::driver::{
    DevPtr, DeviceG1Points, DeviceG2Points, DevicePoints, GpuContext, Kernel, Scratch,
};
use super::kernels::scan_chunks;
use super::{GpuError, MsmTimings, MsmTuning, MAX_WINDOW_BITS, WINDOW_POINTS_BITS};

const _: () = assert!(
    std::mem::size_of::<G1Affine>() == 96,
    "G1Affine must be blst_p1_affine"
);
const _: () = assert!(
    std::mem::size_of::<G2Affine>() == 192,
    "G2Affine must be blst_p2_affine"
);
const _: () = assert!(
    std::mem::size_of::<Scalar>() == 32,
    "Scalar must be blst_fr"
);

/// The point stages' kernels of one curve.
pub(crate) struct CurveKernels {
    pub(crate) accumulate: Kernel,
    pub(crate) merge_pieces: Kernel,
    pub(crate) bucket_reduce: Kernel,
    pub(crate) tree_reduce: Kernel,
}

/// A G1 point in XYZZ coordinates as the kernels keep it (X, Y, ZZ, ZZZ, Montgomery limbs).
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct G1Xyzz([u64; 24]);
/// An Fp element as the kernels keep it (Montgomery limbs): the affine rounds' running
/// products.
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct DeviceFp([u64; 6]);
/// A G2 point in XYZZ coordinates (each coordinate in Fp2).
#[derive(Clone, Copy)]
#[repr(C)]
pub(crate) struct G2Xyzz([u64; 48]);

/// What the device pipeline needs to know about a curve.
pub(crate) trait DeviceCurve {
    /// Affine points as blst stores them, copied to the device as they are.
    type Affine: Copy;
    /// A point as the bucket kernels keep it.
    type Xyzz: Copy;
    type Projective: Group;
    /// "msm_g1" / "msm_g2", for messages.
    const NAME: &'static str;
    /// Bytes of one XYZZ point (4 coordinates).
    const XYZZ_BYTES: usize;
    /// The point stages' kernels.
    const KERNELS: CurveKernels;
    /// Whether the affine rounds (stage 3b of `cuda/msm.cuh`) exist for this curve.
    const AFFINE_ROUNDS: bool;
    /// A window sum as the device leaves it (X, Y, ZZ, ZZZ, Montgomery limbs).
    fn from_xyzz(words: &[u64]) -> Self::Projective;
}

/// G1 over Fp.
pub(crate) struct G1;
/// G2 over Fp2.
pub(crate) struct G2;

impl DeviceCurve for G1 {
    type Affine = G1Affine;
    type Xyzz = G1Xyzz;
    type Projective = G1Projective;
    const NAME: &'static str = "msm_g1";
    const XYZZ_BYTES: usize = 192;
    const KERNELS: CurveKernels = CurveKernels {
        accumulate: Kernel::MsmAccumulate,
        merge_pieces: Kernel::MsmMergePieces,
        bucket_reduce: Kernel::MsmBucketReduce,
        tree_reduce: Kernel::MsmTreeReduce,
    };
    const AFFINE_ROUNDS: bool = true;
    fn from_xyzz(words: &[u64]) -> G1Projective {
        xyzz_to_g1(words)
    }
}

impl DeviceCurve for G2 {
    type Affine = G2Affine;
    type Xyzz = G2Xyzz;
    type Projective = G2Projective;
    const NAME: &'static str = "msm_g2";
    const XYZZ_BYTES: usize = 384;
    const KERNELS: CurveKernels = CurveKernels {
        accumulate: Kernel::MsmAccumulateG2,
        merge_pieces: Kernel::MsmMergePiecesG2,
        bucket_reduce: Kernel::MsmBucketReduceG2,
        tree_reduce: Kernel::MsmTreeReduceG2,
    };
    const AFFINE_ROUNDS: bool = false;
    fn from_xyzz(words: &[u64]) -> G2Projective {
        xyzz_to_g2(words)
    }
}
/// Sorted entries per accumulation thread for n points (`MsmTuning::slice` overrides it, for
/// benchmarking). Longer slices leave fewer pieces to merge (2^24 points, c = 20 on an H200:
/// merge 22 / 12 / 8 ms for L = 32 / 64 / 128, the accumulation unchanged), but below 2^22
/// points they leave too few threads to fill the GPU.
fn slice_len(n: usize, tuning: &MsmTuning) -> u32 {
    let default = match n {
        _ if n < 1 << 22 => 32,
        _ if n < 1 << 23 => 64,
        _ => 128,
    };
    tuning.slice.unwrap_or(default).clamp(1, 4096)
}
/// Histogram entries per scan chunk: a window's 2^(c-1) + 1 entries are scanned as
/// ceil((2^(c-1) + 1) / chunk) chunks in parallel; one thread per window then scans only the
/// chunk sums. 256 up to c = 20 (2049 chunk sums); the larger windows of window points keep
/// the chunk sums at about 2049 with longer chunks, since that one thread's walk is serial.
fn scan_chunk(c: u32) -> u32 {
    256u32.max(1 << (c - 1).saturating_sub(11))
}
/// Piece slots one merge thread walks per level (>= 4 so that every level shrinks).
const MERGE_CHUNK: u32 = 32;
/// Aim for this many bucket-reduction threads over all windows (each then runs over
/// m = B/K buckets; the pairwise merge of segments costs only doublings).
/// `MsmTuning::reduce_threads` overrides it (for benchmarking).
fn reduce_threads(tuning: &MsmTuning) -> u32 {
    tuning.reduce_threads.unwrap_or(1 << 17).clamp(2, 1 << 24)
}

/// The window size in bits for n points, from sweeps on an H200 (`gpu_bench sweep`,
/// notes/gpu.md): c = 13 is best at 2^20 (28 ms of kernels against 31 for c = 16), c = 16 at
/// 2^22 and 2^23, c = 20 at 2^24 (258 ms against 267 for c = 16: 13 windows instead of 16,
/// for a bucket reduction of 29 ms instead of 8), 2^26 and 2^27 (scalars on the device: 938
/// ms against 989 / 936 / 1030 for c = 21 / 22 / 23, the 2.4 ms saved at 22 only with its
/// histogram split by window); smaller inputs use about
/// log2(n) - 4. The switch to 20 sits between the two measured sizes (16 wins by 9 ms at
/// 2^23, 20 by 9 ms at 2^24). `MsmTuning::window_bits` overrides it (for benchmarking), up to
/// [`MAX_WINDOW_BITS`].
fn window_bits(n: usize, tuning: &MsmTuning) -> u32 {
    if let Some(c) = tuning.window_bits {
        return c.clamp(4, MAX_WINDOW_BITS);
    }
    let lg = usize::BITS - n.max(1).leading_zeros(); // floor(log2 n) + 1
    if lg <= 21 {
        (lg.saturating_sub(4)).clamp(4, 13)
    } else if n < 3 << 22 {
        16
    } else {
        20
    }
}

/// G1 points expanded for one window size c (stage 0 of `cuda/msm.cuh`): for every window w,
/// 2^(c·w) times each point, so that an MSM over them ([`GpuContext::msm_g1_windowed`])
/// adds every window's digits into one set of buckets and reduces that set once. It holds
/// nwin = ⌈256/c⌉ times the points' memory (2^24 points at c = 22: 12 × 1.6 GB). Drop it
/// before the `GpuContext` it came from.
#[derive(Debug)]
pub struct DeviceG1WindowPoints {
    points: DevicePoints<G1Affine>,
    n: usize,
    c: u32,
}

impl DeviceG1WindowPoints {
    /// The number of scalars an MSM over them takes (the points expanded).
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no points.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The window size c they were built for.
    pub fn window_bits(&self) -> u32 {
        self.c
    }

    /// Device memory held, in bytes.
    pub fn device_bytes(&self) -> usize {
        self.points.device_bytes()
    }
}

/// Where an MSM's points are.
#[derive(Clone, Copy)]
pub(super) enum Points<'a, A> {
    /// On the host: uploaded into scratch first.
    Host(&'a [A]),
    /// Already on the device, at this address.
    Device(DevPtr<A>),
    /// Window points for windows of c bits ([`DeviceG1WindowPoints`]): nwin·n points.
    Windowed { points: DevPtr<A>, c: u32 },
}

/// Where an MSM's scalars are.
#[derive(Clone, Copy)]
pub(super) enum Scalars<'a> {
    /// On the host: uploaded into the scalar scratch buffer first.
    Host(&'a [Scalar]),
    /// This many, already in the scalar scratch buffer ([`GpuContext::msm_scalar_scratch`]),
    /// e.g. gathered there on the device (`gather.rs`).
    Scratch(usize),
}

/// How the scatter's launches take the windows. A window alone in a launch keeps only its
/// cursors and the cache lines of its runs live (2^24 uniform scalars on an H200, c = 20:
/// sort 18.3 ms with all 13 windows in one launch, 11.0 with one a launch, 12.2 / 13.5 / 14.9
/// with 2 / 4 / 7), but every launch reads every scalar: for 0/1 scalars, whose digits are all
/// in window 0, 13 launches took 10.5 ms of kernels against 7.2 in one, and a 32GiB PoRep
/// partition's L, A and B MSMs (130M mostly 0/1 scalars) lost 54 ms between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ScatterLaunches {
    /// Groups of this many windows a launch, whatever their entries (window points: all of
    /// them, since their one list gains nothing from a split and the scalars would be re-read:
    /// sort 10.0 → 12.0 ms; or `MsmTuning::scatter_windows`).
    Groups(u32),
    /// A launch for each window with at least this many entries, then one launch for the
    /// windows with fewer, none for the windows without any (the default of the per-window
    /// MSM).
    ByEntries(u32),
}

/// Windows 0..nwin in launches of `per_launch` (>= 1) windows each.
fn window_groups(nwin: u32, per_launch: u32) -> impl Iterator<Item = std::ops::Range<u32>> {
    (0..nwin)
        .step_by(per_launch as usize)
        .map(move |w0| w0..(w0 + per_launch).min(nwin))
}

/// A window with at least n / this many entries gets a scatter launch of its own
/// (`MsmTuning::scatter_alone` overrides it). On an H200 at 2^24 the split gained 0.5 ms a
/// window of n entries (uniform scalars) and 0.1 ms a window of n/4 (a quarter uniform), each
/// launch's read of the scalars included.
const SCATTER_ALONE: u32 = 8;

/// At most this many affine rounds (a bucket of 2^8 entries, 2^27 points at c = 20, is down to
/// one after 8).
const MAX_AFFINE_ROUNDS: usize = 8;
/// Pairs a thread of an affine round takes by default (`MsmTuning::affine_pairs`): its one
/// Fermat inversion (~570 products) then costs ~0.5 product a pair, against the 6 of the
/// pair's own addition. On an H200 (kernels, notes/runs.md session 26) 1,024 against 512:
/// 2^24 117.8 ms against 119.5, 2^27 on the device 788.5 against 801.0.
const AFFINE_PAIRS: u32 = 1024;
/// The fewest pairs a thread takes where a round's threads would not fill the device
/// (`AffinePlan::round_pairs`): the inversion then costs ~2 products a pair, which a device
/// half idle costs more than.
const MIN_AFFINE_PAIRS: u32 = 256;
/// The scratch buffers of the affine rounds (what their window groups may reuse).
const AFFINE_SCRATCH: [Scratch; 7] = [
    Scratch::MsmAffinePoints,
    Scratch::MsmAffinePoints2,
    Scratch::MsmAffineEnds,
    Scratch::MsmAffineEnds2,
    Scratch::MsmAffineTotals,
    Scratch::MsmAffineTotals2,
    Scratch::MsmAffinePrefix,
];

/// Affine rounds by default for the windows' mean entries a bucket (the sort's counts): one
/// from 16, two from 128, three from 192. On an H200 at c = 20 (kernels, notes/runs.md session
/// 23): 2^24 uniform scalars (32 a bucket) 124.1 ms without, 121.3 with one, 127.2 with two;
/// 2^27 on the device (just under 256: the top window's digits fill 2^15 of its buckets)
/// 926.3 without, 825.5 with two, 815.2 with three; a 0/1-heavy witness at 2^24 (~9) 45.5
/// without, 46.4 with one.
fn default_affine_rounds(per_bucket: u64) -> u32 {
    match per_bucket {
        _ if per_bucket >= 192 => 3,
        _ if per_bucket >= 128 => 2,
        _ if per_bucket >= 16 => 1,
        _ => 0,
    }
}

/// The affine rounds of one MSM (stage 3b of `cuda/msm.cuh`).
#[derive(Clone, Copy, Debug)]
struct AffinePlan {
    rounds: usize,
    /// Pairs per thread at most (`AffinePlan::round_pairs`).
    pairs: u32,
    /// Whether `pairs` was asked for (`MsmTuning::affine_pairs`): then every round takes it.
    fixed: bool,
    /// Windows whose rounds run together (`MsmTuning::affine_windows`); by default as many
    /// as half the device memory still free to the context holds.
    windows: Option<u32>,
    /// Device bytes a window's rounds hold.
    window_bytes: usize,
    /// Entries each round's list can hold a window: sum ceil(k_b / 2) <= (entries + B) / 2.
    caps: [u32; MAX_AFFINE_ROUNDS],
    /// Accumulation slices a window over the last list.
    slices: u32,
}

impl AffinePlan {
    /// The rounds asked for (by default for `per_bucket` entries a bucket on average), as
    /// long as each still shrinks the lists by a quarter or more (their bound stays above
    /// 2(B + 1)).
    fn new(
        n: u32,
        buckets: u32,
        slice: u32,
        tuning: &MsmTuning,
        per_bucket: u64,
    ) -> Option<AffinePlan> {
        let asked = tuning
            .affine_rounds
            .unwrap_or_else(|| default_affine_rounds(per_bucket)) as usize;
        let asked = asked.min(MAX_AFFINE_ROUNDS);
        let mut caps = [0u32; MAX_AFFINE_ROUNDS];
        let (mut rounds, mut cap) = (0, n as u64);
        while rounds < asked && cap > 2 * (buckets as u64 + 1) {
            cap = (cap + buckets as u64).div_ceil(2);
            caps[rounds] = cap as u32;
            rounds += 1;
        }
        if rounds == 0 {
            return None;
        }
        let pairs = tuning.affine_pairs.unwrap_or(AFFINE_PAIRS).clamp(1, 4096);
        Some(AffinePlan {
            rounds,
            pairs,
            fixed: tuning.affine_pairs.is_some(),
            windows: tuning.affine_windows.map(|w| w.max(1)),
            window_bytes: Self::window_bytes(&caps[..rounds], pairs, buckets),
            caps,
            slices: caps[rounds - 1].div_ceil(slice),
        })
    }

    /// Pairs a thread of round r takes over `windows` windows, when the device runs
    /// `resident` of its threads at once: `pairs`, unless that leaves part of the device idle
    /// (a later round's shorter lists, a group of one window), then as few as fill it, down to
    /// `MIN_AFFINE_PAIRS`. Fixed where `MsmTuning::affine_pairs` was set.
    fn round_pairs(&self, r: usize, windows: u32, resident: u32) -> u32 {
        if self.fixed {
            return self.pairs;
        }
        let fill = (self.caps[r] as u64 * windows as u64).div_ceil(resident.max(1) as u64);
        fill.clamp(MIN_AFFINE_PAIRS.min(self.pairs) as u64, self.pairs as u64) as u32
    }

    /// Threads a window of round r at `pairs` a thread.
    fn threads(&self, r: usize, pairs: u32) -> u32 {
        self.caps[r].div_ceil(pairs)
    }

    /// Running products a window holds: enough for every round's threads at any pairs up to
    /// `pairs` (threads · pairs < caps[r] + pairs, and round 0's list is the longest).
    fn prefix_len(caps: &[u32], pairs: u32) -> usize {
        caps[0] as usize + pairs as usize
    }

    /// Device bytes a window's rounds hold: the two lists they alternate between (rounds 0
    /// and 1 are the largest), round 0's running products, and two rows of ends.
    fn window_bytes(caps: &[u32], pairs: u32, buckets: u32) -> usize {
        use std::mem::size_of;
        let list = |r: usize| {
            caps.get(r)
                .map_or(0, |&c| c as usize * size_of::<G1Affine>())
        };
        let prefix = Self::prefix_len(caps, pairs) * size_of::<DeviceFp>();
        list(0) + list(1) + prefix + 2 * (buckets as usize + 1) * size_of::<u32>()
    }
}

/// The parameters of one MSM run.
#[derive(Clone, Copy, Debug)]
struct Plan {
    n: u32,
    c: u32,
    nwin: u32,
    /// Whether every window shares one bucket set (window points).
    shared: bool,
    /// Bucket sets and sorted lists: nwin, or 1 with window points.
    sets: u32,
    /// Sorted entries a set can hold: n, or nwin·n with window points.
    per_set: u32,
    buckets: u32,
    slice: u32,
    /// Accumulation slices per set.
    slices: u32,
    /// Bucket-reduction segments per set.
    segments: u32,
    scan_chunk: u32,
    scatter: ScatterLaunches,
    /// Windows per histogram launch over scalars already on the device: all of them (one
    /// launch) unless `MsmTuning::hist_windows` says otherwise.
    hist_windows: u32,
    /// Whether affine rounds may run before the accumulation (G1, per-window lists); how
    /// many follows from the sort's counts.
    affine: bool,
}

impl Plan {
    /// `window_points`: the window size the points were expanded for, if they were;
    /// `affine_rounds`: whether the curve has the affine rounds' kernels.
    fn new(n: usize, window_points: Option<u32>, affine_rounds: bool, tuning: &MsmTuning) -> Plan {
        let c = window_points.unwrap_or_else(|| window_bits(n, tuning));
        let nwin = 256u32.div_ceil(c);
        let shared = window_points.is_some();
        let (sets, per_set) = if shared {
            (1, nwin * n as u32)
        } else {
            (nwin, n as u32)
        };
        let buckets = 1u32 << (c - 1);
        let want = (reduce_threads(tuning) / sets).max(2);
        let segments = (1u32 << (31 - want.leading_zeros())).min(buckets).max(2);
        let slice = slice_len(n, tuning);
        Plan {
            n: n as u32,
            c,
            nwin,
            shared,
            sets,
            per_set,
            buckets,
            slice,
            slices: per_set.div_ceil(slice),
            segments,
            scan_chunk: scan_chunk(c),
            scatter: match tuning.scatter_windows {
                Some(g) => ScatterLaunches::Groups(g.clamp(1, nwin)),
                None if shared => ScatterLaunches::Groups(nwin),
                None => ScatterLaunches::ByEntries(
                    (n as u32 / tuning.scatter_alone.unwrap_or(SCATTER_ALONE).max(1)).max(1),
                ),
            },
            hist_windows: tuning.hist_windows.unwrap_or(nwin).clamp(1, nwin),
            affine: affine_rounds && !shared,
        }
    }
}

/// A group of windows' last affine list, as the accumulation reads it (its entries are the
/// points, `stride` a window).
#[derive(Clone, Copy)]
struct AffineList<A> {
    points: DevPtr<A>,
    ends: DevPtr<u32>,
    totals: DevPtr<u32>,
    stride: u32,
    windows: u32,
}

impl GpuContext {
    /// Stage 3b: the affine rounds of each group of `group` windows, then `accumulate`
    /// (stage 4 over that group's last list; `w0` its first window). `points` are G1 points
    /// (`DeviceCurve::AFFINE_ROUNDS`); `hist` holds the cursors after the scatter and
    /// `scan` room for the scan's chunk sums of all windows.
    #[allow(clippy::too_many_arguments)]
    fn msm_affine_rounds<A>(
        &mut self,
        p: &Plan,
        a: &AffinePlan,
        group: u32,
        points: DevPtr<A>,
        sidx: DevPtr<u32>,
        hist: DevPtr<u32>,
        scan: DevPtr<u32>,
        accumulate: impl Fn(&GpuContext, u32, AffineList<A>) -> Result<(), GpuError>,
    ) -> Result<(), GpuError> {
        let g = group as usize;
        let stride = p.buckets as usize + 1;
        let cap = |r: usize| a.caps.get(r).copied().unwrap_or(0).max(1) as usize;
        let lists = [
            self.scratch::<G1Affine>(Scratch::MsmAffinePoints, g * cap(0))?,
            self.scratch::<G1Affine>(Scratch::MsmAffinePoints2, g * cap(1))?,
        ];
        let ends = [
            self.scratch::<u32>(Scratch::MsmAffineEnds, g * stride)?,
            self.scratch::<u32>(Scratch::MsmAffineEnds2, g * stride)?,
        ];
        let totals = [
            self.scratch::<u32>(Scratch::MsmAffineTotals, g)?,
            self.scratch::<u32>(Scratch::MsmAffineTotals2, g)?,
        ];
        let prefix = self.scratch::<DeviceFp>(
            Scratch::MsmAffinePrefix,
            g * AffinePlan::prefix_len(&a.caps[..a.rounds], a.pairs),
        )?;
        let resident = self.msm_affine_round_resident()?;
        tracing::debug!(target: "cuzk::gpu_timing", resident, group,
            pairs = ?(0..a.rounds).map(|r| a.round_pairs(r, group, resident)).collect::<Vec<_>>(),
            "MSM affine round pairs");
        for w0 in (0..p.nwin).step_by(g) {
            let windows = (w0 + group).min(p.nwin) - w0;
            let (mut src, mut idx) = (
                points.cast::<G1Affine>(),
                sidx.add(w0 as usize * p.n as usize),
            );
            let (mut in_stride, mut in_ends, mut in_totals) =
                (p.n, hist.add(w0 as usize * stride), DevPtr::NULL);
            for r in 0..a.rounds {
                let (out, out_ends, out_totals) = (lists[r % 2], ends[r % 2], totals[r % 2]);
                let pairs = a.round_pairs(r, windows, resident);
                // SAFETY: the lists, ends, totals and running products were sized above for
                // `group` windows of this plan; `hist` and `sidx` hold every window's.
                unsafe {
                    self.msm_affine_counts(in_ends, windows, p.buckets, out_ends)?;
                    self.msm_scan_chunk_sums(out_ends, p.c, windows, p.scan_chunk, scan)?;
                    self.msm_scan_chunk_offsets(scan, p.c, windows, p.scan_chunk, out_totals)?;
                    self.msm_scan_apply(out_ends, p.c, windows, p.scan_chunk, scan)?;
                    self.msm_affine_round(
                        src,
                        idx,
                        in_stride,
                        in_ends,
                        out_ends,
                        out_totals,
                        windows,
                        p.buckets,
                        pairs,
                        a.threads(r, pairs),
                        a.caps[r],
                        out,
                        prefix,
                    )?;
                }
                (src, idx) = (out, DevPtr::NULL);
                (in_stride, in_ends, in_totals) = (a.caps[r], out_ends, out_totals);
            }
            let list = AffineList {
                points: src.cast::<A>(),
                ends: in_ends,
                totals: in_totals,
                stride: in_stride,
                windows,
            };
            accumulate(self, w0, list)?;
        }
        Ok(())
    }

    /// Sets the MSM overrides (benchmarks; a context starts with none).
    pub fn set_msm_tuning(&mut self, tuning: MsmTuning) {
        self.msm_tuning = tuning;
    }

    /// Σ scalars[i]·points[i] over G1. `points` and `scalars` must have the same length
    /// (below 2^31). Points at infinity are skipped; duplicates and opposite points are fine.
    pub fn msm_g1(
        &mut self,
        points: &[G1Affine],
        scalars: &[Scalar],
    ) -> Result<G1Projective, GpuError> {
        self.msm_g1_timed(points, scalars).map(|(p, _)| p)
    }

    /// [`Self::msm_g1`] with the time of each stage.
    pub fn msm_g1_timed(
        &mut self,
        points: &[G1Affine],
        scalars: &[Scalar],
    ) -> Result<(G1Projective, MsmTimings), GpuError> {
        self.msm_host::<G1>(points, scalars)
    }

    /// Σ scalars[i]·points[i] over G2 (B_g2), as [`Self::msm_g1_timed`].
    pub fn msm_g2_timed(
        &mut self,
        points: &[G2Affine],
        scalars: &[Scalar],
    ) -> Result<(G2Projective, MsmTimings), GpuError> {
        self.msm_host::<G2>(points, scalars)
    }

    /// Copies `points` to the device once, for [`Self::msm_g1_resident`] (an SRS section
    /// that many proofs reuse).
    pub fn upload_g1_points(&mut self, points: &[G1Affine]) -> Result<DeviceG1Points, GpuError> {
        self.upload_points::<G1>(points)
    }

    /// The G2 version of [`Self::upload_g1_points`].
    pub fn upload_g2_points(&mut self, points: &[G2Affine]) -> Result<DeviceG2Points, GpuError> {
        self.upload_points::<G2>(points)
    }

    /// Σ scalars[i]·points[start + i] with points already on this device: only the scalars
    /// are uploaded.
    pub fn msm_g1_resident(
        &mut self,
        points: &DeviceG1Points,
        start: usize,
        scalars: &[Scalar],
    ) -> Result<(G1Projective, MsmTimings), GpuError> {
        self.msm_resident::<G1>(points, start, scalars)
    }

    /// The G2 version of [`Self::msm_g1_resident`].
    pub fn msm_g2_resident(
        &mut self,
        points: &DeviceG2Points,
        start: usize,
        scalars: &[Scalar],
    ) -> Result<(G2Projective, MsmTimings), GpuError> {
        self.msm_resident::<G2>(points, start, scalars)
    }

    /// Expands `points[start..start + len]` into window points for windows of `c` bits
    /// ([`WINDOW_POINTS_BITS`]), on the device: nwin = ⌈256/c⌉ times their memory.
    pub fn g1_window_points(
        &mut self,
        points: &DeviceG1Points,
        start: usize,
        len: usize,
        c: u32,
    ) -> Result<DeviceG1WindowPoints, GpuError> {
        if points.context() != self.cu_ctx() {
            return Err(GpuError::InvalidArgument(
                "g1_window_points: points live on another device".into(),
            ));
        }
        if start
            .checked_add(len)
            .map_or(true, |end| end > points.len())
        {
            return Err(GpuError::InvalidArgument(format!(
                "g1_window_points: points {start}..{} out of the {} on the device",
                start.saturating_add(len),
                points.len()
            )));
        }
        if len == 0 {
            return Err(GpuError::InvalidArgument(
                "g1_window_points: no points".into(),
            ));
        }
        if !WINDOW_POINTS_BITS.contains(&c) {
            return Err(GpuError::InvalidArgument(format!(
                "g1_window_points: window of {c} bits, not {WINDOW_POINTS_BITS:?}"
            )));
        }
        let nwin = 256u32.div_ceil(c) as usize;
        // A sorted entry is a window point's index with the digit's sign in bit 31.
        if len.saturating_mul(nwin) >= 1 << 31 {
            return Err(GpuError::InvalidArgument(format!(
                "g1_window_points: {nwin} windows of {len} points is over 2^31 - 1"
            )));
        }
        self.bind()?;
        let buf = self.alloc(nwin * len * std::mem::size_of::<G1Affine>())?;
        // SAFETY: the source covers points[start..start + len] (checked above) and `buf`
        // holds nwin·len points, what the kernel writes.
        unsafe {
            self.msm_window_points(
                points.device_ptr().add(start),
                len as u32,
                c,
                nwin as u32,
                buf.ptr(),
            )?;
        }
        self.sync()?;
        Ok(DeviceG1WindowPoints {
            points: DevicePoints::new(buf, nwin * len, self.cu_ctx()),
            n: len,
            c,
        })
    }

    /// Σ scalars[i]·P_i over the points `points` was expanded from; `scalars` must number
    /// [`DeviceG1WindowPoints::len`].
    pub fn msm_g1_windowed(
        &mut self,
        points: &DeviceG1WindowPoints,
        scalars: &[Scalar],
    ) -> Result<(G1Projective, MsmTimings), GpuError> {
        if points.points.context() != self.cu_ctx() {
            return Err(GpuError::InvalidArgument(
                "msm_g1_windowed: points live on another device".into(),
            ));
        }
        if scalars.len() != points.n {
            return Err(GpuError::InvalidArgument(format!(
                "msm_g1_windowed: {} scalars for window points of {}",
                scalars.len(),
                points.n
            )));
        }
        self.msm_inner::<G1>(
            Points::Windowed {
                points: points.points.device_ptr(),
                c: points.c,
            },
            Scalars::Host(scalars),
        )
    }

    fn msm_host<C: DeviceCurve>(
        &mut self,
        points: &[C::Affine],
        scalars: &[Scalar],
    ) -> Result<(C::Projective, MsmTimings), GpuError> {
        if points.len() != scalars.len() {
            return Err(GpuError::InvalidArgument(format!(
                "{}: {} points but {} scalars",
                C::NAME,
                points.len(),
                scalars.len()
            )));
        }
        self.msm_inner::<C>(Points::Host(points), Scalars::Host(scalars))
    }

    fn upload_points<C: DeviceCurve>(
        &mut self,
        points: &[C::Affine],
    ) -> Result<DevicePoints<C::Affine>, GpuError> {
        self.bind()?;
        let buf = self.alloc(std::mem::size_of_val(points))?;
        self.upload_staged(buf.ptr(), points)?;
        self.sync()?;
        Ok(DevicePoints::new(buf, points.len(), self.cu_ctx()))
    }

    fn msm_resident<C: DeviceCurve>(
        &mut self,
        points: &DevicePoints<C::Affine>,
        start: usize,
        scalars: &[Scalar],
    ) -> Result<(C::Projective, MsmTimings), GpuError> {
        if points.context() != self.cu_ctx() {
            return Err(GpuError::InvalidArgument(format!(
                "{}_resident: points live on another device",
                C::NAME
            )));
        }
        if start
            .checked_add(scalars.len())
            .map_or(true, |end| end > points.len())
        {
            return Err(GpuError::InvalidArgument(format!(
                "{}_resident: points {start}..{} out of the {} on the device",
                C::NAME,
                start.saturating_add(scalars.len()),
                points.len()
            )));
        }
        // 96- and 192-byte points keep every offset 16-byte aligned, as the vector loads need.
        self.msm_inner::<C>(
            Points::Device(points.device_ptr().add(start)),
            Scalars::Host(scalars),
        )
    }

    /// The device buffer an MSM of `n` scalars converts in place: filling it on the device
    /// and passing [`Scalars::Scratch`] skips the upload.
    pub(super) fn msm_scalar_scratch(&mut self, n: usize) -> Result<DevPtr<Scalar>, GpuError> {
        self.scratch(Scratch::MsmScalars, n)
    }

    /// The pipeline with its points and scalars wherever they are.
    pub(super) fn msm_inner<C: DeviceCurve>(
        &mut self,
        points: Points<'_, C::Affine>,
        scalars: Scalars<'_>,
    ) -> Result<(C::Projective, MsmTimings), GpuError> {
        let t0 = Instant::now();
        let len = match scalars {
            Scalars::Host(s) => s.len(),
            Scalars::Scratch(n) => n,
        };
        if len >= (1 << 31) {
            return Err(GpuError::InvalidArgument(format!(
                "{}: {len} points is over 2^31 - 1",
                C::NAME
            )));
        }
        if len == 0 {
            return Ok((C::Projective::identity(), MsmTimings::default()));
        }
        self.bind()?;
        let window_points = match points {
            Points::Windowed { c, .. } => Some(c),
            _ => None,
        };
        let p = Plan::new(len, window_points, C::AFFINE_ROUNDS, &self.msm_tuning);
        let n = p.n as usize;
        // Stages 2 and 4-7 run over `sets` bucket sets (windows, or one shared).
        let (nwin, sets, nb) = (p.nwin as usize, p.sets as usize, p.buckets as usize);
        // Accumulation slices a set over the sorted lists; over an affine round's list there
        // are fewer (it holds fewer than n entries a set, `AffinePlan::new`).
        let t2 = 2 * p.slices as usize;
        let hist_len = sets * (nb + 1);

        let d_points = match points {
            Points::Host(_) => self.scratch(Scratch::MsmPoints, n)?,
            Points::Device(ptr) | Points::Windowed { points: ptr, .. } => ptr,
        };
        let d_scalars = self.msm_scalar_scratch(n)?;
        let d_hist = self.scratch::<u32>(Scratch::MsmHistogram, hist_len)?;
        let d_totals = self.scratch::<u32>(Scratch::MsmTotals, sets)?;
        let chunks = scan_chunks(p.c, p.scan_chunk) as usize;
        let d_scan = self.scratch::<u32>(Scratch::MsmScanChunks, sets * chunks)?;
        let d_sidx = self.scratch::<u32>(Scratch::MsmSortedIndices, nwin * n)?;
        let d_buckets = self.scratch::<C::Xyzz>(Scratch::MsmBuckets, sets * nb)?;
        let d_pieces = self.scratch::<C::Xyzz>(Scratch::MsmPieces, sets * t2)?;
        let d_pbkt = self.scratch::<u32>(Scratch::MsmPieceBuckets, sets * t2)?;
        // The merge levels ping-pong between the pieces and these (level 1 writes at most
        // 2*ceil(2T/G) slots per set, later levels fewer).
        let t2b = 2 * t2.div_ceil(MERGE_CHUNK as usize);
        let d_pieces2 = self.scratch::<C::Xyzz>(Scratch::MsmPieces2, sets * t2b)?;
        let d_pbkt2 = self.scratch::<u32>(Scratch::MsmPieceBuckets2, sets * t2b)?;
        let segments = sets * p.segments as usize;
        let d_tot = self.scratch::<C::Xyzz>(Scratch::MsmSegmentTotals, segments)?;
        let d_acc = self.scratch::<C::Xyzz>(Scratch::MsmSegmentSums, segments)?;
        let d_out = self.scratch::<C::Xyzz>(Scratch::MsmWindowSums, sets)?;

        let e0 = self.mark()?;
        if let Points::Host(points) = points {
            self.upload_staged(d_points, points)?;
        }
        self.memset0(d_hist, hist_len)?;
        self.memset0(d_buckets, sets * nb)?;
        // SAFETY (every launch below): the buffers were sized above for this plan's n, c,
        // nwin, sets, slices and segments, which are what the kernels index by.
        // Stage 1 (digit histogram) of windows `w` over scalars[first..first+count], the first
        // launch over them turning them from Montgomery form to canonical.
        let hist = |ctx: &GpuContext, first: usize, count: usize, w: std::ops::Range<u32>| unsafe {
            ctx.msm_scalars_hist(
                d_scalars.add(first),
                count as u32,
                p.c,
                w.clone(),
                p.shared,
                w.start == 0,
                d_hist,
            )
        };
        // Scalars from the host: each piece's histogram runs while the next piece is copied,
        // so `upload_ms` then includes stage 1 (2^24 scalars: 512 MB, 19 ms to copy).
        // Scalars already on the device: stage 1 counts as part of the sort (`sort_ms`).
        let e1 = match scalars {
            Scalars::Host(scalars) => {
                self.upload_staged_then(d_scalars, scalars, &mut |ctx, first, count| {
                    hist(ctx, first, count, 0..p.nwin)
                })?;
                self.mark()?
            }
            Scalars::Scratch(_) => {
                let e1 = self.mark()?;
                for w in window_groups(p.nwin, p.hist_windows) {
                    hist(self, 0, n, w)?;
                }
                e1
            }
        };
        unsafe {
            self.msm_scan_chunk_sums(d_hist, p.c, p.sets, p.scan_chunk, d_scan)?;
            self.msm_scan_chunk_offsets(d_scan, p.c, p.sets, p.scan_chunk, d_totals)?;
            self.msm_scan_apply(d_hist, p.c, p.sets, p.scan_chunk, d_scan)?;
        }
        // The windows' entry counts, read back (tens of microseconds) where the scatter's
        // launches or the affine rounds follow them.
        let totals = if matches!(p.scatter, ScatterLaunches::ByEntries(_)) || p.affine {
            let mut totals = vec![0u32; p.sets as usize];
            self.download(&mut totals, d_totals)?;
            self.sync()?;
            totals
        } else {
            Vec::new()
        };
        unsafe {
            let scatter = |ctx: &GpuContext, w: std::ops::Range<u32>, entries| {
                ctx.msm_scatter(
                    d_scalars, p.n, p.c, w, p.shared, d_totals, entries, d_hist, d_sidx,
                )
            };
            match p.scatter {
                ScatterLaunches::Groups(g) => {
                    for w in window_groups(p.nwin, g) {
                        scatter(self, w, 0..u32::MAX)?;
                    }
                }
                ScatterLaunches::ByEntries(alone) => {
                    // The launches follow the windows' entry counts, read back above: a
                    // launch that finds none of its windows still schedules a block per
                    // 256 scalars, ~0.5 ms at 2^27 (13 of them cost a 32GiB partition's L
                    // MSM 8 ms), where the wait for the counts is tens of microseconds.
                    let mut rest: Option<std::ops::Range<u32>> = None;
                    for (w, &t) in (0..p.nwin).zip(&totals) {
                        if t >= alone {
                            scatter(self, w..w + 1, alone..u32::MAX)?;
                        } else if t > 0 {
                            rest = Some(rest.map_or(w..w + 1, |r| r.start..w + 1));
                        }
                    }
                    if let Some(windows) = rest {
                        scatter(self, windows, 0..alone)?;
                    }
                }
            }
        }
        // The affine rounds: how many from the mean entries a bucket, in groups of windows that
        // fit the memory still free, and none when one window does not (they must never cost
        // the caller a refusal).
        let entries: u64 = totals.iter().map(|&t| t as u64).sum();
        let per_bucket = entries / (p.sets as u64 * p.buckets as u64).max(1);
        let affine = if p.affine {
            AffinePlan::new(p.n, p.buckets, p.slice, &self.msm_tuning, per_bucket)
        } else {
            None
        };
        let affine = match affine {
            Some(a) => {
                let windows = match a.windows {
                    Some(w) => w,
                    None => (self.scratch_room(&AFFINE_SCRATCH)? / 2 / a.window_bytes) as u32,
                };
                tracing::debug!(target: "cuzk::gpu_timing", n = p.n, c = p.c,
                    rounds = a.rounds, pairs = a.pairs, window_bytes = a.window_bytes,
                    windows_a_group = windows.min(p.nwin), "MSM affine rounds");
                (windows > 0).then_some((a, windows.min(p.nwin)))
            }
            None => None,
        };
        let acc_slices = affine.map_or(p.slices, |(a, _)| a.slices);
        let e2 = self.mark()?;
        if let Some((a, windows)) = affine {
            let accumulate = |ctx: &GpuContext, w0: u32, list: AffineList<C::Affine>| unsafe {
                ctx.msm_accumulate::<C>(
                    list.points,
                    DevPtr::NULL,
                    list.ends,
                    list.totals,
                    list.stride,
                    list.windows,
                    p.slice,
                    a.slices,
                    p.buckets,
                    d_buckets.add(w0 as usize * nb),
                    d_pieces.add(w0 as usize * 2 * a.slices as usize),
                    d_pbkt.add(w0 as usize * 2 * a.slices as usize),
                )
            };
            self.msm_affine_rounds(
                &p, &a, windows, d_points, d_sidx, d_hist, d_scan, accumulate,
            )?;
        } else {
            unsafe {
                self.msm_accumulate::<C>(
                    d_points, d_sidx, d_hist, // the cursors: where each bucket's run ends
                    d_totals, p.per_set, p.sets, p.slice, p.slices, p.buckets, d_buckets, d_pieces,
                    d_pbkt,
                )?;
            }
        }
        let e2b = self.mark()?;
        let (mut in_pc, mut in_pb, mut out_pc, mut out_pb) = (d_pieces, d_pbkt, d_pieces2, d_pbkt2);
        let mut slots = 2 * acc_slices;
        loop {
            unsafe {
                self.msm_merge_pieces::<C>(
                    in_pc,
                    in_pb,
                    slots,
                    MERGE_CHUNK,
                    p.sets,
                    p.buckets,
                    out_pc,
                    out_pb,
                    d_buckets,
                )?;
            }
            let chunks = slots.div_ceil(MERGE_CHUNK);
            if chunks == 1 {
                break;
            }
            slots = 2 * chunks;
            std::mem::swap(&mut in_pc, &mut out_pc);
            std::mem::swap(&mut in_pb, &mut out_pb);
        }
        let e3 = self.mark()?;
        unsafe {
            self.msm_bucket_reduce::<C>(d_buckets, p.sets, p.buckets, p.segments, d_tot, d_acc)?;
            let log_m = (p.buckets / p.segments).trailing_zeros();
            let mut l = 0u32;
            while p.segments >> (l + 1) >= 1 {
                self.msm_tree_reduce::<C>(d_tot, d_acc, p.sets, p.segments, log_m, l, d_out)?;
                l += 1;
            }
        }
        let e4 = self.mark()?;
        // One sum per set: with window points the one sum is the result (its Horner step
        // below adds it to the identity).
        let mut windows = vec![0u64; sets * C::XYZZ_BYTES / 8];
        self.download(&mut windows, d_out.cast::<u64>())?;
        let e5 = self.mark()?;
        self.sync()?;

        let th = Instant::now();
        let result = combine_windows::<C>(&windows, p.c);
        let host_ms = th.elapsed().as_secs_f32() * 1e3;
        let timings = MsmTimings {
            upload_ms: e0.ms_to(&e1)?,
            sort_ms: e1.ms_to(&e2)?,
            accumulate_ms: e2.ms_to(&e2b)?,
            merge_ms: e2b.ms_to(&e3)?,
            reduce_ms: e3.ms_to(&e4)?,
            download_ms: e4.ms_to(&e5)?,
            host_ms,
            total_ms: t0.elapsed().as_secs_f32() * 1e3,
            window_bits: p.c,
        };
        Ok((result, timings))
    }
}

fn fp_mul(a: &blst_fp, b: &blst_fp) -> blst_fp {
    let mut r = blst_fp::default();
    // SAFETY: blst reads two field elements and writes one; all are valid and distinct.
    unsafe { blst_fp_mul(&mut r, a, b) };
    r
}

fn fp_sqr(a: &blst_fp) -> blst_fp {
    let mut r = blst_fp::default();
    // SAFETY: as above.
    unsafe { blst_fp_sqr(&mut r, a) };
    r
}

/// An XYZZ point from the device (X, Y, ZZ, ZZZ, each 6 u64 limbs, Montgomery) as a blst
/// Jacobian point: Z = ZZ·ZZZ, X_J = X·ZZ·ZZZ², Y_J = Y·ZZ³·ZZZ², since x = X/ZZ, y = Y/ZZZ.
fn xyzz_to_g1(w: &[u64]) -> G1Projective {
    let fp = |i: usize| {
        let mut l = [0u64; 6];
        l.copy_from_slice(&w[6 * i..6 * i + 6]);
        blst_fp { l }
    };
    let (x, y, zz, zzz) = (fp(0), fp(1), fp(2), fp(3));
    if zz.l.iter().all(|&l| l == 0) {
        return G1Projective::identity();
    }
    let zzz2 = fp_sqr(&zzz);
    let zz_zzz2 = fp_mul(&zz, &zzz2);
    let p = blst_p1 {
        x: fp_mul(&x, &zz_zzz2),
        y: fp_mul(&y, &fp_mul(&fp_sqr(&zz), &zz_zzz2)),
        z: fp_mul(&zz, &zzz),
    };
    // SAFETY: G1Projective is #[repr(transparent)] over blst_p1 (Jacobian, Montgomery).
    unsafe { std::mem::transmute::<blst_p1, G1Projective>(p) }
}

fn fp2_mul(a: &blst_fp2, b: &blst_fp2) -> blst_fp2 {
    let mut r = blst_fp2::default();
    // SAFETY: blst reads two field elements and writes one; all are valid and distinct.
    unsafe { blst_fp2_mul(&mut r, a, b) };
    r
}

fn fp2_sqr(a: &blst_fp2) -> blst_fp2 {
    let mut r = blst_fp2::default();
    // SAFETY: as above.
    unsafe { blst_fp2_sqr(&mut r, a) };
    r
}

/// The G2 version of [`xyzz_to_g1`]: coordinates are Fp2 (c0, c1), 12 u64 limbs each.
fn xyzz_to_g2(w: &[u64]) -> G2Projective {
    let fp2 = |i: usize| {
        let fp = |j: usize| {
            let mut l = [0u64; 6];
            l.copy_from_slice(&w[12 * i + 6 * j..12 * i + 6 * j + 6]);
            blst_fp { l }
        };
        blst_fp2 { fp: [fp(0), fp(1)] }
    };
    let (x, y, zz, zzz) = (fp2(0), fp2(1), fp2(2), fp2(3));
    if w[24..36].iter().all(|&l| l == 0) {
        return G2Projective::identity();
    }
    let zzz2 = fp2_sqr(&zzz);
    let zz_zzz2 = fp2_mul(&zz, &zzz2);
    let p = blst_p2 {
        x: fp2_mul(&x, &zz_zzz2),
        y: fp2_mul(&y, &fp2_mul(&fp2_sqr(&zz), &zz_zzz2)),
        z: fp2_mul(&zz, &zzz),
    };
    // SAFETY: G2Projective is #[repr(transparent)] over blst_p2 (Jacobian, Montgomery).
    unsafe { std::mem::transmute::<blst_p2, G2Projective>(p) }
}

/// Σ_w 2^(c·w) · W_w, by Horner from the top window.
fn combine_windows<C: DeviceCurve>(windows: &[u64], c: u32) -> C::Projective {
    let mut acc = C::Projective::identity();
    for w in windows.chunks(C::XYZZ_BYTES / 8).rev() {
        for _ in 0..c {
            acc = acc.double();
        }
        acc += C::from_xyzz(w);
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 32GiB PoRep partition's MSM (2^27 points, c = 20) with three rounds, on a device
    /// that runs 67,584 of the round's threads at once (an H200: 132 multiprocessors, four
    /// blocks of 128 each).
    fn porep_plan(tuning: &MsmTuning) -> AffinePlan {
        AffinePlan::new(1 << 27, 1 << 19, 1 << 10, tuning, 250).unwrap()
    }
    const RESIDENT: u32 = 132 * 4 * 128;

    #[test]
    fn round_pairs_fill_the_device_only_where_the_plan_would_not() {
        let a = porep_plan(&MsmTuning::default());
        assert_eq!(a.rounds, 3);
        assert_eq!(a.caps[..3], [67_371_008, 33_947_648, 17_235_968]);
        let pairs = |windows| [0, 1, 2].map(|r| a.round_pairs(r, windows, RESIDENT));
        // Four windows a group: rounds 0 and 1 fill the device at 1,024; round 2 needs 1,021.
        assert_eq!(pairs(4), [1024, 1024, 1021]);
        // One window a group: every round takes fewer, round 2 the least allowed.
        assert_eq!(pairs(1), [997, 503, MIN_AFFINE_PAIRS]);
        for (r, p) in pairs(1).into_iter().enumerate() {
            let threads = a.threads(r, p);
            assert!(threads as u64 * p as u64 >= a.caps[r] as u64);
            // The running products never outgrow what the plan holds for them.
            assert!(threads as usize * p as usize <= AffinePlan::prefix_len(&a.caps, a.pairs));
            if p > MIN_AFFINE_PAIRS {
                assert!(threads <= RESIDENT && threads > RESIDENT - 128 * 4);
            }
        }
        // Pairs asked for stay fixed.
        let tuning = MsmTuning {
            affine_pairs: Some(1024),
            ..MsmTuning::default()
        };
        let fixed = porep_plan(&tuning);
        assert_eq!(
            [0, 1, 2].map(|r| fixed.round_pairs(r, 1, RESIDENT)),
            [1024; 3]
        );
        // Fewer pairs asked for than the floor: the floor does not raise them.
        let small = porep_plan(&MsmTuning {
            affine_pairs: Some(64),
            ..MsmTuning::default()
        });
        assert_eq!(small.round_pairs(2, 1, RESIDENT), 64);
    }
}
