"""The binfileutils container (.zkey, .wtns, .r1cs: magic, version, then (id u32, size u64, payload)
sections) read by hand, independently of snarkd.formats: for tests that damage one section in place."""

from __future__ import annotations

import struct


def section_offset(data: bytes, sid: int) -> int:
    """Payload offset of the first section `sid` in a well-formed container."""
    n = struct.unpack_from("<I", data, 8)[0]
    pos = 12
    for _ in range(n):
        s, size = struct.unpack_from("<IQ", data, pos)
        if s == sid:
            return pos + 12
        pos += 12 + size
    raise KeyError(sid)
