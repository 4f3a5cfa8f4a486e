// sppark's NTT over BLS12-381's Fr, timed on the device: the peer of `gpu_bench ntt`, for
// issue 13's "the NTT at least as fast as sppark's at 2^26 and 2^27" measured in one command
// beside cuzk's. sppark 0.1.16 is the version supraseal-c2 0.1.2 (peer/Cargo.lock) compiles.
//
//   sppark_ntt [--logs 24,26,27] [--runs 5]
//
// Per size: n pseudo-random field elements (any value below r is a Montgomery form), then
//  - checks: the forward NN transform's first output equals the sum of the inputs (computed
//    on the host with blst), and inverse(forward(x)) = x byte for byte, in the two orders
//    supraseal-c2's H step uses (forward RN, inverse NR);
//  - timings, each transform `runs` times on the device-resident buffer, CUDA events around
//    sppark's own launches (its bit reversals included where the order needs them): forward
//    NN (natural in and out, what cuzk's forward NTT does), forward NR, inverse NR, coset
//    forward RN. Min and median of the runs, ms.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <ff/bls12-381.hpp>
typedef bls12_381::fr_t fr_t;
#include <ntt/ntt.cuh>

#define CHECK(call)                                                                        \
    do {                                                                                   \
        cudaError_t e_ = (call);                                                           \
        if (e_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s: %s\n", #call, cudaGetErrorString(e_));                    \
            exit(2);                                                                       \
        }                                                                                  \
    } while (0)

// xorshift64*: the inputs, the same for every run of this program.
static uint64_t next_u64(uint64_t& s) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    return s * 0x2545F4914F6CDD1DULL;
}

static void fill(std::vector<uint64_t>& limbs, size_t n, uint64_t seed) {
    limbs.resize(4 * n);
    uint64_t s = seed | 1;
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++) limbs[4 * i + k] = next_u64(s);
        // Below 2^254 < r: a valid Montgomery form of some element.
        limbs[4 * i + 3] &= 0x3fffffffffffffffULL;
    }
}

struct Stat {
    double min, median;
};

static Stat stat(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return {v.front(), v[v.size() / 2]};
}

int main(int argc, char** argv) {
    std::vector<uint32_t> logs = {24, 26, 27};
    int runs = 5;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--logs" && i + 1 < argc) {
            logs.clear();
            std::string v = argv[++i];
            size_t p = 0;
            while (p < v.size()) {
                size_t q = v.find(',', p);
                if (q == std::string::npos) q = v.size();
                logs.push_back((uint32_t)std::stoul(v.substr(p, q - p)));
                p = q + 1;
            }
        } else if (a == "--runs" && i + 1 < argc) {
            runs = std::max(1, atoi(argv[++i]));
        } else {
            fprintf(stderr, "usage: sppark_ntt [--logs 24,26,27] [--runs 5]\n");
            return 2;
        }
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("SKIP: no CUDA device\n");
        return 0;
    }
    const gpu_t& gpu = select_gpu(0);
    printf("sppark 0.1.16 NTT (BLS12-381 Fr) on %s, %d timed runs a transform\n", gpu.props().name, runs);
    stream_t& stream = gpu;
    bool ok = true;
    for (uint32_t lg : logs) {
        const size_t n = (size_t)1 << lg;
        std::vector<uint64_t> input;
        fill(input, n, 0x9e3779b97f4a7c15ULL ^ lg);
        std::vector<uint64_t> out(4 * n);
        fr_t* d = nullptr;
        CHECK(cudaMalloc(&d, n * sizeof(fr_t)));
        auto upload = [&] {
            CHECK(cudaMemcpy(d, input.data(), n * sizeof(fr_t), cudaMemcpyHostToDevice));
        };
        auto download = [&] {
            CHECK(cudaMemcpy(out.data(), d, n * sizeof(fr_t), cudaMemcpyDeviceToHost));
        };
        using IO = NTT::InputOutputOrder;
        using Dir = NTT::Direction;
        using Ty = NTT::Type;

        // Check 1: forward NN, out[0] = sum of the inputs (also builds sppark's twiddles).
        upload();
        NTT::Base_dev_ptr(stream, d, lg, IO::NN, Dir::forward, Ty::standard);
        CHECK(cudaStreamSynchronize(stream));
        download();
        fr_t sum, x;
        memcpy(&sum, &input[0], sizeof(fr_t));
        for (size_t i = 1; i < n; i++) {
            memcpy(&x, &input[4 * i], sizeof(fr_t));
            sum = sum + x;
        }
        const bool sum_ok = memcmp(&sum, &out[0], sizeof(fr_t)) == 0;
        // Check 2: inverse NR of forward RN gives the input back.
        upload();
        NTT::Base_dev_ptr(stream, d, lg, IO::RN, Dir::forward, Ty::standard);
        NTT::Base_dev_ptr(stream, d, lg, IO::NR, Dir::inverse, Ty::standard);
        CHECK(cudaStreamSynchronize(stream));
        download();
        const bool round_ok = memcmp(out.data(), input.data(), n * sizeof(fr_t)) == 0;
        printf("2^%u: forward NN out[0] = sum of inputs: %s; inverse NR(forward RN(x)) = x: %s\n", lg,
               sum_ok ? "yes" : "NO", round_ok ? "yes" : "NO");
        ok = ok && sum_ok && round_ok;

        struct Case {
            const char* name;
            IO order;
            Dir dir;
            Ty type;
        } cases[] = {
            {"forward NN", IO::NN, Dir::forward, Ty::standard},
            {"forward NR", IO::NR, Dir::forward, Ty::standard},
            {"inverse NR", IO::NR, Dir::inverse, Ty::standard},
            {"coset forward RN", IO::RN, Dir::forward, Ty::coset},
        };
        cudaEvent_t start, stop;
        CHECK(cudaEventCreate(&start));
        CHECK(cudaEventCreate(&stop));
        for (const Case& c : cases) {
            // One untimed run: its launch configuration's first use.
            NTT::Base_dev_ptr(stream, d, lg, c.order, c.dir, c.type);
            std::vector<float> ms;
            for (int r = 0; r < runs; r++) {
                CHECK(cudaEventRecord(start, stream));
                NTT::Base_dev_ptr(stream, d, lg, c.order, c.dir, c.type);
                CHECK(cudaEventRecord(stop, stream));
                CHECK(cudaEventSynchronize(stop));
                float t = 0;
                CHECK(cudaEventElapsedTime(&t, start, stop));
                ms.push_back(t);
            }
            Stat s = stat(ms);
            printf("2^%u %-17s min %8.2f ms  median %8.2f ms\n", lg, c.name, s.min, s.median);
        }
        CHECK(cudaEventDestroy(start));
        CHECK(cudaEventDestroy(stop));
        CHECK(cudaFree(d));
        fflush(stdout);
    }
    if (!ok) {
        printf("FAILED: a check above did not hold\n");
        return 1;
    }
    return 0;
}
