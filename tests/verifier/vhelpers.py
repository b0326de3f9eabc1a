"""Conversions between snarkd's native pairing layout and py_ecc, for the tests."""

from __future__ import annotations

import random

from py_ecc import optimized_bls12_381 as pybls
from py_ecc import optimized_bn128 as pybn

from snarkd.curves.params import BLS12_381, BN254, Curve

CURVE = {"bn128": BN254, "bls12381": BLS12_381}
PYECC = {"bn128": pybn, "bls12381": pybls}
# xi = w^6 = XI0 + u in py_ecc's FQ12 = Fq[w]/(w^12 - 2*XI0*w^6 + XI0^2 + 1): u = w^6 - XI0
XI0 = {"bn128": 9, "bls12381": 1}
# snarkd's pairing = py_ecc's pairing ** EXPONENT (BN254: same value; BLS12-381:
# py_ecc's loop skips the conjugation for negative u (-1) and snarkd's hard part
# computes the 3rd power (3)).
EXPONENT = {"bn128": 1, "bls12381": -3}


def native(name: str):
    from snarkd.native import _pairing

    return getattr(_pairing, CURVE[name].native)


def mont(c: Curve, x: int) -> bytes:
    return (x * c.rq % c.q).to_bytes(c.n8q, "little")


def unmont(c: Curve, b: bytes) -> int:
    return int.from_bytes(b, "little") * pow(c.rq, -1, c.q) % c.q


def g1_bytes(name: str, p) -> bytes:
    c, ecc = CURVE[name], PYECC[name]
    if ecc.is_inf(p):
        return bytes(2 * c.n8q)
    x, y = ecc.normalize(p)
    return mont(c, x.n) + mont(c, y.n)


def g2_bytes(name: str, q) -> bytes:
    c, ecc = CURVE[name], PYECC[name]
    if ecc.is_inf(q):
        return bytes(4 * c.n8q)
    x, y = ecc.normalize(q)
    return b"".join(mont(c, int(v)) for v in (x.coeffs[0], x.coeffs[1], y.coeffs[0], y.coeffs[1]))


def g1_raw(name: str, x: int, y: int) -> bytes:
    c = CURVE[name]
    return mont(c, x) + mont(c, y)


def g2_raw(name: str, x, y) -> bytes:
    c = CURVE[name]
    return b"".join(mont(c, v) for v in (x[0], x[1], y[0], y[1]))


def fp12_to_pyecc(name: str, b: bytes):
    """snarkd's tower (Fp2 -> Fp6 -> Fp12) to py_ecc's FQ12 = Fq[w]/(...)."""
    c, ecc = CURVE[name], PYECC[name]
    n = c.n8q
    v = [unmont(c, b[i * n : (i + 1) * n]) for i in range(24)]
    fp2 = [(v[2 * i], v[2 * i + 1]) for i in range(6)]
    exps = [0, 2, 4, 1, 3, 5]  # w-power of c0.c0, c0.c1, c0.c2, c1.c0, c1.c1, c1.c2
    co = [0] * 12
    for slot, e in enumerate(exps):
        a0, a1 = fp2[slot]
        co[e] += a0 - XI0[name] * a1
        co[e + 6] += a1
    return ecc.FQ12([x % c.q for x in co])


def int_bytes(x: int, n: int = 32) -> bytes:
    return x.to_bytes(n, "little")


def rand_scalar(rng: random.Random, name: str) -> int:
    return rng.randrange(1, CURVE[name].r)


# ---- points on the curves outside the order-r subgroups ----
def _sqrt_fq(c: Curve, a: int):
    assert c.q % 4 == 3
    s = pow(a, (c.q + 1) // 4, c.q)
    return s if s * s % c.q == a % c.q else None


def _sqrt_fq2(c: Curve, a0: int, a1: int):
    """sqrt in Fq[u]/(u^2+1) (q = 3 mod 4), None if a is not a square."""
    q = c.q
    if a1 == 0:
        s = _sqrt_fq(c, a0)
        if s is not None:
            return (s, 0)
        s = _sqrt_fq(c, -a0 % q)
        return (0, s) if s is not None else None
    n = _sqrt_fq(c, (a0 * a0 + a1 * a1) % q)
    if n is None:
        return None
    inv2 = pow(2, -1, q)
    for sn in (n, q - n):
        x0 = _sqrt_fq(c, (a0 + sn) * inv2 % q)
        if x0 is None or x0 == 0:
            continue
        x1 = a1 * pow(2 * x0, -1, q) % q
        if ((x0 * x0 - x1 * x1) % q, 2 * x0 * x1 % q) == (a0 % q, a1 % q):
            return (x0, x1)
    return None


def random_curve_g1(name: str, rng: random.Random):
    """(x, y) ints of a random point of E(Fq) (any subgroup)."""
    c, ecc = CURVE[name], PYECC[name]
    b = int(ecc.b.n)
    while True:
        x = rng.randrange(c.q)
        y = _sqrt_fq(c, (x**3 + b) % c.q)
        if y is not None:
            return x, y


def random_curve_g2(name: str, rng: random.Random):
    """((x0, x1), (y0, y1)) of a random point of E'(Fq2) (any subgroup)."""
    c, ecc = CURVE[name], PYECC[name]
    b0, b1 = (int(v) for v in ecc.b2.coeffs)
    q = c.q
    while True:
        x0, x1 = rng.randrange(q), rng.randrange(q)
        # x^3 + b in Fq2
        sq = ((x0 * x0 - x1 * x1) % q, 2 * x0 * x1 % q)
        cu = ((sq[0] * x0 - sq[1] * x1) % q, (sq[0] * x1 + sq[1] * x0) % q)
        y = _sqrt_fq2(c, (cu[0] + b0) % q, (cu[1] + b1) % q)
        if y is not None:
            return (x0, x1), y


def g1_to_pyecc(name: str, x: int, y: int):
    ecc = PYECC[name]
    return (ecc.FQ(x), ecc.FQ(y), ecc.FQ.one())


def g2_to_pyecc(name: str, x, y):
    ecc = PYECC[name]
    return (ecc.FQ2(list(x)), ecc.FQ2(list(y)), ecc.FQ2.one())
