"""The G1 endomorphism split (ec/glv.hpp, msm/glv_split.hpp): phi(P) = lambda P on both
curves (py_ecc and the native scalar multiplication), the decomposition k = k1 + lambda k2
with |k1|, |k2| < 2^128 (hypothesis), and split MSMs equal to plain ones on random and edge
scalars, both curves, several sizes, the 8-lane path on and off."""
import random

import numpy as np
import pytest

from snarkd.native import _core
from helpers import CURVES, enc_many
from split_helpers import (BOUND, decode_split, endo_constants, gen_glv, mode_switch, plain_forced_default,
                           random_points)

rng = random.Random(381)


@pytest.fixture
def modes():
    """set(simd, glv) for the test; the previous settings come back afterwards"""
    yield from mode_switch(_core._set_glv)


def glv_constants(curve):
    return endo_constants(curve, g2=False)


def model_split(c, k):
    return gen_glv().split(c, k, None)


def split(curve, ks):
    return decode_split(curve.mod.glv_split(enc_many(ks, 4)), len(ks))


def points(curve, n):
    return random_points(curve, False, n, rng)


def edge_scalars(curve):
    """0, 1, r - 1, lambda and neighbours, scalars at the rounding boundaries of the
    decomposition (the largest |k1|, |k2|), and some of each sign combination"""
    r, lam = curve.r, curve.mod.GLV_LAMBDA
    ks = [0, 1, 2, r - 1, r - 2, lam, lam - 1, lam + 1, r - lam, (lam * lam) % r, (r - 1) // 2, 1 << 127, BOUND - 1,
          BOUND, r + 5, (1 << 256) - 1]
    # where k g_i / 2^256 is j + 1/2: the rounding of u_i flips there, and |k1|, |k2| peak
    c = glv_constants(curve)
    for g in (c["g1"], c["g2"]):
        for _ in range(4):
            j = rng.randrange(max(1, r * g >> 256))
            k = ((2 * j + 1) << 255) // g
            ks += [k, k + 1, k - 1]
    signs = {}
    while len(signs) < 4:
        k = rng.randrange(r)
        k1, k2 = split(curve, [k])[0]
        signs.setdefault((k1 < 0, k2 < 0), k)
    return ks + list(signs.values())


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
def test_lambda_is_the_endomorphism(curve):
    m, r, q = curve.mod, curve.r, curve.q
    lam = m.GLV_LAMBDA
    assert lam != 1 and pow(lam, 3, r) == 1
    # against py_ecc (Python integers): phi(G) = lambda G, and beta a cube root of unity
    G = curve.g1_enc(curve.pe.G1)
    phi_g = curve.g1_dec(m.g1_endo(G))
    assert curve.pe.eq(phi_g, curve.pe.multiply(curve.pe.G1, lam))
    gx = curve.pe.normalize(curve.pe.G1)[0].n
    beta = curve.pe.normalize(phi_g)[0].n * pow(gx, -1, q) % q
    assert beta != 1 and pow(beta, 3, q) == 1
    # on random points (and infinity) against the native scalar multiplication
    P = points(curve, 64)
    P[3] = 0
    assert np.array_equal(m.g1_endo(P), m.g1_mul(P, enc_many([lam] * 64, 4)))


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
def test_split_edges(curve):
    r, lam = curve.r, curve.mod.GLV_LAMBDA
    ks = edge_scalars(curve)
    got = split(curve, ks)
    for k, (k1, k2) in zip(ks, got):
        assert (k1 + lam * k2 - k) % r == 0, k
        assert abs(k1) < BOUND and abs(k2) < BOUND, k
    assert split(curve, [0, 1])[:2] == [(0, 0), (1, 0)]
    # the same numbers as the generator's model of the C++ (gen_glv.split, Python integers)
    c = glv_constants(curve)
    assert c["lam"] == lam
    assert got[: len(ks)] == [model_split(c, k % r) for k in ks]


_both = plain_forced_default


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
@pytest.mark.parametrize("simd", [True, False], ids=["ifma", "scalar"])
def test_split_msm_edges(curve, modes, simd):
    ks = edge_scalars(curve)
    n = len(ks)
    P = points(curve, n)
    sc = enc_many([k % (1 << 256) for k in ks], 4)
    ref, got, _ = _both(modes, simd, lambda: curve.mod.msm_g1(P, sc, threads=2))
    assert np.array_equal(ref, got)
    # against Python integers through py_ecc-checked scalar multiplication
    terms = curve.mod.g1_mul(P, enc_many([k % curve.r for k in ks], 4)).reshape(n, -1)
    acc = terms[0]
    for t in terms[1:]:
        acc = curve.mod.g1_add(acc, t)
    assert np.array_equal(got, acc)
    # all scalars equal, one base repeated with its negation (cancelling, doubling in buckets)
    for k in (curve.r - 1, curve.mod.GLV_LAMBDA, ks[-1]):
        sc = enc_many([k] * 600, 4)
        ref, got, _ = _both(modes, simd, lambda: curve.mod.msm_g1(points(curve, 600), sc, threads=2))
        Q = points(curve, 2)
        Q = np.concatenate([Q, curve.mod.g1_neg(Q[0]).reshape(1, -1)])[[rng.randrange(3) for _ in range(600)]]
        ref, got, _ = _both(modes, simd, lambda: curve.mod.msm_g1(np.ascontiguousarray(Q), sc, threads=2))
        assert np.array_equal(ref, got)


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
@pytest.mark.parametrize("simd", [True, False], ids=["ifma", "scalar"])
def test_split_witness_msm(curve, modes, simd):
    """msm_witness (A, B1, C in the prover): zeros and ones kept apart, offsets (C), edges"""
    n = 2500
    ks = edge_scalars(curve)
    w = [rng.choice([0, 1, 1, rng.randrange(curve.r)]) for _ in range(n - len(ks))] + ks
    sc = enc_many([k % (1 << 256) for k in w], 4)
    P = points(curve, n)
    jobs = [(P, 0), (P[: n - 7], 7), (np.ascontiguousarray(P[::-1][: n - 1]), 1)]
    ref, got, auto = _both(modes, simd, lambda: curve.mod.msm_witness(sc, jobs, [], threads=2)[0])
    for a, b, c in zip(ref, got, auto):
        assert np.array_equal(a, b) and np.array_equal(a, c)
