"""Aggregate and verify (native): valid aggregates verify; every soundness case of issue 27 is refused."""

from __future__ import annotations

import dataclasses
import random

import pytest

import agg_synthetic as synthetic
from snarkd.aggregate import proof_format, prover, verifier
from snarkd.aggregate.group import Group
from snarkd.aggregate.srs import dev_srs
from snarkd.curves.params import BLS12_381, BN254

CURVES = {"bn128": BN254, "bls12381": BLS12_381}


@pytest.fixture(scope="module", params=list(CURVES))
def setup(request):
    curve = CURVES[request.param]
    srs = dev_srs(curve, 8, a=1234567, b=7654321)
    st = synthetic.make(curve, 8, n_public=2, seed=3)
    return curve, srs, st


def proofs(st, n):
    G = Group(st.vk.curve)
    return st.A[: n * G.g1_bytes], st.B[: n * G.g2_bytes], st.C[: n * G.g1_bytes]


def make(srs, st, n, A=None, B=None, C=None, public=None):
    a, b, c = proofs(st, n)
    return prover.aggregate(srs.specialize(n), st.vk, public or st.public[:n], A or a, B or b, C or c)


def check(srs, st, agg, public=None, vk=None) -> bool:
    n = agg.n
    parsed = proof_format.from_bytes(agg.curve, n, agg.to_bytes())
    return verifier.verify(srs, vk or st.vk, public if public is not None else st.public[:n], parsed)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_valid_aggregates_verify(setup, n):
    curve, srs, st = setup
    agg = make(srs, st, n)
    assert len(agg.to_bytes()) == proof_format.proof_size(curve, n)
    assert check(srs, st, agg)


def replace(blob: bytes, i: int, size: int, new: bytes) -> bytes:
    return blob[: i * size] + new + blob[(i + 1) * size :]


def test_any_single_tampered_proof_is_refused(setup):
    curve, srs, st = setup
    G = Group(curve)
    n = 4
    a, b, c = proofs(st, n)
    g, h = G.generator_g1(), G.generator_g2()
    for i in range(n):
        bad_a = replace(a, i, G.g1_bytes, G.g1_add(a[i * G.g1_bytes : (i + 1) * G.g1_bytes], g))
        bad_b = replace(b, i, G.g2_bytes, G.g2_add(b[i * G.g2_bytes : (i + 1) * G.g2_bytes], h))
        bad_c = replace(c, i, G.g1_bytes, G.g1_add(c[i * G.g1_bytes : (i + 1) * G.g1_bytes], g))
        for A, B, C in ((bad_a, b, c), (a, bad_b, c), (a, b, bad_c)):
            assert not check(srs, st, make(srs, st, n, A, B, C)), i


def test_two_compensating_tampered_proofs_are_refused(setup):
    # C_0 + g and C_1 - r^-1 g would cancel in sum r^i C_i for a known r; r comes after the commitments
    curve, srs, st = setup
    G = Group(curve)
    a, b, c = proofs(st, 2)
    g = G.generator_g1()
    c0 = G.g1_add(c[: G.g1_bytes], g)
    c1 = G.g1_add(c[G.g1_bytes :], G.g1_neg(g))
    assert not check(srs, st, make(srs, st, 2, C=c0 + c1))


def test_changed_or_reordered_public_inputs_are_refused(setup):
    curve, srs, st = setup
    n = 4
    agg = make(srs, st, n)
    for i in range(n):
        for j in range(2):
            pub = [row[:] for row in st.public[:n]]
            pub[i][j] = (pub[i][j] + 1) % curve.r
            assert not check(srs, st, agg, public=pub), (i, j)
    swapped = [st.public[1], st.public[0]] + st.public[2:n]
    assert not check(srs, st, agg, public=swapped)
    inner = [row[::-1] for row in st.public[:n]]
    assert not check(srs, st, agg, public=inner)
    # the same residue plus r is another statement (snarkjs refuses values >= r)
    shifted = [row[:] for row in st.public[:n]]
    shifted[0][0] += curve.r
    assert not check(srs, st, agg, public=shifted)
    # the prover given the rows in another order than the proofs
    assert not check(srs, st, make(srs, st, n, public=swapped), public=swapped)


def test_proofs_of_another_key_are_refused(setup):
    curve, srs, st = setup
    G = Group(curve)
    other = synthetic.make(curve, 4, n_public=2, seed=99)
    n = 4
    a, b, c = proofs(st, n)
    # proof 2 (and its public row) from the other key, each valid under its own key
    A = replace(a, 2, G.g1_bytes, other.A[2 * G.g1_bytes : 3 * G.g1_bytes])
    B = replace(b, 2, G.g2_bytes, other.B[2 * G.g2_bytes : 3 * G.g2_bytes])
    C = replace(c, 2, G.g1_bytes, other.C[2 * G.g1_bytes : 3 * G.g1_bytes])
    pub = st.public[:2] + [other.public[2]] + st.public[3:n]
    assert not check(srs, st, make(srs, st, n, A, B, C, public=pub), public=pub)
    # an aggregate of the other key's proofs under this key
    agg_other = prover.aggregate(srs.specialize(n), other.vk, other.public[:n], *proofs(other, n))
    assert check(srs, other, agg_other)
    assert not check(srs, st, agg_other, public=other.public[:n])


def test_other_n_other_srs_other_transcript_are_refused(setup):
    curve, srs, st = setup
    agg8 = make(srs, st, 8)
    # n: the aggregate of 8 read as one of 4 does not even parse; with 4 public rows it does not verify
    with pytest.raises(Exception):
        proof_format.from_bytes(curve, 4, agg8.to_bytes())
    assert not verifier.verify(srs, st.vk, st.public[:4], agg8)
    # another SRS (other secrets)
    other_srs = dev_srs(curve, 8, a=42, b=43)
    assert not check(other_srs, st, agg8)
    # transcript: a round's values swapped, a round's ZC values swapped, rounds reordered
    rounds = agg8.rounds
    r0 = dataclasses.replace(rounds[0], left=rounds[0].right, right=rounds[0].left)
    assert not check(srs, st, dataclasses.replace(agg8, rounds=[r0] + rounds[1:]))
    r0 = dataclasses.replace(rounds[0], zc_left=rounds[0].zc_right, zc_right=rounds[0].zc_left)
    assert not check(srs, st, dataclasses.replace(agg8, rounds=[r0] + rounds[1:]))
    assert not check(srs, st, dataclasses.replace(agg8, rounds=[rounds[1], rounds[0], rounds[2]]))
    # the final values and openings, each swapped with another of its group
    for f1, f2 in (("final_a", "final_c"), ("final_v1", "final_v2"), ("final_w1", "final_w2"), ("pi_v1", "pi_v2"),
                   ("pi_w1", "pi_w2"), ("final_a", "agg_c")):
        bad = dataclasses.replace(agg8, **{f1: getattr(agg8, f2), f2: getattr(agg8, f1)})
        assert not check(srs, st, bad), f1
    # the commitments
    com = dataclasses.replace(agg8.com, tab=agg8.com.uab, uab=agg8.com.tab)
    assert not check(srs, st, dataclasses.replace(agg8, com=com))
    assert not check(srs, st, dataclasses.replace(agg8, ip_ab=agg8.com.tc))


def test_non_canonical_and_off_group_encodings_are_refused(setup):
    curve, srs, st = setup
    G = Group(curve)
    raw = make(srs, st, 2).to_bytes()
    n8, q = curve.n8q, curve.q
    t, g1 = G.gt_bytes, G.g1_bytes
    agg_c_at = 5 * t

    def with_coord(blob: bytes, at: int, value: int) -> bytes:
        return blob[:at] + value.to_bytes(n8, "little") + blob[at + n8 :]

    # a GT coordinate and a point coordinate >= q, holding the same residue where it fits
    for at in (0, agg_c_at):
        v = int.from_bytes(raw[at : at + n8], "little")
        if v + q < 1 << (8 * n8):
            with pytest.raises(proof_format.NotCanonical):
                proof_format.from_bytes(curve, 2, with_coord(raw, at, v + q))
        with pytest.raises(proof_format.NotCanonical):
            proof_format.from_bytes(curve, 2, with_coord(raw, at, (1 << (8 * n8)) - 1))
    # a point off the curve (y + 1)
    y = int.from_bytes(raw[agg_c_at + n8 : agg_c_at + 2 * n8], "little")
    with pytest.raises(proof_format.NotCanonical):
        proof_format.from_bytes(curve, 2, with_coord(raw, agg_c_at + n8, (y + curve.rq) % q))
    if curve is BLS12_381:  # G1 has a cofactor: a curve point outside the order-r subgroup
        rnd = random.Random(5)
        while True:
            x = rnd.randrange(q)
            yy = (x**3 + 4) % q
            yv = pow(yy, (q + 1) // 4, q)
            if yv * yv % q == yy:
                break
        pt = (x * curve.rq % q).to_bytes(n8, "little") + (yv * curve.rq % q).to_bytes(n8, "little")
        assert G.pair.g1_on_curve(pt) and not G.g1_valid(pt)
        with pytest.raises(proof_format.NotCanonical):
            proof_format.from_bytes(curve, 2, raw[:agg_c_at] + pt + raw[agg_c_at + g1 :])


def test_mutated_aggregates_are_never_accepted(setup):
    """A small mutation fuzz (the 10,000-case run is tests/aggregate/test_fuzz.py, slow)."""
    curve, srs, st = setup
    agg = make(srs, st, 2)
    raw = agg.to_bytes()
    rnd = random.Random(11)
    for _ in range(40):
        blob = bytearray(raw)
        for _ in range(rnd.randrange(1, 4)):
            blob[rnd.randrange(len(blob))] ^= 1 << rnd.randrange(8)
        try:
            parsed = proof_format.from_bytes(curve, 2, bytes(blob))
        except proof_format.NotCanonical:
            continue
        assert not verifier.verify(srs, st.vk, st.public[:2], parsed)
