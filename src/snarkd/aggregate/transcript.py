"""The Fiat-Shamir transcript of an aggregate: one running SHA-256 that absorbs, in order, what
the statement is (curve, SRS identity, verification key, n, every public input) and then each
prover message; every challenge is derived from all that came before it and is absorbed back.

Challenges: `scalar` (uniform mod r from 512 hash bits: the random combination r and the KZG
point z) and `short` (128 bits: the GIPA folding challenges, so that rescaling a vector by x
costs half a full scalar multiplication; a 2^-128 chance per round of a lucky challenge).
Both are nonzero (and r is never 1), so every challenge used as an inverse has one.
"""

from __future__ import annotations

import hashlib

DOMAIN = b"snarkd/snarkpack/v1"


class Transcript:
    def __init__(self, r: int):
        self.r = r
        self._state = hashlib.sha256(DOMAIN).digest()

    def append(self, label: str, data: bytes) -> None:
        tag = label.encode()
        self._state = hashlib.sha256(
            b"".join([self._state, len(tag).to_bytes(4, "little"), tag, len(data).to_bytes(8, "little"), data])
        ).digest()

    def _draw(self, label: str, counter: int) -> bytes:
        return hashlib.sha512(b"".join([self._state, b"challenge", label.encode(), counter.to_bytes(4, "little")])).digest()

    def scalar(self, label: str) -> int:
        counter = 0
        while True:
            c = int.from_bytes(self._draw(label, counter), "little") % self.r
            if c > 1:
                break
            counter += 1
        self.append(label, c.to_bytes(32, "little"))
        return c

    def short(self, label: str) -> int:
        counter = 0
        while True:
            c = int.from_bytes(self._draw(label, counter)[:16], "little")
            if c != 0:
                break
            counter += 1
        self.append(label, c.to_bytes(16, "little"))
        return c


def public_bytes(publics: list[list[int]]) -> bytes:
    """The public inputs, row after row, each 32 bytes little-endian (as the transcript absorbs them)."""
    return b"".join(v.to_bytes(32, "little") for row in publics for v in row)


def statement_transcript(curve_name: str, srs_id: bytes, vk_digest: bytes, n: int, publics: list[list[int]],
                         packed: bytes | None = None) -> Transcript:
    """The transcript bound to the statement: the curve, the SRS, the key, n and the public inputs in order
    (packed: public_bytes(publics), when the caller has it already)."""
    from snarkd.curves.params import curve_by_name

    t = Transcript(curve_by_name(curve_name).r)
    t.append("curve", curve_name.encode())
    t.append("srs", srs_id)
    t.append("vk", vk_digest)
    n_public = len(publics[0]) if publics else 0
    t.append("n", n.to_bytes(8, "little") + n_public.to_bytes(8, "little"))
    t.append("public", packed if packed is not None else public_bytes(publics))
    return t
