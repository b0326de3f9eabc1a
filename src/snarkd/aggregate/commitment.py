"""The commitments of SnarkPack (doubly homomorphic, to vectors of proof points).

For keys v = (v1, v2) (G2 vectors, paired with G1 vectors) and w = (w1, w2) (G1 vectors, paired with
G2 vectors):

    pair commitment of (A, B):  T = prod e(A_i, v1_i) e(w1_i, B_i),   U = the same with v2, w2
    single commitment of C:     (prod e(C_i, v1_i), prod e(C_i, v2_i))
    inner product of (A, B):    Z = prod e(A_i, B_i)

`commit` (and `commit_many`, for several at once) computes them together: every G2 point's Miller lines
are computed once and applied to each G1 point paired with it (snarkd.native._aggregate.miller_products,
or the GPU's: Group.miller_many), and each product gets one final exponentiation.
"""

from __future__ import annotations

from dataclasses import dataclass

from snarkd.aggregate.group import Group


@dataclass
class Commitments:
    tab: bytes  # T of (A, B): Fp12
    uab: bytes  # U of (A, B)
    tc: bytes  # T of C
    uc: bytes  # U of C
    zab: bytes | None = None  # prod e(A_i, B_i), when asked for

    def values(self) -> list[bytes]:
        return [self.tab, self.uab, self.tc, self.uc] + ([self.zab] if self.zab is not None else [])


def commit(G: Group, v1, v2, w1, w2, A, B, C, with_z: bool = False) -> Commitments:
    return commit_many(G, [(v1, v2, w1, w2, A, B, C, with_z)])[0]


def commit_many(G: Group, specs: list[tuple]) -> list[Commitments]:
    """commit(G, *spec) for each spec (v1, v2, w1, w2, A, B, C, with_z), their Miller loops in one
    Group.miller_many call (one GPU launch for a GIPA round's left and right commitments)."""
    jobs = []
    for v1, v2, w1, w2, A, B, C, with_z in specs:
        jobs += [(v1, [A, C]), (v2, [A, C]), (B, [w1, w2, A] if with_z else [w1, w2])]
    values = G.miller_many(jobs)
    out = []
    for j, spec in enumerate(specs):
        (av1, cv1), (av2, cv2), on_b = values[3 * j : 3 * j + 3]
        out.append(Commitments(tab=G.final([av1, on_b[0]]), uab=G.final([av2, on_b[1]]), tc=G.final([cv1]),
                               uc=G.final([cv2]), zab=G.final([on_b[2]]) if spec[-1] else None))
    return out
