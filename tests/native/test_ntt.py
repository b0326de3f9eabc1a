"""NTT / coset shift against naive evaluation with Python ints, snarkjs roots of unity."""
import random

import numpy as np
import pytest

from snarkd.native import _core
from helpers import dec_many, enc_many

rng = random.Random(7)
ROOT_CONST = {
    "bn254": 19103219067921713944291392827692070036145651957329286315305642004821462161904,
    "bls12_381": 0x0212d79e5b416b6f0fd56dc8d168d6c0c4024ff270b3e0941b788f500b912f1f,
}


def _root(curve, log_n):
    r = curve.r
    s = curve.mod.TWO_ADICITY
    t = (r - 1) >> s
    return pow(pow(5, t, r), 1 << (s - log_n), r)


def test_roots(curve):
    m, r = curve.mod, curve.r
    s = m.TWO_ADICITY
    assert (r - 1) % (1 << s) == 0 and ((r - 1) >> s) % 2 == 1
    w = curve.ur(dec_many(m.root_of_unity(s), 4)[0])
    assert w == ROOT_CONST[curve.name] == pow(5, (r - 1) >> s, r)
    assert pow(w, 1 << (s - 1), r) == r - 1  # primitive
    for k in (0, 1, 5, 16):
        assert curve.ur(dec_many(m.root_of_unity(k), 4)[0]) == _root(curve, k)
    with pytest.raises(ValueError):
        m.root_of_unity(s + 1)


@pytest.mark.parametrize("log_n", list(range(0, 8)) + [12])
def test_ntt_vs_naive(curve, log_n):
    m, r = curve.mod, curve.r
    n = 1 << log_n
    coeffs = [rng.randrange(r) for _ in range(n)]
    if n > 2:
        coeffs[0], coeffs[1] = 0, r - 1
    vals = enc_many([curve.mr(c) for c in coeffs], 4)
    orig = vals.copy()
    for t in (1, 2, 3):
        v = orig.copy()
        m.ntt(v, threads=t)
        got = [curve.ur(x) for x in dec_many(v, 4)]
        if log_n <= 7 and t == 1:
            w = _root(curve, log_n)
            want = [sum(c * pow(w, i * j, r) for j, c in enumerate(coeffs)) % r for i in range(n)]
            assert got == want
        elif t == 1:
            ref = got
        else:
            assert got == (want if log_n <= 7 else ref)
        m.ntt(v, inverse=True, threads=t)
        assert np.array_equal(v, orig)
    # inverse on its own: naive interpolation check via forward of the result
    v = orig.copy()
    m.ntt(v, inverse=True)
    m.ntt(v)
    assert np.array_equal(v, orig)


@pytest.mark.parametrize("log_n", [0, 1, 2, 3, 6])
def test_coset_shift_vs_naive(curve, log_n):
    m, r = curve.mod, curve.r
    n = 1 << log_n
    coeffs = [rng.randrange(r) for _ in range(n)]
    w = _root(curve, log_n)
    w2 = _root(curve, log_n + 1)
    evals = [sum(c * pow(w, i * j, r) for j, c in enumerate(coeffs)) % r for i in range(n)]
    v = enc_many([curve.mr(e) for e in evals], 4)
    m.coset_shift_evals(v, threads=2)
    got = [curve.ur(x) for x in dec_many(v, 4)]
    want = [sum(c * pow(w2, (2 * i + 1) * j, r) for j, c in enumerate(coeffs)) % r for i in range(n)]
    assert got == want


def test_ntt_errors_and_unaligned(curve):
    m = curve.mod
    with pytest.raises(ValueError, match="power of two"):
        m.ntt(np.zeros((3, 4), dtype=np.uint64))
    with pytest.raises(ValueError, match="writable"):
        m.ntt(bytes(64))
    # 4-byte aligned writable buffer (copied through an aligned temporary)
    n = 16
    coeffs = enc_many([curve.mr(rng.randrange(curve.r)) for _ in range(n)], 4)
    ref = coeffs.copy()
    m.ntt(ref)
    raw = bytearray(4 + n * 32)
    raw[4:] = coeffs.tobytes()
    view = np.frombuffer(raw, dtype=np.uint32, offset=4)
    m.ntt(view)
    assert bytes(raw[4:]) == ref.tobytes()


def _ntt_ref(vals, w, r):
    """Iterative radix-2 NTT on Python ints (natural order in and out): the reference for
    sizes past the naive O(n^2) check."""
    n = len(vals)
    bits = n.bit_length() - 1
    a = [vals[int(format(i, f"0{bits}b")[::-1], 2) if bits else 0] for i in range(n)]
    m = 1
    while m < n:
        wm = pow(w, n // (2 * m), r)
        for s in range(0, n, 2 * m):
            t = 1
            for j in range(m):
                u, v = a[s + j], a[s + j + m] * t % r
                a[s + j], a[s + j + m] = (u + v) % r, (u - v) % r
                t = t * wm % r
        m *= 2
    return a


@pytest.mark.parametrize("adx", [True, False])
@pytest.mark.parametrize("log_n", [8, 12, 13])
@pytest.mark.parametrize("kind", ["top", "alternating", "random"])
def test_ntt_lazy_bounds_past_the_block(curve, log_n, kind, adx):
    """Past 2^11 (the block) the large stages run too. The lazy butterflies keep values in
    [0, 2p) or [0, 4p) between stages: inputs at r - 1 (the largest canonical value) everywhere,
    alternating 0 and r - 1, and random ones, through the forward, inverse and coset transforms,
    against Python integers; every output canonical (below r as stored: ur() alone would
    reduce a lazy value mod r and hide it). adx=False: the portable product (CPUs without
    BMI2/ADX) under the same lazy bounds."""
    prev = _core._set_adx(adx)
    try:
        _check_transforms(curve, log_n, kind)
    finally:
        _core._set_adx(prev)


def _check_transforms(curve, log_n, kind):
    m, r = curve.mod, curve.r
    n = 1 << log_n
    if kind == "top":
        evals = [r - 1] * n
    elif kind == "alternating":
        evals = [(r - 1) * (i & 1) for i in range(n)]
    else:
        evals = [rng.randrange(r) for _ in range(n)]
    w = _root(curve, log_n)
    v = enc_many([curve.mr(e) for e in evals], 4)
    f = v.copy()
    m.ntt(f, threads=2)
    def got(a):
        raw = dec_many(a, 4)
        assert max(raw) < r
        return [curve.ur(x) for x in raw]

    assert got(f) == _ntt_ref(evals, w, r)
    i = v.copy()
    m.ntt(i, inverse=True, threads=2)
    ninv = pow(n, -1, r)
    coeffs = [c * ninv % r for c in _ntt_ref(evals, pow(w, -1, r), r)]
    assert got(i) == coeffs
    c = v.copy()
    m.coset_shift_evals(c, threads=2)
    g = _root(curve, log_n + 1)
    want = _ntt_ref([cj * pow(g, j, r) % r for j, cj in enumerate(coeffs)], w, r)
    assert got(c) == want


def _to_raw(xs):
    return np.frombuffer(b"".join(x.to_bytes(32, "little") for x in xs), dtype=np.uint64).reshape(-1, 4).copy()


def _from_raw(a):
    b = np.ascontiguousarray(a).tobytes()
    return [int.from_bytes(b[i:i + 32], "little") for i in range(0, len(b), 32)]


def _eval(coeffs, x, r):
    acc = 0
    for c in reversed(coeffs):
        acc = (acc * x + c) % r
    return acc


@pytest.mark.parametrize("log_n", [14, 15, 16, 17, 18, pytest.param(19, marks=pytest.mark.slow), 20])
def test_ntt_grouped_large_stages(curve, log_n):
    """The stages past the block (2^11 .. 2^13: Ntt::block_size, two blocks a thread at least) run up
    to three per pass over the array: at one and two threads 1 (2^14, one thread), 2, 3, 4 (2 + 2),
    5 (3 + 2), 6 (3 + 3) and 7 (3 + 2 + 2) large stages here, for both curves
    (BN254's Fr takes the lazy butterflies, BLS12-381's the plain ones). Too large for a full
    Python NTT: outputs at spot points against Python-integer evaluation of the polynomial, the
    inverse's round trip exactly, every output canonical, one and two threads equal."""
    if log_n >= 19 and curve.name != "bn254":
        pytest.skip("one curve at 2^19 and 2^20 (the grouping is the curve-independent part)")
    m, r = curve.mod, curve.r
    n = 1 << log_n
    lrng = random.Random(log_n)
    evals = [lrng.randrange(r) for _ in range(n)]
    evals[0], evals[1] = r - 1, 0
    v = _to_raw([curve.mr(e) for e in evals])
    w = _root(curve, log_n)
    spots = [0, 1, n // 2 - 1, n // 2, n - 1, lrng.randrange(n)]

    def canon(a):
        raw = _from_raw(a)
        assert max(raw) < r
        return raw

    f = v.copy()
    m.ntt(f, threads=2)
    f1 = v.copy()
    m.ntt(f1, threads=1)
    assert np.array_equal(f, f1)
    fr = canon(f)
    for i in spots:
        assert curve.ur(fr[i]) == _eval(evals, pow(w, i, r), r)

    i_ = v.copy()
    m.ntt(i_, inverse=True, threads=2)
    coeffs = [curve.ur(x) for x in canon(i_)]
    ninv, winv = pow(n, -1, r), pow(w, -1, r)
    for k in spots:
        assert coeffs[k] == ninv * _eval(evals, pow(winv, k, r), r) % r
    back = i_.copy()
    m.ntt(back, threads=2)
    assert np.array_equal(back, v)

    c = v.copy()
    m.coset_shift_evals(c, threads=2)
    cr = canon(c)
    g = _root(curve, log_n + 1)
    for i in spots:
        assert curve.ur(cr[i]) == _eval(coeffs, g * pow(w, i, r) % r, r)
