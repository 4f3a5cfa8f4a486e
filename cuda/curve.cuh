// Short-Weierstrass curves y^2 = x^3 + b with a = 0 over a field F (Fp for G1, Fp2 for G2):
// affine points as blst stores them and XYZZ accumulators for Pippenger buckets.
//
// XYZZ coordinates (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2) make a mixed addition cost 8M+2S and
// need no inversion. The infinity is ZZ = ZZZ = 0. Formulas: add-2008-s, madd-2008-s,
// dbl-2008-s-1, mdbl-2008-s-1 of the Explicit-Formulas Database, for a = 0 (b never
// appears), with the exceptional cases (P == Q, P == -Q, infinity) handled explicitly, so
// duplicated and negated points in one MSM are summed correctly. F needs zero, one, is_zero,
// +, -, neg, dbl, * and sqr.
#pragma once
#include "field.cuh"

// An affine point as blst stores it (x then y); blst encodes the infinity as x = y = 0.
template <class F>
struct affine_t {
    F x, y;
    HD bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

template <class F>
struct xyzz_t {
    F X, Y, ZZ, ZZZ;

    HD static xyzz_t inf() {
        xyzz_t r;
        r.X = F::zero(); r.Y = F::zero(); r.ZZ = F::zero(); r.ZZZ = F::zero();
        return r;
    }
    HD bool is_inf() const { return ZZ.is_zero(); }

    HD static xyzz_t from_affine(const affine_t<F>& a) {
        if (a.is_inf()) return inf();
        xyzz_t r;
        r.X = a.x; r.Y = a.y; r.ZZ = F::one(); r.ZZZ = F::one();
        return r;
    }

    // 2 * (x, y) for an affine point (mdbl-2008-s-1).
    HD static xyzz_t dbl_affine(const F& x, const F& y) {
        F U = y.dbl();
        F V = U.sqr();
        F W = U * V;
        F S = x * V;
        F xx = x.sqr();
        F M = xx.dbl() + xx;
        xyzz_t r;
        r.X = M.sqr() - S.dbl();
        r.Y = M * (S - r.X) - W * y;
        r.ZZ = V;
        r.ZZZ = W;
        return r;
    }

    // 2 * this (dbl-2008-s-1).
    HD xyzz_t dbl() const {
        if (is_inf()) return *this;
        F U = Y.dbl();
        F V = U.sqr();
        F W = U * V;
        F S = X * V;
        F xx = X.sqr();
        F M = xx.dbl() + xx;
        xyzz_t r;
        r.X = M.sqr() - S.dbl();
        r.Y = M * (S - r.X) - W * Y;
        r.ZZ = V * ZZ;
        r.ZZZ = W * ZZZ;
        return r;
    }

    // this += (x, y), or (x, -y) when neg_y: an affine point that is not the infinity
    // (madd-2008-s). The sign is applied to y * ZZZ, so y itself is read once and not copied.
    HD void add_affine(const F& x, const F& y, bool neg_y = false) {
        if (is_inf()) {
            X = x; Y = neg_y ? y.neg() : y; ZZ = F::one(); ZZZ = F::one();
            return;
        }
        F U2 = ZZ * x;
        F S2 = ZZZ * y;
        if (neg_y) S2 = S2.neg();
        F P = U2 - X;
        F R = S2 - Y;
        if (P.is_zero()) {
            if (R.is_zero()) *this = dbl_affine(x, neg_y ? y.neg() : y);  // same point
            else *this = inf();                                              // opposite points
            return;
        }
        F PP = P.sqr();
        F PPP = P * PP;
        F Q = X * PP;
        F X3 = R.sqr() - PPP - Q.dbl();
        Y = R * (Q - X3) - Y * PPP;
        X = X3;
        ZZ = ZZ * PP;
        ZZZ = ZZZ * PPP;
    }

    // this += o (add-2008-s).
    HD void add(const xyzz_t& o) {
        if (o.is_inf()) return;
        if (is_inf()) { *this = o; return; }
        F U1 = X * o.ZZ;
        F U2 = o.X * ZZ;
        F S1 = Y * o.ZZZ;
        F S2 = o.Y * ZZZ;
        F P = U2 - U1;
        F R = S2 - S1;
        if (P.is_zero()) {
            if (R.is_zero()) *this = dbl();
            else *this = inf();
            return;
        }
        F PP = P.sqr();
        F PPP = P * PP;
        F Q = U1 * PP;
        F X3 = R.sqr() - PPP - Q.dbl();
        Y = R * (Q - X3) - S1 * PPP;
        X = X3;
        ZZ = ZZ * o.ZZ * PP;
        ZZZ = ZZZ * o.ZZZ * PPP;
    }

    // k * this for a small public k (double-and-add, high bit first).
    HD xyzz_t mul_u32(uint32_t k) const {
        xyzz_t r = inf();
        for (int i = 31; i >= 0; i--) {
            r = r.dbl();
            if ((k >> i) & 1) r.add(*this);
        }
        return r;
    }
};
