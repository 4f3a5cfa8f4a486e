// All cuzk kernels: thin __global__ wrappers that give each per-thread stage function
// (msm.cuh, ntt.cuh) its global thread id. extern "C" keeps the names unmangled for
// cuModuleGetFunction; src/gpu/kernels.rs has one typed wrapper per kernel, with the same
// parameters in the same order (keep the two in step).
#include "field.cuh"
#include "g1.cuh"
#include "g2.cuh"
#include "msm.cuh"
#include "ntt.cuh"

#define GID() (blockIdx.x * blockDim.x + threadIdx.x)

extern "C" __global__ void __launch_bounds__(128)
    cuzk_msm_window_points(const g1_affine_t* pts, uint32_t n, uint32_t c, uint32_t nwin, g1_affine_t* out) {
    msm_window_points_thread(GID(), pts, n, c, nwin, out);
}

extern "C" __global__ void cuzk_msm_scalars_hist(fr_t* scalars, uint32_t n, uint32_t c, uint32_t w0, uint32_t w1,
                                                 uint32_t shared, uint32_t from_mont, uint32_t* hist) {
    msm_scalars_hist_thread(GID(), scalars, n, c, w0, w1, shared, from_mont, hist);
}

extern "C" __global__ void cuzk_msm_scan_chunk_sums(const uint32_t* hist, uint32_t c, uint32_t nwin, uint32_t CH,
                                                     uint32_t* chunk_sums) {
    msm_scan_chunk_sums_thread(GID(), hist, c, nwin, CH, chunk_sums);
}

extern "C" __global__ void cuzk_msm_scan_chunk_offsets(uint32_t* chunk_sums, uint32_t c, uint32_t nwin, uint32_t CH,
                                                        uint32_t* totals) {
    msm_scan_chunk_offsets_thread(GID(), chunk_sums, c, nwin, CH, totals);
}

extern "C" __global__ void cuzk_msm_scan_apply(uint32_t* hist, uint32_t c, uint32_t nwin, uint32_t CH,
                                               const uint32_t* chunk_offsets) {
    msm_scan_apply_thread(GID(), hist, c, nwin, CH, chunk_offsets);
}

extern "C" __global__ void cuzk_msm_scatter(const fr_t* scalars, uint32_t n, uint32_t c, uint32_t w0, uint32_t w1,
                                            uint32_t shared, const uint32_t* totals, uint32_t lo, uint32_t hi,
                                            uint32_t* cursor, uint32_t* sorted_idx) {
    msm_scatter_thread(GID(), scalars, n, c, w0, w1, shared, totals, lo, hi, cursor, sorted_idx);
}

extern "C" __global__ void cuzk_msm_affine_counts(const uint32_t* in_ends, uint32_t sets, uint32_t B, uint32_t* out_h) {
    msm_affine_counts_thread(GID(), in_ends, sets, B, out_h);
}

// 4 blocks of 128 per SM: 128 registers, which the round takes without spills on sm_90.
extern "C" __global__ void __launch_bounds__(128, 4)
    cuzk_msm_affine_round(const g1_affine_t* points, const uint32_t* idx, uint32_t in_stride, const uint32_t* in_ends,
                          const uint32_t* out_ends, const uint32_t* out_totals, uint32_t sets, uint32_t B, uint32_t P,
                          uint32_t T, uint32_t out_stride, g1_affine_t* out, fp_t* prefix) {
    msm_affine_round_thread<fp_t>(GID(), points, idx, in_stride, in_ends, out_ends, out_totals, sets, B, P, T,
                                  out_stride, out, prefix);
}

#define CUZK_ACCUMULATE_ARGS                                                                                      \
    const g1_affine_t *points, const uint32_t *sorted_idx, const uint32_t *ends, const uint32_t *totals,         \
        uint32_t n, uint32_t nwin, uint32_t L, uint32_t T, uint32_t B, g1_xyzz_t *buckets, g1_xyzz_t *pieces,     \
        uint32_t *piece_bkt
#define CUZK_ACCUMULATE_CALL \
    msm_accumulate_thread(GID(), points, sorted_idx, ends, totals, n, nwin, L, T, B, buckets, pieces, piece_bkt)

// 3 blocks of 128 per SM: caps registers at 170 so the prefetch does not cost occupancy.
// (4 blocks, i.e. 128 registers, spilled and ran 15-20% slower on an H200: notes/gpu.md.)
extern "C" __global__ void __launch_bounds__(128, 3) cuzk_msm_accumulate(CUZK_ACCUMULATE_ARGS) { CUZK_ACCUMULATE_CALL; }

extern "C" __global__ void cuzk_msm_merge_pieces(const g1_xyzz_t* in_pc, const uint32_t* in_pb, uint32_t S_in,
                                                 uint32_t G, uint32_t nwin, uint32_t B, g1_xyzz_t* out_pc,
                                                 uint32_t* out_pb, g1_xyzz_t* buckets) {
    msm_merge_pieces_thread(GID(), in_pc, in_pb, S_in, G, nwin, B, out_pc, out_pb, buckets);
}

extern "C" __global__ void cuzk_msm_bucket_reduce(const g1_xyzz_t* buckets, uint32_t nwin, uint32_t B, uint32_t K,
                                                  g1_xyzz_t* tot, g1_xyzz_t* acc) {
    msm_bucket_reduce_thread(GID(), buckets, nwin, B, K, tot, acc);
}

extern "C" __global__ void cuzk_msm_tree_reduce(g1_xyzz_t* tot, g1_xyzz_t* acc, uint32_t nwin, uint32_t K,
                                                uint32_t log_m, uint32_t l, g1_xyzz_t* out) {
    msm_tree_reduce_thread(GID(), tot, acc, nwin, K, log_m, l, out);
}

// G2 (B_g2): the same stages over Fp2. A G2 XYZZ accumulator alone is 96 registers, so the
// accumulation gets the whole register file of one block per SM slot (255 per thread).
extern "C" __global__ void __launch_bounds__(128, 1)
    cuzk_msm_accumulate_g2(const g2_affine_t* points, const uint32_t* sorted_idx, const uint32_t* ends,
                           const uint32_t* totals, uint32_t n, uint32_t nwin, uint32_t L, uint32_t T, uint32_t B,
                           g2_xyzz_t* buckets, g2_xyzz_t* pieces, uint32_t* piece_bkt) {
    msm_accumulate_thread(GID(), points, sorted_idx, ends, totals, n, nwin, L, T, B, buckets, pieces, piece_bkt);
}

extern "C" __global__ void __launch_bounds__(128, 1)
    cuzk_msm_merge_pieces_g2(const g2_xyzz_t* in_pc, const uint32_t* in_pb, uint32_t S_in, uint32_t G,
                             uint32_t nwin, uint32_t B, g2_xyzz_t* out_pc, uint32_t* out_pb, g2_xyzz_t* buckets) {
    msm_merge_pieces_thread(GID(), in_pc, in_pb, S_in, G, nwin, B, out_pc, out_pb, buckets);
}

extern "C" __global__ void __launch_bounds__(128, 1)
    cuzk_msm_bucket_reduce_g2(const g2_xyzz_t* buckets, uint32_t nwin, uint32_t B, uint32_t K, g2_xyzz_t* tot,
                              g2_xyzz_t* acc) {
    msm_bucket_reduce_thread(GID(), buckets, nwin, B, K, tot, acc);
}

extern "C" __global__ void __launch_bounds__(128, 1)
    cuzk_msm_tree_reduce_g2(g2_xyzz_t* tot, g2_xyzz_t* acc, uint32_t nwin, uint32_t K, uint32_t log_m, uint32_t l,
                            g2_xyzz_t* out) {
    msm_tree_reduce_thread(GID(), tot, acc, nwin, K, log_m, l, out);
}

extern "C" __global__ void cuzk_ntt_powers(fr_t* out, const fr_t* pw, uint32_t count) {
    ntt_powers_thread(GID(), out, pw, count);
}

extern "C" __global__ void cuzk_ntt_scale(fr_t* v, const fr_t* pw, fr_t factor, const fr_t* minus, uint32_t n) {
    ntt_scale_thread(GID(), v, pw, factor, minus, n);
}

// a[i] = a[i] * b[i]: the quotient's product on the coset (c comes off after the inverse
// transform, in cuzk_ntt_scale).
extern "C" __global__ void cuzk_ntt_pointwise_mul(fr_t* a, const fr_t* b, uint32_t n) {
    uint32_t i = GID();
    if (i < n) a[i] = a[i] * b[i];
}

// The NTT tile kernels come in two builds: radix-8 steps (8 elements per thread in registers,
// three stages per barrier; about 134 registers) and radix-4 steps (4 per thread, two per
// barrier; about 80 registers, so more warps per SM to hide the carry chains' latency; a
// bound of 64 registers for a fourth block per SM spilled a few bytes and ran no faster on an
// H200; radix 4 is bounded to three blocks of 256 threads, 80 registers: registers go to a
// warp in units of 256, so 81 to 88 a thread would leave room for two). `NttTuning::radix`
// picks one (src/gpu/kernels.rs). Either runs both tile
// geometries (ntt.cuh): the tile is dynamic shared memory of 32 * elements bytes, sized at
// launch (64 KB needs the function's opt-in, set where the context loads the module).

// The barrier between a tile's steps.
struct cuzk_block_sync {
    __device__ __forceinline__ void operator()() const { __syncthreads(); }
};

extern __shared__ uint4 cuzk_ntt_tile[];

// The bit-reversal gather and the first sl stages (sl = min(log_n, tile_log)) in one pass:
// block b owns dst[b*bs, (b+1)*bs), bs = 2^sl. Out of place because the gather reads
// elements that other blocks own.
template <int R>
__device__ __forceinline__ void ntt_first_stages(const fr_t* src, fr_t* dst, const fr_t* tw, uint32_t log_n, uint32_t sl) {
    const uint32_t bs = 1u << sl, base = blockIdx.x * bs, t = threadIdx.x, nt = blockDim.x;
    const ntt_smem_t sh = {reinterpret_cast<uint32_t*>(cuzk_ntt_tile), bs};
    for (uint32_t u = t; u < bs; u += nt) sh.set(u, src[cuzk_bitrev(base + u, log_n)]);
    __syncthreads();
    const ntt_tile_t tile = {base, 0, 0, log_n};
    ntt_tile_all_stages<R>(sh, tw, tile, bs, sl, t, nt, cuzk_block_sync{});
    for (uint32_t u = t; u < bs; u += nt) dst[base + u] = sh.get(u);
}

extern "C" __global__ void __launch_bounds__(CUZK_NTT_THREADS_R8)
    cuzk_ntt_first_stages_r8(const fr_t* src, fr_t* dst, const fr_t* tw, uint32_t log_n, uint32_t sl) {
    ntt_first_stages<3>(src, dst, tw, log_n, sl);
}

extern "C" __global__ void __launch_bounds__(CUZK_NTT_THREADS_R4, 3)
    cuzk_ntt_first_stages_r4(const fr_t* src, fr_t* dst, const fr_t* tw, uint32_t log_n, uint32_t sl) {
    ntt_first_stages<2>(src, dst, tw, log_n, sl);
}

// Stages s0 .. s0+k-1 of the DIT transform after the block-local ones. Elements whose indices
// differ only in bits s0 .. s0+k-1 form independent 2^k-point sub-transforms for these
// stages; a block takes 2^k of them at 2^low consecutive low indices (rows of 2^low elements,
// so loads coalesce), does the k stages in shared memory, and writes back. One pass per k
// stages instead of one per stage.
template <int R>
__device__ __forceinline__ void ntt_mid_stages(fr_t* v, const fr_t* tw, uint32_t log_n, uint32_t s0, uint32_t k, uint32_t low) {
    const uint32_t elems = 1u << (k + low);
    const ntt_smem_t sh = {reinterpret_cast<uint32_t*>(cuzk_ntt_tile), elems};
    const uint32_t groups_log = s0 - low;  // low-index groups of 2^low below bit s0
    const uint32_t lg = blockIdx.x & ((1u << groups_log) - 1), hi = blockIdx.x >> groups_log;
    const ntt_tile_t tile = {(hi << (s0 + k)) + (lg << low), s0, low, log_n};
    const uint32_t t = threadIdx.x, nt = blockDim.x;
    for (uint32_t u = t; u < elems; u += nt) sh.set(u, v[tile.global(u)]);
    __syncthreads();
    ntt_tile_all_stages<R>(sh, tw, tile, elems, k, t, nt, cuzk_block_sync{});
    for (uint32_t u = t; u < elems; u += nt) v[tile.global(u)] = sh.get(u);
}

extern "C" __global__ void __launch_bounds__(CUZK_NTT_THREADS_R8)
    cuzk_ntt_mid_stages_r8(fr_t* v, const fr_t* tw, uint32_t log_n, uint32_t s0, uint32_t k, uint32_t low) {
    ntt_mid_stages<3>(v, tw, log_n, s0, k, low);
}

extern "C" __global__ void __launch_bounds__(CUZK_NTT_THREADS_R4, 3)
    cuzk_ntt_mid_stages_r4(fr_t* v, const fr_t* tw, uint32_t log_n, uint32_t s0, uint32_t k, uint32_t low) {
    ntt_mid_stages<2>(v, tw, log_n, s0, k, low);
}
