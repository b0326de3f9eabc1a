"""Encoding helpers shared by the native tests: ints <-> limb arrays, py_ecc points <-> snarkjs layout."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
from py_ecc import optimized_bls12_381 as pbls
from py_ecc import optimized_bn128 as pbn

from snarkd.native._core import bls12_381, bn254

MASK = (1 << 64) - 1


@contextmanager
def native_setting(setter, value):
    """A process-wide native switch (_core._set_simd52, _set_adx, ...) set to value for the block, then restored."""
    prev = setter(value)
    try:
        yield
    finally:
        setter(prev)


def enc(x: int, n: int) -> np.ndarray:
    return np.array([(x >> (64 * i)) & MASK for i in range(n)], dtype=np.uint64)


def enc_many(xs, n: int) -> np.ndarray:
    out = np.zeros((len(xs), n), dtype=np.uint64)
    for k, x in enumerate(xs):
        for i in range(n):
            out[k, i] = (x >> (64 * i)) & MASK
    return out


def dec(a) -> int:
    a = np.asarray(a).reshape(-1)
    return sum(int(v) << (64 * i) for i, v in enumerate(a))


def dec_many(a, n: int):
    a = np.asarray(a).reshape(-1, n)
    return [dec(row) for row in a]


@dataclass
class Curve:
    name: str
    mod: object  # native submodule
    pe: object  # py_ecc optimized module
    q: int
    r: int
    L: int

    def mq(self, x: int) -> int:  # to Montgomery (Fq)
        return x * (1 << (64 * self.L)) % self.q

    def uq(self, x: int) -> int:  # from Montgomery (Fq)
        return x * pow(1 << (64 * self.L), -1, self.q) % self.q

    def mr(self, x: int) -> int:
        return x * (1 << 256) % self.r

    def ur(self, x: int) -> int:
        return x * pow(1 << 256, -1, self.r) % self.r

    # ---- points: py_ecc <-> flat uint64 limbs (affine, Montgomery, zeros = infinity)
    def g1_enc(self, p) -> np.ndarray:
        if self.pe.is_inf(p):
            return np.zeros(2 * self.L, dtype=np.uint64)
        x, y = self.pe.normalize(p)
        return np.concatenate([enc(self.mq(x.n), self.L), enc(self.mq(y.n), self.L)])

    def g2_enc(self, p) -> np.ndarray:
        if self.pe.is_inf(p):
            return np.zeros(4 * self.L, dtype=np.uint64)
        x, y = self.pe.normalize(p)
        cs = [x.coeffs[0], x.coeffs[1], y.coeffs[0], y.coeffs[1]]
        return np.concatenate([enc(self.mq(int(c)), self.L) for c in cs])

    def g1_dec(self, a):
        a = np.asarray(a).reshape(-1)
        if not a.any():
            return self.pe.Z1
        x, y = (self.uq(dec(a[i * self.L:(i + 1) * self.L])) for i in range(2))
        return (self.pe.FQ(x), self.pe.FQ(y), self.pe.FQ.one())

    def g2_dec(self, a):
        a = np.asarray(a).reshape(-1)
        if not a.any():
            return self.pe.Z2
        c = [self.uq(dec(a[i * self.L:(i + 1) * self.L])) for i in range(4)]
        return (self.pe.FQ2([c[0], c[1]]), self.pe.FQ2([c[2], c[3]]), self.pe.FQ2.one())


CURVES = [
    Curve("bn254", bn254, pbn, pbn.field_modulus, pbn.curve_order, 4),
    Curve("bls12_381", bls12_381, pbls, pbls.field_modulus, pbls.curve_order, 6),
]
