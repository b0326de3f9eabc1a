"""The AVX-512 IFMA kernels (8-lane field, batch-affine MSM buckets, SIMD NTT) give the
same bytes as the scalar code: MSMs (random, small, repeated and cancelling bases,
infinity, scalars >= r), the witness MSMs (zeros, ones, offsets) and the QAP step,
each run with the 8-lane path on and off; and the inversion against Python ints.
On a CPU without IFMA both runs take the scalar path (the comparison still holds)."""
import random

import numpy as np
import pytest

from snarkd.native import _core
from helpers import dec_many, enc_many

rng = random.Random(52)


@pytest.fixture
def toggle():
    prev = _core._set_simd52(True)
    yield lambda on: _core._set_simd52(on)
    _core._set_simd52(prev)


def both(toggle, fn):
    toggle(False)
    ref = fn()
    toggle(True)
    got = fn()
    return ref, got


def _bases(curve, n, g2=False, distinct=None):
    m = curve.mod
    G = curve.g2_enc(curve.pe.G2) if g2 else curve.g1_enc(curve.pe.G1)
    mul = m.g2_mul if g2 else m.g1_mul
    k = n if distinct is None else distinct
    pts = mul(G, enc_many([rng.randrange(1, curve.r) for _ in range(k)], 4))
    width = len(G)
    pts = pts.reshape(k, width)
    if distinct is not None:
        pts = pts[[rng.randrange(k) for _ in range(n)]]
    return np.ascontiguousarray(pts)


@pytest.mark.slow
@pytest.mark.parametrize("n", [1, 7, 300, 5000])
def test_msm_g1_random(curve, toggle, n):
    bases = _bases(curve, n)
    bases[n // 2] = 0  # infinity
    sc = enc_many([rng.randrange(curve.r) for _ in range(n)], 4)
    ref, got = both(toggle, lambda: curve.mod.msm_g1(bases, sc, threads=2))
    assert np.array_equal(ref, got)


def test_msm_g1_repeated_and_cancelling_bases(curve, toggle):
    # one base, its negation and few others: buckets meet equal x (doubling and P + (-P))
    n = 4000
    G = _bases(curve, 3)
    negG0 = curve.mod.g1_neg(G[0]).reshape(1, -1)
    bases = np.concatenate([G, negG0])[[rng.randrange(4) for _ in range(n)]]
    sc = enc_many([rng.choice([5, 7, curve.r - 5, rng.randrange(curve.r)]) for _ in range(n)], 4)
    ref, got = both(toggle, lambda: curve.mod.msm_g1(bases, sc, threads=2))
    assert np.array_equal(ref, got)


def test_msm_small_and_large_scalars(curve, toggle):
    n = 3000
    bases = _bases(curve, n, distinct=500)
    # small scalars crowd a few buckets; values >= r are taken mod r
    sc = enc_many([rng.choice([rng.randrange(1, 300), curve.r + rng.randrange(50), (1 << 256) - 1 - rng.randrange(9)])
                   for _ in range(n)], 4)
    ref, got = both(toggle, lambda: curve.mod.msm_g1(bases, sc, threads=2))
    assert np.array_equal(ref, got)


@pytest.mark.parametrize("n", [5, 1200])
def test_msm_g2(curve, toggle, n):
    bases = _bases(curve, n, g2=True, distinct=max(2, n // 3))
    bases[0] = 0
    sc = enc_many([rng.randrange(curve.r) for _ in range(n)], 4)
    ref, got = both(toggle, lambda: curve.mod.msm_g2(bases, sc, threads=2))
    assert np.array_equal(ref, got)


@pytest.mark.slow
def test_msm_witness_matches_separate_msms(curve, toggle):
    m, n, start = curve.mod, 3000, 17
    a, b1 = _bases(curve, n), _bases(curve, n, distinct=700)
    c = _bases(curve, n - start)
    b2 = _bases(curve, n, g2=True, distinct=300)
    a[3] = 0
    b2[9] = 0
    # a witness like a real one: zeros, ones, small values, full-size values
    w = [1] + [rng.choice([0, 0, 1, 1, rng.randrange(2, 1000), rng.randrange(curve.r)]) for _ in range(n - 1)]
    W = enc_many(w, 4)
    want_g1 = [m.msm_g1(a, W), m.msm_g1(b1, W), m.msm_g1(c, W[start:])]
    want_g2 = m.msm_g2(b2, W)
    for on in (False, True):
        toggle(on)
        g1, g2 = m.msm_witness(W, [(a, 0), (b1, 0), (c, start)], [(b2, 0)], threads=2)
        for x, y in zip(g1, want_g1):
            assert np.array_equal(x, y)
        assert np.array_equal(g2[0], want_g2)


def test_msm_witness_only_zeros_and_ones(curve, toggle):
    m, n = curve.mod, 2500
    a = _bases(curve, n)
    w = enc_many([1] + [rng.choice([0, 1]) for _ in range(n - 1)], 4)
    ref, got = both(toggle, lambda: m.msm_witness(w, [(a, 0)], [], threads=2)[0][0])
    assert np.array_equal(ref, got)
    assert np.array_equal(got, m.msm_g1(a, w))


def test_msm_witness_rejects_bad_jobs(curve):
    m = curve.mod
    w = enc_many([1, 2, 3], 4)
    with pytest.raises(ValueError, match="g1 bases"):
        m.msm_witness(w, [(_bases(curve, 3), 1)], [], threads=1)


@pytest.mark.parametrize("log_n", [1, 3, 4, 5, 11, 12])
def test_qap_h_matches_the_composed_steps(curve, toggle, log_n):
    m, n = curve.mod, 1 << log_n
    a = m.fr_to_mont(enc_many([rng.randrange(curve.r) for _ in range(n)], 4))
    b = m.fr_to_mont(enc_many([rng.randrange(curve.r) for _ in range(n)], 4))
    # the steps as the prover composed them before qap_h (scalar NTTs)
    c = m.fr_mul_pointwise(a, b)
    A, B = a.copy(), b.copy()
    for v in (A, B, c):
        m.coset_shift_evals(v)
    want = m.h_from_coset(A, B, c)
    for on in (False, True):
        toggle(on)
        h, h_ms = m.qap_h(a, b, threads=2)
        assert np.array_equal(h, want)
        assert h_ms >= 0.0


@pytest.mark.parametrize("which", ["fr", "fq"])
def test_inverse_against_python(curve, which):
    m = curve.mod
    p = curve.r if which == "fr" else curve.q
    L = 4 if which == "fr" else curve.L
    xs = [1, 2, p - 1, p - 2, (p + 1) // 2, 1 << 200] + [rng.randrange(1, p) for _ in range(3000)]
    xm = getattr(m, f"{which}_to_mont")(enc_many(xs, L))
    inv = dec_many(getattr(m, f"{which}_from_mont")(getattr(m, f"{which}_inv")(xm)), L)
    assert inv == [pow(x, -1, p) for x in xs]


def test_crc32c_known_value():
    # CRC-32C check value of "123456789" (RFC 3720 / iSCSI)
    assert _core.crc32c(b"123456789") == 0xE3069283
    assert _core.crc32c(b"") == 0
    data = bytes(range(256)) * 1000
    assert _core.crc32c(memoryview(data)[1:]) == _core.crc32c(data[1:])
