"""GPU MSM (G1 and G2, both curves) == the CPU core's MSM, on random and edge inputs."""
import random

import numpy as np
import pytest

from gpu_helpers import ints_to_fr, native, rand_points, require_gpu

require_gpu()
import cupy  # noqa: E402

from snarkd.gpu import msm as gmsm  # noqa: E402

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


def run_case(curve, g2, n, kind, c=None, distinct=None, seed=0):
    rng = random.Random(hash((curve, g2, n, kind, c, seed)) & 0xFFFFFFF)
    nat = native(curve)
    bases = rand_points(rng, CURVE_OF[curve], g2, max(n, 1), distinct=distinct)
    sc = ints_to_fr(scalars(rng, kind, n, R[curve])) if n else np.zeros((0, 4), dtype=np.uint64)
    ref = (nat.msm_g2 if g2 else nat.msm_g1)(bases, sc, 0)
    got = gmsm.msm(curve, g2, cupy.asarray(bases.view(np.uint32).reshape(-1)),
                   cupy.asarray(sc.view(np.uint32).reshape(-1)), n, nat, c=c)
    assert np.array_equal(np.asarray(got).reshape(-1), np.asarray(ref).reshape(-1)), (curve, g2, n, kind, c)


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
