"""GPU NTT / coset shift / H values == the CPU core, both curves, many sizes."""
import random

import numpy as np
import pytest

from gpu_helpers import native, rand_fr, require_gpu

require_gpu()
import cupy  # noqa: E402

from snarkd.gpu import device as gdevice  # noqa: E402
from snarkd.gpu import ntt as gntt  # noqa: E402

GPU = gdevice.get(0)

CURVES = ["bn254", "bls12_381"]
R = {"bn254": 21888242871839275222246405745257275088548364400416034343698204186575808495617,
     "bls12_381": 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001}
SIZES = [0, 1, 2, 3, 5, 9, 10, 11, 12, 15, 17, 19]
RADIXES = [1, 2]  # ntt.RADIX_LOG: ntt_pass_r1 (radix 2) and ntt_pass_r2 (two stages per barrier)


def dev(x):
    return cupy.asarray(np.ascontiguousarray(x).view(np.uint32).reshape(-1))


def host(x):
    return cupy.asnumpy(x).view("<u8").reshape(-1, 4)


@pytest.mark.parametrize("full_tables", [False, True])  # the inverse from the stage table (sign in the butterfly) or its own
@pytest.mark.parametrize("radix", RADIXES)
@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("log_n", SIZES)
def test_ntt_matches_cpu(curve, log_n, radix, full_tables, monkeypatch):
    monkeypatch.setattr(gntt, "RADIX_LOG", radix)
    rng = random.Random(1000 * log_n + len(curve))
    nat = native(curve)
    n = 1 << log_n
    x = rand_fr(rng, R[curve], n)
    dom = GPU.ntt_domain(curve, log_n, full_tables)
    assert (dom.tw_inv is not None) == full_tables
    for inverse in (False, True):
        ref = x.copy()
        nat.ntt(ref, inverse)
        got = host(dom.ntt(dev(x), inverse))
        assert np.array_equal(got, ref), f"{curve} 2^{log_n} inverse={inverse}"


@pytest.mark.parametrize("full_tables", [False, True])  # the coset shift from two ~sqrt(n) tables, or one of n; the inverse's own table
@pytest.mark.parametrize("radix", RADIXES)
@pytest.mark.parametrize("curve", CURVES)
@pytest.mark.parametrize("log_n", SIZES)
def test_coset_and_h_match_cpu(curve, log_n, radix, full_tables, monkeypatch):
    monkeypatch.setattr(gntt, "RADIX_LOG", radix)
    rng = random.Random(7 + log_n)
    nat = native(curve)
    n = 1 << log_n
    a = rand_fr(rng, R[curve], n)
    b = rand_fr(rng, R[curve], n)
    ref = a.copy()
    nat.coset_shift_evals(ref)
    d = dev(a)
    dom = GPU.ntt_domain(curve, log_n, full_tables)
    assert dom.shift.size == 8 * (n + 1 if full_tables else (1 << gntt.shift_split(log_n)) + (1 << (log_n - gntt.shift_split(log_n))))
    dom.coset_shift_evals(d)
    assert np.array_equal(host(d), ref)
    # whole H: c = a*b, three coset shifts, a*b - c, out of Montgomery
    c = nat.fr_mul_pointwise(a, b)
    aa, bb = a.copy(), b.copy()
    for v in (aa, bb, c):
        nat.coset_shift_evals(v)
    href = nat.h_from_coset(aa, bb, c)
    h = dom.h_values(dev(a), dev(b))
    assert np.array_equal(host(h), href)


def test_ntt_zero_and_edge_values():
    nat = native("bn254")
    r = R["bn254"]
    n = 1 << 8
    vals = [0] * n
    vals[3] = r - 1
    vals[7] = 1
    x = np.frombuffer(b"".join(v.to_bytes(32, "little") for v in vals), dtype="<u8").reshape(n, 4).copy()
    dom = GPU.ntt_domain("bn254", 8)
    ref = x.copy()
    nat.ntt(ref, False)
    assert np.array_equal(host(dom.ntt(dev(x))), ref)
