"""Streaming writer for snarkjs Groth16 .zkey files (version 1, protocol 1).

The layout is the one `snarkjs groth16 setup` writes, byte for byte (see
docs in formats/zkey.py and the notes on snarkjs formats):

  magic "zkey", u32 version 1, u32 10 sections, then sections in the order
  snarkjs's zkey_new.js writes them: 1, 2, 4, 3, 9, 8, 5, 6, 7, 10.

Each section's size is declared before its payload, so the writer must be told
the size up front (`begin_section`) and then fed exactly that many bytes in any
number of chunks. Output goes to a temporary file renamed over the target on
success (snarkd.atomic), so a reader never sees a half-written key.
"""

from __future__ import annotations

import os
import struct
from contextlib import ExitStack

from snarkd.atomic import atomic_open
from snarkd.curves.params import Curve
from snarkd.formats.zkey_layout import MAGIC, VERSIONS

VERSION = VERSIONS[-1]
N_SECTIONS = 10
GROTH16 = 1
# The order of `snarkjs groth16 setup` (zkey_new.js).
SNARKJS_SECTION_ORDER = (1, 2, 4, 3, 9, 8, 5, 6, 7, 10)
COEF_ENTRY_HEAD = 12  # u32 matrix, u32 constraint, u32 signal (then n8r value bytes)


class ZkeyWriter:
    """Context manager: `with ZkeyWriter(path) as w: w.begin_section(...); w.write(...); w.end_section()`."""

    def __init__(self, path: str | os.PathLike, n_sections: int = N_SECTIONS, buffering: int = 1 << 20):
        self.path = str(path)
        self.n_sections = n_sections
        self._buffering = buffering
        self._stack: ExitStack | None = None
        self._fh = None
        self._sid: int | None = None
        self._left = 0
        self._written_sections: list[int] = []

    def __enter__(self) -> "ZkeyWriter":
        self._stack = ExitStack()
        self._fh = self._stack.enter_context(atomic_open(self.path, "wb"))
        _chmod_default(self._fh.fileno())
        self._fh.write(MAGIC + struct.pack("<II", VERSION, self.n_sections))
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            err = None
            if self._sid is not None:
                err = RuntimeError(f"zkey writer: section {self._sid} left open with {self._left} bytes missing")
            elif len(self._written_sections) != self.n_sections:
                err = RuntimeError(f"zkey writer: wrote {len(self._written_sections)} sections, declared {self.n_sections}")
            if err is not None:
                self._stack.__exit__(type(err), err, None)  # removes the temporary file
                raise err
        return self._stack.__exit__(exc_type, exc, tb)

    def begin_section(self, sid: int, size: int) -> None:
        if self._sid is not None:
            raise RuntimeError(f"zkey writer: section {self._sid} still open")
        if sid in self._written_sections:
            raise RuntimeError(f"zkey writer: section {sid} written twice")
        self._fh.write(struct.pack("<IQ", sid, size))
        self._sid = sid
        self._left = size

    def write(self, data) -> None:
        mv = memoryview(data).cast("B")
        if len(mv) > self._left:
            raise RuntimeError(f"zkey writer: section {self._sid} overflows its declared size by {len(mv) - self._left} bytes")
        self._fh.write(mv)
        self._left -= len(mv)

    def end_section(self) -> None:
        if self._left:
            raise RuntimeError(f"zkey writer: section {self._sid} is {self._left} bytes short of its declared size")
        self._written_sections.append(self._sid)
        self._sid = None

    def section(self, sid: int, payload) -> None:
        """A whole section at once."""
        mv = memoryview(payload).cast("B")
        self.begin_section(sid, len(mv))
        self.write(mv)
        self.end_section()


def _chmod_default(fd: int) -> None:
    """mkstemp creates 0600; give the key the mode a plain open() would (0666 & ~umask)."""
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.fchmod(fd, 0o666 & ~mask)
    except (AttributeError, OSError):  # pragma: no cover - non-POSIX
        pass


# -- payload builders ----------------------------------------------------------


def protocol_payload() -> bytes:
    return struct.pack("<I", GROTH16)


def header_payload(curve: Curve, n_vars: int, n_public: int, domain_size: int, alpha1: bytes, beta1: bytes, beta2: bytes, gamma2: bytes, delta1: bytes, delta2: bytes) -> bytes:
    """§2: n8q, q, n8r, r, nVars, nPublic, domainSize, then alpha1, beta1, beta2,
    gamma2, delta1, delta2 (affine Montgomery, as snarkjs writes them)."""
    g1, g2 = curve.g1_bytes, curve.g2_bytes
    for name, pt, size in (("alpha1", alpha1, g1), ("beta1", beta1, g1), ("beta2", beta2, g2), ("gamma2", gamma2, g2), ("delta1", delta1, g1), ("delta2", delta2, g2)):
        if len(pt) != size:
            raise ValueError(f"{name}: expected {size} bytes, got {len(pt)}")
    if domain_size >= 1 << 32 or n_vars >= 1 << 32:
        raise ValueError("nVars and domainSize must fit in u32")
    out = bytearray()
    out += struct.pack("<I", curve.n8q) + curve.q.to_bytes(curve.n8q, "little")
    out += struct.pack("<I", curve.n8r) + curve.r.to_bytes(curve.n8r, "little")
    out += struct.pack("<III", n_vars, n_public, domain_size)
    out += bytes(alpha1) + bytes(beta1) + bytes(beta2) + bytes(gamma2) + bytes(delta1) + bytes(delta2)
    return bytes(out)


def coefs_size(n_entries: int, n8r: int = 32) -> int:
    return 4 + n_entries * (COEF_ENTRY_HEAD + n8r)


def contributions_payload(cs_hash: bytes, contributions: list[dict]) -> bytes:
    """§10 as snarkjs's writeMPCParams: csHash (64 bytes), u32 count, then per
    contribution deltaAfter (G1), g1_s (G1), g1_sx (G1), g2_spx (G2), transcript
    (64 bytes), u32 type, u32 params length, params (1 = name: u8 len, utf-8)."""
    if len(cs_hash) != 64:
        raise ValueError("cs_hash must be 64 bytes")
    out = bytearray(cs_hash)
    out += struct.pack("<I", len(contributions))
    for c in contributions:
        if len(c["transcript"]) != 64:
            raise ValueError("transcript must be 64 bytes")
        out += bytes(c["delta_after"]) + bytes(c["g1_s"]) + bytes(c["g1_sx"]) + bytes(c["g2_spx"]) + bytes(c["transcript"])
        out += struct.pack("<I", c.get("type", 0))
        params = bytearray()
        name = c.get("name")
        if name:
            nb = name.encode("utf-8")[:64]
            params += bytes([1, len(nb)]) + nb
        out += struct.pack("<I", len(params)) + params
    return bytes(out)
