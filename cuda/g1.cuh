// G1 of BLS12-381 (y^2 = x^3 + 4 over Fp): affine points as blst stores them and XYZZ
// accumulators for Pippenger buckets.
//
// XYZZ coordinates (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2) make a mixed addition cost 8M+2S and
// need no inversion. The infinity is ZZ = ZZZ = 0. Formulas: add-2008-s, madd-2008-s,
// dbl-2008-s-1, mdbl-2008-s-1 of the Explicit-Formulas Database, for a = 0, with the
// exceptional cases (P == Q, P == -Q, infinity) handled explicitly, so duplicated and
// negated points in one MSM are summed correctly.
#pragma once
#include "field.cuh"

// Same 96 bytes as blst_p1_affine; blst encodes the infinity as x = y = 0.
struct g1_affine_t {
    fp_t x, y;
    HD bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

struct g1_xyzz_t {
    fp_t X, Y, ZZ, ZZZ;

    HD static g1_xyzz_t inf() {
        g1_xyzz_t r;
        r.X = fp_t::zero(); r.Y = fp_t::zero(); r.ZZ = fp_t::zero(); r.ZZZ = fp_t::zero();
        return r;
    }
    HD bool is_inf() const { return ZZ.is_zero(); }

    HD static g1_xyzz_t from_affine(const g1_affine_t& a) {
        if (a.is_inf()) return inf();
        g1_xyzz_t r;
        r.X = a.x; r.Y = a.y; r.ZZ = fp_t::one(); r.ZZZ = fp_t::one();
        return r;
    }

    // 2 * (x, y) for an affine point (mdbl-2008-s-1).
    HD static g1_xyzz_t dbl_affine(const fp_t& x, const fp_t& y) {
        fp_t U = y.dbl();
        fp_t V = U.sqr();
        fp_t W = U * V;
        fp_t S = x * V;
        fp_t xx = x.sqr();
        fp_t M = xx.dbl() + xx;
        g1_xyzz_t r;
        r.X = M.sqr() - S.dbl();
        r.Y = M * (S - r.X) - W * y;
        r.ZZ = V;
        r.ZZZ = W;
        return r;
    }

    // 2 * this (dbl-2008-s-1).
    HD g1_xyzz_t dbl() const {
        if (is_inf()) return *this;
        fp_t U = Y.dbl();
        fp_t V = U.sqr();
        fp_t W = U * V;
        fp_t S = X * V;
        fp_t xx = X.sqr();
        fp_t M = xx.dbl() + xx;
        g1_xyzz_t r;
        r.X = M.sqr() - S.dbl();
        r.Y = M * (S - r.X) - W * Y;
        r.ZZ = V * ZZ;
        r.ZZZ = W * ZZZ;
        return r;
    }

    // this += (x, y), an affine point that is not the infinity (madd-2008-s).
    HD void add_affine(const fp_t& x, const fp_t& y) {
        if (is_inf()) {
            X = x; Y = y; ZZ = fp_t::one(); ZZZ = fp_t::one();
            return;
        }
        fp_t U2 = x * ZZ;
        fp_t S2 = y * ZZZ;
        fp_t P = U2 - X;
        fp_t R = S2 - Y;
        if (P.is_zero()) {
            if (R.is_zero()) *this = dbl_affine(x, y);  // same point
            else *this = inf();                          // opposite points
            return;
        }
        fp_t PP = P.sqr();
        fp_t PPP = P * PP;
        fp_t Q = X * PP;
        fp_t X3 = R.sqr() - PPP - Q.dbl();
        Y = R * (Q - X3) - Y * PPP;
        X = X3;
        ZZ = ZZ * PP;
        ZZZ = ZZZ * PPP;
    }

    // this += o (add-2008-s).
    HD void add(const g1_xyzz_t& o) {
        if (o.is_inf()) return;
        if (is_inf()) { *this = o; return; }
        fp_t U1 = X * o.ZZ;
        fp_t U2 = o.X * ZZ;
        fp_t S1 = Y * o.ZZZ;
        fp_t S2 = o.Y * ZZZ;
        fp_t P = U2 - U1;
        fp_t R = S2 - S1;
        if (P.is_zero()) {
            if (R.is_zero()) *this = dbl();
            else *this = inf();
            return;
        }
        fp_t PP = P.sqr();
        fp_t PPP = P * PP;
        fp_t Q = U1 * PP;
        fp_t X3 = R.sqr() - PPP - Q.dbl();
        Y = R * (Q - X3) - S1 * PPP;
        X = X3;
        ZZ = ZZ * o.ZZ * PP;
        ZZZ = ZZZ * o.ZZZ * PPP;
    }

    // k * this for a small public k (double-and-add, high bit first).
    HD g1_xyzz_t mul_u32(uint32_t k) const {
        g1_xyzz_t r = inf();
        for (int i = 31; i >= 0; i--) {
            r = r.dbl();
            if ((k >> i) & 1) r.add(*this);
        }
        return r;
    }
};
