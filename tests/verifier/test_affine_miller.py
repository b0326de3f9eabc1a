"""Batch verification's affine multi Miller loop (native/pairing/affine_miller.hpp) against the
projective one (MillerLoop::multi_unprepared): its lines differ by factors in Fp2, so the two
values must be equal after the final exponentiation, for any points (in the subgroups or not),
any number of pairs, with infinity on either side."""

from __future__ import annotations

import random

import pytest

import vhelpers as h

CURVES = ("bn128", "bls12381")


@pytest.fixture(params=CURVES)
def name(request):
    return request.param


def _points(name, rng, n1, n2):
    ecc = h.PYECC[name]
    g1 = [h.g1_bytes(name, ecc.multiply(ecc.G1, h.rand_scalar(rng, name))) for _ in range(n1)]
    g2 = [h.g2_bytes(name, ecc.multiply(ecc.G2, h.rand_scalar(rng, name))) for _ in range(n2)]
    return g1, g2


def _agree(m, ps, qs):
    affine = m.multi_miller_loop(ps, qs, True)
    projective = m.multi_miller_loop(ps, qs, False)
    return m.final_exp(affine) == m.final_exp(projective)


def test_equal_after_final_exp_any_count(name):
    """n = 0, 1, 2, odd, a whole chunk (64) and one past it; infinity points mixed in."""
    rng = random.Random(31)
    m, c = h.native(name), h.CURVE[name]
    g1, g2 = _points(name, rng, 9, 4)
    inf1, inf2 = bytes(2 * c.n8q), bytes(4 * c.n8q)
    for n in (0, 1, 2, 3, 7, 64, 65):
        ps = [g1[(5 * i + 1) % len(g1)] for i in range(n)]
        qs = [g2[(3 * i) % len(g2)] for i in range(n)]
        assert _agree(m, ps, qs), n
        if n >= 3:
            ps[1], qs[2] = inf1, inf2  # two pairs that contribute 1
            assert _agree(m, ps, qs), n
    # only infinity: the empty product
    assert m.multi_miller_loop([inf1, g1[0]], [g2[0], inf2], True) == m.fp12_one()


def test_pairing_values(name):
    """The affine loop is a multi-pairing: e(P, Q) e(-P, Q) = 1, and one pair gives e(P, Q)."""
    rng = random.Random(32)
    m, ecc = h.native(name), h.PYECC[name]
    P = ecc.multiply(ecc.G1, h.rand_scalar(rng, name))
    Q = ecc.multiply(ecc.G2, h.rand_scalar(rng, name))
    p, q, neg_p = h.g1_bytes(name, P), h.g2_bytes(name, Q), h.g1_bytes(name, ecc.neg(P))
    assert m.final_exp(m.multi_miller_loop([p], [q], True)) == m.pairing(p, q)
    assert m.final_exp(m.multi_miller_loop([p, neg_p], [q, q], True)) == m.fp12_one()


def test_points_outside_the_subgroups(name):
    """Points of the whole curve groups (and G1 points off the curve, which only scale lines):
    the two loops still agree after the final exponentiation."""
    rng = random.Random(33)
    m = h.native(name)
    ps = [h.g1_raw(name, *h.random_curve_g1(name, rng)) for _ in range(3)]
    qs = [h.g2_raw(name, *h.random_curve_g2(name, rng)) for _ in range(3)]
    assert _agree(m, ps, qs)
    ps[0] = h.g1_raw(name, 5, 7)  # off the curve
    assert _agree(m, ps, qs)


def test_zero_y_falls_back_to_the_projective_loop(name):
    """A G1 point with y = 0 (off the curve: no curve point of odd order has one) cannot be
    normalized; the affine loop then returns the projective loop's value itself."""
    rng = random.Random(34)
    m = h.native(name)
    g1, g2 = _points(name, rng, 2, 2)
    ps = [g1[0], h.g1_raw(name, 5, 0), g1[1]]
    qs = [g2[0], g2[1], g2[1]]
    assert m.multi_miller_loop(ps, qs, True) == m.multi_miller_loop(ps, qs, False)


# BN254's G2 cofactor h2 = 2q - r, squarefree (test_pairing_native.py checks the product)
BN254_H2_PRIMES = (10069, 5864401, 1875725156269, 197620364512881247228717050342013327560683201906968909)


def test_bn254_loop_decides_g2_membership():
    """The affine loop's in_g2 flags (what batch verification uses instead of a separate subgroup check):
    1 for G2 points and infinity; 0 for every point with a component of any prime order dividing h2,
    alone or added to a G2 point (the loop computes [6u + 2] Q + pi(Q) - pi^2(Q) and compares with
    -pi^3(Q)); a pair with P = infinity is left undecided (0); flags equal the plain subgroup check."""
    name = "bn128"
    m, ecc, c = h.native(name), h.PYECC[name], h.CURVE[name]
    h2 = 2 * c.q - c.r
    rng = random.Random(33)
    g1, g2 = _points(name, rng, 6, 6)
    inf1, inf2 = bytes(2 * c.n8q), bytes(4 * c.n8q)
    outside = []
    for p in BN254_H2_PRIMES:
        R = h.g2_to_pyecc(name, *h.random_curve_g2(name, rng))
        T = ecc.multiply(R, c.r * (h2 // p))  # order p
        assert not ecc.is_inf(T) and ecc.is_inf(ecc.multiply(T, p))
        outside += [h.g2_bytes(name, T), h.g2_bytes(name, ecc.add(ecc.multiply(ecc.G2, 7 + p), T))]
    outside.append(h.g2_bytes(name, h.g2_to_pyecc(name, *h.random_curve_g2(name, rng))))  # a random twist point
    qs = g2 + outside + [inf2, g2[0]]
    ps = [g1[i % len(g1)] for i in range(len(qs))]
    ps[-1] = inf1  # P = infinity: not decided by the loop
    flags = m.affine_loop_in_g2(ps, qs)
    assert list(flags) == [1] * len(g2) + [0] * len(outside) + [1, 0]
    for q, f in zip(qs[:-1], flags):
        assert bool(f) == m.g2_in_subgroup(q)
    # one chunk of 64 pairs with one bad point among them, as batch verification runs it
    qs = [g2[i % len(g2)] for i in range(64)]
    qs[37] = outside[0]
    ps = [g1[i % len(g1)] for i in range(64)]
    assert [i for i, f in enumerate(m.affine_loop_in_g2(ps, qs)) if not f] == [37]


def test_bls12381_loop_decides_g2_membership_as_the_single_verifier():
    """BLS12-381: the flags are the single verifier's own test, pi(Q) == [u] Q, on the loop's running point
    [|u|] Q: 1 for G2 points and infinity, 0 for random twist points (every cofactor component) alone or
    added to a G2 point, equal to g2_in_subgroup point by point; P = infinity leaves a pair undecided."""
    name = "bls12381"
    m, ecc, c = h.native(name), h.PYECC[name], h.CURVE[name]
    rng = random.Random(34)
    g1, g2 = _points(name, rng, 5, 5)
    inf1, inf2 = bytes(2 * c.n8q), bytes(4 * c.n8q)
    outside = []
    for _ in range(4):
        R = h.g2_to_pyecc(name, *h.random_curve_g2(name, rng))
        outside += [h.g2_bytes(name, R), h.g2_bytes(name, ecc.add(ecc.multiply(ecc.G2, 11), R))]
    qs = g2 + outside + [inf2, g2[0]]
    ps = [g1[i % len(g1)] for i in range(len(qs))]
    ps[-1] = inf1
    flags = m.affine_loop_in_g2(ps, qs)
    assert list(flags) == [1] * len(g2) + [0] * len(outside) + [1, 0]
    for q, f in zip(qs[:-1], flags):
        assert bool(f) == m.g2_in_subgroup(q)
