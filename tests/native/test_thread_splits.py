"""The work split over threads (bench/cpu-notes.md round 17) gives the same bytes at every thread count:
the 8-lane QAP step with its tables built on T threads (they are rebuilt for each one-shot proof) and its
three transforms run stage by stage together, against the scalar path's H; the MSM digit table filled by
the threads that read it, against a naive sum; and the parallel regions' counters (_core._parallel_stats)
count what ran."""
import random
import struct

import numpy as np
import pytest

from snarkd.native import _core
from helpers import enc_many, native_setting

rng = random.Random(1717)


@pytest.fixture
def ifma():
    with native_setting(_core._set_simd52, True):
        yield


def _ab(curve, n, w):
    """(a, b) as FrVectors (spmv_ab's, which qap_h(release=True) takes): a[i] = w[1 + i], b[i] = w[1 + 7i mod n]."""
    one = (1 << 512) % curve.r  # the section stores coef R^2
    ents = [struct.pack("<III", 0, i, 1 + i) for i in range(n)] + [struct.pack("<III", 1, i, 1 + (7 * i) % n) for i in range(n)]
    sec = struct.pack("<I", 2 * n) + b"".join(e + one.to_bytes(32, "little") for e in ents)
    return curve.mod.spmv_ab(sec, enc_many(w, 4).tobytes(), n)


@pytest.mark.parametrize("log_n", [13, 14, 15])
def test_qap_h_fresh_tables_at_each_thread_count(curve, ifma, log_n):
    m, n = curve.mod, 1 << log_n
    w = [1] + [rng.randrange(curve.r) for _ in range(n)]
    a, b = _ab(curve, n, w)
    a_np, b_np = np.asarray(a).copy(), np.asarray(b).copy()
    _core._set_simd52(False)
    want = np.asarray(m.qap_h(a_np, b_np, threads=1)[0]).copy()  # the scalar transforms
    _core._set_simd52(True)
    m.qap_h(a, b, threads=2, release=True)  # release: the cached tables are dropped after
    for t in (1, 2, 3):
        a, b = _ab(curve, n, w)
        h, _ = m.qap_h(a, b, threads=t, release=True)  # tables built on t threads, then dropped
        assert len(a) == 0  # released: the one-shot path ran
        assert np.array_equal(np.asarray(h), want), t


@pytest.mark.parametrize("on", [True, False], ids=["ifma", "scalar"])
def test_msm_digit_table_thread_counts(curve, on):
    """2^12 + 3 scalars: blocks of 64 and chunks of 1024 leave remainders at 1, 2 and 3 threads."""
    with native_setting(_core._set_simd52, on):
        m, n = curve.mod, (1 << 12) + 3
        G = curve.g1_enc(curve.pe.G1)
        bases = m.g1_mul(G, enc_many([rng.randrange(1, curve.r) for _ in range(n)], 4))
        sc = [rng.randrange(curve.r) for _ in range(n)]
        sc[5], sc[n - 1] = curve.r - 1, 0
        terms = m.g1_mul(bases, enc_many(sc, 4)).reshape(n, -1)
        while len(terms) > 1:
            if len(terms) % 2:
                terms = np.concatenate([terms, np.zeros((1, terms.shape[1]), dtype=np.uint64)])
            h = len(terms) // 2
            terms = m.g1_add(terms[:h].reshape(-1), terms[h:].reshape(-1)).reshape(h, -1)
        for t in (1, 2, 3):
            assert np.array_equal(m.msm_g1(bases, enc_many(sc, 4), threads=t), terms[0]), t


def test_parallel_stats_count_regions(curve):
    m = curve.mod
    n = 1 << 12
    G = curve.g1_enc(curve.pe.G1)
    bases = m.g1_mul(G, enc_many([rng.randrange(1, curve.r) for _ in range(n)], 4))
    sc = enc_many([rng.randrange(curve.r) for _ in range(n)], 4)
    _core._parallel_stats(True)
    try:
        want = m.msm_g1(bases, sc, threads=1)
        one = _core._parallel_stats(True)
        assert one["regions"] == 0 and one["busy_ms"] == 0  # one thread: no region
        got = m.msm_g1(bases, sc, threads=2)
        two = _core._parallel_stats(True)
        assert np.array_equal(got, want)
        assert two["regions"] >= 2  # the digit table and the window tasks at least
        assert two["busy_ms"] > 0 and 0 <= two["caller_ms"] <= two["busy_ms"]
        assert 0 <= two["idle_ms"] <= 2 * two["busy_ms"]
    finally:
        off = _core._parallel_stats(False)
    assert off["regions"] == 0  # nothing ran since the last read
    m.msm_g1(bases, sc, threads=2)
    assert _core._parallel_stats(False)["regions"] == 0  # switched off: not counted


def _coefs(curve, n, bad):
    """n valid entries (A and B alternating over a 64-row domain, 10 signals) with entries `bad` (index -> kind)
    broken: matrix 2, constraint 64 (outside), signal 10 (out of range), value r (not canonical)."""
    out = [struct.pack("<I", n)]
    for i in range(n):
        mat, con, sig, val = i % 2, i % 64, i % 10, (i * 7919) % curve.r
        kind = bad.get(i)
        mat, con, sig = (2 if kind == "matrix" else mat), (64 if kind == "constraint" else con), (10 if kind == "signal" else sig)
        val = curve.r if kind == "value" else val
        out.append(struct.pack("<III", mat, con, sig) + val.to_bytes(32, "little"))
    return b"".join(out)


@pytest.mark.parametrize("bad", [{}, {3: "matrix"}, {9000: "value", 5000: "signal"}, {15000: "constraint"},
                                 {12000: "matrix", 4095: "value", 4096: "signal"}])
def test_entry_checks_report_the_first_bad_entry_at_each_thread_count(curve, bad):
    """coefs_error and spmv_ab scan the entries on T threads (ranges of at least 4,096) and name the first bad one."""
    m, n = curve.mod, 16000
    sec = _coefs(curve, n, bad)
    wit = enc_many(list(range(10)), 4).tobytes()
    first = min(bad) if bad else None
    for t in (1, 2, 3):
        got = m.coefs_error(sec, 64, 10, threads=t)
        if first is None:
            assert got is None
        else:
            assert got[0] == first and got[1].startswith(f"entry {first}: "), (t, got)
            want = {"matrix": "matrix 2 is not 0 (A) or 1 (B)", "constraint": "constraint 64 is outside the domain",
                    "signal": "signal 10 is out of range", "value": "value is not canonical"}[bad[first]]
            assert want in got[1], (t, got)
        spmv_bad = {k: v for k, v in bad.items() if v != "value"}  # spmv_ab reduces values, it does not reject them
        if spmv_bad:
            k = min(spmv_bad)
            with pytest.raises(ValueError, match=f"coefs_section: entry {k}: "):
                m.spmv_ab(sec, wit, 64, threads=t)
        else:
            a, b = m.spmv_ab(sec, wit, 64, threads=t)
            assert len(a) == len(b) == 64
