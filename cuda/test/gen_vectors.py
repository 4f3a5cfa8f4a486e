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
out.append(str(len(cases)))
for pts, scs in cases:
    out.append(str(len(pts)))
    acc = None
    for p, s in zip(pts, scs):
        acc = add(acc, mul(s, p)) if p is not None else acc
        out.append(' '.join([mp(p[0]) if p else limbs(0, 12), mp(p[1]) if p else limbs(0, 12), mr(s)]))
    out.append(' '.join([limbs(acc[0], 12), limbs(acc[1], 12)]) if acc else limbs(0, 12) + ' ' + limbs(0, 12))
print('\n'.join(out))
