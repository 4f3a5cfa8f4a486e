// G2 of BLS12-381: y^2 = x^3 + 4(u + 1) over Fp2. Points are 192 bytes affine
// (blst_p2_affine) and 384 bytes XYZZ.
#pragma once
#include "curve.cuh"
#include "fp2.cuh"

typedef affine_t<fp2_t> g2_affine_t;
typedef xyzz_t<fp2_t> g2_xyzz_t;
