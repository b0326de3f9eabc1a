"""G1/G2 point helpers against py_ecc."""
import random

import numpy as np
import pytest

from helpers import enc, enc_many

rng = random.Random(1234)


def _gen(curve, g2):
    return curve.pe.G2 if g2 else curve.pe.G1


@pytest.mark.parametrize("g2", [False, True], ids=["g1", "g2"])
def test_add_double_neg_mul(curve, g2):
    pe, m = curve.pe, curve.mod
    e, d = (curve.g2_enc, curve.g2_dec) if g2 else (curve.g1_enc, curve.g1_dec)
    pfx = "g2" if g2 else "g1"
    add, dbl, neg, mul = (getattr(m, f"{pfx}_{k}") for k in ("add", "double", "neg", "mul"))
    Z = pe.Z2 if g2 else pe.Z1
    G = _gen(curve, g2)
    P = pe.multiply(G, rng.randrange(1, curve.r))
    Q = pe.multiply(G, rng.randrange(1, curve.r))
    eq = pe.eq
    assert eq(d(add(e(P), e(Q))), pe.add(P, Q))
    assert eq(d(add(e(P), e(P))), pe.double(P))  # add of equal points -> doubling
    assert eq(d(add(e(P), e(pe.neg(P)))), Z)  # P + (-P) = infinity
    assert eq(d(add(e(P), e(Z))), P)
    assert eq(d(add(e(Z), e(Q))), Q)
    assert eq(d(add(e(Z), e(Z))), Z)
    assert eq(d(dbl(e(P))), pe.double(P))
    assert eq(d(dbl(e(Z))), Z)
    assert eq(d(neg(e(P))), pe.neg(P))
    assert not neg(e(Z)).any()
    for k in [0, 1, 2, 3, curve.r - 1, curve.r, rng.randrange(curve.r), (1 << 256) - 1]:
        got = mul(e(P), enc(k, 4))
        assert eq(d(got), pe.multiply(P, k % curve.r) if k % curve.r else Z), k
    assert not mul(e(Z), enc(5, 4)).any()
    # vectorised: two pairs at once, flat output
    both = add(np.concatenate([e(P), e(Q)]), np.concatenate([e(Q), e(Z)]))
    n = both.size // 2
    assert eq(d(both[:n]), pe.add(P, Q)) and eq(d(both[n:]), Q)


@pytest.mark.parametrize("g2", [False, True], ids=["g1", "g2"])
def test_on_curve(curve, g2):
    pe, m = curve.pe, curve.mod
    e = curve.g2_enc if g2 else curve.g1_enc
    check = getattr(m, "g2_first_not_on_curve" if g2 else "g1_first_not_on_curve")
    G = _gen(curve, g2)
    pts = [e(pe.multiply(G, k)) for k in (1, 2, 7)] + [e(pe.Z2 if g2 else pe.Z1)]
    arr = np.concatenate(pts)
    assert check(arr) == -1
    assert check(b"") == -1
    # random off-curve point: perturb y
    bad = pts[1].copy()
    bad[-curve.L] ^= np.uint64(1)
    assert check(np.concatenate([pts[0], bad, pts[2]])) == 1
    # non-canonical coordinate: x + q (in Montgomery form limbs) is the same residue but must be rejected
    L = curve.L
    p0 = pts[0].copy()
    x = sum(int(v) << (64 * i) for i, v in enumerate(p0[:L]))
    if x + curve.q < (1 << (64 * L)):
        p0[:L] = enc(x + curve.q, L)
        assert check(np.concatenate([pts[0], p0])) == 1
    with pytest.raises(ValueError, match="points"):
        check(arr[:-1])
