"""GPU MSM (G1 and G2, both curves) == the CPU core's MSM, on random and edge inputs."""
import random

import numpy as np
import pytest

from gpu_helpers import ints_to_fr, native, rand_points, require_gpu

require_gpu()
import cupy  # noqa: E402

from snarkd.gpu import device as gdevice  # noqa: E402
from snarkd.gpu import msm as gmsm  # noqa: E402

DEV = gdevice.get(0)

R = {"bn254": 21888242871839275222246405745257275088548364400416034343698204186575808495617,
     "bls12_381": 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001}
CURVE_OF = {"bn254": "bn128", "bls12_381": "bls12381"}


def scalars(rng, kind, n, r):
    if kind == "random":
        s = [rng.randrange(r) for _ in range(n)]
        for i, v in zip(range(0, n, 7), [0, 1, r - 1, 2, r - 2, (1 << 256) - 1, r]):
            s[i] = v
        return s
    if kind == "zero":
        return [0] * n
    if kind == "rminus1":
        return [r - 1] * n
    if kind == "equal":
        v = rng.randrange(r)
        return [v] * n
    if kind == "small":
        return [rng.randrange(4) for _ in range(n)]
    if kind == "bits":  # witness-like: mostly 0/1, some large
        return [rng.choice([0, 1, 1, 0, rng.randrange(r)]) for _ in range(n)]
    raise ValueError(kind)


def run_case(curve, g2, n, kind, c=None, distinct=None, seed=0, table_extra=None):
    """table_extra: build a window table over n + table_extra bases (an MSM over
    the first n of them then strides over the table's rows)."""
    rng = random.Random(hash((curve, g2, n, kind, c, seed)) & 0xFFFFFFF)
    nat = native(curve)
    nb = max(n, 1) + (table_extra or 0)
    bases = rand_points(rng, CURVE_OF[curve], g2, nb, distinct=distinct)
    sc = ints_to_fr(scalars(rng, kind, n, R[curve])) if n else np.zeros((0, 4), dtype=np.uint64)
    ref = (nat.msm_g2 if g2 else nat.msm_g1)(bases[:n] if n else bases[:1], sc, 0)
    dev_bases = cupy.asarray(bases.view(np.uint32).reshape(-1))
    table = DEV.window_table(curve, g2, dev_bases, nb, c or 0) if table_extra is not None else None
    got = DEV.msm(curve, g2, dev_bases, cupy.asarray(sc.view(np.uint32).reshape(-1)), n, nat, c=c or 0, table=table)
    assert np.array_equal(np.asarray(got).reshape(-1), np.asarray(ref).reshape(-1)), (curve, g2, n, kind, c, table_extra)


CASES = [(0, "random"), (1, "random"), (1, "rminus1"), (2, "random"), (3, "zero"), (5, "rminus1"), (37, "random"),
         (100, "equal"), (100, "small"), (1000, "random"), (1000, "bits"), (3001, "random")]


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
@pytest.mark.parametrize("n,kind", CASES)
def test_msm_g1(curve, n, kind):
    run_case(curve, False, n, kind)


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
@pytest.mark.parametrize("n,kind", [(0, "random"), (1, "rminus1"), (3, "random"), (37, "random"), (100, "equal"),
                                    (500, "bits"), (1000, "random")])
def test_msm_g2(curve, n, kind):
    run_case(curve, True, n, kind)


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
@pytest.mark.parametrize("c", [2, 5, 8, 13])
def test_msm_window_sizes(curve, c):
    run_case(curve, False, 777, "random", c=c)


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
@pytest.mark.parametrize("kind", ["random", "bits", "equal"])
def test_msm_g1_large_skewed(curve, kind):
    # 2^17 points (1024 distinct, tiled): heavy buckets take several rounds
    run_case(curve, False, 1 << 17, kind, distinct=1024)


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
def test_msm_g2_large(curve):
    run_case(curve, True, 1 << 15, "bits", distinct=256)


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
@pytest.mark.parametrize("g2", [False, True], ids=["g1", "g2"])
@pytest.mark.parametrize("n,kind,c,extra", [(0, "random", None, 0), (1, "rminus1", None, 0), (3, "random", 4, 0),
                                            (37, "random", 5, 3), (100, "equal", None, 0), (1000, "random", 8, 24),
                                            (1000, "bits", 13, 0), (3001, "zero", None, 0),
                                            (3001, "random", 20, 7), (300, "bits", 23, 0)])
def test_msm_window_table(curve, g2, n, kind, c, extra):
    # shared buckets over a precomputed 2^(c w) P table == the CPU MSM
    # (c = 23: 2^22 buckets)
    run_case(curve, g2, n, kind, c=c, table_extra=extra)


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
def test_msm_window_table_large_skewed(curve):
    run_case(curve, False, 1 << 17, "equal", distinct=1024, table_extra=0)


def test_window_table_rows_are_multiples():
    # row w of the table is 2^(c w) times the base (the CPU core's scalar multiplication)
    curve, c = "bn254", 7
    nat = native(curve)
    rng = random.Random(5)
    bases = rand_points(rng, CURVE_OF[curve], False, 9)
    t = DEV.window_table(curve, False, cupy.asarray(bases.view(np.uint32).reshape(-1)), 9, c)
    rows = cupy.asnumpy(t.table).view(np.uint64).reshape(t.nw, 9, -1)
    for w in (1, 2, t.nw - 1):
        k = ints_to_fr([pow(2, c * w, R[curve])] * 9)
        for i in range(9):
            want = nat.msm_g1(bases[i : i + 1], k[i : i + 1], 0)
            assert np.array_equal(rows[w, i], np.asarray(want).reshape(-1)), (w, i)


@pytest.mark.parametrize("curve", ["bn254", "bls12_381"])
@pytest.mark.parametrize("tables", [False, True], ids=["plain", "table"])
@pytest.mark.parametrize("kind", ["bits", "random"])
def test_one_sort_serves_the_msms_over_w_and_its_suffix(curve, tables, kind):
    # as in a proof: A (G1), B2 (G2) over w and C over w[off:], one digit sort of w
    rng = random.Random(hash((curve, tables, kind)) & 0xFFFFFF)
    nat = native(curve)
    n, off = 3001, 4
    w = ints_to_fr(scalars(rng, kind, n, R[curve]))
    wd = cupy.asarray(w.view(np.uint32).reshape(-1))
    sorts = {}
    for g2, lo, reused in ((False, 0, False), (True, 0, True), (False, off, True), (False, 0, True)):
        bases = rand_points(rng, CURVE_OF[curve], g2, n - lo)
        ref = (nat.msm_g2 if g2 else nat.msm_g1)(bases, np.ascontiguousarray(w[lo:]), 0)
        db = cupy.asarray(bases.view(np.uint32).reshape(-1))
        table = DEV.window_table(curve, g2, db, n - lo, 0) if tables else None
        st = {}
        got = DEV.msm(curve, g2, db, wd, n, nat, stats=st, table=table, offset=lo, sorts=sorts, tag="w")
        assert np.array_equal(np.asarray(got).reshape(-1), np.asarray(ref).reshape(-1)), (g2, lo)
        assert st["sort_reused"] is reused
    assert len(sorts) == 1


def test_sort_groups_every_digit_by_bucket():
    # the digit sort against numpy: every nonzero digit once, in its bucket
    curve, n, c = "bn254", 5000, 9
    rng = random.Random(9)
    sc = ints_to_fr(scalars(rng, "bits", n, R[curve]))
    srt = gmsm.DigitSort(DEV.module(curve), curve, cupy.asarray(sc.view(np.uint32).reshape(-1)), n, c, False)
    counts, starts, entries = (cupy.asnumpy(x) for x in (srt.counts, srt.seg_start, srt.srt))
    nw, half = srt.nw, 1 << (c - 1)
    want = [[] for _ in range(nw * half)]
    for i, v in enumerate(int.from_bytes(sc[i].tobytes(), "little") % R[curve] for i in range(n)):
        carry = 0
        for w in range(nw):
            d = ((v >> (w * c)) & ((1 << c) - 1)) + carry
            carry = 1 if d > half else 0
            mag, neg = ((1 << c) - d, 1) if d > half else (d, 0)
            if mag:
                want[w * half + mag - 1].append(i | (neg << 31))
    assert list(counts) == [len(b) for b in want]
    assert starts[0] == 0 and list(np.diff(starts)) == list(counts)
    for k, b in enumerate(want):
        assert sorted(entries[starts[k] : starts[k + 1]]) == sorted(b), k
