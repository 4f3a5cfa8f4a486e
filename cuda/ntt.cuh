// Radix-2 NTT over Fr, natural order in and out, values in Montgomery form (blst_fr layout).
//
// Forward: bit-reverse permutation, then log n decimation-in-time stages, in passes over
// tiles in shared memory: the first pass gathers the bit-reversed elements of contiguous
// tiles of 2^tile_log and runs the first stages there; each later pass runs up to mid_max
// further stages over tiles of independent sub-transforms (ntt_geometry_t: the tiles' sizes;
// ntt_tile_t: which elements a tile holds). Inside a tile each thread takes 2^r elements that differ in r
// consecutive stage bits and runs those r stages in registers (a radix-2^r step), its r
// stages' twiddles loaded before the first product: three stages per barrier instead of one.
// Inverse: the same with omega^-1, then a scale by 1/n. Coset: scale by g^i first; inverse
// coset: scale by g^-i / n after. The scale kernel computes g^i itself (one pow per chunk of
// elements, then successive products), so no n-sized power table is stored.
#pragma once
#include "field.cuh"

// Two tile geometries (shared memory holds a tile of 2^tile_log elements, 32 bytes each):
//  - tile_log 10: 32 KB a block, so three blocks fit an SM of any GPU of the last generations
//    (sm_86 and sm_89 have 100 KB an SM); later passes run 6 stages over rows of 2^4 elements;
//  - tile_log 11: 64 KB a block, three per SM only where an SM has about 200 KB (H100, H200);
//    later passes run 8 stages over rows of 2^3 (256-byte rows, still whole sectors), so a
//    transform of 2^22..2^27 takes three passes over memory instead of four.
// NttGeometry in src/gpu/types.rs holds the same figures and picks one per device.
#define CUZK_NTT_TILE_LOG_MAX 11
// Elements of the largest tile either geometry holds in shared memory.
#define CUZK_NTT_TILE_MAX (1u << CUZK_NTT_TILE_LOG_MAX)
// Threads of a tile block: a thread runs a radix-2^r step over 2^r elements at a time and
// takes several of a step's groups when the tile has more.
#define CUZK_NTT_THREADS_R4 256
#define CUZK_NTT_THREADS_R8 128

struct ntt_geometry_t {
    uint32_t tile_log;  // first pass: tiles of 2^tile_log consecutive elements
    uint32_t low;       // later passes: rows of 2^low consecutive elements ...
    uint32_t mid_max;   // ... times up to 2^mid_max sub-transforms (low + mid_max = tile_log)
};

HD ntt_geometry_t ntt_geometry(uint32_t tile_log) {
    return tile_log >= 11 ? ntt_geometry_t{11, 3, 8} : ntt_geometry_t{10, 4, 6};
}

// Stages of the later pass that starts at stage s0: the remaining ones split as evenly as
// possible over as few passes as can hold them (2^27 with tile_log 11: 11, then 8 and 8).
HD uint32_t ntt_mid_pass_stages(const ntt_geometry_t& g, uint32_t log_n, uint32_t s0) {
    const uint32_t rest = log_n - s0;
    const uint32_t passes = (rest + g.mid_max - 1) / g.mid_max;
    return (rest + passes - 1) / passes;
}

// A tile in shared memory, each element split in two 16-byte halves: the low halves of all
// `cap` elements first, then the high halves. A warp reading consecutive elements then reads
// each half as contiguous 16-byte words, eight threads per 128 bytes, which the banks serve
// without conflict; whole 32-byte elements side by side put every thread's second 16 bytes on
// the banks of the next thread's first (two-way conflicts on every access).
struct ntt_smem_t {
    uint32_t* w;   // 8 * cap words, 16-byte aligned
    uint32_t cap;  // elements the tile holds
    HD fr_t get(uint32_t u) const {
        fr_t x;
#if defined(__CUDA_ARCH__)
        const uint4 lo = reinterpret_cast<const uint4*>(w)[u];
        const uint4 hi = reinterpret_cast<const uint4*>(w)[cap + u];
        x.v[0] = lo.x, x.v[1] = lo.y, x.v[2] = lo.z, x.v[3] = lo.w;
        x.v[4] = hi.x, x.v[5] = hi.y, x.v[6] = hi.z, x.v[7] = hi.w;
#else
        for (int i = 0; i < 4; i++) {
            x.v[i] = w[4 * u + i];
            x.v[4 + i] = w[4 * (cap + u) + i];
        }
#endif
        return x;
    }
    HD void set(uint32_t u, const fr_t& x) const {
#if defined(__CUDA_ARCH__)
        reinterpret_cast<uint4*>(w)[u] = make_uint4(x.v[0], x.v[1], x.v[2], x.v[3]);
        reinterpret_cast<uint4*>(w)[cap + u] = make_uint4(x.v[4], x.v[5], x.v[6], x.v[7]);
#else
        for (int i = 0; i < 4; i++) {
            w[4 * u + i] = x.v[i];
            w[4 * (cap + u) + i] = x.v[4 + i];
        }
#endif
    }
};

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

// v[i] *= factor * base^i (base given by its table; base = 1 for a plain 1/n scale), or, with
// `minus`, v[i] = (v[i] * base^i - minus[i]) * factor: the H step's last pass, which takes c's
// coefficients off there rather than c's coset evaluations off before the inverse transform
// (one transform fewer; src/gpu/ntt.rs). ceil(n / CUZK_POW_CHUNK) threads; thread t takes
// i = t, t + T, t + 2T, ... so that a warp reads and writes consecutive elements (a chunk of
// consecutive elements per thread, as the powers kernel has, puts a warp's accesses 1 KB
// apart), its power advancing by base^T, the same for every thread. A base of 1 (every thread
// sees the same table, so the branch is uniform) needs only the product by the factor. With
// powers the pass is bound by its two products an element (three with `minus`; figures:
// notes/gpu.md).
HD void ntt_scale_thread(uint32_t t, fr_t* v, const fr_t* pw, fr_t factor, const fr_t* minus, uint32_t n) {
    const uint32_t T = (n + CUZK_POW_CHUNK - 1) / CUZK_POW_CHUNK;
    if (t >= T) return;
    const fr_t b = pw[0];
    if (minus) {
        const fr_t step = cuzk_pow_table(pw, T);
        fr_t x = cuzk_pow_table(pw, t);
        for (uint32_t i = t; i < n; i += T) {
            v[i] = (v[i] * x - minus[i]) * factor;
            x = x * step;
        }
        return;
    }
    if (b.eq(fr_t::one())) {
        for (uint32_t i = t; i < n; i += T) v[i] = v[i] * factor;
        return;
    }
    const fr_t step = cuzk_pow_table(pw, T);
    fr_t x = cuzk_pow_table(pw, t) * factor;
    for (uint32_t i = t; i < n; i += T) {
        v[i] = v[i] * x;
        x = x * step;
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

// Where a tile's elements are. Local element u (the shared-memory index) holds global element
// global(u); local stage d is global stage s0 + d and pairs elements whose local indices differ
// in bit d + low. Two kinds of tile:
//  - first pass: u is the low `bits` bits of the global index (base = tile * 2^bits), s0 = 0,
//    low = 0;
//  - later passes: u = (j << low) | l, j the `bits` stage bits and l the `low` bits of
//    consecutive global indices (so a tile's loads and stores are contiguous rows of 2^low
//    elements); global index base + (j << s0) + l.
struct ntt_tile_t {
    uint32_t base, s0, low, log_n;
    HD uint32_t global(uint32_t u) const {
        return base + ((u >> low) << s0) + (u & ((1u << low) - 1));
    }
};

// One radix-2^R step of a tile: local stages d0 .. d0+R-1 over group g of the tile (groups
// are the tile's elements with those R stage bits cleared, in order). The R stages' 2^R - 1
// distinct twiddles are loaded first. tw[j] = omega^j, j < n/2.
//
// ORIGIN: the transform's first stages (global stage s0 + d0 = 0). Then g0's low R bits are 0
// and stage q's twiddle index is e's low q bits alone: every pair whose lower element has
// those bits 0 multiplies by omega^0 = 1, which is skipped (3 of the 4 products of a radix-4
// step, 7 of 12 in radix 8; products are most of a tile's work).
template <int R, bool ORIGIN = false>
HD void ntt_radix_step(const ntt_smem_t& sh, const fr_t* tw, const ntt_tile_t& tile, uint32_t d0, uint32_t g) {
    const uint32_t pos = d0 + tile.low;
    const uint32_t lowmask = (1u << pos) - 1;
    const uint32_t u0 = (g & lowmask) | ((g >> pos) << (pos + R));
    // Global index of element e's lower... only e = 0's is needed: the others add bits at and
    // above global stage s0 + d0, which a stage's twiddle index keeps only below the stage.
    const uint32_t g0 = tile.global(u0);
    const uint32_t s_first = tile.s0 + d0;
    fr_t w[(1 << R) - 1];
    // Stage q's pair with lower element e (bit q clear) uses omega_{2^(s+1)}^(i mod 2^s),
    // s = s_first + q, i its global index = g0 + (e's low q bits) << s_first + (higher bits,
    // dropped by the mod): 2^q distinct twiddles, at w[2^q - 1 + (e mod 2^q)].
#pragma unroll
    for (int q = 0; q < R; q++) {
        const uint32_t s = s_first + q;
#pragma unroll
        for (int ee = 0; ee < (1 << q); ee++) {
            if (ORIGIN && ee == 0) continue;  // omega^0, never read
            const uint32_t i = (g0 + ((uint32_t)ee << s_first)) & ((1u << s) - 1);
            w[(1 << q) - 1 + ee] = tw[i << (tile.log_n - 1 - s)];
        }
    }
    fr_t x[1 << R];
#pragma unroll
    for (int e = 0; e < (1 << R); e++) x[e] = sh.get(u0 | ((uint32_t)e << pos));
#pragma unroll
    for (int q = 0; q < R; q++) {
#pragma unroll
        for (int e = 0; e < (1 << R); e++) {
            if (e & (1 << q)) continue;
            const int k = e & ((1 << q) - 1);
            const fr_t b = ORIGIN && k == 0 ? x[e | (1 << q)] : x[e | (1 << q)] * w[(1 << q) - 1 + k];
            x[e | (1 << q)] = x[e] - b;
            x[e] = x[e] + b;
        }
    }
#pragma unroll
    for (int e = 0; e < (1 << R); e++) sh.set(u0 | ((uint32_t)e << pos), x[e]);
}

// Thread t's share of local stages d0 .. d0+r-1 (r <= R_MAX <= 3) of a tile of `elems`
// elements run by `threads` threads: the tile's elems / 2^r groups, strided.
template <int R_MAX>
HD void ntt_tile_stages(const ntt_smem_t& sh, const fr_t* tw, const ntt_tile_t& tile, uint32_t elems, uint32_t d0, uint32_t r,
                        uint32_t t, uint32_t threads) {
    const uint32_t groups = elems >> r;
    // The transform's first step (one branch for the whole block): its trivial twiddles skipped.
    if (tile.s0 + d0 == 0 && r == R_MAX) {
        for (uint32_t g = t; g < groups; g += threads) ntt_radix_step<R_MAX, true>(sh, tw, tile, d0, g);
        return;
    }
    for (uint32_t g = t; g < groups; g += threads) {
        if (R_MAX >= 3 && r == 3)
            ntt_radix_step<(R_MAX >= 3 ? 3 : 1)>(sh, tw, tile, d0, g);
        else if (R_MAX >= 2 && r == 2)
            ntt_radix_step<(R_MAX >= 2 ? 2 : 1)>(sh, tw, tile, d0, g);
        else
            ntt_radix_step<1>(sh, tw, tile, d0, g);
    }
}

// The stages of a whole tile, R_MAX at a time, `sync()` between steps (the block's barrier
// on the device; nothing on the host, which runs one thread at a time).
template <int R_MAX, class Sync>
HD void ntt_tile_all_stages(const ntt_smem_t& sh, const fr_t* tw, const ntt_tile_t& tile, uint32_t elems, uint32_t stages,
                            uint32_t t, uint32_t threads, Sync sync) {
    for (uint32_t d = 0; d < stages; d += R_MAX) {
        ntt_tile_stages<R_MAX>(sh, tw, tile, elems, d, stages - d < (uint32_t)R_MAX ? stages - d : R_MAX, t, threads);
        sync();
    }
}
