"""msm_w's shared witness preparation (msm/witness_cache.hpp): a proof's calls (A, B1, C from the
first value after the public inputs, then B2 on G2) reuse one witness's classes and digits. Every call
must equal the naive sum of native scalar multiplications (Python-integer scalars summed per base),
whatever came before it: the same witness again, one rewritten in place, an equal copy in a new
buffer after the old one was overwritten (the digits must read the cache's own copy: c = 17 recodes
from the scalars), other thread counts and switches between calls, and calls from two threads."""
import random
import threading

import numpy as np
import pytest

from snarkd.native import _core
from helpers import enc_many
from test_msm import _bases, _naive_grouped, _ops
from test_msm import path  # noqa: F401  (autouse: every case on the IFMA and the scalar path)

rng = random.Random(2207)


@pytest.fixture(autouse=True)
def switches():
    prev = (_core._set_msm_window(0), _core._set_glv(1), _core._set_gls(1))
    yield
    _core._set_msm_window(prev[0]), _core._set_glv(prev[1]), _core._set_gls(prev[2])


def _witness(curve, n):
    """values < r: zeros, ones, r - 1, small and random (plus r + 1 and 2^256 - 1: a one and a value >= r)"""
    r = curve.r
    pick = [0, 1, 2, r - 1, 3, r + 1, (1 << 256) - 1]
    return [pick[i % len(pick)] if i % 3 == 0 else rng.randrange(r) for i in range(n)]


class Proof:
    """one witness's key sections: A, B1, C (G1; C from `start`) and B2 (G2), with their naive sums"""

    def __init__(self, curve, n, start):
        self.curve, self.n, self.start = curve, n, start
        self.g1 = {k: _bases(curve, False, n - (start if k == "c" else 0), n_distinct=7) for k in ("a", "b1", "c")}
        self.b2 = _bases(curve, True, n, n_distinct=5)

    def want(self, w):
        msm, mul, add, e, width = _ops(self.curve, False)
        out = {k: _naive_grouped(self.curve, mul, add, b, w[self.start:] if k == "c" else w, width)
               for k, b in self.g1.items()}
        msm, mul, add, e, width = _ops(self.curve, True)
        out["b2"] = _naive_grouped(self.curve, mul, add, self.b2, w, width)
        return out

    def run(self, wbuf, threads=2, order=("a", "b1", "c", "b2")):
        m = self.curve.mod
        got = {}
        for k in order:
            if k == "b2":
                got[k] = np.frombuffer(m.msm_w(self.b2, wbuf, 0, True, threads), dtype=np.uint64)
            else:
                got[k] = np.frombuffer(m.msm_w(self.g1[k], wbuf, self.start if k == "c" else 0, False, threads),
                                       dtype=np.uint64)
        return got


def _counts(curve, before=(0, 0)):
    """(hits, builds) of the witness cache since `before`"""
    h, b = curve.mod._witness_prep_counts()
    return h - before[0], b - before[1]


def _check(got, want):
    for k, v in got.items():
        assert np.array_equal(v, want[k]), k


@pytest.mark.parametrize("split", [1, 2, 0], ids=["model", "always", "never"])
def test_proof_sequence_and_repeats(curve, split):
    """a proof's four calls, twice over the same witness, then again with B2 first"""
    _core._set_glv(split), _core._set_gls(split)
    p = Proof(curve, 600, 5)
    w = _witness(curve, p.n)
    want = p.want(w)
    buf = enc_many([s % (1 << 256) for s in w], 4)
    c0 = _counts(curve)
    _check(p.run(buf), want)
    assert _counts(curve, c0) == (3, 1)  # A builds; B1, C and B2 reuse (B2 takes it out)
    _check(p.run(buf), want)
    assert _counts(curve, c0) == (6, 2)
    _check(p.run(buf, order=("b2", "a", "c", "b1")), want)
    assert _counts(curve, c0) == (8, 3)  # B2 found nothing; A built, C and B1 reused


def test_rewritten_in_place_between_calls(curve):
    """the same buffer with other values after A: B1, C and B2 are of the new witness"""
    p = Proof(curve, 500, 3)
    w1, w2 = _witness(curve, p.n), _witness(curve, p.n)
    w2[-1] = (w1[-1] + 1) % curve.r  # differs in the last value only as well as elsewhere
    buf = enc_many(w1, 4)
    got = p.run(buf, order=("a",))
    _check(got, p.want(w1))
    buf[:] = enc_many(w2, 4)
    c0 = _counts(curve)
    _check(p.run(buf, order=("b1", "c", "b2")), p.want(w2))
    assert _counts(curve, c0) == (2, 1)  # B1 rebuilt for the new values
    # one value changed in its top byte only
    w3 = list(w2)
    w3[7] = (w3[7] + (1 << 248)) % curve.r
    got = p.run(buf, order=("a",))
    buf[:] = enc_many(w3, 4)
    _check(p.run(buf, order=("a", "c")), p.want(w3))


@pytest.mark.parametrize("c", [8, 17])
def test_equal_copy_after_old_buffer_overwritten(curve, c):
    """c = 17 recodes digits from the scalars as it goes: the cache's digits must read its own copy"""
    _core._set_msm_window(c)
    p = Proof(curve, 300, 2)
    w = _witness(curve, p.n)
    want = p.want(w)
    old = enc_many(w, 4)
    _check(p.run(old, order=("a",)), want)
    new = old.copy()
    old[:] = enc_many(_witness(curve, p.n), 4)
    del old
    _check(p.run(new, order=("b1", "c", "b2")), want)


def test_threads_and_switches_between_calls(curve):
    p = Proof(curve, 400, 4)
    w = _witness(curve, p.n)
    want = p.want(w)
    buf = enc_many(w, 4)
    _check(p.run(buf, threads=2, order=("a",)), want)
    _check(p.run(buf, threads=1, order=("b1",)), want)
    _core._set_msm_window(9)
    _check(p.run(buf, threads=1, order=("c", "a")), want)
    _core._set_glv(0)
    _check(p.run(buf, threads=1, order=("b1", "b2")), want)


def test_two_threads_two_witnesses(curve):
    """two proofs' calls side by side (the GIL released): each result is its own witness's"""
    p = Proof(curve, 300, 2)
    ws = [_witness(curve, p.n) for _ in range(2)]
    wants = [p.want(w) for w in ws]
    bufs = [enc_many(w, 4) for w in ws]
    errors = []

    def work(i):
        try:
            for _ in range(4):
                _check(p.run(bufs[i], threads=1), wants[i])
        except AssertionError as e:  # pragma: no cover - reported below
            errors.append((i, e))

    ts = [threading.Thread(target=work, args=(i,)) for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
