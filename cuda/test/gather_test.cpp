// Host check of the density gather (gather.cuh), without a GPU: gather_dense_thread runs for
// every element, in reverse and in a scrambled order (no thread may depend on another), and
// must equal a plain loop over the set bits: the selected scalars packed in order, written
// after the front part, nothing past the selection touched. The per-word prefix is computed
// as src/gpu/gather.rs computes it. Run: scripts/cuda-host-test.sh
#include <cstdio>
#include <cstring>
#include <vector>
#include "../gather.cuh"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_u64() {  // xorshift64*
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

enum Pattern { ALL_ONES, ALL_ZERO, ALTERNATING, RANDOM_HALF, RANDOM_SPARSE, NO_BITMAP };
static const char* pattern_name[] = {"all-ones", "all-zero", "alternating", "random", "sparse", "no-bitmap"};

static bool run_case(uint32_t n, Pattern pat, uint32_t front, bool scrambled) {
    std::vector<fr_t> aux(n);
    for (auto& s : aux)
        for (int j = 0; j < 8; j++) s.v[j] = (uint32_t)next_u64();
    std::vector<uint64_t> words((n + 63) / 64, 0);
    for (uint32_t i = 0; i < n; i++) {
        bool bit = pat == ALL_ONES || (pat == ALTERNATING && i % 2 == 1) || (pat == RANDOM_HALF && next_u64() % 2) ||
                   (pat == RANDOM_SPARSE && next_u64() % 16 == 0);
        if (bit) words[i / 64] |= uint64_t(1) << (i % 64);
    }
    std::vector<uint32_t> prefix(words.size());
    uint32_t count = 0;
    for (size_t k = 0; k < words.size(); k++) {
        prefix[k] = count;
        count += (uint32_t)__builtin_popcountll(words[k]);
    }
    if (pat == NO_BITMAP) count = n;
    // Reference: front sentinels, then the selected elements in order.
    std::vector<fr_t> want;
    fr_t mark;
    for (int j = 0; j < 8; j++) mark.v[j] = 0xa5a5a5a5u;
    for (uint32_t k = 0; k < front; k++) want.push_back(mark);
    for (uint32_t i = 0; i < n; i++)
        if (pat == NO_BITMAP || ((words[i / 64] >> (i % 64)) & 1)) want.push_back(aux[i]);
    // Device emulation: the output holds the front, the gathered part, and a guard region.
    const uint32_t guard = 5;
    std::vector<fr_t> out(front + count + guard, mark);
    const uint64_t* w = pat == NO_BITMAP ? nullptr : words.data();
    for (uint32_t t = 0; t < n + 70; t++) {  // threads past n (a partial last block) do nothing
        uint32_t i = scrambled ? (uint32_t)((uint64_t)t * 7919 % (n + 70)) : n + 69 - t;
        gather_dense_thread(i, aux.data(), w, prefix.data(), n, out.data() + front);
    }
    bool ok = out.size() == want.size() + guard;
    for (size_t k = 0; ok && k < want.size(); k++) ok = out[k].eq(want[k]);
    for (size_t k = want.size(); ok && k < out.size(); k++) ok = out[k].eq(mark);
    if (!ok)
        printf("gather n=%u %s front=%u %s: wrong\n", n, pattern_name[pat], front, scrambled ? "scrambled" : "reverse");
    return ok;
}

int main() {
    const uint32_t sizes[] = {0, 1, 2, 63, 64, 65, 127, 128, 129, 1000, 4097, 65536 + 13};
    const uint32_t fronts[] = {0, 1, 3};
    int checks = 0, fails = 0;
    for (uint32_t n : sizes)
        for (int pat = ALL_ONES; pat <= NO_BITMAP; pat++)
            for (uint32_t front : fronts)
                for (int scr = 0; scr < 2; scr++) {
                    checks++;
                    if (!run_case(n, (Pattern)pat, front, scr)) fails++;
                }
    printf("gather: %d passed, %d failed\n", checks - fails, fails);
    return fails ? 1 : 0;
}
