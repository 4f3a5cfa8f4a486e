// Host check of the NTT tile code (ntt.cuh), without a GPU: the first pass and the later
// passes as cuzk.cu's kernels run them (every block, every thread of a step, the threads of a
// step in reverse order, since none may depend on another between barriers), for radix-4 and
// radix-8 steps and the pass sizes src/gpu/kernels.rs launches, must equal a plain radix-2
// DIT transform over the same twiddle table, which must equal the DFT's definition at small
// sizes. The twiddles are powers of a 2^k-th root of unity made from Fr's 2^32-nd (7 raised
// to (r - 1) / 2^32). The scale pass (a coset's powers, the inverse's 1/n) against a plain
// loop. Run: scripts/cuda-host-test.sh
#include <cstdio>
#include <vector>
#include "../ntt.cuh"


static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t next_u64() {  // xorshift64*
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

// A field element below r, in Montgomery form: a random one reduced by products with one.
static fr_t random_fr() {
    fr_t x;
    for (int j = 0; j < 8; j++) x.v[j] = (uint32_t)next_u64();
    x.v[7] &= 0x3fffffffu;  // below 2^254 < r
    return x * fr_t::one();
}

static bool eq(const fr_t& a, const fr_t& b) { return a.eq(b); }

// base^e for a 256-bit exponent given as 8 little-endian 32-bit limbs.
static fr_t pow256(fr_t base, const uint32_t e[8]) {
    fr_t r = fr_t::one();
    for (int i = 255; i >= 0; i--) {
        r = r * r;
        if ((e[i / 32] >> (i % 32)) & 1) r = r * base;
    }
    return r;
}

// A primitive 2^k-th root of unity: 7^((r-1)/2^32), squared 32 - k times.
static fr_t root_of_unity(uint32_t k) {
    fr_t seven = fr_t::zero();
    for (int i = 0; i < 7; i++) seven = seven + fr_t::one();
    // (r - 1) / 2^32 = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff
    const uint32_t e[8] = {0xffffffffu, 0xfffe5bfeu, 0x53bda402u, 0x09a1d805u,
                           0x3339d808u, 0x299d7d48u, 0x73eda753u, 0};
    fr_t w = pow256(seven, e);
    for (uint32_t i = k; i < 32; i++) w = w * w;
    return w;
}

static bool check_root(fr_t w, uint32_t k) {
    fr_t p = w;
    for (uint32_t i = 1; i < k; i++) p = p * p;  // w^(2^(k-1))
    bool minus_one = eq(p + fr_t::one(), fr_t::zero());
    return minus_one && eq(p * p, fr_t::one());
}

// The plain transform: bit reversal, then every stage over the whole array.
static std::vector<fr_t> reference(const std::vector<fr_t>& in, const std::vector<fr_t>& tw, uint32_t log_n) {
    uint32_t n = 1u << log_n;
    std::vector<fr_t> v(n);
    for (uint32_t i = 0; i < n; i++) v[i] = in[cuzk_bitrev(i, log_n)];
    for (uint32_t s = 0; s < log_n; s++) {
        uint32_t m = 1u << s;
        for (uint32_t i = 0; i < n; i++) {
            if (i & m) continue;
            fr_t w = tw[(i & (m - 1)) << (log_n - 1 - s)];
            fr_t a = v[i], b = v[i + m] * w;
            v[i] = a + b;
            v[i + m] = a - b;
        }
    }
    return v;
}

// The stages of one tile, the threads of each step in reverse.
template <int R>
static void run_tile(const ntt_smem_t& sh, const fr_t* tw, const ntt_tile_t& tile, uint32_t elems, uint32_t stages) {
    // As many threads as the kernels' blocks have: in the larger tiles each takes several
    // groups of a step.
    const uint32_t block = R == 3 ? CUZK_NTT_THREADS_R8 : CUZK_NTT_THREADS_R4;
    uint32_t threads = elems >> R;
    if (threads > block) threads = block;
    if (threads == 0) threads = 1;
    for (uint32_t d = 0; d < stages; d += R) {
        uint32_t r = stages - d < (uint32_t)R ? stages - d : R;
        for (uint32_t t = threads; t-- > 0;) ntt_tile_stages<R>(sh, tw, tile, elems, d, r, t, threads);
    }
}

// The kernels' passes in geometry `geo`: cuzk_ntt_first_stages, then cuzk_ntt_mid_stages as
// src/gpu/ntt.rs launches them.
template <int R>
static std::vector<fr_t> tiled(const std::vector<fr_t>& in, const std::vector<fr_t>& tw, uint32_t log_n,
                               const ntt_geometry_t& geo) {
    uint32_t n = 1u << log_n, sl = log_n < geo.tile_log ? log_n : geo.tile_log, bs = 1u << sl;
    std::vector<fr_t> out(n);
    std::vector<uint32_t> words(8 * CUZK_NTT_TILE_MAX);
    const ntt_smem_t first = {words.data(), bs};
    for (uint32_t b = 0; b < (n >> sl); b++) {
        uint32_t base = b * bs;
        for (uint32_t u = 0; u < bs; u++) first.set(u, in[cuzk_bitrev(base + u, log_n)]);
        ntt_tile_t tile = {base, 0, 0, log_n};
        run_tile<R>(first, tw.data(), tile, bs, sl);
        for (uint32_t u = 0; u < bs; u++) out[base + u] = first.get(u);
    }
    for (uint32_t s0 = sl; s0 < log_n;) {
        uint32_t k = ntt_mid_pass_stages(geo, log_n, s0), elems = 1u << (k + geo.low);
        const ntt_smem_t sh = {words.data(), elems};
        uint32_t groups_log = s0 - geo.low;
        for (uint32_t blk = 0; blk < (n >> (k + geo.low)); blk++) {
            uint32_t lg = blk & ((1u << groups_log) - 1), hi = blk >> groups_log;
            ntt_tile_t tile = {(hi << (s0 + k)) + (lg << geo.low), s0, geo.low, log_n};
            for (uint32_t u = 0; u < elems; u++) sh.set(u, out[tile.global(u)]);
            run_tile<R>(sh, tw.data(), tile, elems, k);
            for (uint32_t u = 0; u < elems; u++) out[tile.global(u)] = sh.get(u);
        }
        s0 += k;
    }
    return out;
}

int main() {
    int failures = 0;
    // The reference against the DFT's definition: X_k = sum_j x_j w^(jk).
    for (uint32_t log_n = 1; log_n <= 5; log_n++) {
        uint32_t n = 1u << log_n;
        fr_t w = root_of_unity(log_n);
        if (!check_root(w, log_n)) {
            printf("FAIL: root of unity of order 2^%u\n", log_n);
            return 1;
        }
        std::vector<fr_t> x(n), tw(n / 2);
        for (auto& e : x) e = random_fr();
        tw[0] = fr_t::one();
        for (uint32_t j = 1; j < n / 2; j++) tw[j] = tw[j - 1] * w;
        std::vector<fr_t> got = reference(x, tw, log_n);
        for (uint32_t k = 0; k < n; k++) {
            fr_t sum = fr_t::zero(), wk = fr_t::one(), wjk = fr_t::one();
            for (uint32_t i = 0; i < k; i++) wk = wk * w;
            for (uint32_t j = 0; j < n; j++) {
                sum = sum + x[j] * wjk;
                wjk = wjk * wk;
            }
            if (!eq(sum, got[k])) {
                printf("FAIL: reference transform 2^%u, element %u\n", log_n, k);
                failures++;
                break;
            }
        }
    }
    // The tiles against the reference, in both geometries: first pass only (<= 2^10 or 2^11),
    // one later pass of every width, two later passes (2^21; 2^20 in geometry 11 is 11 + 5 + 4).
    const uint32_t logs[] = {1, 2, 3, 4, 5, 7, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21};
    for (uint32_t tile_log : {10u, 11u}) {
        const ntt_geometry_t geo = ntt_geometry(tile_log);
        for (uint32_t log_n : logs) {
            uint32_t n = 1u << log_n;
            fr_t w = root_of_unity(log_n);
            std::vector<fr_t> x(n), tw(n / 2);
            for (auto& e : x) e = random_fr();
            tw[0] = fr_t::one();
            for (uint32_t j = 1; j < n / 2; j++) tw[j] = tw[j - 1] * w;
            std::vector<fr_t> want = reference(x, tw, log_n);
            std::vector<fr_t> got4 = tiled<2>(x, tw, log_n, geo), got8 = tiled<3>(x, tw, log_n, geo);
            for (int r = 0; r < 2; r++) {
                const std::vector<fr_t>& got = r ? got8 : got4;
                for (uint32_t i = 0; i < n; i++) {
                    if (!eq(got[i], want[i])) {
                        printf("FAIL: radix-%d tiles of 2^%u, 2^%u, element %u\n", r ? 8 : 4, tile_log, log_n, i);
                        failures++;
                        break;
                    }
                }
            }
        }
    }
    // The scale pass, as its kernel runs it (ceil(n / chunk) threads, each every T-th element,
    // and the grid's extra threads, which must do nothing): v[i] * factor * base^i, with powers
    // (a coset's) and with base 1 (the inverse's 1/n, which skips the powers); and the H step's
    // last pass, (v[i] * base^i - minus[i]) * factor, with powers.
    for (int form = 0; form < 3; form++) {
        const bool with_powers = form != 0, with_minus = form == 2;
        const uint32_t n = 1000;  // not a multiple of the chunk: some threads take one fewer
        fr_t base = with_powers ? random_fr() : fr_t::one(), factor = random_fr();
        fr_t pw[32];
        pw[0] = base;
        for (int k = 1; k < 32; k++) pw[k] = pw[k - 1] * pw[k - 1];
        std::vector<fr_t> v(n), want(n), minus(n);
        fr_t x = fr_t::one();
        for (uint32_t i = 0; i < n; i++) {
            v[i] = random_fr();
            minus[i] = random_fr();
            want[i] = with_minus ? (v[i] * x - minus[i]) * factor : v[i] * x * factor;
            x = x * base;
        }
        for (uint32_t t = 0; t < 64; t++)
            ntt_scale_thread(t, v.data(), pw, factor, with_minus ? minus.data() : nullptr, n);
        for (uint32_t i = 0; i < n; i++) {
            if (!eq(v[i], want[i])) {
                static const char* names[] = {"base 1", "powers", "powers, minus"};
                printf("FAIL: scale pass (%s), element %u\n", names[form], i);
                failures++;
                break;
            }
        }
    }
    if (failures) return 1;
    printf("ntt_test: OK (reference = DFT up to 2^5; radix-4 and radix-8 tiles of 2^10 and 2^11 = reference, 2^1 .. 2^21; the scale pass, with powers, with base 1 and with a subtrahend)\n");
    return 0;
}
