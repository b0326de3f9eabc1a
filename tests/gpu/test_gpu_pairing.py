"""Miller loops on the GPU (gpu/pairing.cuh) == the CPU core's (_aggregate.miller_products), byte for byte,
both curves; and an aggregate made with the GPU == the CPU's, and it verifies."""
import random
import sys
from pathlib import Path

import pytest

from gpu_helpers import rand_points, require_gpu

require_gpu()

from snarkd.aggregate import prover, srs as srs_mod, verifier  # noqa: E402
from snarkd.aggregate.group import Group  # noqa: E402
from snarkd.curves.params import curve_by_name  # noqa: E402
from snarkd.gpu import device as gdevice  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "aggregate"))
import agg_synthetic as synthetic  # noqa: E402

DEV = gdevice.get(0)
CURVES = ["bn128", "bls12381"]


@pytest.mark.parametrize("curve_name", CURVES)
@pytest.mark.parametrize("m,K", [(1, 1), (3, 2), (17, 3), (300, 1), (1000, 2)])
def test_miller_products_match_cpu(curve_name, m, K):
    curve = curve_by_name(curve_name)
    rng = random.Random(m * 10 + K)
    q = rand_points(rng, curve_name, True, m, with_inf=True)  # rows 1 and m-1 infinity (m >= 3)
    ps = [rand_points(rng, curve_name, False, m, with_inf=(k == 0)) for k in range(K)]
    cpu = Group(curve).miller(q.tobytes(), [p.tobytes() for p in ps])
    (gpu,) = DEV.miller_products(curve, [(q.tobytes(), [p.tobytes() for p in ps])])
    assert gpu == cpu


@pytest.mark.parametrize("curve_name", CURVES)
def test_several_jobs_in_one_launch(curve_name):
    """Jobs sharing one launch (a GIPA round's six products): each job's products as if alone."""
    curve = curve_by_name(curve_name)
    rng = random.Random(7)
    m = 40
    jobs = [(rand_points(rng, curve_name, True, m), [rand_points(rng, curve_name, False, m) for _ in range(K)])
            for K in (2, 3, 1)]
    G = Group(curve)
    cpu = [G.miller(q.tobytes(), [p.tobytes() for p in ps]) for q, ps in jobs]
    gpu = DEV.miller_products(curve, [(q, ps) for q, ps in jobs])  # numpy rows, as the SRS keys come
    assert gpu == cpu
    assert Group(curve, gpu=DEV).miller_many([(q, ps) for q, ps in jobs]) == cpu


@pytest.mark.parametrize("curve_name", CURVES)
def test_all_infinity_and_empty(curve_name):
    curve = curve_by_name(curve_name)
    G = Group(curve)
    one = G.gt_one()
    q = bytes(5 * curve.g2_bytes)
    p = bytes(5 * curve.g1_bytes)
    assert DEV.miller_products(curve, [(q, [p, p])]) == [[one, one]]
    assert DEV.miller_products(curve, [(b"", [b""])]) == [[one]]
    with pytest.raises(ValueError):
        DEV.miller_products(curve, [(q, [p[: -curve.g1_bytes]])])
    with pytest.raises(ValueError):  # jobs of different sizes
        DEV.miller_products(curve, [(q, [p]), (q[: -curve.g2_bytes], [p[: -curve.g1_bytes]])])


@pytest.mark.parametrize("curve_name", CURVES)
def test_aggregate_on_gpu_equals_cpu(curve_name):
    curve = curve_by_name(curve_name)
    n = 64  # 32 G2 points x 3 G1 points in the first round: above GPU_MIN_PAIRS only with K = 3
    st = synthetic.make(curve, n, n_public=1)
    srs = srs_mod.dev_srs(curve, n)
    key = srs.specialize(n)
    import snarkd.aggregate.group as group_mod

    floor = group_mod.GPU_MIN_PAIRS
    group_mod.GPU_MIN_PAIRS = 1  # every Miller loop on the GPU
    try:
        on_gpu = prover.aggregate(key, st.vk, st.public, st.A, st.B, st.C, gpu=DEV)
    finally:
        group_mod.GPU_MIN_PAIRS = floor
    on_cpu = prover.aggregate(key, st.vk, st.public, st.A, st.B, st.C)
    assert on_gpu.to_bytes() == on_cpu.to_bytes()
    assert verifier.verify(srs, st.vk, st.public, on_gpu)
