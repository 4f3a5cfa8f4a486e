// The recorded-R1CS mat-vec kernel (r1cs.cuh); src/gpu/r1cs.rs launches it. build.rs compiles
// every cuda/*.cu into one translation unit.
#include "r1cs.cuh"

extern "C" __global__ void cuzk_r1cs_matvec(uint32_t rows, const uint32_t* row_start, const uint32_t* cols,
                                            const uint16_t* codes, const fr_t* table, const fr_t* input,
                                            const fr_t* aux, fr_t* out) {
    r1cs_row_thread(blockIdx.x * blockDim.x + threadIdx.x, rows, row_start, cols, codes, table, input, aux, out);
}
