"""Pippenger MSM vs a naive sum of native scalar multiplications (themselves checked
against py_ecc in test_points), plus a few direct py_ecc checks. Every test runs on both
paths: the 8-lane AVX-512 IFMA adder, G1's 4-lane AVX2 adder of both curves (msm/bucket_simd29.hpp, what
CPUs without IFMA run where it measured faster) and the scalar one (msm/buckets.hpp's
ScalarBatchAdd); a path the CPU lacks falls back to the scalar one.
Small MSMs with a forced window reach the batch-affine buckets with hypothesis-drawn
scalars and bases (repeats, negations, infinity: the adders' equal-x and infinity cases)."""
import random

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from snarkd.native import _core
from helpers import enc_many

rng = random.Random(99)


@pytest.fixture(autouse=True, params=["ifma", "avx2", "scalar"])
def path(request):
    """the 8-lane IFMA adder, the 4-lane AVX2 adders, G1 and G2 of BN254 and BLS12-381 (msm/bucket_simd29.hpp) and the scalar one; a path the CPU lacks falls back to the scalar adder"""
    prev = _core._set_simd52(request.param == "ifma")
    prev29 = {(c, g2): _core._set_simd29(request.param == "avx2", c, g2)
              for c in ("bn254", "bls12_381") for g2 in (False, True)}
    yield request.param
    for (c, g2), v in prev29.items():
        _core._set_simd29(v, c, g2)
    _core._set_simd52(prev)


def _ops(curve, g2):
    m = curve.mod
    p = "g2" if g2 else "g1"
    return (getattr(m, f"msm_{p}"), getattr(m, f"{p}_mul"), getattr(m, f"{p}_add"),
            curve.g2_enc if g2 else curve.g1_enc, (4 if g2 else 2) * curve.L)


def _naive(mul, add, bases, scalars_plain, width):
    n = len(scalars_plain)
    if n == 0:
        return np.zeros(width, dtype=np.uint64)
    terms = mul(bases[: n * width], enc_many([s % (1 << 256) for s in scalars_plain], 4)).reshape(n, width)
    while len(terms) > 1:  # pairwise tree sum with the vectorised add
        if len(terms) % 2:
            terms = np.concatenate([terms, np.zeros((1, width), dtype=np.uint64)])
        h = len(terms) // 2
        terms = add(terms[:h].reshape(-1), terms[h:].reshape(-1)).reshape(h, width)
    return terms[0]


def _naive_grouped(curve, mul, add, bases, scalars_plain, width):
    """Same as _naive, but sums the scalars of equal bases first (fast for repeated bases)."""
    groups = {}
    rows = bases.reshape(-1, width)[: len(scalars_plain)]
    for row, s in zip(rows, scalars_plain):
        key = row.tobytes()
        groups[key] = (groups.get(key, (row, 0))[0], (groups.get(key, (row, 0))[1] + s) % curve.r)
    if not groups:
        return np.zeros(width, dtype=np.uint64)
    b = np.concatenate([g[0] for g in groups.values()])
    return _naive(mul, add, b, [g[1] for g in groups.values()], width)


def _bases(curve, g2, n, n_distinct=None, with_inf=True):
    msm, mul, add, e, width = _ops(curve, g2)
    G = e(curve.pe.G2 if g2 else curve.pe.G1)
    nd = n if n_distinct is None else n_distinct
    ks = enc_many([rng.randrange(1, curve.r) for _ in range(max(nd, 1))], 4)
    distinct = mul(G, ks).reshape(-1, width)
    b = distinct[[rng.randrange(len(distinct)) for _ in range(n)]] if n_distinct else distinct[:n].copy()
    if with_inf and n >= 3:
        b[1] = 0
        b[n - 1] = 0
    return b.reshape(-1)


def _scalars(curve, n, kind):
    r = curve.r
    if kind == "random":
        s = [rng.randrange(r) for _ in range(n)]
        for i, v in zip(range(0, n, 7), [0, 1, r - 1, 2, r - 2]):
            s[i] = v
        return s
    if kind == "equal":
        v = rng.randrange(r)
        return [v] * n
    if kind == "small":
        return [rng.randrange(4) for _ in range(n)]
    if kind == "edge":
        return [[0, 1, r - 1][i % 3] for i in range(n)]
    raise ValueError(kind)


G1_CASES = [(0, "random"), (1, "random"), (1, "edge"), (2, "edge"), (3, "edge"), (37, "random"),
            (100, "equal"), (100, "small"), (1000, "random")]
G2_CASES = [(0, "random"), (1, "edge"), (2, "random"), (3, "edge"), (37, "random"), (100, "equal"), (300, "random")]


@pytest.mark.parametrize("g2,n,kind", [(False, *c) for c in G1_CASES] + [(True, *c) for c in G2_CASES])
def test_msm_vs_naive(curve, g2, n, kind):
    msm, mul, add, e, width = _ops(curve, g2)
    bases = _bases(curve, g2, n)
    sc = _scalars(curve, n, kind)
    want = _naive(mul, add, bases, sc, width)
    sbytes = enc_many(sc, 4) if n else np.zeros((0, 4), dtype=np.uint64)
    for t in (1, 2, 7):
        got = msm(bases, sbytes, threads=t)
        assert got.shape == (width,) and got.dtype == np.uint64
        assert np.array_equal(got, want), (n, kind, t)


@pytest.mark.parametrize("g2", [False, True], ids=["g1", "g2"])
def test_msm_repeated_bases_and_reduction(curve, g2):
    msm, mul, add, e, width = _ops(curve, g2)
    n = 200
    bases = _bases(curve, g2, n, n_distinct=5)
    sc = [rng.randrange(curve.r) for _ in range(n)]
    want = _naive(mul, add, bases, sc, width)
    assert np.array_equal(_naive_grouped(curve, mul, add, bases, sc, width), want)
    assert np.array_equal(msm(bases, enc_many(sc, 4), threads=2), want)
    # scalars >= r are reduced mod r (documented behaviour)
    big = [s + curve.r if s + curve.r < (1 << 256) else s for s in sc]
    assert np.array_equal(msm(bases, enc_many(big, 4), threads=2), want)
    # extra bases beyond n are ignored; bytes input works
    extra = np.concatenate([bases, bases[: 3 * width]])
    assert np.array_equal(msm(extra.tobytes(), enc_many(sc, 4).tobytes(), threads=1), want)


@pytest.mark.parametrize("g2", [False, True], ids=["g1", "g2"])
def test_msm_vs_py_ecc(curve, g2):
    pe = curve.pe
    msm, mul, add, e, width = _ops(curve, g2)
    G = pe.G2 if g2 else pe.G1
    pts = [pe.multiply(G, k) for k in (3, 11, 1 << 70)] + [pe.Z2 if g2 else pe.Z1]
    sc = [5, curve.r - 1, rng.randrange(curve.r), 17]
    want = pe.Z2 if g2 else pe.Z1
    for p, s in zip(pts, sc):
        want = pe.add(want, pe.multiply(p, s))
    got = msm(np.concatenate([e(p) for p in pts]), enc_many(sc, 4))
    assert np.array_equal(got, e(want))


def test_msm_larger_all_zero_and_errors(curve):
    msm, mul, add, e, width = _ops(curve, False)
    n = 5000
    bases = _bases(curve, False, n, n_distinct=50)
    sc = [rng.randrange(curve.r) for _ in range(n)]
    want = _naive_grouped(curve, mul, add, bases, sc, width)
    for t in (1, 2, 16):
        assert np.array_equal(msm(bases, enc_many(sc, 4), threads=t), want)
    assert not msm(bases, np.zeros((n, 4), dtype=np.uint64)).any()
    assert not msm(np.zeros(n * width, dtype=np.uint64), enc_many(sc, 4)).any()
    with pytest.raises(ValueError, match="bases"):
        msm(bases[: width * 10], enc_many(sc[:11], 4))
    with pytest.raises(ValueError, match="scalars"):
        msm(bases, b"\0" * 33)


@pytest.mark.parametrize("g2", [False, True], ids=["g1", "g2"])
def test_msm_batch_affine_degenerate(curve, g2):
    """n >= 2048 takes the batch-affine path: equal points (doubling), P + (-P), infinity."""
    msm, mul, add, e, width = _ops(curve, g2)
    neg = getattr(curve.mod, "g2_neg" if g2 else "g1_neg")
    P = _bases(curve, g2, 3, with_inf=False).reshape(3, width)
    trio = np.stack([P[0], neg(P[0]), P[1], np.zeros(width, dtype=np.uint64)])
    n = 2400
    bases = np.tile(trio, (n // 4, 1)).reshape(-1)
    same = [12345] * n
    want = _naive_grouped(curve, mul, add, bases, same, width)
    assert np.array_equal(want, mul(P[1], enc_many([12345 * (n // 4)], 4)))
    assert np.array_equal(msm(bases, enc_many(same, 4), threads=2), want)
    sc = [rng.randrange(curve.r) if i % 5 else 7 for i in range(n)]
    want = _naive_grouped(curve, mul, add, bases, sc, width)
    assert np.array_equal(msm(bases, enc_many(sc, 4), threads=1), want)


@pytest.fixture
def window():
    prev = _core._set_msm_window(0)
    yield _core._set_msm_window
    _core._set_msm_window(prev)


def _pool(curve, g2):
    """a few points, the negation of the first, twice the second and infinity: draws repeat them"""
    msm, mul, add, e, width = _ops(curve, g2)
    neg = getattr(curve.mod, "g2_neg" if g2 else "g1_neg")
    P = _bases(curve, g2, 4, with_inf=False).reshape(4, width)
    return np.stack([*P, neg(P[0]), add(P[1], P[1]), np.zeros(width, dtype=np.uint64)])


_POOLS = {}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
@pytest.mark.parametrize("g2", [False, True], ids=["g1", "g2"])
def test_msm_batch_affine_hypothesis(curve, g2, window, data):
    """A forced 7- or 8-bit window (64 or 128 buckets: the batch-affine buckets on both paths) over drawn
    scalars (0, 1, r - 1, small, values >= r, random) and bases from a small pool: the MSM and
    msm_witness equal the naive sum."""
    key = (curve.name, g2)
    if key not in _POOLS:
        _POOLS[key] = _pool(curve, g2)
    pool = _POOLS[key]
    msm, mul, add, e, width = _ops(curve, g2)
    r = curve.r
    scalar = st.one_of(st.sampled_from([0, 1, 2, r - 1, r - 2, r, r + 1, (1 << 256) - 1]), st.integers(0, 300),
                       st.integers(0, r - 1), st.integers(0, (1 << 256) - 1))
    n = data.draw(st.integers(1, 90), label="n")
    idx = data.draw(st.lists(st.integers(0, len(pool) - 1), min_size=n, max_size=n), label="bases")
    sc = data.draw(st.lists(scalar, min_size=n, max_size=n), label="scalars")
    c = data.draw(st.sampled_from([7, 8]), label="window")
    threads = data.draw(st.sampled_from([1, 2]), label="threads")
    bases = np.ascontiguousarray(pool[idx]).reshape(-1)
    want = _naive_grouped(curve, mul, add, bases, sc, width)
    window(c)
    assert np.array_equal(msm(bases, enc_many(sc, 4), threads=threads), want)
    # the witness MSMs take scalars < r (zeros skipped, ones summed, the rest bucketed)
    w = [s % r for s in sc]
    g1, g2s = curve.mod.msm_witness(enc_many(w, 4), [] if g2 else [(bases, 0)], [(bases, 0)] if g2 else [],
                                    threads=threads)
    assert np.array_equal((g2s if g2 else g1)[0], want)


@pytest.mark.parametrize("g2", [False, True], ids=["g1", "g2"])
def test_msm_digit_table_and_carries(curve, g2, window):
    """Windows 15 and 16 (the widest whose digits go to the 16-bit table: +2^15 is its one
    digit without a sign bit to spare) and 17 (digits recomputed from carries) over scalars whose windows sit on the recoding's edges (+-2^(c-1),
    2^c - 1 carried up, r - 1, values >= r) and random ones, with repeated bases and infinity:
    the MSM and msm_witness equal the naive sum."""
    msm, mul, add, e, width = _ops(curve, g2)
    r = curve.r
    bases = _bases(curve, g2, 24, n_distinct=9)
    for c in (15, 16, 17):
        h = 1 << (c - 1)
        sc = [h, h + 1, 2 * h - 1, 2 * h, h << c, (h + 1) << (2 * c), (1 << (8 * c)) - 1, r - 1, r, (1 << 256) - 1,
              0, 1] + [rng.randrange(r) for _ in range(12)]
        want = _naive_grouped(curve, mul, add, bases, sc, width)
        window(c)
        assert np.array_equal(msm(bases, enc_many([s % (1 << 256) for s in sc], 4), threads=2), want), c
        w = [s % r for s in sc]
        g1, g2s = curve.mod.msm_witness(enc_many(w, 4), [] if g2 else [(bases, 0)], [(bases, 0)] if g2 else [],
                                        threads=1)
        assert np.array_equal((g2s if g2 else g1)[0], want), c


@pytest.mark.parametrize("g2", [False, True], ids=["g1", "g2"])
def test_msm_sorted_window_in_chunks(curve, g2):
    """More points than one chunk of the bucket-sorted top window (8,192): three chunks and a
    remainder, over full-size scalars (r - 1 and random) on a small pool of bases (repeats,
    a negation, a double, infinity): the MSM and msm_witness equal the naive sum."""
    msm, mul, add, e, width = _ops(curve, g2)
    pool = _pool(curve, g2)
    n = 3 * 8192 + 5
    idx = [rng.randrange(len(pool)) for _ in range(n)]
    bases = np.ascontiguousarray(pool[idx]).reshape(-1)
    sc = [curve.r - 1 if i % 11 == 0 else rng.randrange(curve.r) for i in range(n)]
    want = _naive_grouped(curve, mul, add, bases, sc, width)
    assert np.array_equal(msm(bases, enc_many(sc, 4), threads=2), want)
    g1, g2s = curve.mod.msm_witness(enc_many(sc, 4), [] if g2 else [(bases, 0)], [(bases, 0)] if g2 else [], threads=2)
    assert np.array_equal((g2s if g2 else g1)[0], want)
