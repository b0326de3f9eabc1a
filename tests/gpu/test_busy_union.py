"""The kernel-busy clock's interval union (runs without a GPU): overlaps between streams count once."""

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from snarkd.gpu.busy import IntervalUnion


def covered(intervals, step=0.001):
    pts = set()
    for s, e in intervals:
        k = round(s / step)
        while k * step < e - 1e-12:
            pts.add(k)
            k += 1
    return len(pts) * step


@given(st.lists(st.tuples(st.integers(0, 200), st.integers(1, 50)), max_size=40))
@settings(max_examples=200, deadline=None)
def test_union_equals_covered_length(raw):
    iv = [(s / 100, (s + d) / 100) for s, d in raw]
    u = IntervalUnion()
    for s, e in random.Random(len(raw)).sample(iv, len(iv)):  # any order, as streams finish out of order
        u.add(s, e)
    assert abs(u.seconds() - covered(iv, 0.01)) < 1e-6


def test_fold_keeps_the_total():
    u = IntervalUnion()
    for k in range(100):
        u.add(k, k + 0.5)
    u.add(10.25, 11.25)  # bridges [10, 10.5] and [11, 11.5]
    before = u.seconds()
    u.fold(50)
    assert abs(u.seconds() - before) < 1e-9 and abs(before - 50.5) < 1e-9
