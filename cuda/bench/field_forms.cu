// Throughput of the field products in their three forms, Fp and Fr, on one GPU: field.cuh's
// (32-bit limbs, carry chains: what every kernel uses), fe52.cuh's (52-bit limbs, FP64 pipe)
// and fe29.cuh's (unsaturated 29-bit limbs, no carry chains), then the first two sharing the
// SM: warps of either form in one launch, and one chain of each in every thread. Each thread
// runs two independent chains x = x * y; every variant must end with field.cuh's bytes.
// Standalone (scripts/device-suite.sh field-forms):
//   nvcc -O3 -std=c++17 -arch=sm_90 -o field_forms cuda/bench/field_forms.cu && ./field_forms [THREADS [PRODUCTS]]
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "../fe29.cuh"
#include "../fe52.cuh"

#define CHECK(x)                                                                         \
    do {                                                                                 \
        cudaError_t e = (x);                                                             \
        if (e != cudaSuccess) {                                                          \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e)); \
            exit(2);                                                                     \
        }                                                                                \
    } while (0)

// Thread t's two chains in field.cuh's form.
template <class F>
__device__ void chain32_thread(const F* in, F* out, uint32_t n, uint32_t iters, uint32_t t) {
    F x0 = in[t], x1 = in[n + t];
    const F y = in[2 * n + t];
    for (uint32_t k = 0; k < iters; k++) {
        x0 = x0 * y;
        x1 = x1 * y;
    }
    out[t] = x0;
    out[n + t] = x1;
}

template <class F>
__global__ void chain32(const F* in, F* out, uint32_t n, uint32_t iters) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) chain32_thread(in, out, n, iters, t);
}

// G: the other form (Fe52<P> or Fe29<P>), converted from and to field.cuh's.
template <class G>
__device__ void chain_other_thread(const typename G::Fe32* in, typename G::Fe32* out, uint32_t n, uint32_t iters,
                                   uint32_t t) {
    G x0 = G::from_fe(in[t]), x1 = G::from_fe(in[n + t]);
    const G y = G::from_fe(in[2 * n + t]);
    for (uint32_t k = 0; k < iters; k++) {
        x0 = x0 * y;
        x1 = x1 * y;
    }
    out[t] = x0.to_fe();
    out[n + t] = x1.to_fe();
}

template <class G>
__global__ void chain_other(const typename G::Fe32* in, typename G::Fe32* out, uint32_t n, uint32_t iters) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) chain_other_thread<G>(in, out, n, iters, t);
}

// Warps of one launch split between the two forms: warp w computes with 52-bit limbs when
// w % 4 < fp_quarters, so both pipes have work on every SM at once.
template <class P>
__global__ void chain_mixed(const typename Fe52<P>::Fe32* in, typename Fe52<P>::Fe32* out, uint32_t n, uint32_t iters,
                            uint32_t fp_quarters) {
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    if ((t / 32) % 4 < fp_quarters) chain_other_thread<Fe52<P>>(in, out, n, iters, t);
    else chain32_thread(in, out, n, iters, t);
}

// Both forms in one thread: chain 0 in field.cuh's form (integer multiply pipe), chain 1 in
// 52-bit limbs (FP64 pipe), interleaved in one instruction stream.
template <class P>
__global__ void chain_split(const typename Fe52<P>::Fe32* in, typename Fe52<P>::Fe32* out, uint32_t n, uint32_t iters) {
    typedef typename Fe52<P>::Fe32 F;
    const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    F x0 = in[t];
    const F y = in[2 * n + t];
    Fe52<P> x1 = Fe52<P>::from_fe(in[n + t]);
    const Fe52<P> y52 = Fe52<P>::from_fe(y);
    for (uint32_t k = 0; k < iters; k++) {
        x0 = x0 * y;
        x1 = x1 * y52;
    }
    out[t] = x0;
    out[n + t] = x1.to_fe();
}

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint32_t next32() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

// The best of `runs` launches, in ms of device time.
template <class Launch> static float best_ms(int runs, Launch launch) {
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    float best = 1e30f;
    for (int r = 0; r < runs; r++) {
        float ms;
        CHECK(cudaEventRecord(e0));
        launch();
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (ms < best) best = ms;
    }
    CHECK(cudaGetLastError());
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    return best;
}

// One field (P: fe52.cuh's parameters, P29: fe29.cuh's): every variant over the same inputs,
// its time, and how many of its 2n results differ from field.cuh's form's. Returns that count
// summed, plus the host's check of field.cuh's form on a few threads.
template <class P, class P29> static size_t run(const char* name, uint32_t n, uint32_t iters, int runs) {
    typedef typename Fe52<P>::Fe32 F;
    std::vector<F> h(3 * n);
    for (auto& a : h) {
        for (int i = 0; i < F::N; i++) a.v[i] = next32();
        a.v[F::N - 1] &= 0x1fffffffu;
        a = F::reduce_once(F::reduce_once(a));
    }
    F *in, *out;
    CHECK(cudaMalloc(&in, sizeof(F) * 3 * n));
    CHECK(cudaMalloc(&out, sizeof(F) * 2 * n));
    CHECK(cudaMemcpy(in, h.data(), sizeof(F) * 3 * n, cudaMemcpyHostToDevice));
    const uint32_t block = 256, grid = (n + block - 1) / block;
    const double products = 2.0 * n * iters;
    std::vector<F> ref(2 * n), got(2 * n);
    float ms32 = 0;
    size_t bad = 0;
    // The first variant (field.cuh's form) is the reference for the others.
    auto variant = [&](const char* what, const void* kernel, auto launch) {
        const float ms = best_ms(runs, launch);
        cudaFuncAttributes attr;
        CHECK(cudaFuncGetAttributes(&attr, kernel));
        CHECK(cudaMemcpy(got.data(), out, sizeof(F) * 2 * n, cudaMemcpyDeviceToHost));
        size_t differ = 0;
        if (ms32 == 0) {
            ms32 = ms;
            ref = got;
        } else {
            for (size_t i = 0; i < 2 * (size_t)n; i++) differ += !got[i].eq(ref[i]);
        }
        bad += differ;
        printf("%s, %s: %.3f ms, %.2f G products/s, %d registers, %.3fx field.cuh's form; results differing: %zu of %zu\n",
               name, what, ms, products / ms / 1e6, attr.numRegs, ms32 / ms, differ, 2 * (size_t)n);
    };
    variant("32-bit limbs (field.cuh)", (const void*)chain32<F>, [&] { chain32<F><<<grid, block>>>(in, out, n, iters); });
    variant("52-bit limbs on the FP64 pipe (fe52.cuh)", (const void*)chain_other<Fe52<P>>,
            [&] { chain_other<Fe52<P>><<<grid, block>>>(in, out, n, iters); });
    variant("29-bit limbs without carry chains (fe29.cuh)", (const void*)chain_other<Fe29<P29>>,
            [&] { chain_other<Fe29<P29>><<<grid, block>>>(in, out, n, iters); });
    for (uint32_t fq = 1; fq <= 3; fq++) {
        char what[64];
        snprintf(what, sizeof what, "%u of 4 warps in 52-bit limbs, the rest in 32", fq);
        variant(what, (const void*)chain_mixed<P>, [&] { chain_mixed<P><<<grid, block>>>(in, out, n, iters, fq); });
    }
    variant("one chain of each form in every thread", (const void*)chain_split<P>,
            [&] { chain_split<P><<<grid, block>>>(in, out, n, iters); });
    // The host's products for a few threads, from the same inputs.
    for (uint32_t t = 0; t < 4; t++) {
        F x = h[t];
        for (uint32_t k = 0; k < iters; k++) x = x * h[2 * n + t];
        if (!x.eq(ref[t])) {
            printf("%s: thread %u differs from the host's products\n", name, t);
            bad++;
        }
    }
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    return bad;
}

int main(int argc, char** argv) {
    const uint32_t n = argc > 1 ? atoi(argv[1]) : 132 * 2048;
    const uint32_t iters = argc > 2 ? atoi(argv[2]) : 512;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    printf("%u threads, two chains of %u products each\n", n, iters);
    const size_t bad = run<Fp52Params, Fp29Params>("fp", n, iters, 5) + run<Fr52Params, Fr29Params>("fr", n, iters, 5);
    printf("%s\n", bad ? "RESULTS DIFFER" : "every result equal");
    return bad != 0;
}
