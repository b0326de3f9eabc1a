"""Helpers for the format tests: split/rebuild binfileutils containers, snarkjs JSON exports."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import oracle


def split(path_or_bytes) -> tuple[bytes, int, list[list]]:
    """(magic, version, [[id, payload bytes], ...]) in file order."""
    data = Path(path_or_bytes).read_bytes() if not isinstance(path_or_bytes, (bytes, bytearray)) else bytes(path_or_bytes)
    magic, version, n = struct.unpack_from("<4sII", data, 0)
    pos, out = 12, []
    for _ in range(n):
        sid, size = struct.unpack_from("<IQ", data, pos)
        pos += 12
        out.append([sid, data[pos : pos + size]])
        pos += size
    assert pos == len(data)
    return magic, version, out


def join(magic: bytes, version: int, sections, n_sections: int | None = None) -> bytes:
    parts = [struct.pack("<4sII", magic, version, len(sections) if n_sections is None else n_sections)]
    for sid, payload in sections:
        parts.append(struct.pack("<IQ", sid, len(payload)))
        parts.append(bytes(payload))
    return b"".join(parts)


def patch_section(path, sid: int, fn) -> bytes:
    """File bytes with section `sid`'s payload replaced by fn(payload)."""
    magic, version, secs = split(path)
    for s in secs:
        if s[0] == sid:
            s[1] = fn(bytes(s[1]))
    return join(magic, version, secs)


def section_offset(path, sid: int) -> int:
    """Payload offset of section sid in the file."""
    magic, version, secs = split(path)
    pos = 12
    for s, payload in secs:
        pos += 12
        if s == sid:
            return pos
        pos += len(payload)
    raise KeyError(sid)


def _export(kind: str, src: Path, tag: str) -> dict | list:
    def build(d: Path) -> None:
        if kind == "zkey":
            oracle.snarkjs("zkey", "export", "json", src, d / "out.json")
        elif kind == "wtns":
            oracle.snarkjs("wtns", "export", "json", src, d / "out.json")
        elif kind == "r1cs":
            oracle.snarkjs("r1cs", "export", "json", src, d / "out.json")

    key = f"export-{kind}-{oracle._digest(str(src), src.stat().st_mtime_ns, tag)}"
    return json.loads((oracle._cached(key, build) / "out.json").read_text())


def zkey_json(zkey: Path):
    return _export("zkey", zkey, "zkey")


def wtns_json(wtns: Path):
    return _export("wtns", wtns, "wtns")


def r1cs_json(r1cs: Path):
    return _export("r1cs", r1cs, "r1cs")
