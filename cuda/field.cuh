// BLS12-381 base field Fp (381 bits) and scalar field Fr (255 bits) in Montgomery form.
//
// Limbs are 32-bit, little-endian, so an element has exactly the byte layout of blst's
// `blst_fp` (6 x u64 LE) / `blst_fr` (4 x u64 LE) on a little-endian host: buffers from
// blstrs are copied to the device without conversion. Montgomery radix: R = 2^384 for Fp,
// R = 2^256 for Fr, the same as blst. Every function keeps values fully reduced (< modulus),
// so "is zero" is a plain limb test and equality is limb equality.
//
// The multiply is CIOS Montgomery with PTX carry chains (mad.lo.cc / madc.hi.cc): 4*N*N
// 32-bit multiply-adds per product. The carry flag lives across consecutive `asm volatile`
// statements; volatile keeps them in order and nothing between them writes CC.
//
// The same code compiles for the host (g++ or nvcc's host pass) with the carry flag emulated
// in a variable, so cuda/test/host_test.cpp can check the arithmetic without a GPU.
#pragma once
#include <stdint.h>

#if !defined(__CUDACC__)
#define __host__
#define __device__
#define __forceinline__ inline __attribute__((always_inline))
#endif

#define HD __host__ __device__ __forceinline__

#if defined(__CUDA_ARCH__)
// ---- device: PTX carry-chain primitives --------------------------------------------------
__device__ __forceinline__ uint32_t add_cc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ uint32_t addc_cc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ uint32_t addc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("addc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ uint32_t sub_cc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ uint32_t subc_cc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ uint32_t subc(uint32_t a, uint32_t b) { uint32_t r; asm volatile("subc.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b)); return r; }
__device__ __forceinline__ uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { uint32_t r; asm volatile("mad.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
__device__ __forceinline__ uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { uint32_t r; asm volatile("madc.lo.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
__device__ __forceinline__ uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) { uint32_t r; asm volatile("mad.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
__device__ __forceinline__ uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { uint32_t r; asm volatile("madc.hi.cc.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(a), "r"(b), "r"(c)); return r; }
#else
// ---- host emulation: one carry/borrow flag, like the CC.CF register ---------------------
static thread_local uint32_t cuzk_cf;
static inline uint32_t add_cc(uint32_t a, uint32_t b) { uint64_t s = (uint64_t)a + b; cuzk_cf = (uint32_t)(s >> 32); return (uint32_t)s; }
static inline uint32_t addc_cc(uint32_t a, uint32_t b) { uint64_t s = (uint64_t)a + b + cuzk_cf; cuzk_cf = (uint32_t)(s >> 32); return (uint32_t)s; }
static inline uint32_t addc(uint32_t a, uint32_t b) { return a + b + cuzk_cf; }
static inline uint32_t sub_cc(uint32_t a, uint32_t b) { uint64_t d = (uint64_t)a - b; cuzk_cf = (uint32_t)(d >> 63); return (uint32_t)d; }
static inline uint32_t subc_cc(uint32_t a, uint32_t b) { uint64_t d = (uint64_t)a - b - cuzk_cf; cuzk_cf = (uint32_t)(d >> 63); return (uint32_t)d; }
static inline uint32_t subc(uint32_t a, uint32_t b) { return a - b - cuzk_cf; }
static inline uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return add_cc(a * b, c); }
static inline uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return addc_cc(a * b, c); }
static inline uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return add_cc((uint32_t)(((uint64_t)a * b) >> 32), c); }
static inline uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return addc_cc((uint32_t)(((uint64_t)a * b) >> 32), c); }
#endif

// ---- field parameters: limbs as immediates so unrolled loops fold them into instructions ----
struct FpParams {
    static constexpr int N = 12;
    static constexpr uint32_t INV = 0xfffcfffdu;  // -p^-1 mod 2^32
    HD static constexpr uint32_t mod(int i) {
        return i == 0 ? 0xffffaaabu : i == 1 ? 0xb9feffffu : i == 2 ? 0xb153ffffu : i == 3 ? 0x1eabfffeu :
               i == 4 ? 0xf6b0f624u : i == 5 ? 0x6730d2a0u : i == 6 ? 0xf38512bfu : i == 7 ? 0x64774b84u :
               i == 8 ? 0x434bacd7u : i == 9 ? 0x4b1ba7b6u : i == 10 ? 0x397fe69au : 0x1a0111eau;
    }
    // R mod p: the Montgomery form of 1.
    HD static constexpr uint32_t one(int i) {
        return i == 0 ? 0x0002fffdu : i == 1 ? 0x76090000u : i == 2 ? 0xc40c0002u : i == 3 ? 0xebf4000bu :
               i == 4 ? 0x53c758bau : i == 5 ? 0x5f489857u : i == 6 ? 0x70525745u : i == 7 ? 0x77ce5853u :
               i == 8 ? 0xa256ec6du : i == 9 ? 0x5c071a97u : i == 10 ? 0xfa80e493u : 0x15f65ec3u;
    }
};

struct FrParams {
    static constexpr int N = 8;
    static constexpr uint32_t INV = 0xffffffffu;  // -r^-1 mod 2^32
    HD static constexpr uint32_t mod(int i) {
        return i == 0 ? 0x00000001u : i == 1 ? 0xffffffffu : i == 2 ? 0xfffe5bfeu : i == 3 ? 0x53bda402u :
               i == 4 ? 0x09a1d805u : i == 5 ? 0x3339d808u : i == 6 ? 0x299d7d48u : 0x73eda753u;
    }
    HD static constexpr uint32_t one(int i) {
        return i == 0 ? 0xfffffffeu : i == 1 ? 0x00000001u : i == 2 ? 0x00034802u : i == 3 ? 0x5884b7fau :
               i == 4 ? 0xecbc4ff5u : i == 5 ? 0x998c4fefu : i == 6 ? 0xacc5056fu : 0x1824b159u;
    }
};

// Both moduli leave spare top bits (2p < 2^384, 2r < 2^256), so a + b and the CIOS
// intermediate t < 2m never overflow N limbs; the code below relies on that.
template <class P>
struct Fe {
    static constexpr int N = P::N;
    uint32_t v[N];

    HD static Fe zero() { Fe r; _Pragma("unroll") for (int i = 0; i < N; i++) r.v[i] = 0; return r; }
    HD static Fe one() { Fe r; _Pragma("unroll") for (int i = 0; i < N; i++) r.v[i] = P::one(i); return r; }

    HD bool is_zero() const {
        uint32_t acc = 0;
        _Pragma("unroll") for (int i = 0; i < N; i++) acc |= v[i];
        return acc == 0;
    }
    HD bool eq(const Fe& o) const {
        uint32_t acc = 0;
        _Pragma("unroll") for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
        return acc == 0;
    }

    // t (< 2m) -> t mod m, branch-free.
    HD static Fe reduce_once(const Fe& t) {
        Fe s, r;
        s.v[0] = sub_cc(t.v[0], P::mod(0));
        _Pragma("unroll") for (int i = 1; i < N; i++) s.v[i] = subc_cc(t.v[i], P::mod(i));
        uint32_t borrow = subc(0, 0);  // all ones when t < m
        _Pragma("unroll") for (int i = 0; i < N; i++) r.v[i] = (t.v[i] & borrow) | (s.v[i] & ~borrow);
        return r;
    }

    HD friend Fe operator+(const Fe& a, const Fe& b) {
        Fe t;
        t.v[0] = add_cc(a.v[0], b.v[0]);
        _Pragma("unroll") for (int i = 1; i < N; i++) t.v[i] = addc_cc(a.v[i], b.v[i]);
        return reduce_once(t);
    }

    HD friend Fe operator-(const Fe& a, const Fe& b) {
        Fe t;
        t.v[0] = sub_cc(a.v[0], b.v[0]);
        _Pragma("unroll") for (int i = 1; i < N; i++) t.v[i] = subc_cc(a.v[i], b.v[i]);
        uint32_t borrow = subc(0, 0);
        // add the modulus back when a < b
        t.v[0] = add_cc(t.v[0], P::mod(0) & borrow);
        _Pragma("unroll") for (int i = 1; i < N - 1; i++) t.v[i] = addc_cc(t.v[i], P::mod(i) & borrow);
        t.v[N - 1] = addc(t.v[N - 1], P::mod(N - 1) & borrow);
        return t;
    }

    HD Fe neg() const { return zero() - *this; }
    HD Fe dbl() const { return *this + *this; }

    // Montgomery product a*b/R mod m (CIOS). t has two extra limbs for the transient
    // t + a*b_i + q*m < 2^(32(N+2)).
    HD friend Fe operator*(const Fe& a, const Fe& b) {
        uint32_t t[N + 2];
        _Pragma("unroll") for (int j = 0; j < N + 2; j++) t[j] = 0;
        _Pragma("unroll") for (int i = 0; i < N; i++) {
            const uint32_t bi = b.v[i];
            // t += a * b_i: low halves into t[0..N), high halves into t[1..N]
            t[0] = mad_lo_cc(a.v[0], bi, t[0]);
            _Pragma("unroll") for (int j = 1; j < N; j++) t[j] = madc_lo_cc(a.v[j], bi, t[j]);
            t[N] = addc_cc(t[N], 0);
            t[N + 1] = addc(t[N + 1], 0);
            t[1] = mad_hi_cc(a.v[0], bi, t[1]);
            _Pragma("unroll") for (int j = 1; j < N; j++) t[j + 1] = madc_hi_cc(a.v[j], bi, t[j + 1]);
            t[N + 1] = addc(t[N + 1], 0);
            // t += q * m with q chosen so that t[0] becomes 0, then shift one limb down
            const uint32_t q = t[0] * P::INV;
            t[0] = mad_lo_cc(q, P::mod(0), t[0]);
            _Pragma("unroll") for (int j = 1; j < N; j++) t[j] = madc_lo_cc(q, P::mod(j), t[j]);
            t[N] = addc_cc(t[N], 0);
            t[N + 1] = addc(t[N + 1], 0);
            t[1] = mad_hi_cc(q, P::mod(0), t[1]);
            _Pragma("unroll") for (int j = 1; j < N; j++) t[j + 1] = madc_hi_cc(q, P::mod(j), t[j + 1]);
            t[N + 1] = addc(t[N + 1], 0);
            _Pragma("unroll") for (int j = 0; j < N + 1; j++) t[j] = t[j + 1];
            t[N + 1] = 0;
        }
        Fe r;
        _Pragma("unroll") for (int j = 0; j < N; j++) r.v[j] = t[j];
        return reduce_once(r);
    }

    // a^2/R mod m. The product a*b_i rows of CIOS would compute each cross product a_i*a_j
    // twice, so the square is formed first (cross products once, doubled, plus the diagonal:
    // N(N+1)/2 limb products instead of N^2) and then Montgomery-reduced limb by limb. About
    // 15% fewer instructions than the general product for Fp; a G1 mixed addition has 2
    // squarings in its 10 products.
    HD Fe sqr() const {
        const uint32_t* a = v;
        uint32_t t[2 * N];
        _Pragma("unroll") for (int k = 0; k < 2 * N; k++) t[k] = 0;
        // Cross products a_i*a_j (i < j) at limb i+j. Row i's low halves end in a carry into
        // t[i+N], which holds at most the carry of row i-1 (so it cannot overflow); its high
        // halves end in a carry into t[i+N+1], not written yet.
        _Pragma("unroll") for (int i = 0; i < N - 1; i++) {
            t[2 * i + 1] = mad_lo_cc(a[i], a[i + 1], t[2 * i + 1]);
            _Pragma("unroll") for (int j = i + 2; j < N; j++) t[i + j] = madc_lo_cc(a[i], a[j], t[i + j]);
            t[i + N] = addc(t[i + N], 0);
            t[2 * i + 2] = mad_hi_cc(a[i], a[i + 1], t[2 * i + 2]);
            _Pragma("unroll") for (int j = i + 2; j < N; j++) t[i + j + 1] = madc_hi_cc(a[i], a[j], t[i + j + 1]);
            if (i + N + 1 < 2 * N) t[i + N + 1] = addc(0, 0);
        }
        // Double (the cross sum is below a^2/2, so no bit leaves the 2N limbs) ...
        t[0] = add_cc(t[0], t[0]);
        _Pragma("unroll") for (int k = 1; k < 2 * N; k++) t[k] = addc_cc(t[k], t[k]);
        // ... and add the squares a_i^2 at limb 2i (a^2 < 2^(64N): no final carry).
        t[0] = mad_lo_cc(a[0], a[0], t[0]);
        t[1] = madc_hi_cc(a[0], a[0], t[1]);
        _Pragma("unroll") for (int i = 1; i < N; i++) {
            t[2 * i] = madc_lo_cc(a[i], a[i], t[2 * i]);
            t[2 * i + 1] = madc_hi_cc(a[i], a[i], t[2 * i + 1]);
        }
        // Montgomery reduction: step i adds q*m at limb i so that t[i] becomes 0. Its two
        // chains carry out of t[i+N]; `pending` (at most 3) is what still has to go into
        // t[i+N+1], added at the start of step i+1, which carries on into t[i+N+2].
        uint32_t pending = 0;
        _Pragma("unroll") for (int i = 0; i < N; i++) {
            if (i > 0) {
                t[i + N] = add_cc(t[i + N], pending);
                pending = (i + N + 1 < 2 * N) ? addc(0, 0) : 0;
            }
            const uint32_t q = t[i] * P::INV;
            t[i] = mad_lo_cc(q, P::mod(0), t[i]);
            _Pragma("unroll") for (int j = 1; j < N; j++) t[i + j] = madc_lo_cc(q, P::mod(j), t[i + j]);
            t[i + N] = addc_cc(t[i + N], 0);
            uint32_t c1 = addc(0, 0);
            t[i + 1] = mad_hi_cc(q, P::mod(0), t[i + 1]);
            _Pragma("unroll") for (int j = 1; j < N; j++) t[i + j + 1] = madc_hi_cc(q, P::mod(j), t[i + j + 1]);
            uint32_t c2 = addc(0, 0);
            pending += c1 + c2;
        }
        // t[N..2N) = a^2/R < 2m (the last pending carry would be limb 2N: zero).
        Fe r;
        _Pragma("unroll") for (int j = 0; j < N; j++) r.v[j] = t[N + j];
        return reduce_once(r);
    }

    // Montgomery form -> canonical integer (a * 1 / R).
    HD Fe from_mont() const {
        Fe one_int = zero();
        one_int.v[0] = 1;
        return *this * one_int;
    }

    // a^e for a small public exponent (bits of e, low first), used for twiddles and inverses.
    HD Fe pow_u32(uint32_t e) const {
        Fe r = one(), b = *this;
        while (e) {
            if (e & 1) r = r * b;
            b = b.sqr();
            e >>= 1;
        }
        return r;
    }
};

typedef Fe<FpParams> fp_t;
typedef Fe<FrParams> fr_t;
