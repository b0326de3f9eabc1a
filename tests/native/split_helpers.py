"""What the G1 (GLV, test_glv.py) and G2 (GLS, test_gls.py) endomorphism-split tests share: the generator of
curves/glv_constants.hpp loaded as a module, the switches set for one test, the split decoded, random points
and the plain / forced / default comparison."""
import functools
import importlib.util
from pathlib import Path

import numpy as np

import snarkd.native as native
from snarkd.native import _core
from helpers import dec, enc_many

BOUND = 1 << 127  # curves/gen_glv.py: |k1|, |k2| < 2^127 on both curves, both groups


@functools.lru_cache(maxsize=None)
def gen_glv():
    """curves/gen_glv.py, the generator of curves/glv_constants.hpp (derivation and a Python model)"""
    spec = importlib.util.spec_from_file_location("gen_glv", Path(native.__file__).parent / "curves" / "gen_glv.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    return gen


@functools.lru_cache(maxsize=None)
def _endo_constants(pe: int, q: int, r: int, g2: bool) -> dict:
    model = gen_glv()
    return (model.g2_constants if g2 else model.constants)(pe, q, r)


def endo_constants(curve, g2: bool) -> dict:
    """The model's split constants of `curve` (tests/helpers.CURVES): GLV on G1, GLS on G2 (made once)."""
    return _endo_constants(curve.pe, curve.q, curve.r, g2)


def mode_switch(set_split):
    """A fixture body: set(simd, split mode) for the test (set_split: _core._set_glv or _set_gls), the previous
    settings back afterwards."""
    prev_simd, prev_split = _core._set_simd52(True), set_split(1)

    def set_(simd, mode):
        _core._set_simd52(simd)
        set_split(mode)
    yield set_
    _core._set_simd52(prev_simd)
    set_split(prev_split)


def decode_split(halves, n):
    """(k1, k2) signed, from a native split's (k1, neg1, k2, neg2) arrays"""
    k1, n1, k2, n2 = halves
    return [(dec(k1[i]) * (-1 if n1[i] else 1), dec(k2[i]) * (-1 if n2[i] else 1)) for i in range(n)]


def random_points(curve, g2, n, rng):
    """n random multiples of the group's generator (encoded rows)"""
    enc, mul, gen = (curve.g2_enc, curve.mod.g2_mul, curve.pe.G2) if g2 else (curve.g1_enc, curve.mod.g1_mul, curve.pe.G1)
    return np.ascontiguousarray(mul(enc(gen), enc_many([rng.randrange(1, curve.r) for _ in range(n)], 4)).reshape(n, -1))


def plain_forced_default(modes, simd, fn):
    """fn() with the split off (the reference), forced, and by the cost model"""
    modes(simd, 0)
    ref = fn()
    modes(simd, 2)
    got = fn()
    modes(simd, 1)
    auto = fn()
    return ref, got, auto


def check_split_bounds(curve, halves, lam, k):
    """k = k1 + lambda k2 (mod r) with both halves under BOUND"""
    k1, k2 = halves
    assert (k1 + lam * k2 - k) % curve.r == 0
    assert abs(k1) < BOUND and abs(k2) < BOUND
