// All cuzk kernels: thin __global__ wrappers that give each per-thread stage function
// (msm.cuh, ntt.cuh) its global thread id. extern "C" keeps the names unmangled for
// cuModuleGetFunction; src/gpu/ names the same symbols.
#include "field.cuh"
#include "g1.cuh"
#include "msm.cuh"
#include "ntt.cuh"

#define GID() (blockIdx.x * blockDim.x + threadIdx.x)

extern "C" __global__ void cuzk_msm_scalars_hist(fr_t* scalars, uint32_t n, uint32_t c, uint32_t nwin, uint32_t* hist) {
    msm_scalars_hist_thread(GID(), scalars, n, c, nwin, hist);
}

extern "C" __global__ void cuzk_msm_scan(uint32_t* hist, uint32_t c, uint32_t nwin, uint32_t* totals) {
    msm_scan_thread(GID(), hist, c, nwin, totals);
}

extern "C" __global__ void cuzk_msm_scatter(const fr_t* scalars, uint32_t n, uint32_t c, uint32_t nwin,
                                            uint32_t* cursor, uint32_t* sorted_idx, uint32_t* sorted_bkt) {
    msm_scatter_thread(GID(), scalars, n, c, nwin, cursor, sorted_idx, sorted_bkt);
}

extern "C" __global__ void cuzk_msm_accumulate(const g1_affine_t* points, const uint32_t* sorted_idx,
                                               const uint32_t* sorted_bkt, const uint32_t* totals, uint32_t n,
                                               uint32_t nwin, uint32_t L, uint32_t T, uint32_t B,
                                               g1_xyzz_t* buckets, g1_xyzz_t* pieces, uint32_t* piece_bkt) {
    msm_accumulate_thread(GID(), points, sorted_idx, sorted_bkt, totals, n, nwin, L, T, B, buckets, pieces, piece_bkt);
}

extern "C" __global__ void cuzk_msm_pieces(const g1_xyzz_t* pieces, const uint32_t* piece_bkt, uint32_t nwin,
                                           uint32_t T, uint32_t B, g1_xyzz_t* buckets) {
    msm_pieces_thread(GID(), pieces, piece_bkt, nwin, T, B, buckets);
}

extern "C" __global__ void cuzk_msm_bucket_reduce(const g1_xyzz_t* buckets, uint32_t nwin, uint32_t B, uint32_t K,
                                                  g1_xyzz_t* partial) {
    msm_bucket_reduce_thread(GID(), buckets, nwin, B, K, partial);
}

extern "C" __global__ void cuzk_msm_tree_reduce(g1_xyzz_t* partial, uint32_t nwin, uint32_t K, uint32_t s,
                                                g1_xyzz_t* out) {
    msm_tree_reduce_thread(GID(), partial, nwin, K, s, out);
}

extern "C" __global__ void cuzk_ntt_powers(fr_t* out, const fr_t* pw, uint32_t count) {
    ntt_powers_thread(GID(), out, pw, count);
}

extern "C" __global__ void cuzk_ntt_scale(fr_t* v, const fr_t* pw, fr_t factor, uint32_t n) {
    ntt_scale_thread(GID(), v, pw, factor, n);
}

extern "C" __global__ void cuzk_ntt_bitrev(fr_t* v, uint32_t log_n) {
    ntt_bitrev_thread(GID(), v, log_n);
}

extern "C" __global__ void cuzk_ntt_stage(fr_t* v, const fr_t* tw, uint32_t log_n, uint32_t s) {
    ntt_stage_thread(GID(), v, tw, log_n, s);
}

// The bit-reversal gather and the first min(log_n, CUZK_NTT_SMEM_LOG) stages in one pass:
// block b owns dst[b*bs, (b+1)*bs), bs = 2^sl, with bs/2 threads (one butterfly each per stage).
// Out of place because the gather reads elements that other blocks own.
extern "C" __global__ void cuzk_ntt_first_stages(const fr_t* src, fr_t* dst, const fr_t* tw, uint32_t log_n) {
    __shared__ fr_t sh[1 << CUZK_NTT_SMEM_LOG];
    const uint32_t sl = log_n < CUZK_NTT_SMEM_LOG ? log_n : CUZK_NTT_SMEM_LOG;
    const uint32_t bs = 1u << sl, half = bs >> 1;
    const uint32_t base = blockIdx.x * bs, t = threadIdx.x;
    sh[t] = src[cuzk_bitrev(base + t, log_n)];
    sh[t + half] = src[cuzk_bitrev(base + t + half, log_n)];
    __syncthreads();
    for (uint32_t s = 0; s < sl; s++) {
        uint32_t m = 1u << s;
        uint32_t k = t & (m - 1);
        uint32_t i = ((t >> s) << (s + 1)) + k;
        fr_t w = tw[k << (log_n - 1 - s)];
        fr_t a = sh[i], b = sh[i + m] * w;
        sh[i] = a + b;
        sh[i + m] = a - b;
        __syncthreads();
    }
    dst[base + t] = sh[t];
    dst[base + t + half] = sh[t + half];
}
