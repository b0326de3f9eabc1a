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
