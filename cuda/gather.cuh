// Density gather: the scalars an SRS section pairs with, packed, from the whole aux vector
// and its density bitmap (bit i in 64-bit word i/64 at position i%64, least significant
// first; bits past n are zero). The host computes each word's exclusive prefix popcount
// (n/64 words), so every selected scalar's rank is known locally and one thread per element
// writes it there: no scan, no atomics, the order of the CPU's gather.
#pragma once
#include "field.cuh"

HD uint32_t cuzk_popc64(uint64_t x) {
#if defined(__CUDA_ARCH__)
    return __popcll(x);
#else
    return __builtin_popcountll(x);
#endif
}

// *dst = *src with two 16-byte accesses on the device (both 32-byte aligned: cuMemAlloc
// buffers, 32-byte elements).
HD void cuzk_copy_fr(fr_t* dst, const fr_t* src) {
#if defined(__CUDA_ARCH__)
    const uint4* s = reinterpret_cast<const uint4*>(src);
    uint4* d = reinterpret_cast<uint4*>(dst);
    uint4 lo = s[0], hi = s[1];
    d[0] = lo;
    d[1] = hi;
#else
    *dst = *src;
#endif
}

// Element i of n: when its bit is set, out[prefix[i/64] + (set bits below i in its word)] =
// aux[i]. words == nullptr selects every element (out[i] = aux[i]: a plain copy).
HD void gather_dense_thread(uint32_t i, const fr_t* aux, const uint64_t* words, const uint32_t* prefix, uint32_t n,
                            fr_t* out) {
    if (i >= n) return;
    if (words == nullptr) {
        cuzk_copy_fr(&out[i], &aux[i]);
        return;
    }
    const uint64_t w = words[i >> 6];
    const uint32_t b = i & 63;
    if (((w >> b) & 1) == 0) return;
    const uint64_t below = w & ((uint64_t(1) << b) - 1);
    cuzk_copy_fr(&out[prefix[i >> 6] + cuzk_popc64(below)], &aux[i]);
}
