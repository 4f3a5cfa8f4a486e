// Radix-2 NTT over Fr, natural order in and out, values in Montgomery form (blst_fr layout).
//
// Forward: bit-reverse permutation, then log n decimation-in-time stages. The first
// CUZK_NTT_SMEM_LOG stages touch only contiguous blocks of 2^CUZK_NTT_SMEM_LOG elements and run
// in one kernel in shared memory; the later stages are one global pass each.
// Inverse: the same with omega^-1, then a scale by 1/n. Coset: scale by g^i first; inverse
// coset: scale by g^-i / n after. The scale kernel computes g^i itself (one pow per chunk of
// elements, then successive products), so no n-sized power table is stored.
#pragma once
#include "field.cuh"

#define CUZK_NTT_SMEM_LOG 10

// base^e from the table pw[k] = base^(2^k).
HD fr_t cuzk_pow_table(const fr_t* pw, uint32_t e) {
    fr_t r = fr_t::one();
    for (int k = 0; e; k++, e >>= 1)
        if (e & 1) r = r * pw[k];
    return r;
}

// out[i] = base^i for i < count; each thread does a chunk of CUZK_POW_CHUNK.
#define CUZK_POW_CHUNK 32
HD void ntt_powers_thread(uint32_t t, fr_t* out, const fr_t* pw, uint32_t count) {
    uint32_t i0 = t * CUZK_POW_CHUNK;
    if (i0 >= count) return;
    fr_t x = cuzk_pow_table(pw, i0);
    uint32_t end = i0 + CUZK_POW_CHUNK < count ? i0 + CUZK_POW_CHUNK : count;
    fr_t b = pw[0];
    for (uint32_t i = i0; i < end; i++) {
        out[i] = x;
        x = x * b;
    }
}

// v[i] *= factor * base^i (base given by its table; base = 1 for a plain 1/n scale).
HD void ntt_scale_thread(uint32_t t, fr_t* v, const fr_t* pw, fr_t factor, uint32_t n) {
    uint32_t i0 = t * CUZK_POW_CHUNK;
    if (i0 >= n) return;
    fr_t x = cuzk_pow_table(pw, i0) * factor;
    uint32_t end = i0 + CUZK_POW_CHUNK < n ? i0 + CUZK_POW_CHUNK : n;
    fr_t b = pw[0];
    for (uint32_t i = i0; i < end; i++) {
        v[i] = v[i] * x;
        x = x * b;
    }
}

HD uint32_t cuzk_bitrev(uint32_t x, uint32_t log_n) {
#if defined(__CUDA_ARCH__)
    return log_n == 0 ? 0 : __brev(x) >> (32 - log_n);
#else
    uint32_t r = 0;
    for (uint32_t k = 0; k < log_n; k++) r |= ((x >> k) & 1) << (log_n - 1 - k);
    return r;
#endif
}

HD void ntt_bitrev_thread(uint32_t i, fr_t* v, uint32_t log_n) {
    uint32_t n = 1u << log_n;
    if (i >= n) return;
    uint32_t j = cuzk_bitrev(i, log_n);
    if (i < j) {
        fr_t a = v[i];
        v[i] = v[j];
        v[j] = a;
    }
}

// One DIT stage with half-size m = 2^s: butterfly t pairs (i, i + m). tw[j] = omega^j, j < n/2.
HD void ntt_stage_thread(uint32_t t, fr_t* v, const fr_t* tw, uint32_t log_n, uint32_t s) {
    if (t >= (1u << (log_n - 1))) return;
    uint32_t m = 1u << s;
    uint32_t k = t & (m - 1);
    uint32_t i = ((t >> s) << (s + 1)) + k;
    fr_t w = tw[k << (log_n - 1 - s)];
    fr_t a = v[i], b = v[i + m] * w;
    v[i] = a + b;
    v[i + m] = a - b;
}
