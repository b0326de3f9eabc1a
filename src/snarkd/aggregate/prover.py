"""The aggregate prover: n = 2^k Groth16 proofs of one key into one SnarkPack proof.

  1. commit to (A, B) and C under the SRS keys (v, w); absorb; draw r
  2. Z_AB = prod e(A_i, B_i)^(r^i) (as e(A_i, r^i B_i)), agg_C = sum r^i C_i; absorb
  3. GIPA (gipa.py) on A, B_i r^i, C, r^i with keys v and w_i r^-i (the rescaled (A, B) has the same
     commitment); absorb the final values; draw z
  4. KZG openings of the final keys at z (kzg.py)
"""

from __future__ import annotations

from snarkd.aggregate import gipa, kzg
from snarkd.aggregate.commitment import commit
from snarkd.aggregate.group import Group
from snarkd.aggregate.proof_format import AggregateProof
from snarkd.aggregate.srs import ProverKey, powers
from snarkd.aggregate.statement import VerifyingKey
from snarkd.aggregate.transcript import Transcript, statement_transcript


def absorb_commitments(t: Transcript, G: Group, values: list[bytes]) -> int:
    t.append("commitments", b"".join(G.gt_compress(v) for v in values))
    return t.scalar("r")


def absorb_finals(t: Transcript, points: list[bytes]) -> int:
    t.append("finals", b"".join(points))
    return t.scalar("z")


def aggregate(key: ProverKey, vk: VerifyingKey, public: list[list[int]], A: bytes, B: bytes, C: bytes,
              threads: int = 0, gpu=None) -> AggregateProof:
    """A, B, C: the n proofs' points concatenated (zkey layout); public: the n rows in proof order;
    gpu: a GpuDevice for the Miller loops (snarkd.gpu.device.get), None for the CPU only."""
    srs = key.srs
    curve = srs.curve
    G = Group(curve, threads, gpu)
    n, rmod = key.n, curve.r
    if len(public) != n or len(A) != n * G.g1_bytes or len(C) != n * G.g1_bytes or len(B) != n * G.g2_bytes:
        raise ValueError("aggregate: n proofs and n public rows expected")
    t = statement_transcript(curve.name, srs.id, vk.digest, n, public)
    com = commit(G, key.v1, key.v2, key.w1, key.w2, A, B, C)
    r = absorb_commitments(t, G, com.values())
    r_vec = powers(r, n, rmod)
    r_inv_vec = powers(pow(r, -1, rmod), n, rmod)
    B_r = G.scale_g2(B, r_vec)
    w1, w2 = G.scale_g1(key.w1, r_inv_vec), G.scale_g1(key.w2, r_inv_vec)
    (ml,) = G.miller(B_r, [A])
    ip_ab = G.final([ml])
    agg_c = G.msm_g1(C, r_vec)
    t.append("aggregated", G.gt_compress(ip_ab) + agg_c)
    res = gipa.prove(G, t, A, B_r, C, r_vec, key.v1, key.v2, w1, w2)
    finals = [res.final_a, res.final_b, res.final_c, res.final_v1, res.final_v2, res.final_w1, res.final_w2]
    z = absorb_finals(t, finals)
    xs = res.challenges
    # v keys: f_v over the G2 powers below n
    qv = kzg.quotient(kzg.v_coefficients(xs, rmod), z, rmod)
    pi_v1, pi_v2 = G.msm_g2(srs.g2_a[: n - 1], qv), G.msm_g2(srs.g2_b[: n - 1], qv)
    # w keys: f_w over the G1 powers below 2n - 1
    qw = kzg.quotient(kzg.w_coefficients(xs, n, pow(r, -1, rmod), rmod), z, rmod)
    pi_w1, pi_w2 = G.msm_g1(srs.g1_a[: 2 * n - 1], qw), G.msm_g1(srs.g1_b[: 2 * n - 1], qw)
    return AggregateProof(curve, n, com, ip_ab, agg_c, res.rounds, *finals, pi_v1, pi_v2, pi_w1, pi_w2)
