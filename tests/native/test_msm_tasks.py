"""The batch-affine MSM's task plan (msm/plan.hpp's msm_tasks, cpu-notes round 31): (window x chunk) units largest
first, the tail cut into bucket ranges. Each unit's reachable buckets are covered once by its tasks; the plan's
own cost model balances T threads (1 to 16) at the sizes the proofs run; and MSMs whose tasks are cut into ranges
(odd sizes, 1-3 threads, every split setting, G1 and G2, both curves, the IFMA and scalar adders, the endomorphism
halves) equal the naive sums of test_msm (checked against py_ecc there)."""
import random

import numpy as np
import pytest

from snarkd.native import _core
from helpers import enc_many, native_setting
from test_msm import _bases, _naive, _ops

rng = random.Random(3131)


def _units(tasks):
    """{(window, chunk): [(j0, j1), ...]} and the reachable bucket count of each unit"""
    out, nbw = {}, {}
    for w, ch, j0, j1, whole in tasks:
        out.setdefault((w, ch), []).append((j0, j1))
        if whole:
            assert j0 == 0
        nbw[(w, ch)] = max(nbw.get((w, ch), 0), j1)
    return out, nbw


@pytest.mark.parametrize("log_n,extra", [(10, 3), (12, 1), (16, 0), (17, 0), (17, -5), (20, 0)])
@pytest.mark.parametrize("threads", [1, 2, 3, 4, 8, 16])
def test_tasks_cover_each_unit_once_and_balance(log_n, extra, threads):
    n = (1 << log_n) + extra
    prev = (_core._set_msm_split(1), _core._set_msm_window(0), _core._set_msm_mixed(1))
    try:
        c, nw, k, wide = _core._msm_plan(n, threads)
        tasks = _core._msm_tasks(n, threads)
    finally:
        _core._set_msm_split(prev[0]), _core._set_msm_window(prev[1]), _core._set_msm_mixed(prev[2])
    units, nbw = _units(tasks)
    assert set(units) == {(w, ch) for w in range(nw) for ch in range(k)}
    for key, ranges in units.items():
        ranges.sort()
        assert ranges[0][0] == 0 and ranges[-1][1] == nbw[key]
        assert all(a[1] == b[0] and a[0] < a[1] for a, b in zip(ranges, ranges[1:]))  # contiguous, disjoint
        # cut into multiples of 64 buckets (reduce_buckets' chains), an eighth of the window at least
        assert len(ranges) == 1 or all(j0 % 64 == 0 and j1 - j0 >= max(nbw[key] // 8, 64) for j0, j1 in ranges)
    if threads == 1:
        assert all(t[4] for t in tasks)  # one thread: nothing to balance, nothing cut
        return

    # the plan's model (n / k additions and 2.8 a bucket per unit, a range its share), replayed greedily on idle threads
    def cost(w, ch, j0, j1, whole):
        pts = n * (ch + 1) // k - n * ch // k
        return (pts + 2.8 * nbw[(w, ch)]) * (j1 - j0) / nbw[(w, ch)]

    def replay(costs):
        free = [0.0] * threads
        for x in costs:
            free[free.index(min(free))] += x
        return max(free)

    got = replay([cost(*t) for t in tasks])
    whole = replay(sorted((cost(w, ch, 0, nbw[(w, ch)], True) for w, ch in units), reverse=True))
    ideal = sum(cost(w, ch, 0, nbw[(w, ch)], True) for w, ch in units) / threads
    assert got <= 1.005 * whole  # never (beyond the scans it charges) behind the whole units largest first
    if log_n >= 16 and threads <= 4:  # windows of 2^10+ buckets, few threads: within 3% of an even split
        assert got <= 1.03 * ideal, (n, threads, got / ideal, whole / ideal, len(tasks))
    if log_n >= 16:
        assert got <= 1.07 * ideal, (n, threads, got / ideal, whole / ideal, len(tasks))
    # McNaughton's wrap-around cuts T - 1 times; ranges kept to an eighth of a window can cost a cut more per thread
    assert len(tasks) - len(units) <= 2 * (threads - 1)


def test_split_off_is_one_task_per_unit_in_window_order():
    prev = _core._set_msm_split(0)
    try:
        c, nw, k, wide = _core._msm_plan(1 << 17, 2)
        tasks = _core._msm_tasks(1 << 17, 2)
    finally:
        _core._set_msm_split(prev)
    assert [(t[0], t[1]) for t in tasks] == [(w, ch) for w in range(nw) for ch in range(k)]
    assert all(t[4] for t in tasks)


@pytest.fixture(params=["ifma", "scalar"])
def adder(request):
    if request.param == "ifma" and not _core.cpu_has_simd52():
        pytest.skip("no AVX-512 IFMA on this CPU")
    with native_setting(_core._set_simd52, request.param == "ifma"):
        yield request.param


# (forced window, n): at c = 12 and 13 each window's 2^11 / 2^12 buckets cut into up to 8 / 16 ranges; odd sizes
@pytest.mark.parametrize("g2,c,n", [(False, 12, 1001), (False, 13, 1031), (True, 12, 333)])
@pytest.mark.parametrize("glv", [0, 2], ids=["plain", "halves"])
def test_msm_with_bucket_ranges_vs_naive(curve, adder, g2, c, n, glv):
    msm, mul, add, e, width = _ops(curve, g2)
    bases = _bases(curve, g2, n)
    sc = [rng.randrange(curve.r) for _ in range(n)]
    sc[0], sc[2], sc[n // 2] = curve.r - 1, 0, 1
    want = _naive(mul, add, bases, sc, width)
    sb = enc_many(sc, 4)
    setter = _core._set_gls if g2 else _core._set_glv
    prev = (_core._set_msm_window(c), setter(glv), _core._set_msm_split(1))
    try:
        assert any(not t[4] for t in _core._msm_tasks(n, 2))  # the plan under test cuts ranges
        for g in (0, 1, 3):
            _core._set_msm_split(g)
            for t in (1, 2, 3):
                assert np.array_equal(msm(bases, sb, threads=t), want), (g, t)
    finally:
        _core._set_msm_window(prev[0]), setter(prev[1]), _core._set_msm_split(prev[2])
