"""The native verifier against the py_ecc reference (agg_reference.py) on small n, valid and invalid."""

from __future__ import annotations

import dataclasses

import pytest

import agg_reference
import agg_synthetic as synthetic
from snarkd.aggregate import proof_format, prover, verifier
from snarkd.aggregate.srs import dev_srs
from snarkd.curves.params import BLS12_381, BN254

pytestmark = pytest.mark.slow


def both(curve, srs, st, n, raw: bytes, public) -> tuple[bool, bool]:
    try:
        native = verifier.verify(srs, st.vk, public, proof_format.from_bytes(curve, n, raw))
    except proof_format.NotCanonical:
        native = False
    vk = {"alpha": st.vk.alpha, "beta": st.vk.beta, "gamma": st.vk.gamma, "delta": st.vk.delta, "ic": list(st.vk.ic)}
    ref = agg_reference.Reference(curve).verify(list(srs.verifier_points()), vk, public, n, raw)
    return native, ref


@pytest.mark.parametrize("curve,n", [(BN254, 2), (BN254, 4), (BLS12_381, 2)], ids=["bn128-2", "bn128-4", "bls12381-2"])
def test_reference_agrees(curve, n):
    srs = dev_srs(curve, n, a=31, b=37)
    st = synthetic.make(curve, n, n_public=1, seed=n)
    agg = prover.aggregate(srs.specialize(n), st.vk, st.public, st.A, st.B, st.C)
    raw = agg.to_bytes()
    assert both(curve, srs, st, n, raw, st.public) == (True, True)
    # invalid: a public input changed; two rows swapped; a round's left and right swapped; a GT byte flipped
    pub = [row[:] for row in st.public]
    pub[-1][0] = (pub[-1][0] + 1) % curve.r
    assert both(curve, srs, st, n, raw, pub) == (False, False)
    assert both(curve, srs, st, n, raw, st.public[::-1]) == (False, False)
    r0 = dataclasses.replace(agg.rounds[0], left=agg.rounds[0].right, right=agg.rounds[0].left)
    assert both(curve, srs, st, n, dataclasses.replace(agg, rounds=[r0] + agg.rounds[1:]).to_bytes(), st.public) == (False, False)
    flipped = raw[:3] + bytes([raw[3] ^ 4]) + raw[4:]
    assert both(curve, srs, st, n, flipped, st.public) == (False, False)
