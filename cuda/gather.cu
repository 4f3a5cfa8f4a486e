// The density-gather kernel (gather.cuh); src/gpu/gather.rs launches it. build.rs compiles
// every cuda/*.cu into one translation unit, so this file needs no include in cuzk.cu.
#include "gather.cuh"

extern "C" __global__ void cuzk_gather_dense(const fr_t* aux, const uint64_t* words, const uint32_t* prefix,
                                             uint32_t n, fr_t* out) {
    gather_dense_thread(blockIdx.x * blockDim.x + threadIdx.x, aux, words, prefix, n, out);
}
