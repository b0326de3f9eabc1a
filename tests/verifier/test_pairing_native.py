"""Native optimal ate pairing (snarkd.native._pairing) on BN254 and BLS12-381.

py_ecc is the oracle: its FQ12 uses another basis, so values are converted
(vhelpers.fp12_to_pyecc) and compared up to the fixed exponent vhelpers.EXPONENT.
"""

from __future__ import annotations

import random

import pytest

import vhelpers as h

CURVES = ("bn128", "bls12381")


@pytest.fixture(params=CURVES)
def name(request):
    return request.param


def _pts(name, rng):
    ecc = h.PYECC[name]
    a, b = h.rand_scalar(rng, name), h.rand_scalar(rng, name)
    return a, b, ecc.multiply(ecc.G1, a), ecc.multiply(ecc.G2, b)


@pytest.mark.slow
def test_agrees_with_py_ecc(name):
    rng = random.Random(7)
    m, ecc, c = h.native(name), h.PYECC[name], h.CURVE[name]
    for _ in range(2):
        _, _, P, Q = _pts(name, rng)
        mine = h.fp12_to_pyecc(name, m.pairing(h.g1_bytes(name, P), h.g2_bytes(name, Q)))
        ref = ecc.pairing(Q, P)
        assert mine == ref ** (h.EXPONENT[name] % c.r)


def test_miller_loop_and_final_exp_agree_with_py_ecc(name):
    """final_exp(f) on a random-ish Fp12 vs py_ecc's final_exponentiate."""
    rng = random.Random(8)
    m, ecc, c = h.native(name), h.PYECC[name], h.CURVE[name]
    f = b"".join(h.mont(c, rng.randrange(c.q)) for _ in range(12))
    mine = h.fp12_to_pyecc(name, m.final_exp(f))
    ref = ecc.final_exponentiate(h.fp12_to_pyecc(name, f))
    assert mine == ref ** ((3 if name == "bls12381" else 1))


def test_bilinearity(name):
    rng = random.Random(11)
    m, ecc, c = h.native(name), h.PYECC[name], h.CURVE[name]
    for _ in range(3):
        a, b, P, Q = _pts(name, rng)
        e = m.pairing(h.g1_bytes(name, P), h.g2_bytes(name, Q))
        s, t = h.rand_scalar(rng, name), h.rand_scalar(rng, name)
        sP, tQ = ecc.multiply(P, s), ecc.multiply(Q, t)
        lhs = m.pairing(h.g1_bytes(name, sP), h.g2_bytes(name, tQ))
        assert lhs == m.fp12_pow(e, h.int_bytes(s * t % c.r))
        # e(sP, Q) == e(P, sQ)
        assert m.pairing(h.g1_bytes(name, sP), h.g2_bytes(name, Q)) == m.pairing(h.g1_bytes(name, P), h.g2_bytes(name, ecc.multiply(Q, s)))
        # e(P1 + P2, Q) == e(P1, Q) e(P2, Q)
        P2 = ecc.multiply(ecc.G1, h.rand_scalar(rng, name))
        e12 = m.pairing(h.g1_bytes(name, ecc.add(P, P2)), h.g2_bytes(name, Q))
        assert e12 == m.fp12_mul(e, m.pairing(h.g1_bytes(name, P2), h.g2_bytes(name, Q)))


def test_non_degenerate_and_order_r(name):
    m, ecc, c = h.native(name), h.PYECC[name], h.CURVE[name]
    one = m.fp12_one()
    e = m.pairing(h.g1_bytes(name, ecc.G1), h.g2_bytes(name, ecc.G2))
    assert e != one
    assert m.fp12_pow(e, h.int_bytes(c.r)) == one
    # infinity on either side gives 1
    assert m.pairing(bytes(2 * c.n8q), h.g2_bytes(name, ecc.G2)) == one
    assert m.pairing(h.g1_bytes(name, ecc.G1), bytes(4 * c.n8q)) == one


def test_multi_pairing(name):
    rng = random.Random(12)
    m, ecc = h.native(name), h.PYECC[name]
    one = m.fp12_one()
    pairs = [_pts(name, rng)[2:] for _ in range(4)]
    g1 = [h.g1_bytes(name, P) for P, _ in pairs]
    g2 = [h.g2_bytes(name, Q) for _, Q in pairs]
    prod = one
    for p, q in zip(g1, g2):
        prod = m.fp12_mul(prod, m.pairing(p, q))
    assert m.multi_pairing(g1, g2) == prod
    # e(P, Q) e(-P, Q) == 1 and e(aP, Q) e(P, -aQ) == 1
    P, Q = pairs[0]
    assert m.multi_pairing([g1[0], h.g1_bytes(name, ecc.neg(P))], [g2[0], g2[0]]) == one
    a = h.rand_scalar(rng, name)
    assert m.multi_pairing([h.g1_bytes(name, ecc.multiply(P, a)), g1[0]], [g2[0], h.g2_bytes(name, ecc.neg(ecc.multiply(Q, a)))]) == one
    assert m.multi_pairing([], []) == one


def test_fp12_ops(name):
    rng = random.Random(13)
    m, c = h.native(name), h.CURVE[name]
    f = b"".join(h.mont(c, rng.randrange(c.q)) for _ in range(12))
    g = b"".join(h.mont(c, rng.randrange(c.q)) for _ in range(12))
    F, G = h.fp12_to_pyecc(name, f), h.fp12_to_pyecc(name, g)
    assert h.fp12_to_pyecc(name, m.fp12_mul(f, g)) == F * G
    assert h.fp12_to_pyecc(name, m.fp12_sqr(f)) == F * F
    assert m.fp12_mul(f, m.fp12_inv(f)) == m.fp12_one()
    for n in (1, 2, 3):
        assert h.fp12_to_pyecc(name, m.fp12_frobenius(f, n)) == F ** (c.q**n)
    # cyclotomic squaring on a cyclotomic element (a pairing value)
    e = m.final_exp(f)
    assert m.fp12_cyclotomic_sqr(e) == m.fp12_sqr(e)


def test_subgroup_checks(name):
    rng = random.Random(14)
    m, ecc, c = h.native(name), h.PYECC[name], h.CURVE[name]
    for _ in range(3):
        P = ecc.multiply(ecc.G1, h.rand_scalar(rng, name))
        Q = ecc.multiply(ecc.G2, h.rand_scalar(rng, name))
        assert m.g1_in_subgroup(h.g1_bytes(name, P)) and m.g1_in_subgroup_naive(h.g1_bytes(name, P))
        assert m.g2_in_subgroup(h.g2_bytes(name, Q)) and m.g2_in_subgroup_naive(h.g2_bytes(name, Q))
        # points of the whole curve group, and subgroup points plus a cofactor-part point
        x, y = h.random_curve_g2(name, rng)
        raw = h.g2_raw(name, x, y)
        assert m.g2_on_curve(raw)
        assert m.g2_in_subgroup(raw) == m.g2_in_subgroup_naive(raw) == False  # noqa: E712
        # R' = [r] R lies in the cofactor part; Q + R' is on the curve, outside G2
        Rc = ecc.multiply(h.g2_to_pyecc(name, x, y), c.r)
        if not ecc.is_inf(Rc):
            mixed = h.g2_bytes(name, ecc.add(Q, Rc))
            assert m.g2_in_subgroup(mixed) == m.g2_in_subgroup_naive(mixed) == False  # noqa: E712
        x, y = h.random_curve_g1(name, rng)
        raw = h.g1_raw(name, x, y)
        assert m.g1_on_curve(raw)
        expect = name == "bn128"  # BN254's G1 is the whole curve (cofactor 1)
        assert m.g1_in_subgroup(raw) == m.g1_in_subgroup_naive(raw) == expect
        Rc = ecc.multiply(h.g1_to_pyecc(name, x, y), c.r)
        if not ecc.is_inf(Rc):
            mixed = h.g1_bytes(name, ecc.add(P, Rc))
            assert m.g1_in_subgroup(mixed) == m.g1_in_subgroup_naive(mixed) == False  # noqa: E712
    # infinity is in both subgroups; off-curve points are not
    assert m.g1_in_subgroup(bytes(2 * c.n8q)) and m.g2_in_subgroup(bytes(4 * c.n8q))
    assert not m.g1_in_subgroup(h.g1_raw(name, 1, 1))
    assert not m.g2_in_subgroup(h.g2_raw(name, (1, 0), (1, 0)))


def test_psi_eigenvalue(name):
    """psi acts on G2 as multiplication by p (the endomorphism the G2 check uses)."""
    m, ecc, c = h.native(name), h.PYECC[name], h.CURVE[name]
    Q = ecc.multiply(ecc.G2, 987654321)
    assert m.g2_psi(h.g2_bytes(name, Q)) == h.g2_bytes(name, ecc.multiply(Q, c.q % c.r))


# BN254's G2 cofactor h2 = 2q - r and its prime factors: a point with a component of each
# prime order alone (small ones are where a weak test would slip) must be refused.
BN254_H2_PRIMES = (10069, 5864401, 1875725156269, 197620364512881247228717050342013327560683201906968909)


def test_bn254_g2_subgroup_check_each_cofactor_prime():
    import math

    name = "bn128"
    m, ecc, c = h.native(name), h.PYECC[name], h.CURVE[name]
    h2 = 2 * c.q - c.r
    assert math.prod(BN254_H2_PRIMES) == h2
    rng = random.Random(2022)
    Q = ecc.multiply(ecc.G2, h.rand_scalar(rng, name))
    for p in BN254_H2_PRIMES:
        for _ in range(2):
            R = h.g2_to_pyecc(name, *h.random_curve_g2(name, rng))
            T = ecc.multiply(R, c.r * (h2 // p))  # order p (or infinity)
            if ecc.is_inf(T):
                continue
            assert ecc.is_inf(ecc.multiply(T, p))
            for point in (T, ecc.add(Q, T)):
                raw = h.g2_bytes(name, point)
                assert m.g2_on_curve(raw)
                assert m.g2_in_subgroup(raw) is False
                assert m.g2_in_subgroup_naive(raw) is False
