"""Key point checks (snarkd.verifier.key_check, native _check): on the curve and in
the order-r subgroup, against py_ecc and Python integers."""

from __future__ import annotations

import random

import numpy as np
import pytest
from containers import section_offset

from snarkd.curves.encoding import g1_from_ints, g2_from_ints
from snarkd.curves.params import BLS12_381, BN254
from snarkd.formats.zkey import _g2_twist_b, read_zkey
from snarkd.curves.fp2 import fp2_mul as _f2mul, fp2_pow as _f2pow
from snarkd.verifier.key_check import NOT_IN_SUBGROUP, NOT_ON_CURVE, check_key_points


def _f2sqrt(a, q):
    """Square root in Fq2 = Fq[u]/(u^2 + 1) for q = 3 mod 4, or None."""
    a1 = _f2pow(a, (q - 3) // 4, q)
    alpha = _f2mul(_f2mul(a1, a1, q), a, q)
    if _f2mul((alpha[0], -alpha[1] % q), alpha, q) == (q - 1, 0):
        return None
    x0 = _f2mul(a1, a, q)
    if alpha == (q - 1, 0):
        return _f2mul((0, 1), x0, q)
    return _f2mul(_f2pow(((alpha[0] + 1) % q, alpha[1]), (q - 1) // 2, q), x0, q)


def random_g2_on_curve(curve, rng):
    """A point of E'(Fq2): on the twist, almost surely outside the order-r subgroup."""
    q, b = curve.q, _g2_twist_b(curve)
    while True:
        x = (rng.randrange(q), rng.randrange(q))
        rhs = _f2mul(_f2mul(x, x, q), x, q)
        rhs = ((rhs[0] + b[0]) % q, (rhs[1] + b[1]) % q)
        y = _f2sqrt(rhs, q)
        if y is not None and _f2mul(y, y, q) == rhs:
            return x, y


def random_g1_on_curve(curve, rng):
    q, b = curve.q, (3 if curve is BN254 else 4)
    while True:
        x = rng.randrange(q)
        rhs = (x * x * x + b) % q
        y = pow(rhs, (q + 1) // 4, q)
        if y * y % q == rhs:
            return x, y


def _py_ecc(curve):
    if curve is BN254:
        from py_ecc import optimized_bn128 as ecc
    else:
        from py_ecc import optimized_bls12_381 as ecc
    return ecc


def _in_subgroup_reference(curve, x, y, g2: bool) -> bool:
    ecc = _py_ecc(curve)
    if g2:
        p = (ecc.FQ2(list(x)), ecc.FQ2(list(y)), ecc.FQ2.one())
    else:
        p = (ecc.FQ(x), ecc.FQ(y), ecc.FQ.one())
    return ecc.is_inf(ecc.multiply(p, curve.r))


@pytest.mark.parametrize("curve", [BN254, BLS12_381], ids=["bn128", "bls12381"])
def test_points_outside_the_subgroup_are_found(curve):
    from snarkd.native import _check

    mod = getattr(_check, curve.native)
    rng = random.Random(18)
    x, y = random_g2_on_curve(curve, rng)
    assert not _in_subgroup_reference(curve, x, y, g2=True)
    bad2 = g2_from_ints(curve, x, y)
    # the generator of a real key is in the subgroup; put the bad point third
    good2 = np.asarray(_gen2(curve))
    arr = np.stack([good2, good2, bad2, good2])
    assert tuple(mod.g2_first_invalid(arr, 2)) == (2, NOT_IN_SUBGROUP)
    x1, y1 = random_g1_on_curve(curve, rng)
    bad1 = g1_from_ints(curve, x1, y1)
    expect_in = _in_subgroup_reference(curve, x1, y1, g2=False)
    assert expect_in == (curve is BN254)  # BN254's G1 has cofactor 1
    i, status = mod.g1_first_invalid(np.stack([bad1, bad1]), 1)
    assert (i, status) == ((-1, 0) if expect_in else (0, NOT_IN_SUBGROUP))
    off = bad1.copy()
    off[0] ^= 1  # x changed: off the curve
    assert tuple(mod.g1_first_invalid(np.stack([g1_from_ints(curve, *_gen1(curve)), off]), 1)) == (1, NOT_ON_CURVE)


def _gen1(curve):
    ecc = _py_ecc(curve)
    x, y = ecc.normalize(ecc.G1)
    return int(x), int(y)


def _gen2(curve):
    ecc = _py_ecc(curve)
    x, y = ecc.normalize(ecc.G2)
    return g2_from_ints(curve, tuple(int(c) for c in x.coeffs), tuple(int(c) for c in y.coeffs))


def test_fixture_keys_are_sound(all_circuits):
    for case in all_circuits:
        with read_zkey(case.zkey) as z:
            results = check_key_points(z, threads=2)
            assert [r.problem for r in results] == [None] * 7, case.name
            assert [r.count for r in results][1:] == [z.n_public + 1, z.n_vars, z.n_vars, z.n_vars,
                                                     z.n_vars - z.n_public - 1, z.domain_size]


def test_cheap_mode_checks_the_curve_only(chain_circuit, tmp_path):
    data = bytearray(chain_circuit.zkey.read_bytes())
    off = section_offset(data, 9)  # H
    n8q = 48 if chain_circuit.curve == "bls12381" else 32
    data[off + 3 * 2 * n8q] ^= 4  # H[3].x
    bad = tmp_path / "bad.zkey"
    bad.write_bytes(bytes(data))
    with read_zkey(bad) as z:
        for subgroup in (True, False):
            res = {r.section: r.problem for r in check_key_points(z, subgroup=subgroup)}
            assert res["9 (H)"].startswith("point 3 is not on the"), res
            assert all(p is None for s, p in res.items() if s != "9 (H)")
