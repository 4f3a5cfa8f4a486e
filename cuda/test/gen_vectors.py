#!/usr/bin/env python3
"""Test vectors for cuda/test/host_test.cpp (big-integer reference, independent of the C++ code).

Prints whitespace-separated hex words; every field element is printed as its limbs in
Montgomery form, 32-bit little-endian, like the device buffers.
"""
import random, sys

P = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab
R = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001
GX = 0x17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb
GY = 0x08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1

def limbs(x, n):
    return ' '.join('%08x' % ((x >> (32 * i)) & 0xffffffff) for i in range(n))

def mp(x): return limbs(x * 2**384 % P, 12)
def mr(x): return limbs(x * 2**256 % R, 8)

def add(a, b):
    if a is None: return b
    if b is None: return a
    (x1, y1), (x2, y2) = a, b
    if x1 == x2:
        if (y1 + y2) % P == 0: return None
        l = 3 * x1 * x1 * pow(2 * y1, -1, P) % P
    else:
        l = (y2 - y1) * pow(x2 - x1, -1, P) % P
    x3 = (l * l - x1 - x2) % P
    return (x3, (l * (x1 - x3) - y1) % P)

def mul(k, a):
    r = None
    while k:
        if k & 1: r = add(r, a)
        a = add(a, a); k >>= 1
    return r

rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
out = []
# field ops: a b a*b a+b a-b (Fp), then Fr a b a*b
NF = 50
out.append(str(NF))
for _ in range(NF):
    a, b = rng.randrange(P), rng.randrange(P)
    if _ == 0: a, b = P - 1, P - 1
    out.append(' '.join([mp(a), mp(b), mp(a * b % P), mp((a + b) % P), mp((a - b) % P)]))
for _ in range(NF):
    a, b = rng.randrange(R), rng.randrange(R)
    if _ == 0: a, b = R - 1, R - 1
    # Zero factors, and a b whose Montgomery form's low limb is 0: reduction rows whose
    # q is 0 next to rows whose q is not (the rows' special cases for Fr's low limbs).
    if _ == 1: a = 0
    if _ == 2: b = 0
    if _ == 3: b = (rng.randrange(R) & ~0xffffffff) * pow(2**256, -1, R) % R
    if _ == 4: a = 1
    out.append(' '.join([mr(a), mr(b), mr(a * b % R)]))
# MSM cases: n, then n x (point x, y, scalar), then expected x y (canonical, 0 0 for infinity)
G = (GX, GY)
cases = []
base = [mul(rng.randrange(1, R), G) for _ in range(40)]
def case(pts, scs): cases.append((pts, scs))
case([base[0]], [1])
case([base[0], base[1]], [R - 1, 5])
case(base[:3], [0, 0, 0])
case(base[:20], [rng.randrange(R) for _ in range(20)])
case(base[:30], [7] * 30)                                   # all equal: one bucket per window
dup = base[:10] + base[:10] + [(x, (-y) % P) for (x, y) in base[:10]]
case(dup, [rng.randrange(R) for _ in range(30)])           # duplicates and negations
case(dup, [3] * 30)                                         # P + P and P + (-P) inside one bucket
case(base[:8] + [None, None], [rng.randrange(R) for _ in range(10)])   # infinity inputs
big = [base[i % 40] for i in range(300)]
case(big, [rng.randrange(R) if i % 3 else 1 for i in range(300)])
case(big, [R - 1 - (i % 2) for i in range(300)])
case(big, [(i * 7) % 3 % 2 for i in range(300)])             # 0/1, as a Boolean witness: windows above 0 empty
out.append(str(len(cases)))
for pts, scs in cases:
    out.append(str(len(pts)))
    acc = None
    for p, s in zip(pts, scs):
        acc = add(acc, mul(s, p)) if p is not None else acc
        out.append(' '.join([mp(p[0]) if p else limbs(0, 12), mp(p[1]) if p else limbs(0, 12), mr(s)]))
    out.append(' '.join([limbs(acc[0], 12), limbs(acc[1], 12)]) if acc else limbs(0, 12) + ' ' + limbs(0, 12))

# ---- G2 over Fp2 = Fp[u]/(u^2 + 1); elements are (c0, c1) ----
def f2add(a, b): return ((a[0] + b[0]) % P, (a[1] + b[1]) % P)
def f2sub(a, b): return ((a[0] - b[0]) % P, (a[1] - b[1]) % P)
def f2mul(a, b): return ((a[0] * b[0] - a[1] * b[1]) % P, (a[0] * b[1] + a[1] * b[0]) % P)
def f2inv(a):
    t = pow(a[0] * a[0] + a[1] * a[1], -1, P)
    return (a[0] * t % P, -a[1] * t % P)
def mp2(a): return mp(a[0]) + ' ' + mp(a[1])
def l2(a): return limbs(a[0], 12) + ' ' + limbs(a[1], 12)
Z2 = (0, 0)

def add2(a, b):
    if a is None: return b
    if b is None: return a
    (x1, y1), (x2, y2) = a, b
    if x1 == x2:
        if f2add(y1, y2) == Z2: return None
        l = f2mul(f2mul((3, 0), f2mul(x1, x1)), f2inv(f2add(y1, y1)))
    else:
        l = f2mul(f2sub(y2, y1), f2inv(f2sub(x2, x1)))
    x3 = f2sub(f2sub(f2mul(l, l), x1), x2)
    return (x3, f2sub(f2mul(l, f2sub(x1, x3)), y1))

def mul2(k, a):
    r = None
    while k:
        if k & 1: r = add2(r, a)
        a = add2(a, a); k >>= 1
    return r

# fp2 ops: a b a*b a^2
NF2 = 20
out.append(str(NF2))
for _ in range(NF2):
    a = (rng.randrange(P), rng.randrange(P)); b = (rng.randrange(P), rng.randrange(P))
    if _ == 0: a, b = (P - 1, P - 1), (P - 1, 1)
    out.append(' '.join([mp2(a), mp2(b), mp2(f2mul(a, b)), mp2(f2mul(a, a))]))
# G2 MSM cases, as the G1 ones (the addition formulas never use b, so any start point works;
# this is the usual G2 generator)
G2 = ((0x024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8,
       0x13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e),
      (0x0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801,
       0x0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be))
base2 = [mul2(rng.randrange(1, R), G2) for _ in range(12)]
cases2 = []
cases2.append((base2[:1], [1]))
cases2.append((base2[:10], [rng.randrange(R) for _ in range(10)]))
cases2.append((base2[:12], [9] * 12))
dup2 = base2[:6] + base2[:6] + [(x, f2sub(Z2, y)) for (x, y) in base2[:6]]
cases2.append((dup2, [rng.randrange(R) for _ in range(18)]))
cases2.append((dup2 + [None], [R - 1] * 19))
out.append(str(len(cases2)))
for pts, scs in cases2:
    out.append(str(len(pts)))
    acc = None
    for p, s in zip(pts, scs):
        acc = add2(acc, mul2(s, p)) if p is not None else acc
        zero = l2(Z2)
        out.append(' '.join([mp2(p[0]) if p else zero, mp2(p[1]) if p else zero, mr(s)]))
    out.append(' '.join([l2(acc[0]), l2(acc[1])]) if acc else l2(Z2) + ' ' + l2(Z2))
print('\n'.join(out))
