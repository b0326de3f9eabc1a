"""Native fixed-base batch-affine scalar multiplication against py_ecc."""

from __future__ import annotations

import random

import numpy as np
import pytest

from snarkd.curves.params import curve_by_name
from snarkd.setup.groth16_setup import g1_generator_bytes, g2_generator_bytes, native


pytestmark = pytest.mark.slow  # py_ecc curve arithmetic, minutes: the slow tier (pytest -m "not slow" leaves it out)


def _ec(curve):
    if curve.name == "bn128":
        from py_ecc import bn128 as ec
    else:
        from py_ecc import bls12_381 as ec
    return ec


def _unmont(b: bytes, curve) -> int:
    return int.from_bytes(b, "little") * pow(curve.rq, -1, curve.q) % curve.q


def _scalars(curve):
    r = curve.r
    rnd = random.Random(7)
    s = [0, 1, 2, 3, r - 1, r - 2, (r - 1) // 2, 1 << 200, (1 << 254) % r, r + 5]  # r + 5: reduced mod r
    s += [rnd.randrange(r) for _ in range(40)]
    return s


@pytest.mark.parametrize("window", [3, 8, 13])
def test_g1_g2_fixed_base(curve, window):
    c = curve_by_name(curve)
    ec = _ec(c)
    mod = native(c)
    sc = _scalars(c)
    arr = np.frombuffer(b"".join(x.to_bytes(32, "little") for x in sc), dtype="<u8").reshape(-1, 4)
    n8 = c.n8q
    for fb, size, gen in ((mod.FixedBaseG1(g1_generator_bytes(c), window), 2 * n8, ec.G1), (mod.FixedBaseG2(g2_generator_bytes(c), window), 4 * n8, ec.G2)):
        out = bytearray(len(sc) * size)
        fb.mul(arr, out, 2, 7)  # small batches: several tasks and partial batches
        for i, k in enumerate(sc):
            got = out[i * size : (i + 1) * size]
            want = ec.multiply(gen, k % c.r)
            if k % c.r == 0:
                assert got == bytes(size)
                continue
            coords = [_unmont(got[j * n8 : (j + 1) * n8], c) for j in range(size // n8)]
            if size == 2 * n8:
                assert coords == [int(want[0]), int(want[1])], k
            else:
                assert coords == [int(want[0].coeffs[0]), int(want[0].coeffs[1]), int(want[1].coeffs[0]), int(want[1].coeffs[1])], k


def test_curve_generators_are_py_ecc_s():
    from py_ecc import bls12_381, bn128

    from snarkd.curves.params import BLS12_381, BN254

    for ec, c in ((bn128, BN254), (bls12_381, BLS12_381)):
        assert c.g1 == (int(ec.G1[0]), int(ec.G1[1]))
        assert c.g2 == ((int(ec.G2[0].coeffs[0]), int(ec.G2[0].coeffs[1])),
                        (int(ec.G2[1].coeffs[0]), int(ec.G2[1].coeffs[1])))
