// Pippenger MSM over G1 and G2, one device pass per stage. Each stage is a per-thread function (`*_thread`)
// that the kernels in cuzk.cu call with their global thread id, and that the host test
// (cuda/test/host_test.cpp) calls in a plain loop, so the whole pipeline is checked without a GPU.
//
// Stages (n points, c-bit windows, nwin = ceil(256/c) windows, B = 2^(c-1) buckets/window):
//  1. scalars_hist: Montgomery -> canonical scalar (in place), signed digits
//     d_w in (-2^(c-1), 2^(c-1)], histogram of |d_w| per window (atomics).
//  2. scan: exclusive prefix sum of each window's histogram -> write cursors, totals; in
//     chunks of CH entries (chunk sums, per-window scan of the sums, chunk scans).
//  3. scatter: counting sort: (point index | sign << 31) in bucket order; the cursors then
//     mark where each bucket's run ends, which is how later stages find an entry's bucket.
//  3b. affine rounds (optional, G1): each bucket's entries added in pairs in affine
//     coordinates, one inversion shared by a thread's pairs; the halved lists replace the
//     sorted one.
//  4. accumulate: window w's sorted list is cut into equal slices of L entries, one thread
//     each, so a bucket with many points (scalars that repeat, e.g. 0/1-heavy witnesses) is
//     spread over many threads. Runs that start and end inside a slice are whole buckets and
//     are written directly; the first/last run of a slice may continue in a neighbour and is
//     written as a "piece".
//  5. merge_pieces: pieces of the same bucket are summed, G slots per thread per level.
//  6. bucket_reduce: running sums over K segments of m buckets per window.
//  7. tree_reduce: adjacent segments merged pairwise (log2 K levels) -> one point per window.
//  The host combines the windows: sum_w 2^(c*w) * W_w.
//
// With window points (0. window_points: point w*n + i is 2^(c*w) * P_i, built once per
// resident SRS section) every window shares one set of B buckets: digit d of window w of
// scalar i puts entry w*n + i into bucket |d|. Stages 4-7 then run over one "window" of
// nwin*n entries, and the host adds nothing: the same additions into buckets, but one bucket
// reduction instead of nwin, so larger windows (fewer of them) pay.
#pragma once
#include "g1.cuh"
#include "g2.cuh"

#define CUZK_PIECE_EMPTY 0xffffffffu

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ uint32_t cuzk_atomic_add(uint32_t* p, uint32_t v) { return atomicAdd(p, v); }
#else
static inline uint32_t cuzk_atomic_add(uint32_t* p, uint32_t v) { uint32_t o = *p; *p = o + v; return o; }
#endif

// Digits at most this large (in magnitude) have their counter increments grouped per warp
// (cuzk_atomic_inc_grouped). Witness scalars are mostly 0 or 1: every 1 is digit 1 of
// window 0, so a Filecoin partition's L, A and B sent tens of millions of increments to one
// counter, which L2 serves one at a time. Uniform scalars almost never have such a digit
// (16 of 2^(c-1)), so their path is the plain atomic, untouched.
#define CUZK_SMALL_DIGIT 16u

// atomicAdd(p, 1)'s old value for this lane, where the active lanes of the warp with the
// same `key` (= the same p) share one atomicAdd of their count: the lowest lane adds, the
// others take its old value plus their rank among the group. Which lane gets which
// position differs from the ungrouped order, which the MSM does not depend on.
#if defined(__CUDA_ARCH__)
__device__ __forceinline__ uint32_t cuzk_lane_id() {
    uint32_t lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}
__device__ __forceinline__ uint32_t cuzk_atomic_inc_grouped(uint32_t* p, uint32_t key) {
    const uint32_t peers = __match_any_sync(__activemask(), key);
    const uint32_t lane = cuzk_lane_id();
    const uint32_t leader = __ffs(peers) - 1;
    uint32_t base = 0;
    if (lane == leader) base = atomicAdd(p, __popc(peers));
    base = __shfl_sync(peers, base, leader);
    return base + __popc(peers & ((1u << lane) - 1));
}
// The same without the old value (a histogram count).
__device__ __forceinline__ void cuzk_count_grouped(uint32_t* p, uint32_t key) {
    const uint32_t peers = __match_any_sync(__activemask(), key);
    if (cuzk_lane_id() == (uint32_t)__ffs(peers) - 1) atomicAdd(p, __popc(peers));
}
#else
static inline uint32_t cuzk_atomic_inc_grouped(uint32_t* p, uint32_t) { return cuzk_atomic_add(p, 1); }
static inline void cuzk_count_grouped(uint32_t* p, uint32_t) { cuzk_atomic_add(p, 1); }
#endif

// 16-byte loads of a 96-byte affine point (device buffers from cuMemAlloc are 256-byte
// aligned and 96 = 6 x 16): 6 wide loads instead of 24 narrow ones.
HD g1_affine_t cuzk_load_affine(const g1_affine_t* p) {
#if defined(__CUDA_ARCH__)
    // asm volatile: the field arithmetic is asm volatile too, so these loads are issued
    // where they are written (before the addition they overlap) and not sunk to their use.
    g1_affine_t r;
#pragma unroll
    for (int i = 0; i < 3; i++) {
        asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r.x.v[4 * i]), "=r"(r.x.v[4 * i + 1]), "=r"(r.x.v[4 * i + 2]), "=r"(r.x.v[4 * i + 3])
                     : "l"(reinterpret_cast<const char*>(p) + 16 * i));
        asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(r.y.v[4 * i]), "=r"(r.y.v[4 * i + 1]), "=r"(r.y.v[4 * i + 2]), "=r"(r.y.v[4 * i + 3])
                     : "l"(reinterpret_cast<const char*>(p) + 48 + 16 * i));
    }
    return r;
#else
    return *p;
#endif
}

#if defined(__CUDA_ARCH__)
// One 48-byte Fp in 3 wide loads (see cuzk_load_affine).
__device__ __forceinline__ void cuzk_load_fp(fp_t& f, const char* src) {
#pragma unroll
    for (int i = 0; i < 3; i++) {
        asm volatile("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
                     : "=r"(f.v[4 * i]), "=r"(f.v[4 * i + 1]), "=r"(f.v[4 * i + 2]), "=r"(f.v[4 * i + 3])
                     : "l"(src + 16 * i));
    }
}
#endif

// The same for a 192-byte G2 affine point (x.c0, x.c1, y.c0, y.c1): 12 wide loads.
HD g2_affine_t cuzk_load_affine(const g2_affine_t* p) {
#if defined(__CUDA_ARCH__)
    g2_affine_t r;
    const char* b = reinterpret_cast<const char*>(p);
    cuzk_load_fp(r.x.c0, b);
    cuzk_load_fp(r.x.c1, b + 48);
    cuzk_load_fp(r.y.c0, b + 96);
    cuzk_load_fp(r.y.c1, b + 144);
    return r;
#else
    return *p;
#endif
}

// Bits [off, off + c) of a 256-bit little-endian integer (c <= 31).
HD uint32_t cuzk_window_bits(const fr_t& s, uint32_t off, uint32_t c) {
    uint32_t limb = off >> 5, sh = off & 31;
    uint32_t lo = limb < 8 ? s.v[limb] >> sh : 0;
    uint32_t hi = (sh != 0 && limb + 1 < 8) ? s.v[limb + 1] << (32 - sh) : 0;
    return (lo | hi) & ((1u << c) - 1);
}

// Signed digit of window w: the digits of all lower windows are needed for the carry, so
// this walks from window 0; callers loop over w in order and keep `carry`.
HD uint32_t cuzk_signed_digit(const fr_t& s, uint32_t w, uint32_t c, uint32_t& carry, bool& neg) {
    uint32_t d = cuzk_window_bits(s, w * c, c) + carry;
    uint32_t half = 1u << (c - 1);
    if (d > half) {
        carry = 1;
        neg = true;
        return (1u << c) - d;  // |d - 2^c|
    }
    carry = 0;
    neg = false;
    return d;
}

// Maximum windows of window points (c >= 16): each thread of stage 0 keeps its point's nwin
// multiples for one shared inversion.
#define CUZK_WINDOW_POINTS_MAX 16

// 0. one thread per point: out[w*n + i] = 2^(c*w) * pts[i] (affine, blst's layout, the
// infinity as (0, 0)) for w < nwin. The nwin multiples are c doublings apart; their affine
// forms share one inversion (Montgomery's trick over the ZZZ coordinates: x = X/ZZ with
// 1/ZZ = (ZZ/ZZZ)^2, y = Y/ZZZ), so a point costs one Fermat inversion plus ~10 products a
// doubling.
template <class F>
HD void msm_window_points_thread(uint32_t i, const affine_t<F>* pts, uint32_t n, uint32_t c, uint32_t nwin,
                                 affine_t<F>* out) {
    if (i >= n || nwin > CUZK_WINDOW_POINTS_MAX) return;
    const affine_t<F> p = pts[i];
    if (p.is_inf()) {
        for (uint32_t w = 0; w < nwin; w++) out[(size_t)w * n + i] = p;
        return;
    }
    xyzz_t<F> m[CUZK_WINDOW_POINTS_MAX];
    F prefix[CUZK_WINDOW_POINTS_MAX];  // prefix[w] = ZZZ_0 * ... * ZZZ_w (1 for the infinity)
    xyzz_t<F> q = xyzz_t<F>::from_affine(p);
    F acc = F::one();
    for (uint32_t w = 0; w < nwin; w++) {
        m[w] = q;
        if (!q.is_inf()) acc = acc * q.ZZZ;
        prefix[w] = acc;
        if (w + 1 < nwin)
            for (uint32_t k = 0; k < c; k++) q = q.dbl();
    }
    F inv = acc.inverse();  // 1 / prefix[nwin - 1]
    for (int w = (int)nwin - 1; w >= 0; w--) {
        affine_t<F> a;
        if (m[w].is_inf()) {
            a.x = F::zero();
            a.y = F::zero();
        } else {
            const F inv_zzz = w > 0 ? inv * prefix[w - 1] : inv;
            inv = inv * m[w].ZZZ;
            const F inv_z = m[w].ZZ * inv_zzz;
            a.x = m[w].X * inv_z.sqr();
            a.y = m[w].Y * inv_zzz;
        }
        out[(size_t)w * n + i] = a;
    }
}

// Where window w's digits of point i go: its own histogram row and sorted list, or with
// window points (`shared` != 0) row 0 and list 0 for every window, as entry w*n + i.
struct msm_window_slot {
    uint32_t row, entry, list;  // row: histogram row; entry: the point index stored; list: sorted list
    HD msm_window_slot(uint32_t shared, uint32_t w, uint32_t n, uint32_t i)
        : row(shared ? 0 : w), entry(shared ? w * n + i : i), list(shared ? 0 : w) {}
};

// 1. one thread per scalar, windows [w0, w1) only (the digits below w0 are walked for their
// carry). `from_mont`: the scalars are still in Montgomery form; they are made canonical in
// place, so only the first of several launches over the same scalars passes it.
HD void msm_scalars_hist_thread(uint32_t i, fr_t* scalars, uint32_t n, uint32_t c, uint32_t w0, uint32_t w1,
                                uint32_t shared, uint32_t from_mont, uint32_t* hist /* nwin (1 if shared) x (B+1) */) {
    if (i >= n) return;
    fr_t s = scalars[i];
    if (from_mont) {
        s = s.from_mont();
        scalars[i] = s;
    }
    uint32_t stride = (1u << (c - 1)) + 1, carry = 0;
    for (uint32_t w = 0; w < w1; w++) {
        bool neg;
        uint32_t b = cuzk_signed_digit(s, w, c, carry, neg);
        if (b == 0 || w < w0) continue;
        const uint32_t slot = msm_window_slot(shared, w, n, i).row * stride + b;
        if (b <= CUZK_SMALL_DIGIT) cuzk_count_grouped(&hist[slot], slot);
        else cuzk_atomic_add(&hist[slot], 1);
    }
}

// 2. exclusive scan of each window's histogram (stride = B + 1 entries), in place, so that
// hist becomes the scatter cursors; totals[w] = number of non-zero digits in window w.
// One thread per window walking the whole histogram is serial in 2^(c-1) (on an H200 at
// 2^24 points the sort stage took 75 ms at c = 20 against 34 at c = 16). Instead each window
// is cut into chunks of CH entries (nch = ceil(stride / CH) per window) and scanned in three
// passes: chunk sums, a serial scan of the nch sums per window, then each chunk's own scan
// from its offset.
HD uint32_t msm_scan_chunks(uint32_t c, uint32_t CH) { return ((1u << (c - 1)) + 1 + CH - 1) / CH; }

// 2a. one thread per (window, chunk): chunk_sums[w * nch + k] = sum of chunk k of window w.
HD void msm_scan_chunk_sums_thread(uint32_t gid, const uint32_t* hist, uint32_t c, uint32_t nwin, uint32_t CH,
                                   uint32_t* chunk_sums) {
    uint32_t nch = msm_scan_chunks(c, CH);
    uint32_t w = gid / nch, k = gid % nch;
    if (w >= nwin) return;
    uint32_t stride = (1u << (c - 1)) + 1;
    uint32_t b0 = k * CH, b1 = b0 + CH < stride ? b0 + CH : stride;
    const uint32_t* h = hist + (size_t)w * stride;
    uint32_t sum = 0;
    for (uint32_t b = b0; b < b1; b++) sum += h[b];
    chunk_sums[gid] = sum;
}

// 2b. one thread per window: exclusive scan of its nch chunk sums, in place (they become the
// chunk offsets); totals[w] = the window's sum.
HD void msm_scan_chunk_offsets_thread(uint32_t w, uint32_t* chunk_sums, uint32_t c, uint32_t nwin, uint32_t CH,
                                      uint32_t* totals) {
    if (w >= nwin) return;
    uint32_t nch = msm_scan_chunks(c, CH);
    uint32_t* s = chunk_sums + (size_t)w * nch;
    uint32_t sum = 0;
    for (uint32_t k = 0; k < nch; k++) {
        uint32_t x = s[k];
        s[k] = sum;
        sum += x;
    }
    totals[w] = sum;
}

// 2c. one thread per (window, chunk): exclusive scan of the chunk, in place, from its offset.
HD void msm_scan_apply_thread(uint32_t gid, uint32_t* hist, uint32_t c, uint32_t nwin, uint32_t CH,
                              const uint32_t* chunk_offsets) {
    uint32_t nch = msm_scan_chunks(c, CH);
    uint32_t w = gid / nch, k = gid % nch;
    if (w >= nwin) return;
    uint32_t stride = (1u << (c - 1)) + 1;
    uint32_t b0 = k * CH, b1 = b0 + CH < stride ? b0 + CH : stride;
    uint32_t* h = hist + (size_t)w * stride;
    uint32_t sum = chunk_offsets[gid];
    for (uint32_t b = b0; b < b1; b++) {
        uint32_t x = h[b];
        h[b] = sum;
        sum += x;
    }
}

// 3. one thread per scalar (canonical now). Only the point index and sign are stored: an
// entry's bucket follows from its position, since afterwards cursor[b] is the end of bucket
// b's run (msm_bucket_at). A second array of bucket ids was as many random writes again
// (4 bytes x nwin x n: 872 MB at 2^24 points). (Issuing 16 windows' increments before
// using the first position did not help: 2^24 sort 17.6 -> 18.6 ms on an H200.)
// Windows [w0, w1) whose entry count (`totals`, stage 2) is in [lo, hi) only: a launch per
// window with many entries keeps fewer cursors and runs' cache lines live at once, while the
// windows with few entries (a mostly 0/1 witness has its digits in window 0) share one launch,
// since every launch reads every scalar; a launch with no such window returns before reading
// one. The digits below w0 are still walked for their carry.
HD void msm_scatter_thread(uint32_t i, const fr_t* scalars, uint32_t n, uint32_t c, uint32_t w0, uint32_t w1,
                           uint32_t shared, const uint32_t* totals, uint32_t lo, uint32_t hi, uint32_t* cursor,
                           uint32_t* sorted_idx) {
    if (i >= n || w1 - w0 > 64) return;
    uint64_t mine = 0;  // bit w - w0: window w is this launch's
    for (uint32_t w = w0; w < w1; w++) {
        const uint32_t t = totals[shared ? 0 : w];
        if (t != 0 && t >= lo && t < hi) mine |= 1ull << (w - w0);
    }
    if (mine == 0) return;
    fr_t s = scalars[i];
    uint32_t stride = (1u << (c - 1)) + 1, carry = 0;
    for (uint32_t w = 0; w < w1; w++) {
        bool neg;
        uint32_t b = cuzk_signed_digit(s, w, c, carry, neg);
        if (b == 0 || w < w0 || !((mine >> (w - w0)) & 1)) continue;
        const msm_window_slot ws(shared, w, n, i);
        const uint32_t slot = ws.row * stride + b;
        const uint32_t pos =
            b <= CUZK_SMALL_DIGIT ? cuzk_atomic_inc_grouped(&cursor[slot], slot) : cuzk_atomic_add(&cursor[slot], 1);
        sorted_idx[(size_t)ws.list * n + pos] = ws.entry | (neg ? 0x80000000u : 0);
    }
}

// The bucket of the entry at position pos of a window's sorted list: the first b >= 1 whose
// run ends after pos. `ends` is that window's row of cursors after the scatter (B + 1
// non-decreasing entries, ends[B] = the window's entry count > pos).
HD uint32_t msm_bucket_at(const uint32_t* ends, uint32_t B, uint32_t pos) {
    uint32_t lo = 1, hi = B;
    while (lo < hi) {
        uint32_t mid = (lo + hi) >> 1;
        if (ends[mid] > pos) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

// 3b. Affine rounds (optional, G1; MsmTuning::affine_rounds): each round adds the entries of
// every bucket in pairs, (0,1), (2,3), ..., in affine coordinates, so a bucket of k entries
// leaves ceil(k/2), and the accumulation (stage 4) then sums what is left in XYZZ. An affine
// addition is 6 products against the mixed XYZZ addition's 10 (madd-2008-s: 8M + 2S) once
// its inversion is shared: each thread takes P consecutive pairs and inverts the product of
// their denominators once (Montgomery's trick), one Fermat inversion (~570 products) for all
// P. Round r reads round r-1's points (round 0: the points through the sorted indices, the
// sign applied) and writes its own, compacted: bucket b's ceil(k/2) results sit at
// [ends'[b-1], ends'[b]) of the next list, where ends' is the exclusive scan of the halved
// counts (msm_affine_counts_thread, then the scan of stage 2: the same layout as the
// cursors after the scatter, so stage 4 reads the last round's list as it reads a sorted one).

// The halved counts of one round, laid out so that their exclusive scan (stage 2) is the next
// round's ends directly: h[b-1] = ceil(k_b / 2) for buckets b = 1..B, h[B] = 0. One thread per
// (set, entry), (B + 1) entries a set.
HD void msm_affine_counts_thread(uint32_t gid, const uint32_t* in_ends, uint32_t sets, uint32_t B, uint32_t* out_h) {
    const uint32_t stride = B + 1, w = gid / stride, i = gid % stride;
    if (w >= sets) return;
    const uint32_t* e = in_ends + (size_t)w * stride;
    out_h[gid] = i < B ? (e[i + 1] - e[i] + 1) / 2 : 0;
}

// What one pair of a round is: an addition, a doubling (the same point twice: the denominator
// is 2y), or no product at all (one side missing or the infinity, or P + (-P)).
enum msm_pair_kind : uint32_t { MSM_PAIR_ADD, MSM_PAIR_DBL, MSM_PAIR_FIRST, MSM_PAIR_SECOND, MSM_PAIR_INF };

template <class F>
HD msm_pair_kind msm_affine_pair_kind(const affine_t<F>& a, const affine_t<F>& b, bool has_b) {
    if (!has_b || b.is_inf()) return MSM_PAIR_FIRST;
    if (a.is_inf()) return MSM_PAIR_SECOND;
    if (!a.x.eq(b.x)) return MSM_PAIR_ADD;
    return a.y.eq(b.y) ? MSM_PAIR_DBL : MSM_PAIR_INF;
}

// The x of entry i (its sign does not change x).
HD fp_t msm_affine_round_load_x(const g1_affine_t* points, const uint32_t* idx, size_t i) {
    const g1_affine_t* p = idx == nullptr ? points + i : points + (idx[i] & 0x7fffffffu);
#if defined(__CUDA_ARCH__)
    fp_t x;
    cuzk_load_fp(x, reinterpret_cast<const char*>(p));
    return x;
#else
    return p->x;
#endif
}

// The bucket of a round's output position q, walked to from bkt (either way): the one whose
// run [ends[b-1], ends[b]) holds q.
HD uint32_t msm_affine_bucket_near(const uint32_t* out_ends, uint32_t bkt, uint32_t q) {
    while (out_ends[bkt] <= q) bkt++;
    while (out_ends[bkt - 1] > q) bkt--;
    return bkt;
}

// Where pair q's entries are in the round's input (bucket b's run, j-th pair of it).
struct msm_affine_slot {
    uint32_t i0;
    bool has_b;
    HD msm_affine_slot(const uint32_t* in_ends, const uint32_t* out_ends, uint32_t bkt, uint32_t q)
        : i0(in_ends[bkt - 1] + 2 * (q - out_ends[bkt - 1])), has_b(i0 + 1 < in_ends[bkt]) {}
};

// One pair of a round: pair s of its input, its points as stored (both the same entry when
// there is no second). Both loads go out before either is used; the signs are applied after
// them, since a negation right after a load would wait for it.
template <class F>
struct msm_affine_pair {
    affine_t<F> a, b;
    msm_pair_kind kind;

    HD msm_affine_pair(const affine_t<F>* points, const uint32_t* idx, msm_affine_slot s) {
        const uint32_t ib = s.has_b ? s.i0 + 1 : s.i0;
        const uint32_t ea = idx ? idx[s.i0] : s.i0;
        const uint32_t eb = idx ? idx[ib] : ib;
        a = cuzk_load_affine(points + (ea & 0x7fffffffu));
        b = cuzk_load_affine(points + (eb & 0x7fffffffu));
        if (ea >> 31) a.y = a.y.neg();  // the infinity's y = 0 stays 0
        if (eb >> 31) b.y = b.y.neg();
        kind = msm_affine_pair_kind(a, b, s.has_b);
    }
    HD bool needs_inverse() const { return kind == MSM_PAIR_ADD || kind == MSM_PAIR_DBL; }
    // The denominator of the slope: x_b - x_a, or 2y for a doubling.
    HD F denominator() const { return kind == MSM_PAIR_ADD ? b.x - a.x : a.y.dbl(); }
    // The sum, given 1 / denominator() when needs_inverse().
    HD affine_t<F> sum(const F& inv_den) const {
        affine_t<F> r;
        switch (kind) {
        case MSM_PAIR_FIRST: return a;
        case MSM_PAIR_SECOND: return b;
        case MSM_PAIR_INF: r.x = F::zero(); r.y = F::zero(); return r;
        default: break;
        }
        F num;
        if (kind == MSM_PAIR_ADD) {
            num = b.y - a.y;
        } else {
            const F xx = a.x.sqr();
            num = xx.dbl() + xx;
        }
        const F lambda = num * inv_den;
        r.x = lambda.sqr() - a.x - b.x;  // b.x = a.x for a doubling
        r.y = lambda * (a.x - r.x) - a.y;
        return r;
    }
};

// One thread per (set, P consecutive output positions), T threads a set. `idx`: round 0's
// sorted indices (`points` are then the MSM's points), or null (`points` are the previous
// round's, `in_stride` a set). `prefix`: P x (sets * T) field elements, position k of thread
// gid at k * sets * T + gid (consecutive threads, consecutive elements).
// K: pairs whose x's the forward pass loads together before multiplying any of them (it has
// one product a pair, little to hide a load's latency behind, two through round 0's indices).
// K = 2 fits 128 registers; on an H200 it beat K = 1, K = 4 (166 registers) and the forms
// that copied the backward pass's next pair into shared memory while summing this one
// (notes/gpu.md, stage 3b).
constexpr uint32_t MSM_AFFINE_ROUND_BATCH = 2;

template <class F>
HD void msm_affine_round_thread(uint32_t gid, const affine_t<F>* points, const uint32_t* idx, uint32_t in_stride,
                                const uint32_t* in_ends, const uint32_t* out_ends, const uint32_t* out_totals,
                                uint32_t sets, uint32_t B, uint32_t P, uint32_t T, uint32_t out_stride,
                                affine_t<F>* out, F* prefix) {
    const uint32_t w = gid / T, t = gid % T;
    if (w >= sets) return;
    const uint32_t total = out_totals[w], q0 = t * P;
    if (q0 >= total) return;
    const uint32_t q1 = q0 + P < total ? q0 + P : total;
    const uint32_t* ie = in_ends + (size_t)w * (B + 1);
    const uint32_t* oe = out_ends + (size_t)w * (B + 1);
    const affine_t<F>* src = idx ? points : points + (size_t)w * in_stride;
    const uint32_t* sidx = idx ? idx + (size_t)w * in_stride : nullptr;
    affine_t<F>* dst = out + (size_t)w * out_stride;
    const size_t pstride = (size_t)sets * T;
    // Forward: the running product of the denominators, kept at every position. Only the
    // x's are read, unless they are equal or 0 (the infinity; no point of G1 has x = 0), where
    // the y's decide what the pair is. A batch's loads all go out before its first product
    // (past q1 the batch repeats its last pair, unused).
    uint32_t bkt = msm_bucket_at(oe, B, q0);
    F acc = F::one();
    constexpr uint32_t K = MSM_AFFINE_ROUND_BATCH;
    for (uint32_t qb = q0; qb < q1; qb += K) {
        uint32_t ia[K], ib[K], has_b = 0;
#pragma unroll
        for (uint32_t k = 0; k < K; k++) {
            const uint32_t q = qb + k < q1 ? qb + k : q1 - 1;
            bkt = msm_affine_bucket_near(oe, bkt, q);
            const msm_affine_slot s(ie, oe, bkt, q);
            ia[k] = s.i0;
            ib[k] = s.has_b ? s.i0 + 1 : s.i0;
            has_b |= (uint32_t)s.has_b << k;
        }
        F xa[K], xb[K];
#pragma unroll
        for (uint32_t k = 0; k < K; k++) {
            xa[k] = msm_affine_round_load_x(src, sidx, ia[k]);
            xb[k] = msm_affine_round_load_x(src, sidx, ib[k]);
        }
#pragma unroll
        for (uint32_t k = 0; k < K; k++) {
            const uint32_t q = qb + k;
            if (q >= q1) break;
            if (has_b >> k & 1) {
                if (!xa[k].is_zero() && !xb[k].is_zero() && !xa[k].eq(xb[k])) {
                    acc = acc * (xb[k] - xa[k]);
                } else {
                    bkt = msm_affine_bucket_near(oe, bkt, q);
                    const msm_affine_pair<F> pr(src, sidx, msm_affine_slot(ie, oe, bkt, q));
                    if (pr.needs_inverse()) acc = acc * pr.denominator();
                }
            }
            prefix[(size_t)(q - q0) * pstride + gid] = acc;
        }
    }
    // Backward: inv is 1 / (the product up to q); the product before q turns it into
    // 1 / denominator(q), and denominator(q) into 1 / (the product before q).
    F inv = acc.inverse();
    for (uint32_t q = q1; q-- > q0;) {
        const F before = q > q0 ? prefix[(size_t)(q - q0 - 1) * pstride + gid] : F::one();
        bkt = msm_affine_bucket_near(oe, bkt, q);
        const msm_affine_pair<F> pr(src, sidx, msm_affine_slot(ie, oe, bkt, q));
        F inv_den = inv;
        if (pr.needs_inverse()) {
            if (q > q0) inv_den = inv * before;
            inv = inv * pr.denominator();
        }
        dst[q] = pr.sum(inv_den);
    }
}

// 4. one thread per (window, slice of L sorted entries); T slices per window.
// Stages 4-7 are templates over the coordinate field F: fp_t for G1, fp2_t for G2.
// `sorted_idx` null: the entries are the points themselves, window w's at points + w * n
// (the last affine round's list, stage 3b).
template <class F>
HD void msm_accumulate_thread(uint32_t gid, const affine_t<F>* points, const uint32_t* sorted_idx,
                              const uint32_t* ends /* cursors after the scatter */, const uint32_t* totals, uint32_t n,
                              uint32_t nwin, uint32_t L, uint32_t T, uint32_t B,
                              xyzz_t<F>* buckets, xyzz_t<F>* pieces, uint32_t* piece_bkt) {
    uint32_t w = gid / T, t = gid % T;
    if (w >= nwin) return;
    size_t p0 = (size_t)w * 2 * T + 2 * (size_t)t;
    uint32_t cnt = totals[w];
    uint32_t start = t * L;
    if (start >= cnt) {
        piece_bkt[p0] = CUZK_PIECE_EMPTY;
        piece_bkt[p0 + 1] = CUZK_PIECE_EMPTY;
        return;
    }
    uint32_t end = start + L < cnt ? start + L : cnt;
    const uint32_t* idx = sorted_idx ? sorted_idx + (size_t)w * n : nullptr;
    const affine_t<F>* wpts = sorted_idx ? points : points + (size_t)w * n;
    const uint32_t* wend = ends + (size_t)w * (B + 1);
    xyzz_t<F> acc = xyzz_t<F>::inf();
    // The next entry's point is loaded while this one is added: the gathers are random
    // (DRAM latency once the points outgrow L2) and the addition is long enough to hide them.
    // (Holding it in shared memory via cp.async instead freed only 5 registers; at 128
    // registers for a 4th block per SM the accumulation spilled and ran 40% slower on an
    // H200: notes/gpu.md.)
    // b_next: the bucket of the next entry; its run ends at `bound`.
    uint32_t e_next = idx ? idx[start] : start, b_next = msm_bucket_at(wend, B, start), bound = wend[b_next];
    affine_t<F> pt_next = cuzk_load_affine(wpts + (e_next & 0x7fffffffu));
    uint32_t cur = b_next;
    bool first = true;
    for (uint32_t j = start; j < end; j++) {
        const uint32_t e = e_next, b = b_next;
        const affine_t<F> pt = pt_next;
        if (j + 1 < end) {
            e_next = idx ? idx[j + 1] : j + 1;
            while (bound <= j + 1) bound = wend[++b_next];  // skips empty buckets too
            pt_next = cuzk_load_affine(wpts + (e_next & 0x7fffffffu));
        }
        if (b != cur) {
            if (first) {
                pieces[p0] = acc;
                piece_bkt[p0] = cur;
                first = false;
            } else {
                buckets[(size_t)w * B + cur - 1] = acc;  // whole bucket, owned by this thread
            }
            acc = xyzz_t<F>::inf();
            cur = b;
        }
        if (!pt.is_inf()) acc.add_affine(pt.x, pt.y, (e >> 31) != 0);
    }
    if (first) {
        pieces[p0] = acc;
        piece_bkt[p0] = cur;
        piece_bkt[p0 + 1] = CUZK_PIECE_EMPTY;
    } else {
        pieces[p0 + 1] = acc;
        piece_bkt[p0 + 1] = cur;
    }
}

// 5. merges pieces, level by level: thread t of window w walks slots [t*G, (t+1)*G) of the
// S_in slots (buckets ascending, EMPTY slots skipped) and sums runs of equal bucket, exactly
// like stage 4 does with points: runs with a different bucket on both sides inside the chunk
// are whole buckets and are written; the first and last run go to out slots 2t and 2t+1 for
// the next level. When one chunk covers the window (S_in <= G) every run is whole. A bucket
// spread over many slices (skewed scalars) costs log_G(slices) levels of at most G additions,
// never one long serial chain.
template <class F>
HD void msm_merge_pieces_thread(uint32_t gid, const xyzz_t<F>* in_pc, const uint32_t* in_pb, uint32_t S_in,
                                uint32_t G, uint32_t nwin, uint32_t B, xyzz_t<F>* out_pc, uint32_t* out_pb,
                                xyzz_t<F>* buckets) {
    const uint32_t chunks = (S_in + G - 1) / G;
    const uint32_t w = gid / chunks, t = gid % chunks;
    if (w >= nwin) return;
    const bool last_level = chunks == 1;
    const xyzz_t<F>* pc = in_pc + (size_t)w * S_in;
    const uint32_t* pb = in_pb + (size_t)w * S_in;
    const size_t o0 = (size_t)w * 2 * chunks + 2 * (size_t)t;
    const uint32_t start = t * G, end = start + G < S_in ? start + G : S_in;
    xyzz_t<F> acc = xyzz_t<F>::inf();
    uint32_t cur = CUZK_PIECE_EMPTY;
    bool first = true;
    for (uint32_t j = start; j < end; j++) {
        const uint32_t b = pb[j];
        if (b == CUZK_PIECE_EMPTY) continue;
        if (b != cur) {
            if (cur != CUZK_PIECE_EMPTY) {
                if (first && !last_level) {
                    out_pc[o0] = acc;
                    out_pb[o0] = cur;
                } else {
                    buckets[(size_t)w * B + cur - 1] = acc;
                }
                first = false;
            }
            acc = pc[j];
            cur = b;
        } else {
            acc.add(pc[j]);
        }
    }
    if (last_level) {
        if (cur != CUZK_PIECE_EMPTY) buckets[(size_t)w * B + cur - 1] = acc;
        return;
    }
    if (cur == CUZK_PIECE_EMPTY) {  // nothing in this chunk
        out_pb[o0] = CUZK_PIECE_EMPTY;
        out_pb[o0 + 1] = CUZK_PIECE_EMPTY;
    } else if (first) {  // one run only
        out_pc[o0] = acc;
        out_pb[o0] = cur;
        out_pb[o0 + 1] = CUZK_PIECE_EMPTY;
    } else {
        out_pc[o0 + 1] = acc;
        out_pb[o0 + 1] = cur;
    }
}

// 6. one thread per (window, segment of m = B/K buckets): segment k holds buckets
// b in [k*m + 1, (k+1)*m]. Writes acc_k = sum S_b and tot_k = sum (b - k*m) S_b (running sum
// from the top), the weights relative to the segment's own base.
template <class F>
HD void msm_bucket_reduce_thread(uint32_t gid, const xyzz_t<F>* buckets, uint32_t nwin, uint32_t B,
                                 uint32_t K, xyzz_t<F>* tot_out, xyzz_t<F>* acc_out) {
    uint32_t w = gid / K, k = gid % K;
    if (w >= nwin) return;
    uint32_t m = B / K;
    const xyzz_t<F>* bw = buckets + (size_t)w * B;
    xyzz_t<F> acc = xyzz_t<F>::inf(), tot = xyzz_t<F>::inf();
    for (uint32_t b = (k + 1) * m; b > k * m; b--) {
        acc.add(bw[b - 1]);
        tot.add(acc);
    }
    tot_out[(size_t)w * K + k] = tot;
    acc_out[(size_t)w * K + k] = acc;
}

// 7. merges adjacent segment pairs, level l = 0 .. log2(K)-1, one thread per pair: the lower
// segment L = t*2^(l+1) spans m*2^l buckets, so relative to L's base the upper segment's
// weights grow by m*2^l: tot_L += tot_H + 2^(log2(m)+l) * acc_H (doublings), acc_L += acc_H.
// The last level writes the window's sum to out[w].
template <class F>
HD void msm_tree_reduce_thread(uint32_t gid, xyzz_t<F>* tot, xyzz_t<F>* acc, uint32_t nwin, uint32_t K,
                               uint32_t log_m, uint32_t l, xyzz_t<F>* out) {
    uint32_t pairs = K >> (l + 1);
    uint32_t w = gid / pairs, t = gid % pairs;
    if (w >= nwin) return;
    size_t L = (size_t)w * K + ((size_t)t << (l + 1)), H = L + ((size_t)1 << l);
    xyzz_t<F> a = acc[H];
    for (uint32_t i = 0; i < log_m + l; i++) a = a.dbl();
    xyzz_t<F> r = tot[L];
    r.add(tot[H]);
    r.add(a);
    if (pairs == 1) {
        out[w] = r;
    } else {
        tot[L] = r;
        xyzz_t<F> s = acc[L];
        s.add(acc[H]);
        acc[L] = s;
    }
}
