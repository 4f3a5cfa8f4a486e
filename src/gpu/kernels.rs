//! The kernel seam: one typed wrapper per kernel of `cuda/`, each with the kernel's
//! parameters in the kernel's own order (its `extern "C"` signature in the doc line) and the
//! thread mapping the kernel expects (one thread per scalar, per window and chunk, one block
//! per tile...), so a caller passes what the kernel computes over, never a grid.
//!
//! The compiler checks the argument types (a [`DevPtr`] of points cannot go where scalars
//! go); what it cannot check, that every pointer covers what the kernel touches, each
//! wrapper's caller vouches for, which is why they stay `unsafe`.

use blstrs::{G1Affine, Scalar};

use super::driver::{Args, DevPtr, GpuContext, Grid, Kernel};
use super::msm::{DeviceCurve, DeviceFp};
use super::types::NttGeometry;
use super::GpuError;

/// Threads per block of the one-thread-per-element kernels.
const BLOCK: u32 = 256;
/// Threads per block of the point kernels (about 160 registers each).
pub(crate) const EC_BLOCK: u32 = 128;
/// Elements per thread of the power and scale kernels (`CUZK_POW_CHUNK` in `cuda/ntt.cuh`).
pub(crate) const POW_CHUNK: u32 = 32;
/// The NTT tile kernels' default radix per thread step. Radix 4 (then about 74 registers: 24
/// warps per SM) and radix 8 (about 130: 12 warps) ran within 2% of each other on an H200
/// once the tiles' loads were 16 bytes wide (0355f15, 2^27: 41.3 against 41.9 ms of kernels); radix 4
/// leaves more warps to hide the products' latency (`NttTuning` picks the other for
/// benchmarks).
const NTT_DEFAULT_RADIX: u32 = 4;

/// The tile kernels for `radix` (4 or 8), and threads for a tile of 2^`log` elements: one per
/// `radix` elements, at most the kernels' block (`CUZK_NTT_THREADS_R4`, `_R8`).
fn ntt_tile_kernels(radix: Option<u32>, log: u32) -> ([Kernel; 2], u32) {
    let (kernels, per_thread_log, block) = match radix.unwrap_or(NTT_DEFAULT_RADIX) {
        8 => ([Kernel::NttFirstStagesR8, Kernel::NttMidStagesR8], 3, 128),
        _ => ([Kernel::NttFirstStagesR4, Kernel::NttMidStagesR4], 2, 256),
    };
    (
        kernels,
        (1u32 << log.saturating_sub(per_thread_log)).min(block),
    )
}
/// Rows per block of the recorded-R1CS mat-vec.
const ROW_BLOCK: u32 = 256;

fn threads(threads: u64, block: u32) -> Grid {
    Grid::Threads { threads, block }
}

/// Scan chunks per window of a histogram of `2^(c-1) + 1` entries.
pub(crate) fn scan_chunks(c: u32, chunk: u32) -> u32 {
    ((1u32 << (c - 1)) + 1).div_ceil(chunk)
}

impl GpuContext {
    /// `cuzk_msm_window_points(const g1_affine_t* pts, u32 n, u32 c, u32 nwin,
    /// g1_affine_t* out)`: one thread per point; out[w·n + i] = 2^(c·w)·pts[i].
    pub(crate) unsafe fn msm_window_points(
        &self,
        pts: DevPtr<G1Affine>,
        n: u32,
        c: u32,
        nwin: u32,
        out: DevPtr<G1Affine>,
    ) -> Result<(), GpuError> {
        let args = Args::new().arg(pts).arg(n).arg(c).arg(nwin).arg(out);
        self.launch(
            Kernel::MsmWindowPoints,
            threads(n as u64, EC_BLOCK),
            0,
            args,
        )
    }

    /// `cuzk_msm_scalars_hist(fr_t* scalars, u32 n, u32 c, u32 w0, u32 w1, u32 shared,
    /// u32 from_mont, u32* hist)`: one thread per scalar; the digit histogram of windows
    /// `windows` (`shared`: one histogram for every window, over window points), the scalars
    /// made canonical in place first when `from_mont`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn msm_scalars_hist(
        &self,
        scalars: DevPtr<Scalar>,
        n: u32,
        c: u32,
        windows: std::ops::Range<u32>,
        shared: bool,
        from_mont: bool,
        hist: DevPtr<u32>,
    ) -> Result<(), GpuError> {
        let args = Args::new()
            .arg(scalars)
            .arg(n)
            .arg(c)
            .arg(windows.start)
            .arg(windows.end)
            .arg(shared as u32)
            .arg(from_mont as u32)
            .arg(hist);
        self.launch(Kernel::MsmScalarsHist, threads(n as u64, BLOCK), 0, args)
    }

    /// `cuzk_msm_scan_chunk_sums(const u32* hist, u32 c, u32 nwin, u32 CH, u32* chunk_sums)`:
    /// one thread per (window, chunk of `chunk` entries).
    pub(crate) unsafe fn msm_scan_chunk_sums(
        &self,
        hist: DevPtr<u32>,
        c: u32,
        nwin: u32,
        chunk: u32,
        chunk_sums: DevPtr<u32>,
    ) -> Result<(), GpuError> {
        let grid = threads(nwin as u64 * scan_chunks(c, chunk) as u64, BLOCK);
        let args = Args::new()
            .arg(hist)
            .arg(c)
            .arg(nwin)
            .arg(chunk)
            .arg(chunk_sums);
        self.launch(Kernel::MsmScanChunkSums, grid, 0, args)
    }

    /// `cuzk_msm_scan_chunk_offsets(u32* chunk_sums, u32 c, u32 nwin, u32 CH, u32* totals)`:
    /// one thread per window.
    pub(crate) unsafe fn msm_scan_chunk_offsets(
        &self,
        chunk_sums: DevPtr<u32>,
        c: u32,
        nwin: u32,
        chunk: u32,
        totals: DevPtr<u32>,
    ) -> Result<(), GpuError> {
        let args = Args::new()
            .arg(chunk_sums)
            .arg(c)
            .arg(nwin)
            .arg(chunk)
            .arg(totals);
        self.launch(
            Kernel::MsmScanChunkOffsets,
            threads(nwin as u64, 32),
            0,
            args,
        )
    }

    /// `cuzk_msm_scan_apply(u32* hist, u32 c, u32 nwin, u32 CH, const u32* chunk_offsets)`:
    /// one thread per (window, chunk).
    pub(crate) unsafe fn msm_scan_apply(
        &self,
        hist: DevPtr<u32>,
        c: u32,
        nwin: u32,
        chunk: u32,
        chunk_offsets: DevPtr<u32>,
    ) -> Result<(), GpuError> {
        let grid = threads(nwin as u64 * scan_chunks(c, chunk) as u64, BLOCK);
        let args = Args::new()
            .arg(hist)
            .arg(c)
            .arg(nwin)
            .arg(chunk)
            .arg(chunk_offsets);
        self.launch(Kernel::MsmScanApply, grid, 0, args)
    }

    /// `cuzk_msm_scatter(const fr_t* scalars, u32 n, u32 c, u32 w0, u32 w1, u32 shared,
    /// const u32* totals, u32 lo, u32 hi, u32* cursor, u32* sorted_idx)`: one thread per
    /// scalar, the windows of `windows` with a non-zero entry count (`totals`) in `entries`
    /// only (`shared`: one sorted list of window-point entries w·n + i); nothing is read
    /// when there are none.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn msm_scatter(
        &self,
        scalars: DevPtr<Scalar>,
        n: u32,
        c: u32,
        windows: std::ops::Range<u32>,
        shared: bool,
        totals: DevPtr<u32>,
        entries: std::ops::Range<u32>,
        cursor: DevPtr<u32>,
        sorted_idx: DevPtr<u32>,
    ) -> Result<(), GpuError> {
        let args = Args::new()
            .arg(scalars)
            .arg(n)
            .arg(c)
            .arg(windows.start)
            .arg(windows.end)
            .arg(shared as u32)
            .arg(totals)
            .arg(entries.start)
            .arg(entries.end)
            .arg(cursor)
            .arg(sorted_idx);
        self.launch(Kernel::MsmScatter, threads(n as u64, BLOCK), 0, args)
    }

    /// `cuzk_msm_affine_counts(const u32* in_ends, u32 sets, u32 B, u32* out_h)`: one thread
    /// per (set, entry of B + 1): the halved bucket counts of an affine round, laid out for
    /// the scan to turn into the next round's ends.
    pub(crate) unsafe fn msm_affine_counts(
        &self,
        in_ends: DevPtr<u32>,
        sets: u32,
        buckets_per_set: u32,
        out_h: DevPtr<u32>,
    ) -> Result<(), GpuError> {
        let args = Args::new()
            .arg(in_ends)
            .arg(sets)
            .arg(buckets_per_set)
            .arg(out_h);
        let grid = threads(sets as u64 * (buckets_per_set as u64 + 1), BLOCK);
        self.launch(Kernel::MsmAffineCounts, grid, 0, args)
    }

    /// `cuzk_msm_affine_round(const g1_affine_t* points, const u32* idx, u32 in_stride,
    /// const u32* in_ends, const u32* out_ends, const u32* out_totals, u32 sets, u32 B, u32 P,
    /// u32 T, u32 out_stride, g1_affine_t* out, fp_t* prefix)`: one thread per (set, `pairs`
    /// output positions), `per_set` threads a set. `idx` is the sorted indices in round 0
    /// (`points` the MSM's), [`DevPtr::NULL`] after it (`points` the previous round's list).
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn msm_affine_round(
        &self,
        points: DevPtr<G1Affine>,
        idx: DevPtr<u32>,
        in_stride: u32,
        in_ends: DevPtr<u32>,
        out_ends: DevPtr<u32>,
        out_totals: DevPtr<u32>,
        sets: u32,
        buckets_per_set: u32,
        pairs: u32,
        per_set: u32,
        out_stride: u32,
        out: DevPtr<G1Affine>,
        prefix: DevPtr<DeviceFp>,
    ) -> Result<(), GpuError> {
        let args = Args::new()
            .arg(points)
            .arg(idx)
            .arg(in_stride)
            .arg(in_ends)
            .arg(out_ends)
            .arg(out_totals)
            .arg(sets)
            .arg(buckets_per_set)
            .arg(pairs)
            .arg(per_set)
            .arg(out_stride)
            .arg(out)
            .arg(prefix);
        let grid = threads(sets as u64 * per_set as u64, EC_BLOCK);
        self.launch(Kernel::MsmAffineRound, grid, 0, args)
    }

    /// Threads of `cuzk_msm_affine_round` the device runs at once (in its launches' blocks).
    pub(crate) fn msm_affine_round_resident(&self) -> Result<u32, GpuError> {
        self.resident_threads(Kernel::MsmAffineRound, EC_BLOCK, 0)
    }

    /// `cuzk_msm_accumulate[_g2](const affine_t* points, const u32* sorted_idx,
    /// const u32* ends, const u32* totals, u32 n, u32 nwin, u32 L, u32 T, u32 B,
    /// xyzz_t* buckets, xyzz_t* pieces, u32* piece_bkt)`: one thread per (window, slice of
    /// `slice` sorted entries), `slices` per window. `sorted_idx` [`DevPtr::NULL`]: the
    /// entries are the points themselves, `n` a window (the last affine round's list).
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn msm_accumulate<C: DeviceCurve>(
        &self,
        points: DevPtr<C::Affine>,
        sorted_idx: DevPtr<u32>,
        ends: DevPtr<u32>,
        totals: DevPtr<u32>,
        n: u32,
        nwin: u32,
        slice: u32,
        slices: u32,
        buckets_per_window: u32,
        buckets: DevPtr<C::Xyzz>,
        pieces: DevPtr<C::Xyzz>,
        piece_buckets: DevPtr<u32>,
    ) -> Result<(), GpuError> {
        let args = Args::new()
            .arg(points)
            .arg(sorted_idx)
            .arg(ends)
            .arg(totals)
            .arg(n)
            .arg(nwin)
            .arg(slice)
            .arg(slices)
            .arg(buckets_per_window)
            .arg(buckets)
            .arg(pieces)
            .arg(piece_buckets);
        let grid = threads(nwin as u64 * slices as u64, EC_BLOCK);
        self.launch(C::KERNELS.accumulate, grid, 0, args)
    }

    /// `cuzk_msm_merge_pieces[_g2](const xyzz_t* in_pc, const u32* in_pb, u32 S_in, u32 G,
    /// u32 nwin, u32 B, xyzz_t* out_pc, u32* out_pb, xyzz_t* buckets)`: one thread per
    /// (window, chunk of `chunk` of the `slots` slots).
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn msm_merge_pieces<C: DeviceCurve>(
        &self,
        in_pieces: DevPtr<C::Xyzz>,
        in_buckets: DevPtr<u32>,
        slots: u32,
        chunk: u32,
        nwin: u32,
        buckets_per_window: u32,
        out_pieces: DevPtr<C::Xyzz>,
        out_buckets: DevPtr<u32>,
        buckets: DevPtr<C::Xyzz>,
    ) -> Result<(), GpuError> {
        let args = Args::new()
            .arg(in_pieces)
            .arg(in_buckets)
            .arg(slots)
            .arg(chunk)
            .arg(nwin)
            .arg(buckets_per_window)
            .arg(out_pieces)
            .arg(out_buckets)
            .arg(buckets);
        let grid = threads(nwin as u64 * slots.div_ceil(chunk) as u64, EC_BLOCK);
        self.launch(C::KERNELS.merge_pieces, grid, 0, args)
    }

    /// `cuzk_msm_bucket_reduce[_g2](const xyzz_t* buckets, u32 nwin, u32 B, u32 K,
    /// xyzz_t* tot, xyzz_t* acc)`: one thread per (window, segment of B/K buckets).
    pub(crate) unsafe fn msm_bucket_reduce<C: DeviceCurve>(
        &self,
        buckets: DevPtr<C::Xyzz>,
        nwin: u32,
        buckets_per_window: u32,
        segments: u32,
        tot: DevPtr<C::Xyzz>,
        acc: DevPtr<C::Xyzz>,
    ) -> Result<(), GpuError> {
        let args = Args::new()
            .arg(buckets)
            .arg(nwin)
            .arg(buckets_per_window)
            .arg(segments)
            .arg(tot)
            .arg(acc);
        let grid = threads(nwin as u64 * segments as u64, EC_BLOCK);
        self.launch(C::KERNELS.bucket_reduce, grid, 0, args)
    }

    /// `cuzk_msm_tree_reduce[_g2](xyzz_t* tot, xyzz_t* acc, u32 nwin, u32 K, u32 log_m,
    /// u32 l, xyzz_t* out)`: level `l`, one thread per (window, pair of segments).
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn msm_tree_reduce<C: DeviceCurve>(
        &self,
        tot: DevPtr<C::Xyzz>,
        acc: DevPtr<C::Xyzz>,
        nwin: u32,
        segments: u32,
        log_m: u32,
        level: u32,
        out: DevPtr<C::Xyzz>,
    ) -> Result<(), GpuError> {
        let args = Args::new()
            .arg(tot)
            .arg(acc)
            .arg(nwin)
            .arg(segments)
            .arg(log_m)
            .arg(level)
            .arg(out);
        let grid = threads(nwin as u64 * (segments >> (level + 1)) as u64, EC_BLOCK);
        self.launch(C::KERNELS.tree_reduce, grid, 0, args)
    }

    /// `cuzk_ntt_powers(fr_t* out, const fr_t* pw, u32 count)`: out[i] = base^i for i <
    /// count, `pw` base's 32-entry table of squarings; one thread per `POW_CHUNK` elements.
    pub(crate) unsafe fn ntt_powers(
        &self,
        out: DevPtr<Scalar>,
        pw: DevPtr<Scalar>,
        count: u32,
    ) -> Result<(), GpuError> {
        let grid = threads(count.div_ceil(POW_CHUNK) as u64, BLOCK);
        self.launch(
            Kernel::NttPowers,
            grid,
            0,
            Args::new().arg(out).arg(pw).arg(count),
        )
    }

    /// `cuzk_ntt_scale(fr_t* v, const fr_t* pw, fr_t factor, const fr_t* minus, u32 n)`:
    /// v[i] *= factor·base^i, or with a non-null `minus` v[i] = (v[i]·base^i − minus[i])·factor;
    /// ceil(n / `POW_CHUNK`) threads, each taking every such count-th element (coalesced).
    pub(crate) unsafe fn ntt_scale(
        &self,
        v: DevPtr<Scalar>,
        pw: DevPtr<Scalar>,
        factor: Scalar,
        minus: DevPtr<Scalar>,
        n: u32,
    ) -> Result<(), GpuError> {
        let grid = threads(n.div_ceil(POW_CHUNK) as u64, BLOCK);
        let args = Args::new().arg(v).arg(pw).arg(factor).arg(minus).arg(n);
        self.launch(Kernel::NttScale, grid, 0, args)
    }

    /// `cuzk_ntt_first_stages_r{4,8}(const fr_t* src, fr_t* dst, const fr_t* tw, u32 log_n,
    /// u32 sl)`: the bit-reversal gather and the first sl = min(log n, `geometry.tile_log`)
    /// stages, one block per tile of 2^sl elements in 32·2^sl bytes of shared memory, 4 or 8
    /// elements per thread step (`NttTuning`).
    pub(crate) unsafe fn ntt_first_stages(
        &self,
        geometry: NttGeometry,
        src: DevPtr<Scalar>,
        dst: DevPtr<Scalar>,
        tw: DevPtr<Scalar>,
        log_n: u32,
    ) -> Result<(), GpuError> {
        let sl = log_n.min(geometry.tile_log);
        let ([kernel, _], block) = ntt_tile_kernels(self.ntt_tuning.radix, sl);
        let grid = Grid::Blocks {
            blocks: 1 << (log_n - sl),
            block,
        };
        let args = Args::new().arg(src).arg(dst).arg(tw).arg(log_n).arg(sl);
        self.launch(kernel, grid, NttGeometry::tile_bytes(sl), args)
    }

    /// `cuzk_ntt_mid_stages_r{4,8}(fr_t* v, const fr_t* tw, u32 log_n, u32 s0, u32 k,
    /// u32 low)`: stages s0..s0+k (k ≤ `geometry.mid_max`), one block per 2^k
    /// sub-transforms of rows of 2^`geometry.low` consecutive elements, 4 or 8 elements per
    /// thread step (`NttTuning`).
    pub(crate) unsafe fn ntt_mid_stages(
        &self,
        geometry: NttGeometry,
        v: DevPtr<Scalar>,
        tw: DevPtr<Scalar>,
        log_n: u32,
        s0: u32,
        k: u32,
    ) -> Result<(), GpuError> {
        let low = geometry.low;
        let ([_, kernel], block) = ntt_tile_kernels(self.ntt_tuning.radix, k + low);
        let grid = Grid::Blocks {
            blocks: 1 << (log_n - k - low),
            block,
        };
        let args = Args::new()
            .arg(v)
            .arg(tw)
            .arg(log_n)
            .arg(s0)
            .arg(k)
            .arg(low);
        self.launch(kernel, grid, NttGeometry::tile_bytes(k + low), args)
    }

    /// `cuzk_ntt_pointwise_mul(fr_t* a, const fr_t* b, u32 n)`: a[i] *= b[i], one thread per
    /// element.
    pub(crate) unsafe fn ntt_pointwise_mul(
        &self,
        a: DevPtr<Scalar>,
        b: DevPtr<Scalar>,
        n: u32,
    ) -> Result<(), GpuError> {
        let args = Args::new().arg(a).arg(b).arg(n);
        self.launch(Kernel::NttPointwiseMul, threads(n as u64, BLOCK), 0, args)
    }

    /// `cuzk_gather_dense(const fr_t* aux, const u64* words, const u32* prefix, u32 n,
    /// fr_t* out)`: one thread per element of `aux`; null `words` copies every element.
    pub(crate) unsafe fn gather_dense(
        &self,
        aux: DevPtr<Scalar>,
        words: DevPtr<u64>,
        prefix: DevPtr<u32>,
        n: u32,
        out: DevPtr<Scalar>,
    ) -> Result<(), GpuError> {
        let args = Args::new().arg(aux).arg(words).arg(prefix).arg(n).arg(out);
        self.launch(Kernel::GatherDense, threads(n as u64, BLOCK), 0, args)
    }

    /// `cuzk_r1cs_matvec(u32 rows, const u32* row_start, const u32* cols, const u16* codes,
    /// const fr_t* table, const fr_t* input, const fr_t* aux, fr_t* out)`: one thread per row.
    #[allow(clippy::too_many_arguments)]
    pub(crate) unsafe fn r1cs_matvec(
        &self,
        rows: u32,
        row_start: DevPtr<u32>,
        cols: DevPtr<u32>,
        codes: DevPtr<u16>,
        table: DevPtr<Scalar>,
        input: DevPtr<Scalar>,
        aux: DevPtr<Scalar>,
        out: DevPtr<Scalar>,
    ) -> Result<(), GpuError> {
        let args = Args::new()
            .arg(rows)
            .arg(row_start)
            .arg(cols)
            .arg(codes)
            .arg(table)
            .arg(input)
            .arg(aux)
            .arg(out);
        self.launch(Kernel::R1csMatvec, threads(rows as u64, ROW_BLOCK), 0, args)
    }
}
