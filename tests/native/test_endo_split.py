"""The endomorphism split of both groups, one test each: G1's (GLV, test_glv.py) and G2's (GLS, test_gls.py)
decomposition k = k1 + lambda k2 within the bound (hypothesis), and split MSMs of random scalars equal to plain
ones (forced and by the cost model), several sizes, an infinity among the bases, the 8-lane path on and off."""
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from snarkd.native import _core
from helpers import CURVES, enc_many
from split_helpers import check_split_bounds, decode_split, mode_switch, plain_forced_default, random_points

rng = random.Random(2613)
GROUPS = {"g1": ("glv_split", "GLV_LAMBDA", "msm_g1", "_set_glv"), "g2": ("gls_split", "GLS_LAMBDA", "msm_g2", "_set_gls")}


@pytest.fixture(params=sorted(GROUPS))
def group(request):
    return request.param


@pytest.fixture
def modes(group):
    yield from mode_switch(getattr(_core, GROUPS[group][3]))


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
@pytest.mark.parametrize("grp", sorted(GROUPS))
@settings(max_examples=300, deadline=None)
@given(k=st.one_of(st.integers(0, (1 << 256) - 1), st.integers(0, 1 << 130), st.integers(-(1 << 130), -1)))
def test_split_hypothesis(curve, grp, k):
    k %= 1 << 256 if k >= 0 else curve.r
    split, lam = getattr(curve.mod, GROUPS[grp][0]), getattr(curve.mod, GROUPS[grp][1])
    check_split_bounds(curve, decode_split(split(enc_many([k], 4)), 1)[0], lam, k)


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
@pytest.mark.parametrize("simd", [True, False], ids=["ifma", "scalar"])
@pytest.mark.parametrize("n", [1, 2, 7, 300, 3000])
def test_split_msm_random(curve, group, modes, simd, n):
    P = random_points(curve, group == "g2", n, rng)
    if n > 2:
        P[n // 2] = 0  # infinity
    sc = enc_many([rng.randrange(curve.r) for _ in range(n)], 4)
    msm = getattr(curve.mod, GROUPS[group][2])
    ref, got, auto = plain_forced_default(modes, simd, lambda: msm(P, sc, threads=2))
    assert np.array_equal(ref, got) and np.array_equal(ref, auto)
