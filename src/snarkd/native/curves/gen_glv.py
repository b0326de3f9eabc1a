"""Generates curves/glv_constants.hpp: the G1 endomorphism constants of BN254 and
BLS12-381 for GLV scalar splitting (ec/glv.hpp). Run with py_ecc installed:
    python3 gen_glv.py

phi(x, y) = (beta x, y) with beta a cube root of unity in Fq is an endomorphism
of y^2 = x^3 + b; on the order-r subgroup it is multiplication by a cube root of
unity lambda in Fr. Which lambda goes with which beta is found by testing the
generator. The decomposition k = k1 + lambda k2 uses a reduced basis (a1, b1),
(a2, b2) of the lattice {(x, y): x + lambda y = 0 mod r} (extended Euclid on r
and lambda, GLV 2001 section 4) and Babai rounding with precomputed
g_i = round(2^256 * |coefficient| / r), so no division happens per scalar:
    u1 = round(k g1 / 2^256), u2 = round(k g2 / 2^256)      (u_i >= 0)
    k1 = k + u1 M11 + u2 M12,  k2 = u1 M21 + u2 M22         (mod 2^192)
The M's fold the basis entries and the rounding coefficients' signs together; the
results are small: |u_i - exact| <= 1/2 + r / 2^257, so |k1| <= that times |a1| + |a2|,
|k2| the same with the b's: below 2^BITS, 127 for BN254 and 128 for BLS12-381 (also checked
below and in tests/native/test_glv.py),
so arithmetic mod 2^192 (three limbs, two's complement) is exact.
"""
import math
from fractions import Fraction
import os
import random

from py_ecc import optimized_bls12_381 as bls
from py_ecc import optimized_bn128 as bn

HERE = os.path.dirname(os.path.abspath(__file__))
M192 = 1 << 192


def cube_roots(p):
    for g in range(2, 100):
        w = pow(g, (p - 1) // 3, p)
        if w != 1:
            return sorted([w, w * w % p])
    raise ValueError(p)


def short_basis(r, lam):
    """Two short vectors (a, b) with a + lam b = 0 mod r (GLV 2001, section 4)."""
    sq = math.isqrt(r)
    r0, r1, t0, t1 = r, lam, 0, 1
    while r1 >= sq:
        q = r0 // r1
        r0, r1, t0, t1 = r1, r0 - q * r1, t1, t0 - q * t1
    # (r_i, -t_i) is in the lattice for every i: r_i = s_i r + t_i lam
    v1 = (r1, -t1)
    q = r0 // r1
    cand = [(r0, -t0), (r0 - q * r1, -(t0 - q * t1))]
    v2 = min(cand, key=lambda v: v[0] ** 2 + v[1] ** 2)
    return v1, v2


def constants(pe, q, r, lam_bits=None):
    G = pe.G1
    gx, gy = pe.normalize(G)
    pairs = []
    for beta in cube_roots(q):
        phi_g = (pe.FQ(gx.n * beta % q), gy, pe.FQ.one())
        for lam in cube_roots(r):
            if pe.eq(pe.multiply(G, lam), phi_g):
                pairs.append((beta, lam))
    # the smaller lambda (BLS12-381: x^2 - 1, 128 bits); the basis is as short either way
    beta, lam = min(pairs, key=lambda p: p[1])
    (a1, b1), (a2, b2) = short_basis(r, lam)
    det = a1 * b2 - a2 * b1
    assert abs(det) == r
    # exact Babai: c1 = k b2 / det, c2 = -k b1 / det; s_i their signs
    s1 = 1 if b2 * det > 0 else -1
    s2 = 1 if -b1 * det > 0 else -1
    g1 = (2 * (abs(b2) << 256) + r) // (2 * r)
    g2 = (2 * (abs(b1) << 256) + r) // (2 * r)
    m = dict(M11=(-a1 * s1) % M192, M12=(-a2 * s2) % M192, M21=(-b1 * s1) % M192, M22=(-b2 * s2) % M192)
    # |u_i - exact| <= 1/2 + r / 2^257 (g_i rounded, k < r): the bound on |k1|, |k2| in bits
    e = Fraction(1, 2) + Fraction(r, 1 << 257)
    bound = max(e * (abs(a1) + abs(a2)), e * (abs(b1) + abs(b2)))
    bits = math.ceil(math.log2(bound + 1))
    return dict(beta=beta, lam=lam, g1=g1, g2=g2, basis=((a1, b1), (a2, b2)), bits=bits, **m)


def split(c, k, r):
    """The C++ decomposition (ec/glv.hpp) in Python integers: k1, k2 signed."""
    half = 1 << 255
    u1 = (k * c["g1"] + half) >> 256
    u2 = (k * c["g2"] + half) >> 256
    k1 = (k + u1 * c["M11"] + u2 * c["M12"]) % M192
    k2 = (u1 * c["M21"] + u2 * c["M22"]) % M192
    sgn = lambda v: v - M192 if v >= M192 // 2 else v
    return sgn(k1), sgn(k2)


def check(c, r):
    rnd = random.Random(1)
    ks = [0, 1, 2, r - 1, r - 2, c["lam"], c["lam"] + 1, r - c["lam"], (r - 1) // 2, 1 << 127, (1 << 128) - 1]
    ks += [rnd.randrange(r) for _ in range(20000)]
    for k in ks:
        k1, k2 = split(c, k, r)
        assert (k1 + c["lam"] * k2 - k) % r == 0, k
        assert abs(k1) < 1 << c["bits"] and abs(k2) < 1 << c["bits"], (k, k1, k2)


def limbs(x, n):
    return "{" + ", ".join("0x%016xULL" % ((x >> (64 * i)) & (2**64 - 1)) for i in range(n)) + "}"


def block(curve, pe, q, r, nq):
    c = constants(pe, q, r)
    check(c, r)
    (a1, b1), (a2, b2) = c["basis"]
    R = 1 << (64 * nq)
    return f"""namespace {curve} {{
// beta = {hex(c['beta'])}
// lambda = {hex(c['lam'])}
// basis (a1, b1) = ({a1:#x}, {b1:#x}), (a2, b2) = ({a2:#x}, {b2:#x})
struct GlvG1 {{
  static constexpr unsigned BITS = {c['bits']};  // |k1|, |k2| < 2^BITS
  static constexpr u64 BETA_MONT[{nq}] = {limbs(c['beta'] * R % q, nq)};
  static constexpr u64 LAMBDA[4] = {limbs(c['lam'], 4)};
  static constexpr u64 G1[3] = {limbs(c['g1'], 3)};
  static constexpr u64 G2[3] = {limbs(c['g2'], 3)};
  static constexpr u64 M11[3] = {limbs(c['M11'], 3)};
  static constexpr u64 M12[3] = {limbs(c['M12'], 3)};
  static constexpr u64 M21[3] = {limbs(c['M21'], 3)};
  static constexpr u64 M22[3] = {limbs(c['M22'], 3)};
}};
}}  // namespace {curve}
"""


def main():
    txt = """// Generated by gen_glv.py: G1 endomorphism (GLV) constants, see ec/glv.hpp.
#pragma once
#include <cstdint>
namespace snarkd {
using u64 = uint64_t;
"""
    txt += block("bn254", bn, bn.field_modulus, bn.curve_order, 4)
    txt += block("bls12_381", bls, bls.field_modulus, bls.curve_order, 6)
    txt += "}  // namespace snarkd\n"
    open(os.path.join(HERE, "glv_constants.hpp"), "w").write(txt)


if __name__ == "__main__":
    main()
