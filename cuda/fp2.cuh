// Fp2 = Fp[u]/(u^2 + 1), the field of G2's coordinates, with blst's layout (blst_fp2: c0
// then c1, each a 48-byte Montgomery Fp), so G2 points are copied without conversion.
//
// It has the interface of Fe (zero, one, is_zero, +, -, neg, dbl, *, sqr), which is all the
// curve formulas in curve.cuh use, so G1 and G2 share them.
#pragma once
#include "field.cuh"

// The products are out of line: a G2 addition has a dozen of them, and inlining every one
// (each 3 CIOS products) made the G2 kernels several times larger and slower to compile
// for a few percent of B_g2's time.
#if defined(__CUDACC__)
#define FP2_OUTLINE __host__ __device__ __noinline__
#else
#define FP2_OUTLINE __attribute__((noinline))
#endif

struct fp2_t {
    fp_t c0, c1;

    HD static fp2_t zero() { fp2_t r; r.c0 = fp_t::zero(); r.c1 = fp_t::zero(); return r; }
    HD static fp2_t one() { fp2_t r; r.c0 = fp_t::one(); r.c1 = fp_t::zero(); return r; }
    HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }

    HD friend fp2_t operator+(const fp2_t& a, const fp2_t& b) {
        fp2_t r; r.c0 = a.c0 + b.c0; r.c1 = a.c1 + b.c1; return r;
    }
    HD friend fp2_t operator-(const fp2_t& a, const fp2_t& b) {
        fp2_t r; r.c0 = a.c0 - b.c0; r.c1 = a.c1 - b.c1; return r;
    }
    HD fp2_t neg() const { fp2_t r; r.c0 = c0.neg(); r.c1 = c1.neg(); return r; }
    HD fp2_t dbl() const { fp2_t r; r.c0 = c0.dbl(); r.c1 = c1.dbl(); return r; }

    // Karatsuba: 3 Fp products instead of 4 (u^2 = -1).
    FP2_OUTLINE friend fp2_t operator*(const fp2_t& a, const fp2_t& b) {
        fp_t t0 = a.c0 * b.c0;
        fp_t t1 = a.c1 * b.c1;
        fp_t t2 = (a.c0 + a.c1) * (b.c0 + b.c1);
        fp2_t r;
        r.c0 = t0 - t1;
        r.c1 = t2 - t0 - t1;
        return r;
    }

    // (c0 + c1 u)^2 = (c0 + c1)(c0 - c1) + 2 c0 c1 u: 2 Fp products.
    FP2_OUTLINE fp2_t sqr() const {
        fp2_t r;
        r.c0 = (c0 + c1) * (c0 - c1);
        r.c1 = (c0 * c1).dbl();
        return r;
    }
};
