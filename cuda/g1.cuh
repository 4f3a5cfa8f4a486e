// G1 of BLS12-381: y^2 = x^3 + 4 over Fp. Points are 96 bytes affine (blst_p1_affine) and
// 192 bytes XYZZ.
#pragma once
#include "curve.cuh"

typedef affine_t<fp_t> g1_affine_t;
typedef xyzz_t<fp_t> g1_xyzz_t;
