"""The native kernels of aggregation (snarkd.native._aggregate) against the pairing module and MSMs."""

from __future__ import annotations

import random

import pytest

from snarkd.aggregate.group import Group
from snarkd.curves.params import BLS12_381, BN254


@pytest.fixture(params=[BN254, BLS12_381], ids=["bn128", "bls12381"])
def G(request):
    return Group(request.param)


def points(G: Group, count: int, seed: int):
    rnd = random.Random(seed)
    g, h = G.generator_g1(), G.generator_g2()
    P = [G.g1_mul(g, rnd.randrange(1, G.r)) for _ in range(count)]
    Q = [G.g2_mul(h, rnd.randrange(1, G.r)) for _ in range(count)]
    return P, Q


def test_miller_products_match_multi_pairing(G):
    P, Q = points(G, 5, 1)
    P[2] = bytes(G.g1_bytes)  # infinity contributes 1
    Q[3] = bytes(G.g2_bytes)
    P2 = P[::-1]
    f1, f2 = G.miller(b"".join(Q), [b"".join(P), b"".join(P2)])
    assert G.final([f1]) == G.pair.multi_pairing(P, Q)
    assert G.final([f2]) == G.pair.multi_pairing(P2, Q)
    assert G.final([f1, f2]) == G.pair.multi_pairing(P + P2, Q + Q)


def test_miller_products_over_many_chunks(G):
    # more pairs than one chunk (64): the per-thread accumulators are multiplied
    P, Q = points(G, 3, 2)
    n = 150
    PP, QQ = [P[i % 3] for i in range(n)], [Q[(i // 3) % 3] for i in range(n)]
    (f,) = G.miller(b"".join(QQ), [b"".join(PP)])
    assert G.final([f]) == G.pair.multi_pairing(PP, QQ)


@pytest.mark.parametrize("group", ["g1", "g2"])
def test_fold_and_scale_match_msm(G, group):
    P, Q = points(G, 4, 3)
    pts, size = (P, G.g1_bytes) if group == "g1" else (Q, G.g2_bytes)
    msm = G.msm_g1 if group == "g1" else G.msm_g2
    fold = G.fold_g1 if group == "g1" else G.fold_g2
    scale = G.scale_g1 if group == "g1" else G.scale_g2
    inf = bytes(size)
    left = [pts[0], inf, pts[2], pts[0]]
    right = [pts[1], pts[3], inf, pts[0]]  # last: left == right, x = 1 -> a doubling
    for x in (1, 2**128 - 1, G.r - 1, random.Random(4).randrange(G.r)):
        out = fold(b"".join(left), b"".join(right), x)
        for i in range(4):
            want = msm(left[i] + right[i], [1, x]) if left[i] != inf and right[i] != inf else (
                left[i] if right[i] == inf else msm(right[i], [x]))
            assert out[i * size : (i + 1) * size] == want, (x, i)
    scalars = [0, 1, G.r - 1, 12345]
    out = scale(b"".join(pts), scalars)
    for i, s in enumerate(scalars):
        assert out[i * size : (i + 1) * size] == (msm(pts[i], [s]) if s else inf)


def test_gt_encoding_round_trip_and_refusals(G):
    P, Q = points(G, 2, 5)
    f = G.pair.multi_pairing(P, Q)
    g = G.gt_compress(f)
    assert len(g) == G.gt_bytes
    assert G.gt_decompress(g) == f
    assert G.gt_compress(G.gt_one()) == bytes(G.gt_bytes)
    assert G.gt_decompress(bytes(G.gt_bytes)) == G.gt_one()
    n8 = G.curve.n8q
    # a coordinate >= p (the same residue + p) is not canonical
    c0 = int.from_bytes(g[:n8], "little")
    if c0 + G.curve.q < 1 << (8 * n8):
        assert G.gt_decompress((c0 + G.curve.q).to_bytes(n8, "little") + g[n8:]) is None
    # values that are no encoding of a cyclotomic element
    rnd = random.Random(6)
    refused = 0
    for _ in range(20):
        junk = b"".join((rnd.randrange(G.curve.q) * G.curve.rq % G.curve.q).to_bytes(n8, "little") for _ in range(6))
        # a random Fp6 value is the encoding of a norm-1 element, cyclotomic only by chance
        refused += G.gt_decompress(junk) is None
    assert refused == 20
    minus_one = ((G.curve.q - 1) * G.curve.rq % G.curve.q).to_bytes(n8, "little") + bytes(11 * n8)
    with pytest.raises(ValueError):
        G.gt_compress(minus_one)  # c1 = 0 and not 1: -1 has no encoding (it is not in GT)


def test_gt_multi_exp_matches_pow(G):
    P, Q = points(G, 3, 7)
    bases = [G.pair.pairing(p, q) for p, q in zip(P, Q)]
    rnd = random.Random(8)
    exps = [0, 1, G.r - 1] + [rnd.randrange(G.r) for _ in range(3)]
    bases = bases + bases
    want = G.gt_one()
    for b, e in zip(bases, exps):
        want = G.pair.fp12_mul(want, G.pair.fp12_pow(b, e.to_bytes(32, "little")))
    assert G.gt_multi_exp(bases, exps) == want


def test_gt_multi_exp_any_256_bit_exponent(G):
    """The native multi-exponentiation takes any 32-byte exponent (its width-5 NAFs carry into a
    257th digit): runs of ones across limbs, the top bit, 2^256 - 1; 30 bases, so two threads
    each take a share."""
    P, Q = points(G, 3, 9)
    vals = [G.pair.pairing(p, q) for p, q in zip(P, Q)]
    rnd = random.Random(10)
    exps = [2**256 - 1, 2**255, 2**128 - 1, (2**64 - 1) << 64, int("01" * 128, 2), int("10" * 128, 2), 0, 1, 15, 17]
    exps += [rnd.randrange(2**256) for _ in range(20)]
    bases = [vals[i % 3] for i in range(len(exps))]
    raw = b"".join(e.to_bytes(32, "little") for e in exps)
    want = G.gt_one()
    for b, e in zip(bases, exps):
        want = G.pair.fp12_mul(want, G.pair.fp12_pow(b, e.to_bytes(32, "little")))
    for threads in (1, 2):
        assert G.agg.gt_multi_exp(bases, raw, threads) == want


def test_fr_horner_matches_python(G):
    rnd = random.Random(9)
    rows, width = 37, 3
    values = [[rnd.randrange(G.r) for _ in range(width)] for _ in range(rows)]
    x = rnd.randrange(G.r)
    packed = b"".join(v.to_bytes(32, "little") for row in values for v in row)
    out = G.agg.fr_horner(packed, width, G.fr(x))
    for j in range(width):
        want = sum(pow(x, i, G.r) * values[i][j] for i in range(rows)) % G.r
        assert int.from_bytes(out[32 * j : 32 * (j + 1)], "little") == want
    assert G.agg.fr_horner(b"", 0, G.fr(x)) == b""
