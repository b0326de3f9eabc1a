"""The aggregate verifier.

Replays the transcript (statement, commitments -> r, Z_AB and agg_C, each round -> x_j, finals -> z),
folds every committed value through the rounds (V <- V^x L^(x^2) R; ZC <- x ZC + x^2 ZC_L + ZC_R),
then checks, as one random linear combination of pairing equations (one Miller loop, one final
exponentiation; the coefficients from the OS's secure RNG):

    e(A*, B*) = Z_AB*             e(A*, v1*) e(w1*, B*) = T_AB*     e(A*, v2*) e(w2*, B*) = U_AB*
    e(C*, v1*) = T_C*             e(C*, v2*) = U_C*
    KZG: e(g, v* - f_v(z) h) e(z g - [s]_1, pi_v) = 1,  e(w* - f_w(z) g, h) e(pi_w, z h - [s]_2) = 1  (s = a, b)
    Groth16: Z_AB = e(alpha, beta)^(sum r^i) e(sum r^i P_i, gamma) e(agg_C, delta)
             (P_i = IC_0 + sum_j public_ij IC_j)
and in G1: ZC* = f_v(r) C*.
"""

from __future__ import annotations

import secrets

from snarkd.aggregate import gipa, kzg
from snarkd.aggregate.group import Group
from snarkd.aggregate.proof_format import AggregateProof
from snarkd.aggregate.prover import absorb_commitments, absorb_finals
from snarkd.aggregate.srs import AggregationSRS
from snarkd.aggregate.statement import VerifyingKey
from snarkd.aggregate.transcript import public_bytes, statement_transcript


def verify(srs: AggregationSRS, vk: VerifyingKey, public: list[list[int]], agg: AggregateProof, threads: int = 0) -> bool:
    curve = srs.curve
    if vk.curve is not curve or agg.curve is not curve:
        return False
    n, rmod = agg.n, curve.r
    width = vk.n_public
    if n < 2 or n & (n - 1) or len(public) != n or any(len(row) != width for row in public):
        return False
    if any(not 0 <= v < rmod for row in public for v in row):  # as snarkjs: a public value >= r is invalid
        return False
    if len(agg.rounds) != n.bit_length() - 1:
        return False
    G = Group(curve, threads)
    packed = public_bytes(public)
    t = statement_transcript(curve.name, srs.id, vk.digest, n, public, packed)
    com = agg.com
    r = absorb_commitments(t, G, com.values())
    t.append("aggregated", G.gt_compress(agg.ip_ab) + agg.agg_c)
    xs = [gipa.absorb_round(t, G, rnd, j) for j, rnd in enumerate(agg.rounds)]
    finals = [agg.final_a, agg.final_b, agg.final_c, agg.final_v1, agg.final_v2, agg.final_w1, agg.final_w2]
    z = absorb_finals(t, finals)

    # Exponents of each committed value's fold: V* = V^(prod x) * prod_j (L_j^(x_j^2) R_j)^(prod_{i>j} x_i)
    k = len(xs)
    after = [1] * (k + 1)  # after[j] = prod_{i >= j} x_i
    for j in range(k - 1, -1, -1):
        after[j] = after[j + 1] * xs[j] % rmod
    start_exp = after[0]
    left_exp = [xs[j] * xs[j] % rmod * after[j + 1] % rmod for j in range(k)]
    right_exp = [after[j + 1] for j in range(k)]

    # ZC* in G1
    zc_points = agg.agg_c + b"".join(rnd.zc_left + rnd.zc_right for rnd in agg.rounds)
    zc_scalars = [start_exp] + [e for j in range(k) for e in (left_exp[j], right_exp[j])]
    zc_final = G.msm_g1(zc_points, zc_scalars)
    r_final = kzg.v_eval(xs, n, r, rmod)
    if G.g1_mul(agg.final_c, r_final) != zc_final:
        return False

    # The pairing equations, each with a random 128-bit coefficient rho.
    g, h, a1, b1, a2, b2 = srs.verifier_points()
    yv = kzg.v_eval(xs, n, z, rmod)
    yw = kzg.w_eval(xs, n, z, pow(r, -1, rmod), rmod)
    r_sum = (pow(r, n, rmod) - 1) * pow(r - 1, -1, rmod) % rmod  # r != 1 (transcript.scalar)
    p_pub = _public_combination(G, vk, packed, r, r_sum)
    A, B, C, v1, v2, w1, w2 = finals
    m1, m2 = G.msm_g1, G.msm_g2  # small linear combinations (one native call each)
    equations = [  # (G1 points, G2 points, the folded target, or None for 1)
        ([A], [B], "zab"),
        ([A, w1], [v1, B], "tab"),
        ([A, w2], [v2, B], "uab"),
        ([C], [v1], "tc"),
        ([C], [v2], "uc"),
        ([g, m1(g + a1, [z, rmod - 1])], [m2(v1 + h, [1, rmod - yv]), agg.pi_v1], None),
        ([g, m1(g + b1, [z, rmod - 1])], [m2(v2 + h, [1, rmod - yv]), agg.pi_v2], None),
        ([m1(w1 + g, [1, rmod - yw]), agg.pi_w1], [h, m2(h + a2, [z, rmod - 1])], None),
        ([m1(w2 + g, [1, rmod - yw]), agg.pi_w2], [h, m2(h + b2, [z, rmod - 1])], None),
        ([vk.alpha, p_pub, agg.agg_c], [vk.beta, vk.gamma, vk.delta], "ip"),  # alpha's coefficient: r_sum
    ]
    rhos = [1 + secrets.randbits(128) for _ in equations]
    g1_all, g2_all, g1_scalars = [], [], []
    bases, exps = [], []
    folded = {"tab": 0, "uab": 1, "tc": 2, "uc": 3, "zab": 4}
    for (ps, qs, target), rho in zip(equations, rhos):
        g1_all += ps
        g2_all += qs
        g1_scalars += [rho] * len(ps)
        if target == "ip":
            g1_scalars[-3] = rho * r_sum % rmod
            bases.append(agg.ip_ab)
            exps.append(rho)
        elif target is not None:
            i = folded[target]
            start = agg.ip_ab if target == "zab" else com.values()[i]
            bases.append(start)
            exps.append(rho * start_exp % rmod)
            for j, rnd in enumerate(agg.rounds):
                bases += [rnd.left.values()[i], rnd.right.values()[i]]
                exps += [rho * left_exp[j] % rmod, rho * right_exp[j] % rmod]
    scaled = G.scale_g1(b"".join(g1_all), g1_scalars)
    (ml,) = G.miller(b"".join(g2_all), [scaled])
    lhs = G.final([ml])
    rhs = G.gt_multi_exp(bases, exps)
    return G.agg.gt_eq(lhs, rhs)


def _public_combination(G: Group, vk: VerifyingKey, packed: bytes, r: int, r_sum: int) -> bytes:
    """sum_i r^i P_i = r_sum IC_0 + sum_j (sum_i r^i public_ij) IC_j (the column sums natively, by Horner)."""
    sums = G.agg.fr_horner(packed, vk.n_public, G.fr(r))
    scalars = [r_sum] + [int.from_bytes(sums[32 * j : 32 * (j + 1)], "little") for j in range(vk.n_public)]
    return G.msm_g1(b"".join(vk.ic), scalars)
