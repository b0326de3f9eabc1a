"""The IFMA QAP step's lazy transforms (ntt/ntt_simd.hpp: BN254's DIT without a reduction per
butterfly, values growing by 2p a stage up to 60p, brought back at the end; its DIF reducing a sum only
in the blocks whose run of sums could pass 32p, one in 16, and its last stage not at all) and the coset
scales applied inside each block between the two (a factor per element of the block times one per
block) give the scalar path's bytes at sizes past the 2^11 block, where the large stages run too
(2^12 .. 2^17: 1 .. 6 large stages on top of the block's 11; 2^12 gathers no stage twiddles), with
inputs at the edges: all r - 1, all zero, alternating 0 / r - 1, one nonzero, and random; one and two
threads. BLS12-381 keeps its reduced butterflies (the bounds do not fit its field) and is checked the
same way. Skipped without IFMA (both runs would take the scalar path)."""
import random

import numpy as np
import pytest

from snarkd.native import _core
from helpers import enc_many

rng = random.Random(2926)


@pytest.fixture
def toggle():
    prev = _core._set_simd52(True)
    yield lambda on: _core._set_simd52(on)
    _core._set_simd52(prev)


def _inputs(curve, n, kind):
    r = curve.r
    if kind == "max":
        v = [r - 1] * n
    elif kind == "zero":
        v = [0] * n
    elif kind == "alt":
        v = [0 if i % 2 else r - 1 for i in range(n)]
    elif kind == "one":
        v = [0] * n
        v[n // 3] = r - 1
    else:
        v = [rng.randrange(r) for _ in range(n)]
    return np.ascontiguousarray(enc_many(v, 4))


@pytest.mark.parametrize("log_n", [12, 13, 14, 17])
@pytest.mark.parametrize("kinds", [("max", "max"), ("max", "alt"), ("zero", "max"), ("one", "rand"), ("rand", "rand")])
def test_qap_h_ifma_equals_scalar(curve, toggle, log_n, kinds):
    toggle(True)
    if not _core.uses_simd52():
        pytest.skip("no AVX-512 IFMA on this CPU")
    if log_n == 17 and kinds not in (("max", "max"), ("rand", "rand")):
        pytest.skip("2^17: two input kinds are enough")
    m, n = curve.mod, 1 << log_n
    a, b = _inputs(curve, n, kinds[0]), _inputs(curve, n, kinds[1])
    toggle(False)
    want, _ = m.qap_h(a, b, 2, False)
    toggle(True)
    for threads in (1, 2):
        got, _ = m.qap_h(a, b, threads, False)
        assert np.array_equal(got, want), (log_n, kinds, threads)
