"""The device field algorithms (field.cuh), modelled word by word in field_model.py,
against Python integers: runs without a GPU, so a carry bug shows before device time."""
from __future__ import annotations

import random

import pytest

from snarkd.curves.params import BLS12_381, BN254

from field_model import Field

FIELDS = {"bn254": Field(BN254.q, 8), "bls12_381": Field(BLS12_381.q, 12)}


def values(F: Field, rng: random.Random, n: int) -> list[int]:
    p, R = F.p, F.R
    edge = [0, 1, 2, p - 1, p - 2, (p - 1) // 2, R % p, R * R % p]
    return edge + [rng.randrange(p) for _ in range(n)]


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_products_squares_and_reductions(name):
    F = FIELDS[name]
    p, Ri = F.p, pow(F.R, -1, F.p)
    rng = random.Random(16)
    vals = values(F, rng, 400)
    for k, a in enumerate(vals):
        b = vals[(7 * k + 3) % len(vals)]
        A, B = F.words(a), F.words(b)
        assert F.value(F.mont_mul(A, B)) == a * b * Ri % p
        assert F.value(F.mont_sqr(A)) == a * a * Ri % p
        assert F.value(F.wide_mul(A, B)) == a * b
        assert F.value(F.wide_sqr(A)) == a * a
    for T in (F.p * F.R - 1, 2 * p * p - 1, p * p, 0, F.R - 1):  # redc's whole promised range
        assert F.value(F.redc(F.words(T, 2 * F.N))) == T * Ri % p
    for a in (F.R - 1, F.R // 2, 2 * p - 1):  # wide products of any N-word inputs (unreduced sums)
        for b in (F.R - 1, 1, 2 * p - 1):
            assert F.value(F.wide_mul(F.words(a), F.words(b))) == a * b
        assert F.value(F.wide_sqr(F.words(a))) == a * a


@pytest.mark.parametrize("name", sorted(FIELDS))
def test_fp2_lazy_karatsuba(name):
    F = FIELDS[name]
    p, Ri = F.p, pow(F.R, -1, F.p)
    rng = random.Random(61)
    vals = values(F, rng, 300)
    for k, a0 in enumerate(vals):
        a1, b0, b1 = (vals[(m * k + o) % len(vals)] for m, o in ((7, 3), (13, 5), (17, 1)))
        c0, c1 = F.fp2_mul(*(F.words(x) for x in (a0, a1, b0, b1)))
        assert F.value(c0) == (a0 * b0 - a1 * b1) * Ri % p
        assert F.value(c1) == (a0 * b1 + a1 * b0) * Ri % p
