"""The G2 endomorphism split (GLS; ec/glv.hpp's glv_phi on G2, msm/glv_split.hpp): psi on
BN254 and psi^2 on BLS12-381 are multiplication by GLS_LAMBDA on G2 (py_ecc, Python
integers and the native scalar multiplication), the decomposition k = k1 + lambda k2 with
|k1|, |k2| < 2^127 (hypothesis), and split G2 MSMs equal to plain ones on random and edge
scalars, both curves, several sizes, the 8-lane path on and off (where the CPU has it)."""
import random

import numpy as np
import pytest

from snarkd.native import _core
from helpers import CURVES, enc_many
from split_helpers import (BOUND, decode_split, endo_constants, gen_glv, mode_switch, plain_forced_default,
                           random_points)

rng = random.Random(1039)
BN_X, BLS_X = 4965661367192848881, -0xD201000000010000


@pytest.fixture
def modes():
    """set(simd, gls) for the test; the previous settings come back afterwards"""
    yield from mode_switch(_core._set_gls)


def gls_constants(curve):
    return endo_constants(curve, g2=True)


def split(curve, ks):
    return decode_split(curve.mod.gls_split(enc_many(ks, 4)), len(ks))


def points(curve, n):
    return random_points(curve, True, n, rng)


def edge_scalars(curve):
    """0, 1, r - 1, lambda and neighbours, scalars at the rounding boundaries of the
    decomposition (the largest |k1|, |k2|), and one of each sign combination"""
    r, lam = curve.r, curve.mod.GLS_LAMBDA
    ks = [0, 1, 2, r - 1, r - 2, lam, lam - 1, lam + 1, r - lam, (lam * lam) % r, (r - 1) // 2, 1 << 127, BOUND - 1,
          BOUND, r + 5, (1 << 256) - 1, lam * 3 % r, (r - 1) * pow(lam, -1, r) % r]
    c = gls_constants(curve)
    for g in (c["g1"], c["g2"]):  # where k g_i / 2^256 is j + 1/2: the rounding of u_i flips
        for _ in range(4):
            j = rng.randrange(max(1, r * g >> 256))
            k = ((2 * j + 1) << 255) // g
            ks += [k, k + 1, k - 1]
    # the split's lattice vectors as scalars (k = u a1 + v a2 = -lambda (u b1 + v b2) mod r),
    # and their neighbours: the two halves trade places there
    (a1, b1), (a2, b2) = c["basis"]
    for u, v in [(1, 0), (0, 1), (1, 1), (1, -1), (3, -2)]:
        k = (u * a1 + v * a2) % r
        ks += [k, (k + 1) % r, (k - 1) % r, (-lam * (u * b1 + v * b2)) % r]
    signs = {}
    while len(signs) < 4:
        k = rng.randrange(r)
        k1, k2 = split(curve, [k])[0]
        signs.setdefault((k1 < 0, k2 < 0), k)
    return ks + list(signs.values())


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
def test_lambda_is_the_endomorphism(curve):
    m, r, q, pe = curve.mod, curve.r, curve.q, curve.pe
    lam = m.GLS_LAMBDA
    # the eigenvalue in Python integers: psi acts on G2 as q mod r, which is 6 x^2 (BN254)
    # or x (BLS12-381, whose 2-d split uses psi^2: x^2)
    if curve.name == "bn254":
        assert lam == q % r == 6 * BN_X ** 2 and lam.bit_length() == 127
    else:
        assert q % r == BLS_X % r and lam == pow(q, 2, r) == BLS_X ** 2 and lam.bit_length() == 128
    assert lam == gls_constants(curve)["lam"]
    # against py_ecc: the image of G2 and of random points is lambda times the point
    G = curve.g2_enc(pe.G2)
    assert pe.eq(curve.g2_dec(m.g2_endo(G)), pe.multiply(pe.G2, lam))
    for _ in range(3):
        k = rng.randrange(1, r)
        Pk = pe.multiply(pe.G2, k)
        img = curve.g2_dec(m.g2_endo(curve.g2_enc(Pk)))
        assert pe.is_on_curve(img, pe.b2) and pe.eq(img, pe.multiply(Pk, lam))
        assert pe.eq(img, pe.multiply(pe.G2, k * lam % r))
    # on random points (and infinity) against the native scalar multiplication
    P = points(curve, 64)
    P[5] = 0
    assert np.array_equal(m.g2_endo(P), m.g2_mul(P, enc_many([lam] * 64, 4)))
    assert m.g2_first_not_on_curve(m.g2_endo(P)) < 0
    # applied twice: lambda^2
    P2 = m.g2_endo(m.g2_endo(P))
    assert np.array_equal(P2, m.g2_mul(P, enc_many([lam * lam % r] * 64, 4)))


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
def test_split_edges(curve):
    r, lam = curve.r, curve.mod.GLS_LAMBDA
    ks = edge_scalars(curve)
    got = split(curve, ks)
    for k, (k1, k2) in zip(ks, got):
        assert (k1 + lam * k2 - k) % r == 0, k
        assert abs(k1) < BOUND and abs(k2) < BOUND, k
    assert split(curve, [0, 1])[:2] == [(0, 0), (1, 0)]
    # the same numbers as the generator's model of the C++ (gen_glv.split, Python integers)
    c = gls_constants(curve)
    assert got == [gen_glv().split(c, k % r, None) for k in ks]


_both = plain_forced_default


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
@pytest.mark.parametrize("simd", [True, False], ids=["ifma", "scalar"])
def test_split_msm_edges(curve, modes, simd):
    m = curve.mod
    ks = edge_scalars(curve)
    n = len(ks)
    P = points(curve, n)
    P[3] = 0  # infinity among the edge scalars
    sc = enc_many([k % (1 << 256) for k in ks], 4)
    ref, got, _ = _both(modes, simd, lambda: m.msm_g2(P, sc, threads=2))
    assert np.array_equal(ref, got)
    # against Python integers through py_ecc (each term k P, summed)
    acc = curve.pe.Z2
    for k, row in zip(ks, P):
        acc = curve.pe.add(acc, curve.pe.multiply(curve.g2_dec(row), k % curve.r))
    assert curve.pe.eq(curve.g2_dec(got), acc)
    # all-zero scalars: infinity
    zero = enc_many([0] * n, 4)
    ref, got, _ = _both(modes, simd, lambda: m.msm_g2(P, zero, threads=2))
    assert not got.any() and not ref.any()
    # all scalars equal, one base repeated with its negation (cancelling, doubling in buckets)
    for k in (curve.r - 1, curve.mod.GLS_LAMBDA, ks[-1]):
        sc = enc_many([k] * 600, 4)
        Q = points(curve, 600)
        ref, got, _ = _both(modes, simd, lambda: m.msm_g2(Q, sc, threads=2))
        assert np.array_equal(ref, got)
        Q = points(curve, 2)
        Q = np.concatenate([Q, m.g2_neg(Q[0]).reshape(1, -1)])[[rng.randrange(3) for _ in range(600)]]
        ref, got, _ = _both(modes, simd, lambda: m.msm_g2(np.ascontiguousarray(Q), sc, threads=2))
        assert np.array_equal(ref, got)
    # bases that are each other's images (P and psi(P)): the split meets its own images
    Q = points(curve, 300)
    Q = np.ascontiguousarray(np.concatenate([Q, m.g2_endo(Q).reshape(300, -1)]))
    sc = enc_many([rng.randrange(curve.r) for _ in range(600)], 4)
    ref, got, _ = _both(modes, simd, lambda: m.msm_g2(Q, sc, threads=2))
    assert np.array_equal(ref, got)


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
@pytest.mark.parametrize("simd", [True, False], ids=["ifma", "scalar"])
def test_split_witness_msm(curve, modes, simd):
    """msm_witness (B2 in the prover): zeros and ones, offsets, edges"""
    n = 1500
    ks = edge_scalars(curve)
    w = [rng.choice([0, 1, 1, rng.randrange(curve.r)]) for _ in range(n - len(ks))] + ks
    sc = enc_many([k % (1 << 256) for k in w], 4)
    P = points(curve, n)
    jobs = [(P, 0), (P[: n - 7], 7)]
    ref, got, auto = _both(modes, simd, lambda: curve.mod.msm_witness(sc, [], jobs, threads=2)[1])
    for a, b, c in zip(ref, got, auto):
        assert np.array_equal(a, b) and np.array_equal(a, c)


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
@pytest.mark.parametrize("full", [0, 1, 40])
def test_mostly_bits_witness(curve, modes, full):
    """scalars almost all 0 or 1 (B2 of a bit-valued witness on the scalar path): the default
    keeps the plain MSM below 1/16 full scalars (msm/pippenger.hpp mostly_bits), same result"""
    n = 600
    w = [rng.randrange(2) for _ in range(n - full)] + [rng.randrange(curve.r) for _ in range(full)]
    rng.shuffle(w)
    P = points(curve, n)
    sc = enc_many(w, 4)
    ref, got, auto = _both(modes, False, lambda: curve.mod.msm_g2(P, sc, threads=2))
    assert np.array_equal(ref, got) and np.array_equal(ref, auto)
