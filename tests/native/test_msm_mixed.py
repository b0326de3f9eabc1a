"""Mixed window widths on the scalar path (msm/plan.hpp: the plain plan's top window dropped, its
bits spread over the lowest windows, now c + 1 bits, and the new top window full and unsigned): the
plan takes them where its count says, and
MSMs and msm_witness on such layouts equal the naive sums (test_msm's helpers, themselves
checked against py_ecc), over scalars whose every window sits on the recoding's edges."""
import random

import numpy as np
import pytest

from snarkd.native import _core
from helpers import enc_many
from test_msm import _bases, _naive_grouped, _ops, _pool

rng = random.Random(15)


@pytest.fixture(autouse=True, params=["scalar", "avx2", "ifma"])
def scalar_path(request):
    """each path (the scalar adders, the 4-lane AVX2 adders (G1 and G2, both curves) and the 8-lane IFMA ones where this
    CPU has them: all take the layout), and no endomorphism split (its halves never take mixed
    widths), so that every MSM here, G1 and G2, msm and msm_witness, runs the plan under test"""
    if request.param == "ifma" and not _core.cpu_has_simd52():
        pytest.skip("no AVX-512 IFMA on this CPU")
    if request.param == "avx2" and not _core.cpu_has_simd29():
        pytest.skip("no AVX2 + BMI2/ADX on this CPU")
    prev29 = {(c, g2): _core._set_simd29(request.param == "avx2", c, g2)
              for c in ("bn254", "bls12_381") for g2 in (False, True)}
    prev = (_core._set_simd52(request.param == "ifma"), _core._set_msm_mixed(1), _core._set_msm_window(0),
            _core._set_glv(0), _core._set_gls(0))
    yield
    for (c, g2), v in prev29.items():
        _core._set_simd29(v, c, g2)
    _core._set_simd52(prev[0])
    _core._set_msm_mixed(prev[1])
    _core._set_msm_window(prev[2])
    _core._set_glv(prev[3])
    _core._set_gls(prev[4])


def _layout(c, nw, wide):
    """(start bit, width) of each window"""
    out, pos = [], 0
    for w in range(nw):
        width = c + 1 if w < wide else c
        out.append((pos, width))
        pos += width
    return out


def test_plan_takes_mixed_widths_where_counted():
    bits = 254
    # round 15's count: 2^17 one thread, 19 windows (7 of 14 bits, 12 of 13) where one width needs 20
    c, nw, k, wide = _core._msm_plan(1 << 17, 1, bits)
    assert (c, nw, k, wide) == (13, 19, 1, 7)
    for n, t in [(1 << 14, 1), (1 << 15, 2), (1 << 17, 2), (1 << 18, 2)]:
        c, nw, k, wide = _core._msm_plan(n, t, bits)
        assert nw == bits // c and wide == bits % c, (n, t)
        top_pos, top_w = _layout(c, nw, wide)[-1]
        assert bits - top_pos == c == top_w  # the top window full
    # one width where dropping the top window counts under 1% (2^16) or does not fit (2^20: c = 16)
    for n in (1 << 16, 1 << 20):
        c, nw, k, wide = _core._msm_plan(n, 1, bits)
        assert wide == 0 and nw == bits // c + 1, n
    assert _core._set_msm_mixed(0) == 1
    assert _core._msm_plan(1 << 17, 1, bits) == (13, 20, 1, 0)
    # the same plans on both paths (round 20: the IFMA path takes the layout too)
    _core._set_msm_mixed(1)
    for on in (False, True):
        _core._set_simd52(on)
        assert _core._msm_plan(1 << 17, 2, bits) == (13, 19, 1, 7)


def _edge_scalars(r, layout):
    """per window: its largest positive digit, the smallest value that carries, all ones (carry
    up), and runs of carries through every window below; the top window at its largest"""
    out = []
    for pos, width in layout[:-1]:
        h = 1 << (width - 1)
        out += [h << pos, (h + 1) << pos, ((1 << width) - 1) << pos, (1 << (pos + width)) - 1]
    top = layout[-1][0]
    out += [r - 1, r - 2, (r - 1) >> 1, ((r - 1) >> top) << top, (1 << top) - 1, r, r + 1, (1 << 256) - 1, 0, 1]
    return [s for s in out if s < (1 << 256)]


@pytest.mark.parametrize("g2", [False, True], ids=["g1", "g2"])
@pytest.mark.parametrize("c", [7, 8, 13, 15])
def test_mixed_layouts_vs_naive(curve, g2, c):
    """A forced c with the top window always dropped (15: 16-bit windows at the table's edge, +2^15,
    and a 15-bit unsigned top window that reaches 2^15): edge and random scalars, repeated bases and infinity, one and two
    threads, the MSM and msm_witness (scalars < r there)."""
    msm, mul, add, e, width = _ops(curve, g2)
    r, bits = curve.r, curve.r.bit_length()
    _core._set_msm_window(c)
    assert _core._set_msm_mixed(2) == 1
    c_, nw, k, wide = _core._msm_plan(64, 1, bits)
    assert (c_, nw, wide) == (c, bits // c, bits % c)  # BLS12-381 at 15: 17 windows, none wide
    sc = _edge_scalars(r, _layout(c, nw, wide)) + [rng.randrange(r) for _ in range(16)]
    bases = _bases(curve, g2, len(sc), n_distinct=9)
    want = _naive_grouped(curve, mul, add, bases, sc, width)
    for t in (1, 2):
        assert np.array_equal(msm(bases, enc_many([s % (1 << 256) for s in sc], 4), threads=t), want), t
    w = [s % r for s in sc]
    g1, g2s = curve.mod.msm_witness(enc_many(w, 4), [] if g2 else [(bases, 0)], [(bases, 0)] if g2 else [],
                                    threads=2)
    assert np.array_equal((g2s if g2 else g1)[0], want)


@pytest.mark.parametrize("g2", [False, True], ids=["g1", "g2"])
def test_planned_mixed_msm_vs_naive(curve, g2):
    """2^14 + 5 points through the default plan (mixed at this size, checked), on a small pool of
    bases (repeats, a negation, a double, infinity), full random scalars and r - 1: equal to the
    naive sum and to the same MSM with one width."""
    msm, mul, add, e, width = _ops(curve, g2)
    n, bits = (1 << 14) + 5, curve.r.bit_length()
    assert _core._msm_plan(n, 1, bits)[3] > 0
    pool = _pool(curve, g2)
    bases = np.ascontiguousarray(pool[[rng.randrange(len(pool)) for _ in range(n)]]).reshape(-1)
    sc = [curve.r - 1 if i % 13 == 0 else rng.randrange(curve.r) for i in range(n)]
    want = _naive_grouped(curve, mul, add, bases, sc, width)
    assert np.array_equal(msm(bases, enc_many(sc, 4), threads=1), want)
    _core._set_msm_mixed(0)
    assert np.array_equal(msm(bases, enc_many(sc, 4), threads=2), want)
