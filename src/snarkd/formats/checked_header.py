"""How snarkd's own cache files open (the prepared-key sidecar KEY.zkey.prep, the native witness program
CIRCUIT.wasm.wprog): a JSON header that says what the file is bound to, checked before anything after it.

    magic (8 bytes) | u32 version | u32 H | H bytes of JSON header | u32 CRC-32C of the header | the body

`unpack` refuses a file that is not of the kind, has another version, is cut inside its header or fails the
header's checksum, with the caller's error class (the caller then ignores the file with a warning and
rebuilds it); what the body holds and how it is checked is the caller's.
"""

from __future__ import annotations

import struct

from snarkd.formats.json_text import parse as parse_json  # json.loads's value, without its imports

PREFIX = struct.Struct("<8sII")  # magic, version, header length
CRC = struct.Struct("<I")


def crc32c(data) -> int:
    # CRC-32C in hardware: checking a large body costs about a millisecond. From _scan, not the core: loading the
    # core's 4 MB of code was ~4 ms of a one-shot `snarkd witness`, which needs nothing else from it.
    from snarkd.native import _scan

    return int(_scan.crc32c(data))


def pack(magic: bytes, version: int, header: bytes) -> bytes:
    """The file's opening: the prefix, the header (JSON bytes) and the header's CRC-32C."""
    return b"".join([PREFIX.pack(magic, version, len(header)), header, CRC.pack(crc32c(header))])


def unpack(buf, magic: bytes, version: int, what: str, error: type[Exception], tail: int = 0) -> tuple[object, int]:
    """(the parsed JSON header, the offset of the body) of a file that opens as `pack` writes; error(message)
    otherwise. what: the kind of file, for the messages ("sidecar"); tail: bytes the file must hold after the
    header's checksum."""
    found, got, hlen = PREFIX.unpack_from(buf, 0)
    if found != magic:
        raise error(f"not a snarkd {what} (magic {found!r})")
    if got != version:
        raise error(f"version {got}, this snarkd reads version {version}")
    end = PREFIX.size + hlen
    if end + CRC.size + tail > len(buf):
        raise error("truncated header")
    header = bytes(buf[PREFIX.size : end])
    if crc32c(header) != CRC.unpack_from(buf, end)[0]:
        raise error("header checksum mismatch (corrupt)")
    try:
        return parse_json(header), end + CRC.size
    except ValueError:
        raise error("header is not JSON (corrupt)") from None
