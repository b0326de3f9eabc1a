"""Fp2 = Fp[u] / (u^2 + 1) (both curves) on Python integers, (c0, c1) pairs: for constants computed once,
never on a hot path."""

from __future__ import annotations


def fp2_mul(a: tuple[int, int], b: tuple[int, int], q: int) -> tuple[int, int]:
    return ((a[0] * b[0] - a[1] * b[1]) % q, (a[0] * b[1] + a[1] * b[0]) % q)


def fp2_pow(a: tuple[int, int], e: int, q: int) -> tuple[int, int]:
    r = (1, 0)
    while e:
        if e & 1:
            r = fp2_mul(r, a, q)
        a = fp2_mul(a, a, q)
        e >>= 1
    return r
