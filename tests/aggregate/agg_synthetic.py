"""Groth16 statements with known discrete logs, for aggregation tests and benchmarks.

A key (alpha, beta, gamma, delta, IC) with known exponents and proofs A = [s]_1, B = [t]_2,
C = [(s t - alpha beta - P gamma) / delta]_1 satisfy the Groth16 equation exactly as a prover's
proofs do (the verifier only sees that equation); made with the native fixed-base multiplication.
Real proofs from snarkd's prover are used in test_real_proofs.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np

from snarkd.aggregate.srs import _fixed_base
from snarkd.aggregate.statement import VerifyingKey
from snarkd.aggregate.group import Group


@dataclass
class Statement:
    vk: VerifyingKey
    public: list[list[int]]
    A: bytes
    B: bytes
    C: bytes
    logs: dict


def make(curve, n: int, n_public: int = 2, seed: int = 1) -> Statement:
    rnd = random.Random(seed)
    r = curve.r
    G = Group(curve)
    g, h = G.generator_g1(), G.generator_g2()
    al, be, ga, de = (rnd.randrange(1, r) for _ in range(4))
    ic = [rnd.randrange(1, r) for _ in range(n_public + 1)]
    key1 = _fixed_base(curve, g, [al] + ic, False)
    key2 = _fixed_base(curve, h, [be, ga, de], True)
    vk = VerifyingKey(curve, key1[0].tobytes(), key2[0].tobytes(), key2[1].tobytes(), key2[2].tobytes(),
                      tuple(key1[i].tobytes() for i in range(1, n_public + 2)))
    public = [[rnd.randrange(r) for _ in range(n_public)] for _ in range(n)]
    s = [rnd.randrange(1, r) for _ in range(n)]
    t = [rnd.randrange(1, r) for _ in range(n)]
    dinv = pow(de, -1, r)
    c = []
    for i in range(n):
        p = (ic[0] + sum(v * w for v, w in zip(public[i], ic[1:]))) % r
        c.append((s[i] * t[i] - al * be - p * ga) * dinv % r)
    A = _fixed_base(curve, g, s, False).tobytes()
    B = _fixed_base(curve, h, t, True).tobytes()
    C = _fixed_base(curve, g, c, False).tobytes()
    return Statement(vk, public, A, B, C, {"s": s, "t": t, "c": c, "alpha": al, "beta": be, "gamma": ga, "delta": de, "ic": ic})
