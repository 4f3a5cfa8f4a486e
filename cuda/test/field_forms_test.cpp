// Host check of the other forms of the fields (cuda/fe52.cuh: 52-bit limbs, products on the
// FP64 pipe; cuda/fe29.cuh: unsaturated 29-bit limbs): random elements and edge values
// multiplied in each form, field.cuh's products being the reference (checked against Python
// by host_test.cpp). Self-contained. Run: scripts/cuda-host-test.sh
#include <cstdio>
#include <cstdlib>
#include "../fe29.cuh"
#include "../fe52.cuh"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next32() {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

// A random element below m in field.cuh's form (top limb masked, then reduced once).
template <class F> static F random_fe() {
    F a;
    for (int i = 0; i < F::N; i++) a.v[i] = next32();
    a.v[F::N - 1] &= 0x1fffffffu;
    return F::reduce_once(F::reduce_once(a));
}

// G is the other form (Fe52<P> or Fe29<P>), with limbs of `bits` bits.
template <class G> static int check_field(const char* name, int bits, int rounds) {
    typedef G F52;
    typedef typename F52::Fe32 F;
    int fails = 0, checks = 0;
    F edge[4];
    edge[0] = F::zero();
    edge[1] = F::one();
    edge[2] = F::zero() - F::one();  // m - 1 in Montgomery form
    for (int i = 0; i < F::N; i++) edge[3].v[i] = F::zero().v[i];
    edge[3].v[0] = 1;  // 1 / R
    for (int r = 0; r < rounds; r++) {
        const F a = r < 4 ? edge[r] : random_fe<F>();
        const F b = r < 16 ? edge[r % 4] : random_fe<F>();
        const F52 a52 = F52::from_fe(a), b52 = F52::from_fe(b);
        checks++;
        if (!a52.to_fe().eq(a)) {
            fails++;
            if (fails < 5) printf("%s round trip failed at round %d\n", name, r);
        }
        checks++;
        if (!(a52 * b52).to_fe().eq(a * b)) {
            fails++;
            if (fails < 5) printf("%s product failed at round %d\n", name, r);
        }
        // A chain of products stays below 2m and equal to the 32-bit form's.
        F x = a;
        F52 x52 = a52;
        for (int k = 0; k < 8; k++) {
            x = x * b + a;
            x52 = F52::from_fe((x52 * b52).to_fe() + a);
        }
        checks++;
        if (!x52.to_fe().eq(x)) {
            fails++;
            if (fails < 5) printf("%s chain failed at round %d\n", name, r);
        }
        bool bounded = true;
        for (int k = 0; k < (int)(sizeof(x52.v) / sizeof(x52.v[0])); k++) bounded = bounded && (x52.v[k] >> bits) == 0;
        checks++;
        if (!bounded) fails++;
    }
    printf("%s: %d passed, %d failed\n", name, checks - fails, fails);
    return fails;
}

int main() {
    int fails = check_field<fp52_t>("fp in 52-bit limbs", 52, 20000) + check_field<fr52_t>("fr in 52-bit limbs", 52, 20000) +
                check_field<fp29_t>("fp in 29-bit limbs", 29, 20000) + check_field<fr29_t>("fr in 29-bit limbs", 29, 20000);
    return fails ? 1 : 0;
}
