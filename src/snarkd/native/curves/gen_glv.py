"""Generates curves/glv_constants.hpp: the G1 endomorphism constants of BN254 and
BLS12-381 for GLV scalar splitting (ec/glv.hpp), and the G2 ones (GLS, below g2_constants). Run with py_ecc installed:
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


def lattice(r, lam):
    """Babai rounding constants for k = k1 + lam k2 (mod r), see the module docstring"""
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
    return dict(lam=lam, g1=g1, g2=g2, basis=((a1, b1), (a2, b2)), bits=bits, **m)


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
    return dict(beta=beta, **lattice(r, lam))


# ---- G2 (GLS, Galbraith-Lin-Scott 2009): psi = untwist . Frobenius . twist on the
# twist E'(Fq2), psi(x, y) = (conj(x) cx, conj(y) cy) with cx = xi^((q-1)/3),
# cy = xi^((q-1)/2) for the twist's xi (BN254's D-type twist: xi = 9 + u; BLS12-381's
# M-type: their inverses, xi = 1 + u). On G2 (the q-eigenspace of Frobenius on E[r])
# psi is multiplication by q mod r: 6 x^2 (127 bits) on BN254, x (negative, 64 bits)
# on BLS12-381, with x the curve parameter. A 2-dimensional split needs an eigenvalue
# near sqrt(r) for half-length k1, k2 (with lam = x the reduced basis has one vector of
# 64 bits and one of 191), so BLS12-381 uses psi^2 = (x w, y v) with w, v in Fq (the
# norms of cx, cy), eigenvalue x^2 (128 bits). Everything is checked on the generator
# and on random points of G2 below, not taken from the literature.
BN_X = 4965661367192848881
BLS_X = -0xD201000000010000


def conj(pe, a):
    return pe.FQ2([a.coeffs[0], -a.coeffs[1]])


def fq2_pow(pe, a, e):
    return a ** e if e >= 0 else a.inv() ** (-e)


def psi(pe, c, P):
    """the G2 endomorphism of the constants c on a py_ecc point"""
    if pe.is_inf(P):
        return P
    x, y = pe.normalize(P)
    if c["frob"]:
        x, y = conj(pe, x), conj(pe, y)
    return (x * c["cx"], y * c["cy"], pe.FQ2.one())


def g2_constants(pe, q, r):
    bls_curve = q.bit_length() > 300
    xi = pe.FQ2([1, 1]) if bls_curve else pe.FQ2([9, 1])
    sign = -1 if bls_curve else 1
    cx, cy = fq2_pow(pe, xi, sign * ((q - 1) // 3)), fq2_pow(pe, xi, sign * ((q - 1) // 2))
    lam_psi = q % r
    assert lam_psi == (BLS_X % r if bls_curve else 6 * BN_X ** 2)
    if bls_curve:  # psi^2: the norms, in Fq; eigenvalue x^2
        c = dict(frob=False, cx=cx * conj(pe, cx), cy=cy * conj(pe, cy), lam=lam_psi * lam_psi % r)
        assert c["cx"].coeffs[1] == 0 and c["cy"].coeffs[1] == 0 and c["lam"] == BLS_X ** 2
    else:
        c = dict(frob=True, cx=cx, cy=cy, lam=lam_psi)
    # psi(P) = lam P on the generator and on random points of G2 (py_ecc, Python integers)
    rnd = random.Random(2)
    for P in [pe.G2] + [pe.multiply(pe.G2, rnd.randrange(1, r)) for _ in range(3)]:
        img = psi(pe, c, P)
        assert pe.is_on_curve(img, pe.b2)
        assert pe.eq(img, pe.multiply(P, c["lam"]))
    lat = lattice(r, c["lam"])
    return dict(c, **lat)


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


def lattice_fields(c):
    return f"""  static constexpr unsigned BITS = {c['bits']};  // |k1|, |k2| < 2^BITS
  static constexpr u64 LAMBDA[4] = {limbs(c['lam'], 4)};
  static constexpr u64 G1[3] = {limbs(c['g1'], 3)};
  static constexpr u64 G2[3] = {limbs(c['g2'], 3)};
  static constexpr u64 M11[3] = {limbs(c['M11'], 3)};
  static constexpr u64 M12[3] = {limbs(c['M12'], 3)};
  static constexpr u64 M21[3] = {limbs(c['M21'], 3)};
  static constexpr u64 M22[3] = {limbs(c['M22'], 3)};
"""


def block(curve, pe, q, r, nq):
    c = constants(pe, q, r)
    check(c, r)
    (a1, b1), (a2, b2) = c["basis"]
    R = 1 << (64 * nq)
    d = g2_constants(pe, q, r)
    check(d, r)
    (e1, f1), (e2, f2) = d["basis"]
    fq2 = lambda v: "{" + limbs(v.coeffs[0].n * R % q if hasattr(v.coeffs[0], "n") else v.coeffs[0] * R % q, nq) + ", " + \
        limbs(v.coeffs[1].n * R % q if hasattr(v.coeffs[1], "n") else v.coeffs[1] * R % q, nq) + "}"
    return f"""namespace {curve} {{
// beta = {hex(c['beta'])}
// lambda = {hex(c['lam'])}
// basis (a1, b1) = ({a1:#x}, {b1:#x}), (a2, b2) = ({a2:#x}, {b2:#x})
struct GlvG1 {{
  static constexpr u64 BETA_MONT[{nq}] = {limbs(c['beta'] * R % q, nq)};
{lattice_fields(c)}}};
// G2: {"psi(x, y) = (conj(x) cx, conj(y) cy)" if d['frob'] else "psi^2(x, y) = (x cx, y cy), cx and cy in Fq"}
// lambda = {hex(d['lam'])}
// basis (a1, b1) = ({e1:#x}, {f1:#x}), (a2, b2) = ({e2:#x}, {f2:#x})
struct GlsG2 {{
  static constexpr bool FROB = {"true" if d['frob'] else "false"};  // conjugate x, y first
  static constexpr u64 CX_MONT[2][{nq}] = {fq2(d['cx'])};
  static constexpr u64 CY_MONT[2][{nq}] = {fq2(d['cy'])};
{lattice_fields(d)}}};
}}  // namespace {curve}
"""


def main():
    txt = """// Generated by gen_glv.py: G1 (GLV) and G2 (GLS) endomorphism constants, see ec/glv.hpp.
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
