// G1 Pippenger MSM, one device pass per stage. Each stage is a per-thread function (`*_thread`)
// that the kernels in cuzk.cu call with their global thread id, and that the host test
// (cuda/test/host_test.cpp) calls in a plain loop, so the whole pipeline is checked without a GPU.
//
// Stages (n points, c-bit windows, nwin = ceil(256/c) windows, B = 2^(c-1) buckets/window):
//  1. scalars_hist: Montgomery -> canonical scalar (in place), signed digits
//     d_w in (-2^(c-1), 2^(c-1)], histogram of |d_w| per window (atomics).
//  2. scan: exclusive prefix sum of each window's histogram -> write cursors, totals.
//  3. scatter: counting sort: (point index | sign << 31) and bucket id in bucket order.
//  4. accumulate: window w's sorted list is cut into equal slices of L entries, one thread
//     each, so a bucket with many points (scalars that repeat, e.g. 0/1-heavy witnesses) is
//     spread over many threads. Runs that start and end inside a slice are whole buckets and
//     are written directly; the first/last run of a slice may continue in a neighbour and is
//     written as a "piece".
//  5. pieces: the first piece of each bucket sums the bucket's following pieces.
//  6. bucket_reduce: sum_b b*S_b by running sums over K segments per window.
//  7. tree_reduce: K segment results -> one point per window.
//  The host combines the windows: sum_w 2^(c*w) * W_w.
#pragma once
#include "g1.cuh"

#define CUZK_PIECE_EMPTY 0xffffffffu

#if defined(__CUDA_ARCH__)
__device__ __forceinline__ uint32_t cuzk_atomic_add(uint32_t* p, uint32_t v) { return atomicAdd(p, v); }
#else
static inline uint32_t cuzk_atomic_add(uint32_t* p, uint32_t v) { uint32_t o = *p; *p = o + v; return o; }
#endif

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

// 1. one thread per scalar
HD void msm_scalars_hist_thread(uint32_t i, fr_t* scalars, uint32_t n, uint32_t c, uint32_t nwin,
                                uint32_t* hist /* nwin x (B+1) */) {
    if (i >= n) return;
    fr_t s = scalars[i].from_mont();
    scalars[i] = s;
    uint32_t stride = (1u << (c - 1)) + 1, carry = 0;
    for (uint32_t w = 0; w < nwin; w++) {
        bool neg;
        uint32_t b = cuzk_signed_digit(s, w, c, carry, neg);
        if (b != 0) cuzk_atomic_add(&hist[w * stride + b], 1);
    }
}

// 2. one thread per window: exclusive scan of that window's histogram, in place, so that
// hist becomes the scatter cursors; totals[w] = number of non-zero digits in window w.
HD void msm_scan_thread(uint32_t w, uint32_t* hist, uint32_t c, uint32_t nwin, uint32_t* totals) {
    if (w >= nwin) return;
    uint32_t stride = (1u << (c - 1)) + 1;
    uint32_t* h = hist + (size_t)w * stride;
    uint32_t sum = 0;
    for (uint32_t b = 0; b < stride; b++) {
        uint32_t x = h[b];
        h[b] = sum;
        sum += x;
    }
    totals[w] = sum;
}

// 3. one thread per scalar (canonical now)
HD void msm_scatter_thread(uint32_t i, const fr_t* scalars, uint32_t n, uint32_t c, uint32_t nwin,
                           uint32_t* cursor, uint32_t* sorted_idx, uint32_t* sorted_bkt) {
    if (i >= n) return;
    fr_t s = scalars[i];
    uint32_t stride = (1u << (c - 1)) + 1, carry = 0;
    for (uint32_t w = 0; w < nwin; w++) {
        bool neg;
        uint32_t b = cuzk_signed_digit(s, w, c, carry, neg);
        if (b != 0) {
            uint32_t pos = cuzk_atomic_add(&cursor[w * stride + b], 1);
            sorted_idx[(size_t)w * n + pos] = i | (neg ? 0x80000000u : 0);
            sorted_bkt[(size_t)w * n + pos] = b;
        }
    }
}

// 4. one thread per (window, slice of L sorted entries); T slices per window.
HD void msm_accumulate_thread(uint32_t gid, const g1_affine_t* points, const uint32_t* sorted_idx,
                              const uint32_t* sorted_bkt, const uint32_t* totals, uint32_t n,
                              uint32_t nwin, uint32_t L, uint32_t T, uint32_t B,
                              g1_xyzz_t* buckets, g1_xyzz_t* pieces, uint32_t* piece_bkt) {
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
    const uint32_t* idx = sorted_idx + (size_t)w * n;
    const uint32_t* bkt = sorted_bkt + (size_t)w * n;
    g1_xyzz_t acc = g1_xyzz_t::inf();
    uint32_t cur = bkt[start];
    bool first = true;
    for (uint32_t j = start; j < end; j++) {
        uint32_t b = bkt[j];
        if (b != cur) {
            if (first) {
                pieces[p0] = acc;
                piece_bkt[p0] = cur;
                first = false;
            } else {
                buckets[(size_t)w * B + cur - 1] = acc;  // whole bucket, owned by this thread
            }
            acc = g1_xyzz_t::inf();
            cur = b;
        }
        uint32_t e = idx[j];
        const g1_affine_t& pt = points[e & 0x7fffffffu];
        if (!pt.is_inf()) acc.add_affine(pt.x, (e >> 31) ? pt.y.neg() : pt.y);
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

// 5. one thread per piece slot (2T per window). Slots hold buckets in ascending order; only
// odd slots (a slice's last run) or whole trailing slices are empty.
HD void msm_pieces_thread(uint32_t gid, const g1_xyzz_t* pieces, const uint32_t* piece_bkt,
                          uint32_t nwin, uint32_t T, uint32_t B, g1_xyzz_t* buckets) {
    uint32_t S = 2 * T;
    uint32_t w = gid / S, k = gid % S;
    if (w >= nwin) return;
    const uint32_t* pb = piece_bkt + (size_t)w * S;
    const g1_xyzz_t* pc = pieces + (size_t)w * S;
    uint32_t b = pb[k];
    if (b == CUZK_PIECE_EMPTY) return;
    if (k > 0) {
        uint32_t prev = pb[k - 1];
        if (prev == CUZK_PIECE_EMPTY && k >= 2) prev = pb[k - 2];
        if (prev == b) return;  // not the first piece of this bucket
    }
    g1_xyzz_t acc = pc[k];
    for (uint32_t j = k + 1; j < S; j++) {
        uint32_t bj = pb[j];
        if (bj == CUZK_PIECE_EMPTY) {
            if ((j & 1) == 0) break;  // an empty slice: nothing follows
            continue;
        }
        if (bj != b) break;
        acc.add(pc[j]);
    }
    buckets[(size_t)w * B + b - 1] = acc;
}

// 6. one thread per (window, segment of m = B/K buckets): segment k holds buckets
// b in [k*m + 1, (k+1)*m]; the running sum gives sum (b - k*m) S_b, plus k*m * sum S_b.
HD void msm_bucket_reduce_thread(uint32_t gid, const g1_xyzz_t* buckets, uint32_t nwin, uint32_t B,
                                 uint32_t K, g1_xyzz_t* partial) {
    uint32_t w = gid / K, k = gid % K;
    if (w >= nwin) return;
    uint32_t m = B / K;
    const g1_xyzz_t* bw = buckets + (size_t)w * B;
    g1_xyzz_t acc = g1_xyzz_t::inf(), tot = g1_xyzz_t::inf();
    for (uint32_t b = (k + 1) * m; b > k * m; b--) {
        acc.add(bw[b - 1]);
        tot.add(acc);
    }
    if (k != 0) tot.add(acc.mul_u32(k * m));
    partial[(size_t)w * K + k] = tot;
}

// 7. one thread per (window, t < s); launched for s = K/2, K/4, ..., 1. The last step writes
// the window's sum to out[w].
HD void msm_tree_reduce_thread(uint32_t gid, g1_xyzz_t* partial, uint32_t nwin, uint32_t K, uint32_t s,
                               g1_xyzz_t* out) {
    uint32_t w = gid / s, t = gid % s;
    if (w >= nwin) return;
    g1_xyzz_t a = partial[(size_t)w * K + t];
    a.add(partial[(size_t)w * K + t + s]);
    if (s == 1) out[w] = a;
    else partial[(size_t)w * K + t] = a;
}
