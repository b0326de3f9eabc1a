"""The scalar QAP step (IFMA off: groth16/qap.hpp's scalar branch over ntt/ntt.hpp) against Python
integers, both curves: h[i] = A(g w^i) B(g w^i) - C(g w^i) with A, B the interpolants of a, b on the
domain, C of c = a o b, g snarkjs's coset shift. Small domains in full, one and two threads; 2^15
(four stages past the 2^11 block, and past the size where the twiddle tables are filled by two
threads) at spot points by barycentric evaluation, each run in a fresh process so that its tables
are built on the thread count under test (they are cached per process), the two processes' H
byte for byte equal. A one-shot proof's call (release=True) transforms in its input vectors: the
same H as on copies."""
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from snarkd.native import _core
from helpers import dec_many, enc_many, native_setting

rng = random.Random(3033)


def _roots(curve, log_n):
    r, s = curve.r, curve.mod.TWO_ADICITY
    w = pow(pow(5, (r - 1) >> s, r), 1 << (s - log_n), r)
    g = pow(pow(5, (r - 1) >> s, r), 1 << (s - log_n - 1), r)  # w_2n: snarkjs's shift below 2^S
    return w, g


def _inputs(curve, n, kind):
    r = curve.r
    if kind == "max":
        return [r - 1] * n
    if kind == "alt":
        return [0 if i % 2 else r - 1 for i in range(n)]
    if kind == "tail":  # a circuit's rows: the domain's tail empty
        return [rng.randrange(r) if i < 3 * n // 4 else 0 for i in range(n)]
    return [rng.randrange(r) for _ in range(n)]


def _h_full(curve, a, b):
    """The model in full: interpolate on <w>, evaluate on g<w> (O(n^2), small n only)."""
    r, n = curve.r, len(a)
    w, g = _roots(curve, n.bit_length() - 1)
    winv, ninv = pow(w, -1, r), pow(n, -1, r)

    def coset_values(e):
        coef = [ninv * sum(e[j] * pow(winv, i * j, r) for j in range(n)) % r for i in range(n)]
        return [sum(c * pow(g * pow(w, i, r), k, r) for k, c in enumerate(coef)) % r for i in range(n)]

    A, B, C = coset_values(a), coset_values(b), coset_values([x * y % r for x, y in zip(a, b)])
    return [(x * y - z) % r for x, y, z in zip(A, B, C)]


def _h_at(curve, a, b, i):
    """h[i] by barycentric evaluation at x = g w^i: f(x) = (x^n - 1) / n * sum_j e_j w^j / (x - w^j)."""
    r, n = curve.r, len(a)
    w, g = _roots(curve, n.bit_length() - 1)
    x = g * pow(w, i, r) % r
    sa = sb = sc = 0
    wj = 1
    for j in range(n):
        t = wj * pow(x - wj, -1, r) % r
        sa += a[j] * t
        sb += b[j] * t
        sc += a[j] * b[j] % r * t
        wj = wj * w % r
    k = (pow(x, n, r) - 1) * pow(n, -1, r) % r
    return (k * sa % r * (k * sb % r) - k * sc) % r


@pytest.mark.parametrize("log_n", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("kinds", [("rand", "rand"), ("max", "alt"), ("tail", "max")])
def test_qap_h_scalar_small_against_python(curve, log_n, kinds):
    n = 1 << log_n
    a, b = _inputs(curve, n, kinds[0]), _inputs(curve, n, kinds[1])
    want = _h_full(curve, a, b)
    am = np.ascontiguousarray(enc_many([curve.mr(x) for x in a], 4))
    bm = np.ascontiguousarray(enc_many([curve.mr(x) for x in b], 4))
    with native_setting(_core._set_simd52, False):
        for threads in (1, 2):
            h, _ = curve.mod.qap_h(am, bm, threads, False)
            assert dec_many(h, 4) == want, (log_n, kinds, threads)


CHILD = r"""
import sys
import numpy as np
from snarkd.native import _core
_core._set_simd52(False)
m = getattr(_core, sys.argv[1])
a, b = np.load(sys.argv[2]), np.load(sys.argv[3])
h, _ = m.qap_h(a, b, int(sys.argv[4]), False)  # the first transform of this size: tables built here
np.save(sys.argv[5], np.asarray(h))
"""


def test_qap_h_scalar_2_15_fresh_tables_against_python(curve, tmp_path):
    log_n = 15
    n = 1 << log_n
    a, b = _inputs(curve, n, "tail"), _inputs(curve, n, "rand")
    np.save(tmp_path / "a.npy", np.ascontiguousarray(enc_many([curve.mr(x) for x in a], 4)))
    np.save(tmp_path / "b.npy", np.ascontiguousarray(enc_many([curve.mr(x) for x in b], 4)))
    src = str(Path(_core.__file__).resolve().parents[2])
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    hs = []
    for threads in (1, 2):
        out = tmp_path / f"h{threads}.npy"
        subprocess.run([sys.executable, "-c", CHILD, curve.name, str(tmp_path / "a.npy"), str(tmp_path / "b.npy"),
                        str(threads), str(out)], check=True, env=env, timeout=120)
        hs.append(np.load(out))
    assert np.array_equal(hs[0], hs[1])
    got = dec_many(hs[1], 4)
    assert max(got) < curve.r
    for i in (0, n // 2 + 1, n - 1):
        assert got[i] == _h_at(curve, a, b, i), i


def _ab_vectors(curve, a, b):
    """a, b as FrVectors (spmv_ab's, the ones qap_h(release=True) takes): one +1 entry a row, signals 1 .. 2n."""
    n = len(a)
    one = (1 << 512) % curve.r  # the section stores coef R^2
    ents = [struct.pack("<III", 0, i, 1 + i) for i in range(n)] + [struct.pack("<III", 1, i, 1 + n + i) for i in range(n)]
    sec = struct.pack("<I", 2 * n) + b"".join(e + one.to_bytes(32, "little") for e in ents)
    return curve.mod.spmv_ab(sec, enc_many([1] + a + b, 4).tobytes(), n)


@pytest.mark.parametrize("log_n", [3, 6, 12, 13])
def test_qap_h_scalar_release_runs_in_the_inputs(curve, log_n):
    """release=True (a one-shot proof): the scalar transforms run in a and b themselves, then they are freed;
    the same H as on copies, and as the Python model where it is small enough; a and b the same vector too."""
    n = 1 << log_n
    a, b = _inputs(curve, n, "tail"), _inputs(curve, n, "rand")
    with native_setting(_core._set_simd52, False):
        for threads in (1, 2):
            va, vb = _ab_vectors(curve, a, b)
            want, _ = curve.mod.qap_h(np.asarray(va).copy(), np.asarray(vb).copy(), threads, False)
            got, _ = curve.mod.qap_h(va, vb, threads, True)
            assert len(va) == len(vb) == 0
            assert np.array_equal(np.asarray(got), np.asarray(want)), threads
            if log_n <= 6:
                assert dec_many(np.asarray(got), 4) == _h_full(curve, a, b)
        if log_n <= 6:
            va, _ = _ab_vectors(curve, a, b)
            got, _ = curve.mod.qap_h(va, va, 2, True)  # one vector as both inputs: B is copied, not shared
            assert dec_many(np.asarray(got), 4) == _h_full(curve, a, a)
