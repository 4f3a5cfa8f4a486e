// Fp and Fr in 52-bit limbs with Montgomery products on the FP64 pipe (an experiment: see
// notes/gpu.md, "The multiply pipes").
//
// Why: the MSM's accumulation and the NTT are bound by the integer multiply pipe (about 30
// 32x32-bit wide products per SM and clock on an H200), while its FP64 pipe, otherwise
// idle, does 64 DFMA per SM and clock. A double holds a 52x52-bit product's halves exactly
// when the products are split with two fused multiply-adds:
//   h = fma_rz(x, y, 2^104)          = 2^104 + floor(xy / 2^52) * 2^52   (binade [2^104, 2^105))
//   l = fma(x, y, (2^104 + 2^52) - h) = 2^52 + (xy mod 2^52)              (binade [2^52, 2^53))
// Both results sit in a fixed binade, so their bit patterns minus that binade's are the two
// 52-bit halves, added into 64-bit integer columns without any conversion. A product of
// 52x52 bits is 2.6 times a 32x32 one; Fp needs 8 limbs (2 * 64 products a multiplication
// against 2 * 144 in 32-bit limbs), Fr 5 (2 * 25 against 2 * 64). Measured on an H200
// (cuda/bench/field_forms.cu): 0.91x field.cuh's form for Fp, 1.09x for Fr; each product also
// needs a DADD and integer additions, and the FP64 pipe stays 59% busy (latency, issue).
//
// Representation: limbs v[i] < 2^52, little-endian, Montgomery radix R = 2^(52K) (2^416 for
// Fp, 2^260 for Fr). Products are reduced lazily: for a, b < 2m the result is below
// ab/R + m < 2m (4m < R for both fields), so no final subtraction. `from_fe` and `to_fe`
// convert from and to the 32-bit form of field.cuh (R = 2^(32N)), which is what every buffer
// holds.
#pragma once
#include "field.cuh"
#if !defined(__CUDA_ARCH__)
#include <cmath>
#include <cstring>
#endif

#define CUZK_F52_MASK 0xfffffffffffffull  // 2^52 - 1

HD double cuzk_f64_from_bits(uint64_t b) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double((long long)b);
#else
    double d;
    memcpy(&d, &b, 8);
    return d;
#endif
}
HD uint64_t cuzk_f64_bits(double d) {
#if defined(__CUDA_ARCH__)
    return (uint64_t)__double_as_longlong(d);
#else
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
#endif
}

// 2^52 and 2^104 as doubles, with their bit patterns (exponent fields 1075 and 1127).
#define CUZK_F52_TWO52 4503599627370496.0
#define CUZK_F52_TWO52_BITS 0x4330000000000000ull
#define CUZK_F52_TWO104 20282409603651670423947251286016.0
#define CUZK_F52_TWO104_BITS 0x4670000000000000ull
// 2^104 + 2^52: exactly representable (53 significant bits).
#define CUZK_F52_TWO104_52 20282409603651674927546878656512.0

// A 52-bit integer as an exact double: its bits under 2^52's exponent, minus 2^52.
HD double cuzk_f52_limb(uint64_t x) { return cuzk_f64_from_bits(x | CUZK_F52_TWO52_BITS) - CUZK_F52_TWO52; }

// x*y (x, y < 2^52, exact integers) split into its halves, each a double whose bits minus
// its binade's are the half: l (low 52 bits, binade 2^52) and h (high bits, binade 2^104).
HD void cuzk_f52_product(double& l, double& h, double x, double y) {
#if defined(__CUDA_ARCH__)
    h = __fma_rz(x, y, CUZK_F52_TWO104);
#else
    // The host rounds to nearest: when that rounded up, the remainder is negative and h is
    // one step (2^52) too high.
    h = std::fma(x, y, CUZK_F52_TWO104);
    if (std::fma(x, y, CUZK_F52_TWO104 - h) < 0) h -= CUZK_F52_TWO52;
#endif
    // (2^104 + 2^52) - h = (1 - floor(xy / 2^52)) * 2^52 is exact, and so is l.
    l = fma(x, y, CUZK_F52_TWO104_52 - h);
}

// One row of K products x * y[j] added to the columns c[0..K]: column j takes the low half of
// product j and the high half of product j - 1, as one three-term sum (the binades' bits are
// folded into one constant), which the device adds with a pair of three-input additions.
template <int K>
HD void cuzk_f52_row(uint64_t* c, double x, const double* y) {
    double l[K], h[K];
    _Pragma("unroll") for (int j = 0; j < K; j++) cuzk_f52_product(l[j], h[j], x, y[j]);
    c[0] += cuzk_f64_bits(l[0]) - CUZK_F52_TWO52_BITS;
    _Pragma("unroll") for (int j = 1; j < K; j++)
        c[j] += cuzk_f64_bits(l[j]) + cuzk_f64_bits(h[j - 1]) - (CUZK_F52_TWO52_BITS + CUZK_F52_TWO104_BITS);
    c[K] += cuzk_f64_bits(h[K - 1]) - CUZK_F52_TWO104_BITS;
}

// Limb constants: the modulus, -m^-1 mod 2^52, and the conversion factors.
struct Fp52Params {
    typedef FpParams Base;
    static constexpr int K = 8;
    static constexpr uint64_t INV = 0x3fffcfffcfffdull;
    HD static constexpr uint64_t mod(int i) {
        constexpr uint64_t m[K] = {0xeffffffffaaabull, 0xfeb153ffffb9full, 0x6b0f6241eabffull, 0x12bf6730d2a0full,
                                   0x764774b84f385ull, 0x1ba7b6434bacdull, 0x1ea397fe69a4bull, 0x000000001a011ull};
        return m[i];
    }
    // 2^(52K - 32N) * R mod p: a product with it takes the 32-bit form's a * 2^384 to a * 2^416.
    HD static constexpr uint64_t to52(int i) {
        constexpr uint64_t m[K] = {0x7fde37dba9366ull, 0x4e27525bc342bull, 0x1f5b1e9778489ull, 0xb872b2b91b9dcull,
                                   0xb206f497dfcafull, 0x4137cc89a9b0bull, 0xd9d20d7e39959ull, 0x000000000411cull};
        return m[i];
    }
    // 2^(32N - 52K) * R mod p: the way back.
    HD static constexpr uint64_t to32(int i) {
        constexpr uint64_t m[K] = {0x900000002fffdull, 0x0bc40c0002760ull, 0x3c758baebf400ull, 0x57455f4898575ull,
                                   0xd77ce58537052ull, 0x071a97a256ec6ull, 0xec3fa80e4935cull, 0x0000000015f65ull};
        return m[i];
    }
};

struct Fr52Params {
    typedef FrParams Base;
    static constexpr int K = 5;
    static constexpr uint64_t INV = 0xffffeffffffffull;
    HD static constexpr uint64_t mod(int i) {
        constexpr uint64_t m[K] = {0xfffff00000001ull, 0x02fffe5bfefffull, 0x9a1d80553bda4ull, 0x7d483339d8080ull,
                                   0x073eda753299dull};
        return m[i];
    }
    HD static constexpr uint64_t to52(int i) {
        constexpr uint64_t m[K] = {0x00234fffffdcbull, 0x61039ef635000ull, 0xdce3c3e2e7505ull, 0x7fa6f1563642bull,
                                   0x0247db575276aull};
        return m[i];
    }
    HD static constexpr uint64_t to32(int i) {
        constexpr uint64_t m[K] = {0x00001fffffffeull, 0xfa00034802000ull, 0xcbc4ff55884b7ull, 0x056f998c4fefeull,
                                   0x01824b159acc5ull};
        return m[i];
    }
};

template <class P>
struct Fe52 {
    static constexpr int K = P::K;
    typedef Fe<typename P::Base> Fe32;
    static constexpr int N = Fe32::N;
    uint64_t v[K];

    // The conversion factors as elements: P::to52's limbs (into this form) or P::to32's.
    HD static Fe52 factor(bool into) {
        Fe52 r;
        _Pragma("unroll") for (int i = 0; i < K; i++) r.v[i] = into ? P::to52(i) : P::to32(i);
        return r;
    }

    // Montgomery product a*b/R, row by row (CIOS order): row i adds a_i * b to columns
    // i..i+K, then q*m with q = column i * -m^-1 mod 2^52, which clears column i's low 52
    // bits; its carry moves up. A column holds at most 4K+1 terms below 2^52: < 2^57.
    HD friend Fe52 operator*(const Fe52& a, const Fe52& b) {
        double bd[K], md[K];
        _Pragma("unroll") for (int j = 0; j < K; j++) {
            bd[j] = cuzk_f52_limb(b.v[j]);
            md[j] = (double)P::mod(j);
        }
        uint64_t col[2 * K];
        _Pragma("unroll") for (int k = 0; k < 2 * K; k++) col[k] = 0;
        _Pragma("unroll") for (int i = 0; i < K; i++) {
            cuzk_f52_row<K>(col + i, cuzk_f52_limb(a.v[i]), bd);
            const uint64_t q = ((col[i] & CUZK_F52_MASK) * P::INV) & CUZK_F52_MASK;
            cuzk_f52_row<K>(col + i, cuzk_f52_limb(q), md);
            col[i + 1] += col[i] >> 52;  // column i is now a multiple of 2^52
        }
        Fe52 r;
        uint64_t carry = 0;
        _Pragma("unroll") for (int j = 0; j < K; j++) {
            const uint64_t t = col[K + j] + carry;
            r.v[j] = t & CUZK_F52_MASK;
            carry = t >> 52;
        }
        return r;
    }
    HD Fe52 sqr() const { return *this * *this; }

    // From field.cuh's form (a * 2^(32N), < m): the limbs regrouped, times to52.
    HD static Fe52 from_fe(const Fe32& a) {
        Fe52 r;
        _Pragma("unroll") for (int j = 0; j < K; j++) {
            const int bit = 52 * j, w = bit / 32, sh = bit % 32;
            uint64_t x = w < N ? (uint64_t)a.v[w] >> sh : 0;
            if (w + 1 < N) x |= (uint64_t)a.v[w + 1] << (32 - sh);
            if (sh > 0 && w + 2 < N) x |= (uint64_t)a.v[w + 2] << (64 - sh);
            r.v[j] = x & CUZK_F52_MASK;
        }
        return r * factor(true);
    }

    // Back to field.cuh's form, fully reduced (< m).
    HD Fe32 to_fe() const {
        Fe52 t = *this * factor(false);  // < 2m
        // t - m, limb by limb with a signed borrow; keep t when that is negative.
        Fe52 s;
        int64_t borrow = 0;
        _Pragma("unroll") for (int j = 0; j < K; j++) {
            const int64_t d = (int64_t)t.v[j] - (int64_t)P::mod(j) + borrow;
            s.v[j] = (uint64_t)d & CUZK_F52_MASK;
            borrow = d >> 52;  // 0 or -1
        }
        Fe52 u;
        _Pragma("unroll") for (int j = 0; j < K; j++) u.v[j] = borrow < 0 ? t.v[j] : s.v[j];
        Fe32 r;
        _Pragma("unroll") for (int i = 0; i < N; i++) {
            const int bit = 32 * i, j = bit / 52, sh = bit % 52;
            uint64_t x = u.v[j] >> sh;
            if (sh > 20 && j + 1 < K) x |= u.v[j + 1] << (52 - sh);
            r.v[i] = (uint32_t)x;
        }
        return r;
    }
};

typedef Fe52<Fp52Params> fp52_t;
typedef Fe52<Fr52Params> fr52_t;
