// Host check of the device arithmetic and of the MSM pipeline (G1 and G2), without a GPU: the per-thread
// stage functions of msm.cuh run in plain loops (one "thread" at a time, so atomics are plain
// adds) against big-integer vectors from gen_vectors.py. Run: scripts/cuda-host-test.sh
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>
#include <vector>
#include "../msm.cuh"
#include "../ntt.cuh"

static bool read_fe(FILE* f, uint32_t* v, int n) {
    for (int i = 0; i < n; i++)
        if (fscanf(f, "%x", &v[i]) != 1) return false;
    return true;
}
template <class F> static void print(const char* what, const F& a) {
    printf("%s:", what);
    for (int i = F::N - 1; i >= 0; i--) printf(" %08x", a.v[i]);
    printf("\n");
}

static fp2_t fp2_inv(const fp2_t& a) {
    fp_t t = (a.c0.sqr() + a.c1.sqr()).inverse();
    fp2_t r;
    r.c0 = a.c0 * t;
    r.c1 = (a.c1 * t).neg();
    return r;
}

static bool read_fp2(FILE* f, fp2_t& a) { return read_fe(f, a.c0.v, 12) && read_fe(f, a.c1.v, 12); }
static bool eq2(const fp2_t& a, const fp2_t& b) { return a.c0.eq(b.c0) && a.c1.eq(b.c1); }
static fp_t canon(const fp_t& a) { return a.from_mont(); }
static fp2_t canon(const fp2_t& a) { fp2_t r; r.c0 = a.c0.from_mont(); r.c1 = a.c1.from_mont(); return r; }
static fp_t inv(const fp_t& a) { return a.inverse(); }
static fp2_t inv(const fp2_t& a) { return fp2_inv(a); }
static bool same(const fp_t& a, const fp_t& b) { return a.eq(b); }
static bool same(const fp2_t& a, const fp2_t& b) { return eq2(a, b); }

// Runs the device pipeline stage by stage, as src/gpu/msm.rs launches it, over G1 (F = fp_t)
// or G2 (F = fp2_t).
// Stage 2 as src/gpu/msm.rs launches it: chunk sums, per-window scan of the sums, chunk scans.
static void scan_emulated(std::vector<uint32_t>& hist, uint32_t c, uint32_t nwin, uint32_t CH, std::vector<uint32_t>& totals) {
    uint32_t nch = msm_scan_chunks(c, CH);
    std::vector<uint32_t> chunk_sums((size_t)nwin * nch);
    for (uint32_t g = 0; g < nwin * nch; g++) msm_scan_chunk_sums_thread(g, hist.data(), c, nwin, CH, chunk_sums.data());
    for (uint32_t w = 0; w < nwin; w++) msm_scan_chunk_offsets_thread(w, chunk_sums.data(), c, nwin, CH, totals.data());
    for (uint32_t g = 0; g < nwin * nch; g++) msm_scan_apply_thread(g, hist.data(), c, nwin, CH, chunk_sums.data());
}

// With `windowed` (G1 only) the points are expanded into window points first (stage 0) and
// every window shares one bucket set, as src/gpu/msm.rs runs an MSM over window points.
// `rounds` > 0 (G1, per-window sets): that many affine rounds (stage 3b) of P pairs a thread,
// `affine_group` windows at a time, before the accumulation, as src/gpu/msm.rs runs them.
template <class F>
static xyzz_t<F> msm_emulated(const std::vector<affine_t<F>>& pts, std::vector<fr_t> sc, uint32_t c, uint32_t L, uint32_t Kmax,
                              uint32_t CH, bool windowed = false, uint32_t rounds = 0, uint32_t P = 1, uint32_t affine_group = 1) {
    uint32_t n = pts.size();
    uint32_t nwin = (256 + c - 1) / c, B = 1u << (c - 1), stride = B + 1;
    // The accumulation's view: `sets` sorted lists (windows, or one shared) of `per_set` entries.
    uint32_t sets = windowed ? 1 : nwin, per_set = windowed ? nwin * n : n;
    uint32_t T = (per_set + L - 1) / L;
    uint32_t K = B < Kmax ? B : Kmax;
    std::vector<affine_t<F>> wpts;
    if constexpr (std::is_same<F, fp_t>::value) {
        if (windowed) {
            wpts.resize((size_t)nwin * n);
            for (uint32_t i = 0; i < n; i++) msm_window_points_thread(i, pts.data(), n, c, nwin, wpts.data());
        }
    }
    const affine_t<F>* points = windowed ? wpts.data() : pts.data();
    std::vector<uint32_t> hist(sets * stride, 0), totals(sets), sidx(nwin * n), pbkt(sets * 2 * T);
    std::vector<xyzz_t<F>> buckets(sets * B, xyzz_t<F>::inf()), pieces(sets * 2 * T), tot(sets * K), acc(sets * K), out(sets);
    // The histogram and the scatter in one pass each, or (odd CH, to vary it) one pass per
    // window, as MsmTuning::hist_windows and scatter_windows split them; only the first
    // histogram pass converts the scalars from Montgomery form. With CH a multiple of 4 the
    // scatter goes by density, as src/gpu/msm.rs runs it by default: a pass per window with
    // at least n/8 entries, then one pass over the windows with fewer.
    const uint32_t group = CH % 2 ? 1 : nwin;
    for (uint32_t w0 = 0; w0 < nwin; w0 += group)
        for (uint32_t i = 0; i < n; i++)
            msm_scalars_hist_thread(i, sc.data(), n, c, w0, std::min(w0 + group, nwin), windowed, w0 == 0, hist.data());
    scan_emulated(hist, c, sets, CH, totals);
    auto scatter = [&](uint32_t w0, uint32_t w1, uint32_t lo, uint32_t hi) {
        for (uint32_t i = 0; i < n; i++)
            msm_scatter_thread(i, sc.data(), n, c, w0, w1, windowed, totals.data(), lo, hi, hist.data(), sidx.data());
    };
    if (CH % 4 == 0) {
        const uint32_t alone = std::max(1u, n / 8);
        for (uint32_t w = 0; w < nwin; w++) scatter(w, w + 1, alone, UINT32_MAX);
        scatter(0, nwin, 0, alone);
    } else {
        for (uint32_t w0 = 0; w0 < nwin; w0 += group) scatter(w0, std::min(w0 + group, nwin), 0, UINT32_MAX);
    }
    nwin = sets;  // stages 4-7 see only the bucket sets
    n = per_set;
    if (rounds == 0 || windowed || !std::is_same<F, fp_t>::value) {
        for (uint32_t g = 0; g < nwin * T; g++)
            msm_accumulate_thread(g, points, sidx.data(), hist.data(), totals.data(), n, nwin, L, T, B, buckets.data(), pieces.data(), pbkt.data());
    } else if constexpr (std::is_same<F, fp_t>::value) {
        // Each round's list holds at most cap entries a set: sum ceil(k_b / 2) <= (entries + B) / 2.
        std::vector<uint32_t> caps(rounds);
        for (uint32_t r = 0, prev = n; r < rounds; r++) prev = caps[r] = (prev + B + 1) / 2;
        const uint32_t Ta = (std::max(caps[rounds - 1], 1u) + L - 1) / L;  // accumulation slices a set
        pieces.assign(sets * 2 * std::max(T, Ta), xyzz_t<F>::inf());
        pbkt.assign(sets * 2 * std::max(T, Ta), 0);
        T = Ta;
        for (uint32_t g0 = 0; g0 < sets; g0 += affine_group) {
            const uint32_t gs = std::min(affine_group, sets - g0);
            const affine_t<F>* src = points;
            const uint32_t* idx = sidx.data() + (size_t)g0 * n;
            uint32_t in_stride = n;
            std::vector<uint32_t> in_ends(hist.begin() + (size_t)g0 * stride, hist.begin() + (size_t)(g0 + gs) * stride);
            std::vector<uint32_t> out_ends, out_tot(gs);
            std::vector<affine_t<F>> bufs[2];
            for (uint32_t r = 0; r < rounds; r++) {
                out_ends.assign((size_t)gs * stride, 0);
                for (uint32_t g = 0; g < gs * stride; g++) msm_affine_counts_thread(g, in_ends.data(), gs, B, out_ends.data());
                scan_emulated(out_ends, c, gs, CH, out_tot);
                const uint32_t Tr = (caps[r] + P - 1) / P;
                std::vector<F> prefix((size_t)P * gs * Tr);
                bufs[r % 2].assign((size_t)gs * caps[r], affine_t<F>{});
                for (uint32_t g = 0; g < gs * Tr; g++)
                    msm_affine_round_thread<F>(g, src, idx, in_stride, in_ends.data(), out_ends.data(), out_tot.data(), gs,
                                               B, P, Tr, caps[r], bufs[r % 2].data(), prefix.data());
                src = bufs[r % 2].data();
                idx = nullptr;
                in_stride = caps[r];
                in_ends.swap(out_ends);
            }
            for (uint32_t g = 0; g < gs * T; g++)
                msm_accumulate_thread(g, src, nullptr, in_ends.data(), out_tot.data(), in_stride, gs, L, T, B,
                                      buckets.data() + (size_t)g0 * B, pieces.data() + (size_t)g0 * 2 * T,
                                      pbkt.data() + (size_t)g0 * 2 * T);
        }
    }
    {
        // The same level loop as src/gpu/msm.rs, with G = L + 3 to vary the chunking.
        const uint32_t G = L + 3;  // G >= 4, or a level need not shrink (2*ceil(S/G) < S)
        std::vector<xyzz_t<F>> pc2(nwin * 2 * T);
        std::vector<uint32_t> pb2(nwin * 2 * T);
        xyzz_t<F> *in_pc = pieces.data(), *out_pc = pc2.data();
        uint32_t *in_pb = pbkt.data(), *out_pb = pb2.data();
        uint32_t S = 2 * T;
        for (;;) {
            uint32_t chunks = (S + G - 1) / G;
            for (uint32_t g = 0; g < nwin * chunks; g++)
                msm_merge_pieces_thread(g, in_pc, in_pb, S, G, nwin, B, out_pc, out_pb, buckets.data());
            if (chunks == 1) break;
            S = 2 * chunks;
            std::swap(in_pc, out_pc);
            std::swap(in_pb, out_pb);
        }
    }
    for (uint32_t g = 0; g < nwin * K; g++) msm_bucket_reduce_thread(g, buckets.data(), nwin, B, K, tot.data(), acc.data());
    uint32_t log_m = 0;
    while ((K << log_m) < B) log_m++;
    for (uint32_t l = 0; (K >> (l + 1)) >= 1; l++)
        for (uint32_t g = 0; g < nwin * (K >> (l + 1)); g++)
            msm_tree_reduce_thread(g, tot.data(), acc.data(), nwin, K, log_m, l, out.data());
    xyzz_t<F> r = out[nwin - 1];  // window points: the one set's sum is the result
    for (int w = nwin - 2; w >= 0; w--) {
        for (uint32_t k = 0; k < c; k++) r = r.dbl();
        r.add(out[w]);
    }
    return r;
}

// The scan against its definition (a serial exclusive scan of each window's histogram, the
// totals being the window sums) for a histogram of window size c.
static bool scan_matches(const std::vector<uint32_t>& hist0, uint32_t c, uint32_t CH) {
    uint32_t nwin = (256 + c - 1) / c, stride = (1u << (c - 1)) + 1;
    std::vector<uint32_t> hist = hist0, totals(nwin, 0xdeadbeef);
    scan_emulated(hist, c, nwin, CH, totals);
    for (uint32_t w = 0; w < nwin; w++) {
        uint32_t sum = 0;
        for (uint32_t b = 0; b < stride; b++) {
            size_t i = (size_t)w * stride + b;
            if (hist[i] != sum) {
                printf("scan c=%u CH=%u: window %u entry %u is %u, want %u\n", c, CH, w, b, hist[i], sum);
                return false;
            }
            sum += hist0[i];
        }
        if (totals[w] != sum) {
            printf("scan c=%u CH=%u: total of window %u is %u, want %u\n", c, CH, w, totals[w], sum);
            return false;
        }
    }
    return true;
}

// Stages 1-3 for window sizes whose buckets are too many for the full pipeline here
// (c = 20 would need 13 x 2^19 XYZZ buckets): the scan as defined, and a scatter through its
// cursors that lists every non-zero digit exactly once, in bucket order.
static bool sort_matches(std::vector<fr_t> sc, uint32_t c, uint32_t CH) {
    uint32_t n = sc.size(), nwin = (256 + c - 1) / c, stride = (1u << (c - 1)) + 1;
    std::vector<uint32_t> hist((size_t)nwin * stride, 0), totals(nwin), sidx((size_t)nwin * n);
    for (uint32_t i = 0; i < n; i++) msm_scalars_hist_thread(i, sc.data(), n, c, 0, nwin, 0, 1, hist.data());
    if (!scan_matches(hist, c, CH)) return false;
    scan_emulated(hist, c, nwin, CH, totals);
    for (uint32_t i = 0; i < n; i++)
        msm_scatter_thread(i, sc.data(), n, c, 0, nwin, 0, totals.data(), 0, UINT32_MAX, hist.data(), sidx.data());
    // The sorted lists by definition: each window's non-zero digits, stably sorted by bucket
    // (the serial scatter here visits the scalars in index order).
    std::vector<uint32_t> want_idx((size_t)nwin * n), want_bkt((size_t)nwin * n), count(nwin, 0);
    std::vector<std::vector<std::pair<uint32_t, uint32_t>>> digits(nwin);  // (bucket, entry)
    for (uint32_t i = 0; i < n; i++) {
        uint32_t carry = 0;
        for (uint32_t w = 0; w < nwin; w++) {
            bool neg;
            uint32_t d = cuzk_signed_digit(sc[i], w, c, carry, neg);
            if (d != 0) digits[w].push_back({d, i | (neg ? 0x80000000u : 0)});
        }
    }
    for (uint32_t w = 0; w < nwin; w++) {
        std::stable_sort(digits[w].begin(), digits[w].end(),
                         [](const std::pair<uint32_t, uint32_t>& x, const std::pair<uint32_t, uint32_t>& y) { return x.first < y.first; });
        for (auto& d : digits[w]) {
            want_bkt[(size_t)w * n + count[w]] = d.first;
            want_idx[(size_t)w * n + count[w]++] = d.second;
        }
    }
    for (uint32_t w = 0; w < nwin; w++) {
        if (totals[w] != count[w]) {
            printf("sort c=%u CH=%u: window %u has %u entries, want %u\n", c, CH, w, totals[w], count[w]);
            return false;
        }
        for (uint32_t j = 0; j < count[w]; j++) {
            size_t k = (size_t)w * n + j;
            // The bucket as the accumulation derives it from the cursors.
            uint32_t bkt = msm_bucket_at(hist.data() + (size_t)w * stride, stride - 1, j);
            if (sidx[k] != want_idx[k] || bkt != want_bkt[k]) {
                printf("sort c=%u CH=%u: window %u entry %u is (%08x, %u), want (%08x, %u)\n", c, CH, w, j, sidx[k],
                       bkt, want_idx[k], want_bkt[k]);
                return false;
            }
        }
    }
    return true;
}

// Whether an XYZZ result is the affine point (wx, wy), given canonical (0, 0 for infinity).
template <class F>
static bool msm_matches(const xyzz_t<F>& r, const F& wx, const F& wy) {
    F gx = F::zero(), gy = F::zero();
    if (!r.is_inf()) {
        gx = canon(r.X * inv(r.ZZ));
        gy = canon(r.Y * inv(r.ZZZ));
    }
    return same(gx, wx) && same(gy, wy);
}

// Stage 0 against its definition: window point w*n + i is pts[i] doubled c*w times, in affine
// form (the infinity as (0, 0)).
static bool window_points_match(const std::vector<g1_affine_t>& pts, uint32_t c) {
    uint32_t n = pts.size(), nwin = (256 + c - 1) / c;
    std::vector<g1_affine_t> out((size_t)nwin * n);
    for (uint32_t i = 0; i < n; i++) msm_window_points_thread(i, pts.data(), n, c, nwin, out.data());
    for (uint32_t i = 0; i < n; i++) {
        g1_xyzz_t q = g1_xyzz_t::from_affine(pts[i]);
        for (uint32_t w = 0; w < nwin; w++) {
            const g1_affine_t& got = out[(size_t)w * n + i];
            fp_t wx = fp_t::zero(), wy = fp_t::zero();
            if (!q.is_inf()) {
                wx = q.X * inv(q.ZZ);
                wy = q.Y * inv(q.ZZZ);
            }
            if (!got.x.eq(wx) || !got.y.eq(wy)) {
                printf("window points c=%u: point %u window %u wrong\n", c, i, w);
                return false;
            }
            for (uint32_t k = 0; k < c; k++) q = q.dbl();
        }
    }
    return true;
}

int main(int argc, char** argv) {
    FILE* f = argc > 1 ? fopen(argv[1], "r") : stdin;
    if (!f) { perror("open"); return 2; }
    int fails = 0, checks = 0, nf;
    // The scan alone first, on histograms like those of 2^24 points (tens per bucket, some
    // buckets empty, a few large), every window size, chunks from 1 entry to more than a window.
    uint32_t rng = 12345;
    for (uint32_t c = 4; c <= 20; c++) {
        uint32_t nwin = (256 + c - 1) / c, stride = (1u << (c - 1)) + 1;
        std::vector<uint32_t> hist((size_t)nwin * stride);
        for (auto& h : hist) {
            rng = rng * 1664525u + 1013904223u;
            uint32_t r = rng >> 8;
            h = r % 8 == 0 ? 0 : r % 97 == 0 ? r % 5000 : r % 64;
        }
        const uint32_t chunks[] = {1, 7, 256, stride - 1, stride, stride + 5};
        for (uint32_t CH : chunks) {
            checks++;
            if (!scan_matches(hist, c, CH)) fails++;
        }
    }
    if (fails) {
        // The scatter writes through the cursors: wrong ones would write out of bounds.
        printf("%d passed, %d failed (scan; the pipeline checks are skipped)\n", checks - fails, fails);
        return 1;
    }
    if (fscanf(f, "%d", &nf) != 1) return 2;
    for (int i = 0; i < nf; i++) {
        fp_t a, b, m, s, d;
        read_fe(f, a.v, 12); read_fe(f, b.v, 12); read_fe(f, m.v, 12); read_fe(f, s.v, 12); read_fe(f, d.v, 12);
        checks += 3;
        if (!(a * b).eq(m)) { fails++; print("fp mul got", a * b); print("fp mul want", m); }
        // The squaring is its own code (cross products once, then a separate reduction).
        if (!a.sqr().eq(a * a) || !b.sqr().eq(b * b) || !m.sqr().eq(m * m)) { fails++; print("fp sqr got", a.sqr()); }
        if (!(a + b).eq(s)) { fails++; print("fp add got", a + b); }
        if (!(a - b).eq(d)) { fails++; print("fp sub got", a - b); }
    }
    for (int i = 0; i < nf; i++) {
        fr_t a, b, m;
        read_fe(f, a.v, 8); read_fe(f, b.v, 8); read_fe(f, m.v, 8);
        checks++;
        if (!(a * b).eq(m)) { fails++; print("fr mul got", a * b); print("fr mul want", m); }
        if (!a.sqr().eq(a * a) || !b.sqr().eq(b * b) || !m.sqr().eq(m * m)) { fails++; print("fr sqr got", a.sqr()); }
    }
    int ncases;
    if (fscanf(f, "%d", &ncases) != 1) return 2;
    for (int cs = 0; cs < ncases; cs++) {
        int n;
        if (fscanf(f, "%d", &n) != 1) return 2;
        std::vector<g1_affine_t> pts(n);
        std::vector<fr_t> sc(n);
        for (int i = 0; i < n; i++) { read_fe(f, pts[i].x.v, 12); read_fe(f, pts[i].y.v, 12); read_fe(f, sc[i].v, 8); }
        fp_t wx, wy;
        read_fe(f, wx.v, 12); read_fe(f, wy.v, 12);
        // c, L, K, scan chunk CH (chunks of 1, a partial last chunk, one partial chunk, ...)
        const uint32_t params[][4] = {{4, 1, 2, 1}, {5, 3, 4, 3}, {8, 2, 16, 256}, {13, 32, 256, 7}, {16, 7, 4096, 256}};
        for (auto& pr : params) {
            checks++;
            if (!msm_matches(msm_emulated(pts, sc, pr[0], pr[1], pr[2], pr[3]), wx, wy)) {
                fails++;
                printf("msm case %d (n=%d, c=%u, L=%u, K=%u, CH=%u) wrong\n", cs, n, pr[0], pr[1], pr[2], pr[3]);
            }
        }
        // Affine rounds (stage 3b): c, L, K, CH, rounds, pairs a thread, windows a group (P
        // not a multiple of the forward pass's batch in most).
        const uint32_t affine_params[][7] = {{4, 1, 2, 1, 1, 1, 1},       {4, 3, 4, 3, 3, 2, 5},    {5, 7, 8, 256, 2, 7, 64},
                                             {3, 2, 4, 5, 6, 3, 2},       {8, 2, 16, 256, 1, 64, 4}, {4, 3, 4, 3, 3, 5, 5},
                                             {8, 2, 16, 256, 1, 63, 4},   {5, 7, 8, 256, 2, 9, 64}, {8, 2, 16, 256, 2, 6, 4}};
        for (auto& pr : affine_params) {
            checks++;
            if (!msm_matches(msm_emulated(pts, sc, pr[0], pr[1], pr[2], pr[3], false, pr[4], pr[5], pr[6]), wx, wy)) {
                fails++;
                printf("affine msm case %d (n=%d, c=%u, L=%u, K=%u, CH=%u, rounds=%u, P=%u, group=%u) wrong\n", cs, n,
                       pr[0], pr[1], pr[2], pr[3], pr[4], pr[5], pr[6]);
            }
        }
        // Window points (stage 0 on its own, then whole MSMs over them with one bucket set);
        // window points need c >= 16 (at most CUZK_WINDOW_POINTS_MAX windows).
        checks++;
        if (!window_points_match(pts, 16 + cs % 3)) {
            fails++;
            printf("window points case %d wrong\n", cs);
        }
        const uint32_t windowed_params[][4] = {{16, 7, 4096, 256}, {16, 64, 256, 1}, {17, 5, 64, 1000}, {18, 33, 1024, 7}};
        for (auto& pr : windowed_params) {
            checks++;
            if (!msm_matches(msm_emulated(pts, sc, pr[0], pr[1], pr[2], pr[3], true), wx, wy)) {
                fails++;
                printf("windowed msm case %d (n=%d, c=%u, L=%u, K=%u, CH=%u) wrong\n", cs, n, pr[0], pr[1], pr[2], pr[3]);
            }
        }
        // Windows above 16 (up to MAX_WINDOW_BITS in src/gpu/types.rs) through the sort only.
        const uint32_t sort_params[][2] = {{17, 1}, {17, 256}, {18, 256}, {19, 1000}, {20, 256}, {20, 3}, {22, 1024}};
        for (auto& pr : sort_params) {
            checks++;
            if (!sort_matches(sc, pr[0], pr[1])) {
                fails++;
                printf("sort case %d (n=%d, c=%u, CH=%u) wrong\n", cs, n, pr[0], pr[1]);
            }
        }
    }
    // Fp2: a b a*b a^2
    int nf2;
    if (fscanf(f, "%d", &nf2) != 1) return 2;
    for (int i = 0; i < nf2; i++) {
        fp2_t a, b, m, q;
        read_fp2(f, a); read_fp2(f, b); read_fp2(f, m); read_fp2(f, q);
        checks += 2;
        if (!eq2(a * b, m)) { fails++; print("fp2 mul got c0", (a * b).c0); }
        if (!eq2(a.sqr(), q)) { fails++; print("fp2 sqr got c0", a.sqr().c0); }
    }
    // G2 MSMs through the same templated pipeline.
    if (fscanf(f, "%d", &ncases) != 1) return 2;
    for (int cs = 0; cs < ncases; cs++) {
        int n;
        if (fscanf(f, "%d", &n) != 1) return 2;
        std::vector<g2_affine_t> pts(n);
        std::vector<fr_t> sc(n);
        for (int i = 0; i < n; i++) { read_fp2(f, pts[i].x); read_fp2(f, pts[i].y); read_fe(f, sc[i].v, 8); }
        fp2_t wx, wy;
        read_fp2(f, wx); read_fp2(f, wy);
        const uint32_t params[][4] = {{4, 1, 2, 2}, {8, 2, 16, 5}, {13, 32, 256, 256}};
        for (auto& pr : params) {
            checks++;
            if (!msm_matches(msm_emulated(pts, sc, pr[0], pr[1], pr[2], pr[3]), wx, wy)) {
                fails++;
                printf("g2 msm case %d (n=%d, c=%u, L=%u, K=%u, CH=%u) wrong\n", cs, n, pr[0], pr[1], pr[2], pr[3]);
            }
        }
    }
    printf("%d passed, %d failed\n", checks - fails, fails);
    return fails ? 1 : 0;
}
