"""KZG openings that prove the final commitment keys of GIPA well formed.

After the rounds (challenges x_0 .. x_{k-1}, m_j = n / 2^(j+1)) the folded keys are
    v* = [f_v(a)]_2, [f_v(b)]_2   with  f_v(X) = prod_j (x_j + X^(m_j))
    w* = [f_w(a)]_1, [f_w(b)]_1   with  f_w(X) = X^n prod_j (1 + x_j (X / r)^(m_j))
(r: the random-combination challenge; w was rescaled by r^-i), and the MIPP vector r^i folds to
f_v(r). The prover opens each at a challenge point z: pi = [(f(s) - f(z)) / (s - z)] over the SRS
powers of s = a and s = b; the verifier checks e(f* - f(z) base, other) against e(pi, [s - z]).
"""

from __future__ import annotations


def v_eval(xs: list[int], n: int, at: int, r: int) -> int:
    out, m = 1, n // 2
    for x in xs:
        out = out * (x + pow(at, m, r)) % r
        m //= 2
    return out


def w_eval(xs: list[int], n: int, at: int, shift_inv: int, r: int) -> int:
    out, m, y = pow(at, n, r), n // 2, at * shift_inv % r
    for x in xs:
        out = out * (1 + x * pow(y, m, r)) % r
        m //= 2
    return out


def v_coefficients(xs: list[int], r: int) -> list[int]:
    """Coefficients (low first) of prod_j (x_j + X^(m_j)): n of them."""
    c = [1]
    for x in reversed(xs):  # smallest m first
        c = [x * v % r for v in c] + c
    return c


def w_coefficients(xs: list[int], n: int, shift_inv: int, r: int) -> list[int]:
    """Coefficients of f_w (2n of them, the first n zero)."""
    c = [1]
    m = 1
    for x in reversed(xs):
        k = x * pow(shift_inv, m, r) % r
        c = c + [k * v % r for v in c]
        m *= 2
    return [0] * n + c


def quotient(coeffs: list[int], z: int, r: int) -> list[int]:
    """(f(X) - f(z)) / (X - z) by synthetic division: len(coeffs) - 1 coefficients."""
    d = len(coeffs) - 1
    q = [0] * d
    acc = 0
    for i in range(d, 0, -1):
        acc = (coeffs[i] + acc * z) % r
        q[i - 1] = acc
    return q
