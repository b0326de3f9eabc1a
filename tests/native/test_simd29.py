"""BN254 G1's batch-affine adder on 4 AVX2 lanes (ff/simd29.hpp, msm/bucket_simd29.hpp), the path
CPUs without AVX-512 IFMA take where the load-time calibration found it faster. With IFMA off:
the lane product against Python integers; G1 MSMs on the lanes against naive sums (native scalar
multiplications, themselves checked against py_ecc in test_points) at sizes that reach the
batch-affine buckets and the bucket-sorted top window, with zeros, ones, r - 1, infinity, repeated
bases (doubling) and P + (-P) pairs, with and without the endomorphism split (GLV halves); the same
bytes as the scalar adder; the witness MSMs likewise (G2 jobs stay on the scalar adder there).
test_msm.py and test_msm_mixed.py run their cases on this path too (their "avx2" parameter)."""
import random

import numpy as np
import pytest

from snarkd.native import _core
from helpers import CURVES, dec_many, enc_many

pytestmark = pytest.mark.skipif(not _core.cpu_has_simd29(), reason="no AVX2 + BMI2/ADX on this CPU")

rng = random.Random(29)
BN = CURVES[0]
assert BN.name == "bn254"
P = BN.q
W = 2 * BN.L  # 64-bit words of a G1 point


@pytest.fixture
def lanes():
    """IFMA off (it has priority); yields the AVX2 adder's switch, restored after"""
    prev52 = _core._set_simd52(False)
    prev29 = _core._set_simd29(True)
    yield _core._set_simd29
    _core._set_simd29(prev29)
    _core._set_simd52(prev52)


def test_lane_product_against_python():
    # inputs below 2p (the product's contract), edges first; output canonical a b / 2^256 mod p
    edges = [0, 1, 2, P - 1, P, P + 1, 2 * P - 1, (1 << 253) - 1, 1 << 253, (1 << 232) - 1, 1 << 232, (1 << 29) - 1]
    xs = [rng.randrange(2 * P) for _ in range(400)]
    ys = [rng.randrange(2 * P) for _ in range(400)]
    a = [e for e in edges for _ in edges] + xs
    b = [f for _ in edges for f in edges] + ys
    a += [0] * (-len(a) % 4)
    b += [0] * (-len(b) % 4)
    out = _core._simd29_mul(enc_many(a, 4).tobytes(), enc_many(b, 4).tobytes())
    got = dec_many(np.frombuffer(out, dtype=np.uint64), 4)
    rinv = pow(1 << 256, -1, P)
    assert got == [x * y * rinv % P for x, y in zip(a, b)]


def test_switch_and_default():
    prev = _core._set_simd29(True)
    try:
        assert _core.uses_simd29() == _core.cpu_has_simd29()
        assert _core._set_simd29(False) == _core.cpu_has_simd29()
        assert not _core.uses_simd29()
    finally:
        _core._set_simd29(prev)
    assert not _core.simd29_default() or _core.cpu_has_simd29()


def _mul(bases, sc):
    return BN.mod.g1_mul(bases, enc_many([s % (1 << 256) for s in sc], 4)).reshape(-1, W)


def _sum(rows):
    add = BN.mod.g1_add
    terms = np.asarray(rows).reshape(-1, W)
    if len(terms) == 0:
        return np.zeros(W, dtype=np.uint64)
    while len(terms) > 1:
        if len(terms) % 2:
            terms = np.concatenate([terms, np.zeros((1, W), dtype=np.uint64)])
        h = len(terms) // 2
        terms = add(terms[:h].reshape(-1), terms[h:].reshape(-1)).reshape(h, W)
    return terms[0]


def _naive_grouped(bases, sc):
    """sum s_i B_i with the scalars of equal bases summed first (mod r)"""
    groups = {}
    for row, s in zip(bases.reshape(-1, W), sc):
        k = row.tobytes()
        groups[k] = (row, (groups.get(k, (row, 0))[1] + s) % BN.r)
    if not groups:
        return np.zeros(W, dtype=np.uint64)
    rows = np.stack([g[0] for g in groups.values()])
    return _sum(_mul(rows.reshape(-1), [g[1] for g in groups.values()]))


def _pool(k):
    """k random points, the negation of the first two, twice the third, infinity"""
    G = BN.g1_enc(BN.pe.G1)
    pts = BN.mod.g1_mul(G, enc_many([rng.randrange(1, BN.r) for _ in range(k)], 4)).reshape(k, W)
    neg = [BN.mod.g1_neg(pts[i]) for i in (0, 1)]
    dbl = BN.mod.g1_add(pts[2], pts[2])
    return np.concatenate([pts, np.stack(neg), dbl.reshape(1, W), np.zeros((1, W), dtype=np.uint64)])


def _scalars(n):
    r = BN.r
    return [rng.choice([0, 1, 2, r - 1, rng.randrange(1, 1000), rng.randrange(r), rng.randrange(r), rng.randrange(r)])
            for _ in range(n)]


@pytest.mark.parametrize("n,distinct", [(3000, 3000), (5000, 40), (2 ** 14 + 3, 300), (3 * 8192 + 5, 7)])
@pytest.mark.parametrize("glv", [0, 2], ids=["plain", "glv"])
def test_g1_msm_vs_naive(lanes, n, distinct, glv):
    pool = _pool(distinct)
    idx = [rng.randrange(len(pool)) for _ in range(n)]
    bases = np.ascontiguousarray(pool[idx]).reshape(-1)
    sc = _scalars(n)
    want = _naive_grouped(bases, sc)
    prev = _core._set_glv(glv)
    try:
        got = {}
        for on in (True, False):
            lanes(on)
            got[on] = [BN.mod.msm_g1(bases, enc_many(sc, 4), threads=t) for t in (1, 2)]
        for on in (True, False):
            for g in got[on]:
                assert np.array_equal(g, want), (n, distinct, glv, on)
    finally:
        _core._set_glv(prev)


def test_g1_msm_all_cancelling(lanes):
    # P and -P with equal scalars: every bucket meets P + (-P); the sum is infinity
    base = _pool(3)[:1]
    negb = BN.mod.g1_neg(base[0]).reshape(1, W)
    n = 4096
    bases = np.concatenate([base, negb] * (n // 2)).reshape(-1)
    sc = [rng.randrange(BN.r)] * n
    for on in (True, False):
        lanes(on)
        assert not BN.mod.msm_g1(bases, enc_many(sc, 4), threads=2).any()
    # equal points only: doublings in every bucket
    bases = np.concatenate([base] * n).reshape(-1)
    want = _mul(base.reshape(-1), [sum(sc) % BN.r])[0]
    for on in (True, False):
        lanes(on)
        assert np.array_equal(BN.mod.msm_g1(bases, enc_many(sc, 4), threads=2), want)


def test_witness_msms(lanes):
    m, n, start = BN.mod, 6000, 11
    pa, pc = _pool(500), _pool(50)
    a = np.ascontiguousarray(pa[[rng.randrange(len(pa)) for _ in range(n)]]).reshape(-1)
    c = np.ascontiguousarray(pc[[rng.randrange(len(pc)) for _ in range(n - start)]]).reshape(-1)
    G2 = BN.g2_enc(BN.pe.G2)
    b2 = m.g2_mul(G2, enc_many([rng.randrange(1, BN.r) for _ in range(40)], 4)).reshape(40, -1)
    b2 = np.ascontiguousarray(b2[[rng.randrange(40) for _ in range(n)]]).reshape(-1)
    w = [1] + [rng.choice([0, 0, 1, 1, rng.randrange(2, 1000), rng.randrange(BN.r)]) for _ in range(n - 1)]
    Wb = enc_many(w, 4)
    want = [_naive_grouped(a, w), _naive_grouped(c, w[start:])]
    want_g2 = m.msm_g2(b2, Wb)
    for on in (True, False):
        lanes(on)
        g1, g2 = m.msm_witness(Wb, [(a, 0), (c, start)], [(b2, 0)], threads=2)
        assert np.array_equal(g1[0], want[0]) and np.array_equal(g1[1], want[1]), on
        assert np.array_equal(g2[0], want_g2), on
