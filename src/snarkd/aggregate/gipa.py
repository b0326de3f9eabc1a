"""The GIPA rounds of TIPP (for A, B) and MIPP (for C), run together on one transcript.

Vectors A (G1), B (G2, already B_i r^i), C (G1), the scalars r^i, keys v = (v1, v2) (G2) and
w = (w1, w2) (G1, already w_i r^-i); each round halves them (L = first half, R = second):

  messages  (T, U, TC, UC, Z)_L = commitments of (A_R, B_L, C_R) under (v_L, w_R), Z_L = e(A_R, B_L)
            (T, U, TC, UC, Z)_R = the same of (A_L, B_R, C_L) under (v_R, w_L)
            ZC_L = <C_R, r_L>, ZC_R = <C_L, r_R>
  challenge x (128 bits), then
            A <- A_L + x A_R    C <- C_L + x C_R    w <- w_L + x w_R
            B <- x B_L + B_R    v <- x v_L + v_R    r <- x r_L + r_R
  so that every committed value V folds as V <- V^x L^(x^2) R (additively for ZC): a G1 vector is
  multiplied by the short x, a G2 vector too, and no inverse of x is needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from snarkd.aggregate.commitment import Commitments, commit_many
from snarkd.aggregate.group import Group
from snarkd.aggregate.transcript import Transcript


@dataclass
class Round:
    left: Commitments  # with zab
    right: Commitments
    zc_left: bytes  # G1
    zc_right: bytes

    def gt_values(self) -> list[bytes]:
        return self.left.values() + self.right.values()


@dataclass
class GipaResult:
    rounds: list[Round] = field(default_factory=list)
    challenges: list[int] = field(default_factory=list)
    final_a: bytes = b""
    final_b: bytes = b""
    final_c: bytes = b""
    final_v1: bytes = b""
    final_v2: bytes = b""
    final_w1: bytes = b""
    final_w2: bytes = b""


def absorb_round(t: Transcript, G: Group, rnd: Round, j: int) -> int:
    """Absorb a round's messages; its challenge x."""
    t.append(f"round {j}", b"".join(G.gt_compress(v) for v in rnd.gt_values()) + rnd.zc_left + rnd.zc_right)
    return t.short(f"x {j}")


def prove(G: Group, t: Transcript, A: bytes, B: bytes, C: bytes, r_vec: list[int], v1, v2, w1, w2) -> GipaResult:
    g1, g2 = G.g1_bytes, G.g2_bytes
    out = GipaResult()
    n = len(r_vec)
    j = 0
    while n > 1:
        m = n // 2

        def halves(x: bytes, size: int):
            return x[: m * size], x[m * size :]

        aL, aR = halves(A, g1)
        cL, cR = halves(C, g1)
        bL, bR = halves(B, g2)
        v1L, v1R = halves(v1, g2)
        v2L, v2R = halves(v2, g2)
        w1L, w1R = halves(w1, g1)
        w2L, w2R = halves(w2, g1)
        rL, rR = r_vec[:m], r_vec[m:]
        left, right = commit_many(G, [(v1L, v2L, w1R, w2R, aR, bL, cR, True),
                                      (v1R, v2R, w1L, w2L, aL, bR, cL, True)])
        rnd = Round(left=left, right=right, zc_left=G.msm_g1(cR, rL), zc_right=G.msm_g1(cL, rR))
        x = absorb_round(t, G, rnd, j)
        out.rounds.append(rnd)
        out.challenges.append(x)
        A, C = G.fold_g1(aL, aR, x), G.fold_g1(cL, cR, x)
        w1, w2 = G.fold_g1(w1L, w1R, x), G.fold_g1(w2L, w2R, x)
        B = G.fold_g2(bR, bL, x)
        v1, v2 = G.fold_g2(v1R, v1L, x), G.fold_g2(v2R, v2L, x)
        r_vec = [(x * a + b) % G.r for a, b in zip(rL, rR)]
        n, j = m, j + 1
    out.final_a, out.final_b, out.final_c = A, B, C
    out.final_v1, out.final_v2, out.final_w1, out.final_w2 = v1, v2, w1, w2
    return out
