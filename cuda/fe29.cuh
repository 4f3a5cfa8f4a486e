// Fp and Fr in unsaturated 29-bit limbs, Montgomery products without carry chains (an
// experiment: notes/gpu.md, "The multiply pipes").
//
// Why: field.cuh's product adds each 32x32-bit product into a carry chain (IMAD.WIDE.U32.X).
// With 29-bit limbs a 64-bit accumulator takes 2N products (2N * 2^58 < 2^64) before it can
// overflow, so every product is an IMAD.WIDE.U32 into its column with no carry-in, and
// carries move once a row: Fp needs 14 limbs (2 * 196 products against 2 * 144), Fr 9
// (2 * 81 against 2 * 64). It only pays if a product without a carry-in is cheaper; on an
// H200 it is not (either holds the FMA-heavy pipe two cycles: 0.74x field.cuh's form for Fp,
// 0.89x for Fr, cuda/bench/field_forms.cu).
//
// Representation: limbs v[i] < 2^29 in 32-bit words, little-endian, Montgomery radix
// R = 2^(29N) (2^406 for Fp, 2^261 for Fr). Products are reduced lazily: for a, b < 2m the
// result is below ab/R + m < 2m (4m < R), so no final subtraction. `from_fe` and `to_fe`
// convert from and to field.cuh's form (R = 2^(32 N32)).
#pragma once
#include "field.cuh"

#if defined(__CUDA_ARCH__)
// a*b + c as one IMAD.WIDE.U32 with its 64-bit addend: written as a two-instruction carry
// chain (both halves in one statement, like field.cuh's mad_wide_cc), since ptxas splits a
// plain mad.wide.u32 into a product and separate 64-bit additions.
__device__ __forceinline__ uint64_t cuzk_mad_wide(uint32_t a, uint32_t b, uint64_t c) {
    uint32_t lo, hi;
    asm volatile("mad.lo.cc.u32 %0, %2, %3, %4;\n\tmadc.hi.u32 %1, %2, %3, %5;"
                 : "=r"(lo), "=r"(hi) : "r"(a), "r"(b), "r"((uint32_t)c), "r"((uint32_t)(c >> 32)));
    return ((uint64_t)hi << 32) | lo;
}
#else
static inline uint64_t cuzk_mad_wide(uint32_t a, uint32_t b, uint64_t c) { return (uint64_t)a * b + c; }
#endif

#define CUZK_F29_MASK 0x1fffffffu

// The moduli's limbs in constant memory, for the reduction rows, as field.cuh keeps its own
// (cuzk_fp_mod): a wide product with an immediate factor is split into narrower instructions.
#define CUZK_FP29_MODULUS 0x1fffaaabu, 0x0ff7ffffu, 0x14ffffeeu, 0x17fffd62u, 0x0f6241eau, 0x09507b58u, 0x0afd9cc3u, \
                          0x109e70a2u, 0x1764774bu, 0x121a5d66u, 0x12c6e9edu, 0x12ffcd34u, 0x00111ea3u, 0x0000000du
#define CUZK_FR29_MODULUS 0x00000001u, 0x1ffffff8u, 0x1f96ffbfu, 0x1b4805ffu, 0x1d80553bu, 0x0c0404d0u, 0x1520cce7u, \
                          0x0a6533afu, 0x0073eda7u
CUZK_CONSTANT uint32_t cuzk_fp29_mod[14] = {CUZK_FP29_MODULUS};
CUZK_CONSTANT uint32_t cuzk_fr29_mod[9] = {CUZK_FR29_MODULUS};

struct Fp29Params {
    typedef FpParams Base;
    static constexpr int N = 14;
    static constexpr uint32_t INV = 0x1ffcfffdu;  // -p^-1 mod 2^29
    HD static constexpr uint32_t mod(int i) {
        constexpr uint32_t m[N] = {CUZK_FP29_MODULUS};
        return m[i];
    }
    HD static uint32_t mod_operand(int i) { return cuzk_fp29_mod[i]; }
    // 2^(29N - 32 N32) * R mod p: a product with it takes a * 2^384 to a * 2^406.
    HD static constexpr uint32_t to29(int i) {
        constexpr uint32_t m[N] = {0x1fddebbdu, 0x1a4f5474u, 0x0291f399u, 0x14d03b3cu, 0x0f6cad2cu,
                                   0x1b4cabcau, 0x1592827cu, 0x021c6ac7u, 0x1ec52a84u, 0x16fd5ec4u,
                                   0x0c960da6u, 0x0fd2af6bu, 0x13263591u, 0x0000000bu};
        return m[i];
    }
    // 2^(32 N32 - 29N) * R mod p: the way back.
    HD static constexpr uint32_t to32(int i) {
        constexpr uint32_t m[N] = {0x0002fffdu, 0x10480000u, 0x0300009du, 0x08001788u, 0x158baebfu,
                                   0x0c2ba9e3u, 0x1d157d22u, 0x0a6e0a4au, 0x0d77ce58u, 0x1d12b763u,
                                   0x1701c6a5u, 0x1501c926u, 0x1f65ec3fu, 0x0000000au};
        return m[i];
    }
};

struct Fr29Params {
    typedef FrParams Base;
    static constexpr int N = 9;
    static constexpr uint32_t INV = 0x1fffffffu;
    HD static constexpr uint32_t mod(int i) {
        constexpr uint32_t m[N] = {CUZK_FR29_MODULUS};
        return m[i];
    }
    HD static uint32_t mod_operand(int i) { return cuzk_fr29_mod[i]; }
    HD static constexpr uint32_t to29(int i) {
        constexpr uint32_t m[N] = {0x1ffff72bu, 0x000046a7u, 0x1f5f3540u, 0x0ce3021cu, 0x118f3661u,
                                   0x008176cbu, 0x054e487cu, 0x102e8190u, 0x001e092eu};
        return m[i];
    }
    HD static constexpr uint32_t to32(int i) {
        constexpr uint32_t m[N] = {0x1ffffffeu, 0x0000000fu, 0x00d20080u, 0x096ff400u, 0x04ff5588u,
                                   0x07f7f65eu, 0x15be6631u, 0x0b3598a0u, 0x001824b1u};
        return m[i];
    }
};

template <class P>
struct Fe29 {
    static constexpr int N = P::N;
    typedef Fe<typename P::Base> Fe32;
    static constexpr int N32 = Fe32::N;
    uint32_t v[N];

    // The conversion factors as elements: P::to29's limbs (into this form) or P::to32's.
    HD static Fe29 factor(bool into) {
        Fe29 r;
        _Pragma("unroll") for (int i = 0; i < N; i++) r.v[i] = into ? P::to29(i) : P::to32(i);
        return r;
    }

    // Montgomery product a*b/R, CIOS with 64-bit columns: row i adds a * b_i, then q * m with
    // q = T_0 * -m^-1 mod 2^29, which clears T_0's low 29 bits; T_0's carry goes into T_1 as
    // the columns move down one. A column has taken at most 2N products (< 2N * 2^58 < 2^63)
    // plus carries below 2^35.
    HD friend Fe29 operator*(const Fe29& a, const Fe29& b) {
        uint64_t T[N];
        _Pragma("unroll") for (int j = 0; j < N; j++) T[j] = 0;
        _Pragma("unroll") for (int i = 0; i < N; i++) {
            const uint32_t bi = b.v[i];
            _Pragma("unroll") for (int j = 0; j < N; j++) T[j] = cuzk_mad_wide(a.v[j], bi, T[j]);
            const uint32_t q = ((uint32_t)T[0] * P::INV) & CUZK_F29_MASK;
            if (P::mod(0) == 1) T[0] += q;
            else T[0] = cuzk_mad_wide(q, P::mod_operand(0), T[0]);
            const uint64_t c = T[0] >> 29;
            _Pragma("unroll") for (int j = 1; j < N; j++) T[j - 1] = cuzk_mad_wide(q, P::mod_operand(j), T[j]);
            T[0] += c;
            T[N - 1] = 0;
        }
        Fe29 r;
        uint64_t carry = 0;
        _Pragma("unroll") for (int j = 0; j < N; j++) {
            const uint64_t t = T[j] + carry;
            r.v[j] = (uint32_t)t & CUZK_F29_MASK;
            carry = t >> 29;
        }
        return r;
    }
    HD Fe29 sqr() const { return *this * *this; }

    // From field.cuh's form (a * 2^(32 N32), < m): the bits regrouped, times to29.
    HD static Fe29 from_fe(const Fe32& a) {
        Fe29 r;
        _Pragma("unroll") for (int j = 0; j < N; j++) {
            const int bit = 29 * j, w = bit / 32, sh = bit % 32;
            uint64_t x = w < N32 ? (uint64_t)a.v[w] >> sh : 0;
            if (w + 1 < N32) x |= (uint64_t)a.v[w + 1] << (32 - sh);
            r.v[j] = (uint32_t)x & CUZK_F29_MASK;
        }
        return r * factor(true);
    }

    // Back to field.cuh's form, fully reduced (< m).
    HD Fe32 to_fe() const {
        const Fe29 t = *this * factor(false);  // < 2m
        Fe29 s;
        int32_t borrow = 0;
        _Pragma("unroll") for (int j = 0; j < N; j++) {
            const int32_t d = (int32_t)t.v[j] - (int32_t)P::mod(j) + borrow;
            s.v[j] = (uint32_t)d & CUZK_F29_MASK;
            borrow = d >> 29;  // 0 or -1
        }
        Fe29 u;
        _Pragma("unroll") for (int j = 0; j < N; j++) u.v[j] = borrow < 0 ? t.v[j] : s.v[j];
        Fe32 r;
        _Pragma("unroll") for (int i = 0; i < N32; i++) {
            const int bit = 32 * i, j = bit / 29, sh = bit % 29;
            uint64_t x = (uint64_t)u.v[j] >> sh;
            if (j + 1 < N) x |= (uint64_t)u.v[j + 1] << (29 - sh);
            if (j + 2 < N) x |= (uint64_t)u.v[j + 2] << (58 - sh);
            r.v[i] = (uint32_t)x;
        }
        return r;
    }
};

typedef Fe29<Fp29Params> fp29_t;
typedef Fe29<Fr29Params> fr29_t;
