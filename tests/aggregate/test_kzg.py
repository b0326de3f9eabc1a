"""The key polynomials of kzg.py, against plain evaluation with Python integers."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from snarkd.aggregate import kzg
from snarkd.curves.params import BN254

R = BN254.r
scalars = st.integers(min_value=0, max_value=R - 1)


def horner(coeffs, x):
    acc = 0
    for c in reversed(coeffs):
        acc = (acc * x + c) % R
    return acc


@settings(max_examples=30, deadline=None)
@given(k=st.integers(min_value=1, max_value=5), xs=st.lists(scalars, min_size=5, max_size=5), at=scalars,
       shift=st.integers(min_value=1, max_value=R - 1))
def test_coefficients_evaluate_as_the_product_form(k, xs, at, shift):
    xs, n = xs[:k], 1 << k
    cv = kzg.v_coefficients(xs, R)
    assert len(cv) == n
    assert horner(cv, at) == kzg.v_eval(xs, n, at, R)
    # f_v straight from its definition: prod_j (x_j + X^(n / 2^(j+1)))
    want = 1
    for j, x in enumerate(xs):
        want = want * (x + pow(at, n >> (j + 1), R)) % R
    assert want == kzg.v_eval(xs, n, at, R)
    sinv = pow(shift, -1, R)
    cw = kzg.w_coefficients(xs, n, sinv, R)
    assert len(cw) == 2 * n and not any(cw[:n])
    assert horner(cw, at) == kzg.w_eval(xs, n, at, sinv, R)


@settings(max_examples=30, deadline=None)
@given(coeffs=st.lists(scalars, min_size=1, max_size=20), z=scalars, x=scalars)
def test_quotient_divides(coeffs, z, x):
    q = kzg.quotient(coeffs, z, R)
    assert len(q) == len(coeffs) - 1
    assert (horner(q, x) * (x - z) + horner(coeffs, z)) % R == horner(coeffs, x)
