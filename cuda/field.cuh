// BLS12-381 base field Fp (381 bits) and scalar field Fr (255 bits) in Montgomery form.
//
// Limbs are 32-bit, little-endian, so an element has exactly the byte layout of blst's
// `blst_fp` (6 x u64 LE) / `blst_fr` (4 x u64 LE) on a little-endian host: buffers from
// blstrs are copied to the device without conversion. Montgomery radix: R = 2^384 for Fp,
// R = 2^256 for Fr, the same as blst. Every function keeps values fully reduced (< modulus),
// so "is zero" is a plain limb test and equality is limb equality.
//
// The multiply is CIOS Montgomery with PTX carry chains, each 32x32-bit product added whole
// (mad.lo.cc + madc.hi.cc in one statement, one IMAD.WIDE.U32.X on the device): 2*N*N
// products per multiplication (see operator*). The carry flag lives across consecutive
// `asm volatile` statements; volatile keeps them in order and nothing between them writes CC.
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
// A whole 64-bit product a*b onto the pair (c_lo, c_hi) -> (lo, hi): both halves in one asm
// statement, so that they read the same registers and ptxas fuses them into one
// IMAD.WIDE.U32(.X) (separate volatile statements each get their own copy of a and b, and
// ptxas then leaves the halves apart: IMAD, IMAD.HI and two IADD3.X).
// mad_wide_cc starts a carry chain, madc_wide_cc continues it, madc_wide ends it.
__device__ __forceinline__ void mul_wide(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b) {
    asm volatile("mul.lo.u32 %0, %2, %3;\n\tmul.hi.u32 %1, %2, %3;" : "=r"(lo), "=r"(hi) : "r"(a), "r"(b));
}
__device__ __forceinline__ void mad_wide_cc(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b, uint32_t c_lo, uint32_t c_hi) {
    asm volatile("mad.lo.cc.u32 %0, %2, %3, %4;\n\tmadc.hi.cc.u32 %1, %2, %3, %5;"
                 : "=r"(lo), "=r"(hi) : "r"(a), "r"(b), "r"(c_lo), "r"(c_hi));
}
__device__ __forceinline__ void madc_wide_cc(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b, uint32_t c_lo, uint32_t c_hi) {
    asm volatile("madc.lo.cc.u32 %0, %2, %3, %4;\n\tmadc.hi.cc.u32 %1, %2, %3, %5;"
                 : "=r"(lo), "=r"(hi) : "r"(a), "r"(b), "r"(c_lo), "r"(c_hi));
}
__device__ __forceinline__ void madc_wide(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b, uint32_t c_lo, uint32_t c_hi) {
    asm volatile("madc.lo.cc.u32 %0, %2, %3, %4;\n\tmadc.hi.u32 %1, %2, %3, %5;"
                 : "=r"(lo), "=r"(hi) : "r"(a), "r"(b), "r"(c_lo), "r"(c_hi));
}
#else
// ---- host emulation: one carry/borrow flag, like the CC.CF register ---------------------
static thread_local uint32_t cuzk_cf;
static inline uint32_t add_cc(uint32_t a, uint32_t b) { uint64_t s = (uint64_t)a + b; cuzk_cf = (uint32_t)(s >> 32); return (uint32_t)s; }
static inline uint32_t addc_cc(uint32_t a, uint32_t b) { uint64_t s = (uint64_t)a + b + cuzk_cf; cuzk_cf = (uint32_t)(s >> 32); return (uint32_t)s; }
static inline uint32_t addc(uint32_t a, uint32_t b) { return a + b + cuzk_cf; }
static inline uint32_t sub_cc(uint32_t a, uint32_t b) { uint64_t d = (uint64_t)a - b; cuzk_cf = (uint32_t)(d >> 63); return (uint32_t)d; }
static inline uint32_t subc_cc(uint32_t a, uint32_t b) { uint64_t d = (uint64_t)a - b - cuzk_cf; cuzk_cf = (uint32_t)(d >> 63); return (uint32_t)d; }
static inline uint32_t subc(uint32_t a, uint32_t b) { return a - b - cuzk_cf; }
// The host's products: half by half through the emulated flag.
static inline uint32_t mad_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return add_cc(a * b, c); }
static inline uint32_t madc_lo_cc(uint32_t a, uint32_t b, uint32_t c) { return addc_cc(a * b, c); }
static inline uint32_t mad_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return add_cc((uint32_t)(((uint64_t)a * b) >> 32), c); }
static inline uint32_t madc_hi_cc(uint32_t a, uint32_t b, uint32_t c) { return addc_cc((uint32_t)(((uint64_t)a * b) >> 32), c); }
static inline void mul_wide(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b) { uint64_t p = (uint64_t)a * b; lo = (uint32_t)p; hi = (uint32_t)(p >> 32); }
static inline void mad_wide_cc(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b, uint32_t c_lo, uint32_t c_hi) { lo = mad_lo_cc(a, b, c_lo); hi = madc_hi_cc(a, b, c_hi); }
static inline void madc_wide_cc(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b, uint32_t c_lo, uint32_t c_hi) { lo = madc_lo_cc(a, b, c_lo); hi = madc_hi_cc(a, b, c_hi); }
static inline void madc_wide(uint32_t& lo, uint32_t& hi, uint32_t a, uint32_t b, uint32_t c_lo, uint32_t c_hi) { lo = madc_lo_cc(a, b, c_lo); hi = addc((uint32_t)(((uint64_t)a * b) >> 32), c_hi); }
#endif

// The moduli's limbs, little-endian, declared once: as immediates through Params::mod (the
// additions and the final subtraction fold them into instructions) and in constant memory.
#define CUZK_FP_MODULUS 0xffffaaabu, 0xb9feffffu, 0xb153ffffu, 0x1eabfffeu, 0xf6b0f624u, 0x6730d2a0u, \
                        0xf38512bfu, 0x64774b84u, 0x434bacd7u, 0x4b1ba7b6u, 0x397fe69au, 0x1a0111eau
#define CUZK_FR_MODULUS 0x00000001u, 0xffffffffu, 0xfffe5bfeu, 0x53bda402u, 0x09a1d805u, 0x3339d808u, \
                        0x299d7d48u, 0x73eda753u

// The moduli's limbs in constant memory, for the reduction rows of operator*: ptxas fuses a
// mad.lo/madc.hi pair into one IMAD.WIDE.U32.X when the second factor is a register or a
// constant-bank operand, not when it is an immediate (then each half is an IMAD with a
// 32-bit immediate plus an IADD3.X for the carry: four instructions instead of one).
#if defined(__CUDA_ARCH__)
#define CUZK_CONSTANT __constant__
#else
#define CUZK_CONSTANT static const
#endif
CUZK_CONSTANT uint32_t cuzk_fp_mod[12] = {CUZK_FP_MODULUS};
CUZK_CONSTANT uint32_t cuzk_fr_mod[8] = {CUZK_FR_MODULUS};
// A zero that ptxas cannot see (FrParams::row_factor).
CUZK_CONSTANT uint32_t cuzk_opaque_zero = 0;

// ---- field parameters: limbs as immediates so unrolled loops fold them into instructions ----
struct FpParams {
    static constexpr int N = 12;
    HD static uint32_t mod_operand(int i) { return cuzk_fp_mod[i]; }
    static constexpr uint32_t INV = 0xfffcfffdu;  // -p^-1 mod 2^32
    // The reduction row's q for its lowest limb.
    HD static uint32_t row_factor(uint32_t lo0) { return lo0 * INV; }
    HD static constexpr uint32_t mod(int i) {
        constexpr uint32_t m[N] = {CUZK_FP_MODULUS};
        return m[i];
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
    HD static uint32_t mod_operand(int i) { return cuzk_fr_mod[i]; }
    static constexpr uint32_t INV = 0xffffffffu;  // -r^-1 mod 2^32
    // q = lo0 * INV = -lo0, a negation, but one from a zero in constant memory: when ptxas
    // knows that q = -lo0 (from lo0 * INV or 0 - lo0) it splits every q*m_j of the row into
    // an IMAD.X and an IMAD.HI.U32.X instead of one IMAD.WIDE.U32.X (sm_90 SASS of one
    // product: 48 of its 112 products split, 320 instructions; with the opaque zero all
    // fused, 296).
    HD static uint32_t row_factor(uint32_t lo0) { return cuzk_opaque_zero - lo0; }
    HD static constexpr uint32_t mod(int i) {
        constexpr uint32_t m[N] = {CUZK_FR_MODULUS};
        return m[i];
    }
    HD static constexpr uint32_t one(int i) {
        return i == 0 ? 0xfffffffeu : i == 1 ? 0x00000001u : i == 2 ? 0x00034802u : i == 3 ? 0x5884b7fau :
               i == 4 ? 0xecbc4ff5u : i == 5 ? 0x998c4fefu : i == 6 ? 0xacc5056fu : 0x1824b159u;
    }
};

// Both moduli leave spare top bits (2p < 2^384, 2r < 2^256), so a + b and the CIOS
// intermediate t < 2m never overflow N limbs; the code below relies on that.
// 16-byte aligned (blst's layout is unchanged: 32 and 48 bytes are multiples of 16, and every
// device buffer is cuMemAlloc's 256-byte aligned), so that a plain copy of an element from
// global memory is 16-byte vector loads: at 4-byte alignment the NTT read every element and
// twiddle as 8 separate 32-bit loads, each its own L1 transaction, and its kernels were
// bound by the L1 (90% of its throughput in Nsight Compute).
template <class P>
struct alignas(16) Fe {
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

    // Montgomery product a*b/R mod m: CIOS (one row per limb b_i: add a*b_i, then q*m with q
    // chosen to clear the lowest limb, then drop that limb), with each row's sum kept in two
    // halves so that the device multiplies with one instruction per limb product.
    //
    // A 32x32-bit product is 64 bits: its low half lands on limb k and its high half on k+1.
    // When the products of one carry chain sit on consecutive aligned pairs (k, k+1), (k+2,
    // k+3), ... ptxas turns each mad.lo.cc/madc.hi.cc pair into one IMAD.WIDE.U32.X (64-bit
    // product plus 64-bit addend plus carry), against four instructions (IMAD, IMAD.HI and two
    // IADD3.X for the carries) when a chain holds only low or only high halves, which is what
    // a plain CIOS row does. So a row's products a_j*b_i (and q*m_j) are split by the parity
    // of j: even j land on pairs (j, j+1) of `lo`, odd j on pairs (j-1, j) of `hi`, which
    // counts from limb 1. Between rows the running sum is T*W = lo + W*hi (lo[0] = 0 once
    // reduced), so T = lo[1..N) + hi: the next row's `lo` starts as hi, plus the single limb
    // lo[1], whose carry goes in at limb 1, the bottom of the next `hi`, which starts as
    // lo[2..N) (the shift by one limb is free: it is which registers a chain reads). The two
    // halves are independent chains, so a row also has twice the instruction-level
    // parallelism of one chain.
    //
    // Bounds (a, T < m, so T + a*b_i + q*m < 2m*W): for both fields 2m*W < W^(N+1) (2p <
    // 2^382, 2r < 2^256), so the row's sum fits N+1 limbs, hi (times W) fits N limbs and a
    // chain into hi never carries out of its top limb. A carry out of lo's top limb belongs
    // to limb N, which is hi's top limb: it is added there, before hi's own chain reaches it
    // (every term is non-negative, so the partial sum is no larger than the final limb). The
    // product row's carry waits for its reduction row, which adds it with the reduction's
    // own carry in one three-input addition (reduce_row's `top`). After the last row T =
    // lo[1..N) + hi < 2m.
    HD friend Fe operator*(const Fe& a, const Fe& b) {
        uint32_t lo[N], hi[N];
        // Row 0: the products alone.
        _Pragma("unroll") for (int j = 0; j < N; j += 2) {
            mul_wide(lo[j], lo[j + 1], a.v[j], b.v[0]);
            mul_wide(hi[j], hi[j + 1], a.v[j + 1], b.v[0]);
        }
        reduce_row(lo, hi, 0);
        _Pragma("unroll") for (int i = 1; i < N; i++) {
            const uint32_t bi = b.v[i];
            uint32_t nlo[N], nhi[N];
            // The even products onto hi, which becomes the new lo; its carry is limb N's.
            mad_wide_cc(nlo[0], nlo[1], a.v[0], bi, hi[0], hi[1]);
            _Pragma("unroll") for (int j = 2; j < N; j += 2) madc_wide_cc(nlo[j], nlo[j + 1], a.v[j], bi, hi[j], hi[j + 1]);
            const uint32_t top = addc(0, 0);
            // lo[1] onto limb 0; its carry enters the odd chain at limb 1, the bottom of the
            // new hi, which reads lo two limbs up. The last product adds nothing (lo has no
            // limb N): `top` goes in with the reduction row's carry, not here, where it would
            // need a register pair (0, top) and a move to zero its low half on every row.
            nlo[0] = add_cc(nlo[0], lo[1]);
            _Pragma("unroll") for (int j = 1; j < N - 2; j += 2) madc_wide_cc(nhi[j - 1], nhi[j], a.v[j], bi, lo[j + 1], lo[j + 2]);
            madc_wide(nhi[N - 2], nhi[N - 1], a.v[N - 1], bi, 0, 0);
            _Pragma("unroll") for (int k = 0; k < N; k++) {
                lo[k] = nlo[k];
                hi[k] = nhi[k];
            }
            reduce_row(lo, hi, top);
        }
        Fe r;
        r.v[0] = add_cc(lo[1], hi[0]);
        _Pragma("unroll") for (int k = 1; k < N - 1; k++) r.v[k] = addc_cc(lo[k + 1], hi[k]);
        r.v[N - 1] = addc(hi[N - 1], 0);
        return reduce_once(r);
    }

    // One row's reduction: q*m added with q = lo[0] * (-m^-1), which clears lo[0] (hi starts
    // at limb 1), the even limbs of m onto lo and the odd ones onto hi (see operator*), and
    // the product row's carry `top` (limb N) with the carry out of lo's chain.
    //
    // Fr's lowest limb is 1: then q*m_0 is q itself, added with two additions on the integer
    // pipe instead of a 64-bit product on the multiply pipe, which the NTT keeps busiest. Its
    // next limb is 2^32 - 1, whose product is a shift and a subtraction.
    HD static void reduce_row(uint32_t (&lo)[N], uint32_t (&hi)[N], uint32_t top) {
        const uint32_t lo0 = lo[0];
        const uint32_t q = P::row_factor(lo0);
        if (P::mod(0) == 1) {
            lo[0] = add_cc(lo[0], q);
            lo[1] = addc_cc(lo[1], 0);
        } else {
            mad_wide_cc(lo[0], lo[1], q, P::mod_operand(0), lo[0], lo[1]);
        }
        _Pragma("unroll") for (int j = 2; j < N; j += 2) madc_wide_cc(lo[j], lo[j + 1], q, P::mod_operand(j), lo[j], lo[j + 1]);
        // Limb N's carries, added while the flag is live: one IADD3.X (or IMAD.X). Kept as a
        // value for an addition after hi's chain, ptxas made it a predicate, a VIADD and a
        // predicated IMAD.MOV on every row.
        hi[N - 1] = addc(hi[N - 1], top);
        if (P::mod(1) == 0xffffffffu) {
            // q*(2^32 - 1) = q*2^32 - q: its two limbs by one subtraction with borrow, added
            // on the integer pipe (Fr's second limb; the same reason as m_0 above). The low
            // limb, -q, is lo[0] itself (q = -lo[0]): taking it from there saves the negation,
            // an IMAD.MOV on the multiply pipe; the subtraction stays for its borrow.
            const uint32_t p_lo = lo0;
            sub_cc(0, q);
            const uint32_t p_hi = subc(q, 0);
            hi[0] = add_cc(hi[0], p_lo);
            hi[1] = addc_cc(hi[1], p_hi);
        } else {
            mad_wide_cc(hi[0], hi[1], q, P::mod_operand(1), hi[0], hi[1]);
        }
        _Pragma("unroll") for (int j = 3; j < N - 1; j += 2) madc_wide_cc(hi[j - 1], hi[j], q, P::mod_operand(j), hi[j - 1], hi[j]);
        madc_wide(hi[N - 2], hi[N - 1], q, P::mod_operand(N - 1), hi[N - 2], hi[N - 1]);
    }

    // a^2/R mod m: the product with itself. (A dedicated squaring, cross products once and
    // doubled, saved 15% over the four-instruction rows; against the one-instruction rows of
    // operator* it costs more than it saves.)
    HD Fe sqr() const { return *this * *this; }

    // Montgomery form -> canonical integer (a * 1 / R).
    HD Fe from_mont() const {
        Fe one_int = zero();
        one_int.v[0] = 1;
        return *this * one_int;
    }

    // a^(m-2) = 1/a for a != 0 (Fermat; 0 for a = 0), square-and-multiply from the top bit
    // of m - 2: about 1.5 products per bit. For inverses that are rare or shared by a batch
    // (the MSM's window points, cuda/msm.cuh), not for a hot loop.
    HD Fe inverse() const {
        uint32_t e[N];
        e[0] = sub_cc(P::mod(0), 2u);
        _Pragma("unroll") for (int i = 1; i < N; i++) e[i] = subc_cc(P::mod(i), 0u);
        Fe r = one();
        for (int i = N - 1; i >= 0; i--)
            for (int b = 31; b >= 0; b--) {
                r = r.sqr();
                if ((e[i] >> b) & 1) r = r * *this;
            }
        return r;
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
