"""The 8-lane (AVX-512 IFMA) Fq2 products of the G2 batch-affine flush (msm/simd_coords.hpp:
Karatsuba with lazy reduction, a conj(b), the square, the norm) against Python integers, on
both curves. Inputs are words as the flush feeds them: each component any value below 2p
(not only canonical ones), Montgomery form; outputs are checked canonical."""
import random

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers import CURVES, dec_many, enc_many

def _has_ifma():
    from snarkd.native import _core

    return _core.cpu_has_simd52()


pytestmark = pytest.mark.skipif(not _has_ifma(), reason="no AVX-512 IFMA on this CPU")


def _edges(p, L):
    """Edge components below 2p: 0, 1, p +- 1, 2p - 1, and values whose 52-bit limbs are all
    ones or just past a limb boundary (the lane representation's carries)."""
    e = [0, 1, 2, p - 1, p, p + 1, 2 * p - 1, 2 * p - 2, (p - 1) // 2, (1 << 64) - 1]
    for k in range(1, (64 * L) // 52 + 1):
        e += [(1 << (52 * k)) - 1, 1 << (52 * k), (1 << (52 * k)) + 1]
    top = max(x for x in e if x < 2 * p)
    e.append(top)
    return sorted({x for x in e if x < 2 * p})


def _want(op, a, b, p, rinv):
    (a0, a1), (b0, b1) = a, b
    if op == "mul":
        c = (a0 * b0 - a1 * b1, a0 * b1 + a1 * b0)
    elif op == "mul_conj":
        c = (a0 * b0 + a1 * b1, a1 * b0 - a0 * b1)
    elif op == "sqr":
        c = (a0 * a0 - a1 * a1, 2 * a0 * a1)
    else:
        c = (a0 * a0 + a1 * a1, 0)
    return c[0] * rinv % p, c[1] * rinv % p


def _check(curve, op, a, b):
    p, L = curve.q, curve.L
    pad = (-len(a)) % 8
    a, b = a + [(0, 0)] * pad, b + [(0, 0)] * pad
    enc = lambda v: np.ascontiguousarray(np.hstack([enc_many([x for x, _ in v], L),  # noqa: E731
                                                    enc_many([y for _, y in v], L)]))
    out = np.asarray(curve.mod.fq2_lanes(enc(a), enc(b), op)).reshape(-1, 2 * L)
    got0 = dec_many(np.ascontiguousarray(out[:, :L]), L)
    got1 = dec_many(np.ascontiguousarray(out[:, L:]), L)
    rinv = pow(1 << (64 * L), -1, p)
    for k, (x, y) in enumerate(zip(a, b)):
        assert (got0[k], got1[k]) == _want(op, x, y, p, rinv), (op, x, y)


OPS = ["mul", "mul_conj", "sqr", "norm"]


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
@pytest.mark.parametrize("op", OPS)
def test_fq2_lanes_edges(curve, op):
    """Every pair of edge components in every position: a = (x, y), b = (y', x')."""
    p, L = curve.q, curve.L
    e = _edges(p, L)
    rng = random.Random(11)
    vals = e + [rng.randrange(2 * p) for _ in range(4)]
    quads = [(x, y) for x in vals for y in vals]
    a = quads
    b = [quads[(7 * k + 3) % len(quads)][::-1] for k in range(len(quads))]
    _check(curve, op, a, b)


@pytest.mark.parametrize("curve", CURVES, ids=[c.name for c in CURVES])
@pytest.mark.parametrize("op", OPS)
def test_fq2_lanes_random(curve, op):
    p = curve.q
    comp = st.one_of(st.sampled_from(_edges(p, curve.L)), st.integers(0, 2 * p - 1))
    elem = st.tuples(comp, comp)

    @settings(max_examples=30, deadline=None)
    @given(st.lists(st.tuples(elem, elem), min_size=1, max_size=24))
    def inner(pairs):
        _check(curve, op, [x for x, _ in pairs], [y for _, y in pairs])

    inner()
