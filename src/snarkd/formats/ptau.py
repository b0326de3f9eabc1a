"""snarkjs powers-of-tau files (.ptau), memory-mapped, for the aggregation SRS.

A .ptau is a binfileutils container (formats/binfile.py), magic "ptau", version 1:
  1 header: n8 (u32, bytes per base-field element), q (n8 bytes), power (u32), ceremony power (u32)
  2 tauG1:      2^(power+1) - 1 G1 points [tau^i]_1
  3 tauG2:      2^power G2 points [tau^i]_2
  4 alphaTauG1, 5 betaTauG1: 2^power G1 points each; 6 betaG2: one G2 point
  7 contributions; 12..16 (after `powersoftau prepare phase2`) Lagrange forms, not read here.
Points are affine, little-endian Montgomery, exactly the layout of zkey sections and of
snarkd.native._pairing, so they are handed out as zero-copy numpy views.

This module reads and checks the layout only (sizes, curve); whether the points are on the curve
and powers of one tau is snarkd.verifier.ptau_check (it needs the pairing).
"""

from __future__ import annotations

from pathlib import Path
from typing import Self

import numpy as np

from snarkd.curves.params import CURVES, Curve
from snarkd.errors import FormatError
from snarkd.formats.binfile import SECTION_NAMES, BinFile, u32

PTAU_MAGIC = b"ptau"
PTAU_VERSIONS = (1,)
HEADER, TAU_G1, TAU_G2, ALPHA_TAU_G1, BETA_TAU_G1, BETA_G2 = 1, 2, 3, 4, 5, 6
SECTION_NAMES[PTAU_MAGIC] = {1: "header", 2: "tauG1", 3: "tauG2", 4: "alphaTauG1", 5: "betaTauG1", 6: "betaG2",
                             7: "contributions", 12: "lagrange G1", 13: "lagrange G2", 14: "lagrange alphaG1",
                             15: "lagrange betaG1", 16: "phase2 preparation"}
MAX_POWER = 28  # snarkjs's largest ceremony (2^28)


def _curve_of(n8: int, q: int) -> Curve | None:
    for c in CURVES:
        if c.n8q == n8 and c.q == q:
            return c
    return None


class Ptau:
    """An open .ptau file (see read_ptau). Use as a context manager, or close()."""

    def __init__(self, path: Path, file: BinFile, curve: Curve, power: int):
        self.path = path
        self.file = file
        self.curve = curve
        self.power = power
        self.g1_bytes = 2 * curve.n8q
        self.g2_bytes = 4 * curve.n8q
        self.n_g1 = (1 << (power + 1)) - 1  # what the file holds
        self.n_g2 = 1 << power

    def _points(self, sid: int, count: int, held: int, size: int, what: str) -> np.ndarray:
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"count must be a non-negative int, got {count!r}")
        if count > held:
            raise FormatError(self.path, f"{count} {what} powers asked for, but the file holds {held} "
                                         f"(power {self.power})", section=self.file.label(sid))
        view = self.file.section(sid)
        return np.frombuffer(view, dtype=np.uint8, count=count * size).reshape(count, size)

    def tau_g1(self, count: int) -> np.ndarray:
        """[tau^i]_1 for i < count: uint8 (count, G1 bytes), a read-only view of the mapping."""
        return self._points(TAU_G1, count, self.n_g1, self.g1_bytes, "G1")

    def tau_g2(self, count: int) -> np.ndarray:
        """[tau^i]_2 for i < count: uint8 (count, G2 bytes)."""
        return self._points(TAU_G2, count, self.n_g2, self.g2_bytes, "G2")

    def close(self) -> None:
        self.file.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Ptau({str(self.path)!r}, {self.curve.name}, power {self.power})"


def read_ptau(path) -> Ptau:
    """Open and check the layout of a snarkjs .ptau; InputError (FormatError) naming the file and
    section on anything malformed: wrong magic or version, truncated, a header that is not one of
    snarkd's curves, a point section whose size does not match the power."""
    path = Path(path)
    f = BinFile.open(path, PTAU_MAGIC, PTAU_VERSIONS)
    try:
        for sid in (HEADER, TAU_G1, TAU_G2):
            if not f.has(sid):
                raise FormatError(path, "section missing", section=f.label(sid))
        hdr = f.section(HEADER)
        if len(hdr) < 4:
            raise FormatError(path, f"header of {len(hdr)} bytes is too short", section=f.label(HEADER))
        n8 = u32(hdr, 0)
        if n8 not in {c.n8q for c in CURVES} or len(hdr) != 4 + n8 + 8:
            raise FormatError(path, f"header: field size n8 = {n8} with a {len(hdr)}-byte header is not bn128's "
                                    "or bls12381's", section=f.label(HEADER))
        q = int.from_bytes(bytes(hdr[4 : 4 + n8]), "little")
        curve = _curve_of(n8, q)
        if curve is None:
            raise FormatError(path, f"header: prime {q} is not bn128's or bls12381's", section=f.label(HEADER))
        power = u32(hdr, 4 + n8)
        if not 1 <= power <= MAX_POWER:
            raise FormatError(path, f"header: power {power} is outside 1..{MAX_POWER}", section=f.label(HEADER))
        ptau = Ptau(path, f, curve, power)
        expect = {TAU_G1: ptau.n_g1 * ptau.g1_bytes, TAU_G2: ptau.n_g2 * ptau.g2_bytes,
                  ALPHA_TAU_G1: ptau.n_g2 * ptau.g1_bytes, BETA_TAU_G1: ptau.n_g2 * ptau.g1_bytes,
                  BETA_G2: ptau.g2_bytes}
        for sid, size in expect.items():
            if (sid in (TAU_G1, TAU_G2) or f.has(sid)) and f.size(sid) != size:
                raise FormatError(path, f"{f.size(sid)} bytes, expected {size} for power {power}", section=f.label(sid))
        return ptau
    except BaseException:
        f.close()
        raise
