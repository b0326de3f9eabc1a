"""The binfileutils container shared by .zkey, .wtns, .r1cs and .ptau files.

Layout: 4-byte magic, u32 version, u32 number of sections, then each section as
u32 id, u64 size (little-endian) and `size` bytes of payload. Sections are
looked up by id, never by position (snarkjs and circom write them in varying
orders). Files are memory-mapped read-only (native._mapguard: a file truncated under its mapping reads
as zeros instead of killing the process with SIGBUS, and `changed()` says what happened to it); section
payloads are handed out as zero-copy memoryviews.
"""

from __future__ import annotations

import os
import stat
import struct

from snarkd.errors import FormatError
from snarkd.native import _mapguard, _scan

TYPE_CHECKING = False  # typing's import (with re and enum, ~3 ms) stays out of a one-shot proof
if TYPE_CHECKING:
    from typing import Iterable

_HDR = struct.Struct("<4sII")  # magic, version, n_sections
_SEC = struct.Struct("<IQ")  # id, size

# Human names of sections, for error messages: {magic: {id: name}}.
SECTION_NAMES: dict[bytes, dict[int, str]] = {
    b"zkey": {1: "protocol", 2: "header", 3: "IC", 4: "coefs", 5: "A", 6: "B1", 7: "B2", 8: "C", 9: "H", 10: "contributions"},
    b"wtns": {1: "header", 2: "values"},
    b"r1cs": {1: "header", 2: "constraints", 3: "wire-to-label map", 4: "custom gates list", 5: "custom gates uses"},
}


def section_label(magic: bytes, sid: int, name: str | None = None) -> str:
    """'2 (header)': the section id with its name, as used in error messages."""
    name = name or SECTION_NAMES.get(magic, {}).get(sid)
    return f"{sid} ({name})" if name else str(sid)


class BinFile:
    """A parsed (validated) container over a read-only buffer (a guarded mapping, or bytes)."""

    def __init__(self, path: str, buf, magic: bytes, version: int, sections: dict[int, tuple[int, int]], order: list[int], mm: _mapguard.Mapping | None):
        self.path = path
        self.magic = magic
        self.version = version
        self.sections = sections  # id -> (payload offset, payload size)
        self.order = order  # ids in file order
        self._mm = mm
        self._buf = memoryview(buf) if not isinstance(buf, memoryview) else buf
        self.nbytes = len(self._buf)

    # -- construction -------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike, magic: bytes, versions: Iterable[int] | int) -> "BinFile":
        path_s = str(path)
        try:
            # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below)
            fd = os.open(path_s, os.O_RDONLY | os.O_NONBLOCK)
        except FileNotFoundError:
            raise FormatError(path_s, "file not found") from None
        except IsADirectoryError:
            raise FormatError(path_s, "is a directory, not a file") from None
        except OSError as e:
            raise FormatError(path_s, f"cannot open: {e.strerror or e}") from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise FormatError(path_s, f"not a regular file (a {magic.decode()} file must be one)")
            size = st.st_size
            if size < _HDR.size:
                raise FormatError(path_s, f"file is too short ({size} bytes) to be a {magic.decode()} file (needs at least {_HDR.size} header bytes)")
            try:
                mm = _mapguard.Mapping(fd)
            except (OSError, ValueError, RuntimeError) as e:
                raise FormatError(path_s, f"cannot memory-map: {e}") from None
        finally:
            os.close(fd)
        return cls._parse(path_s, mm, magic, versions, mm)  # refused: unmapped with its last reference

    @classmethod
    def from_bytes(cls, data, name: str, magic: bytes, versions: Iterable[int] | int) -> "BinFile":
        """Same checks over an in-memory buffer (e.g. a witness sent over the network)."""
        buf = memoryview(data).cast("B") if not isinstance(data, (bytes, bytearray)) else data
        if len(buf) < _HDR.size:
            raise FormatError(name, f"data is too short ({len(buf)} bytes) to be a {magic.decode()} file (needs at least {_HDR.size} header bytes)")
        return cls._parse(name, buf, magic, versions, None)

    @classmethod
    def _parse(cls, path: str, buf, magic: bytes, versions, mm) -> "BinFile":
        versions = {versions} if isinstance(versions, int) else set(versions)
        size = len(buf)
        got_magic, version, n_sections = _HDR.unpack_from(buf, 0)
        if got_magic != magic:
            raise FormatError(path, f"not a {magic.decode()} file: magic is {got_magic!r}, expected {magic!r}")
        if version not in versions:
            want = ", ".join(str(v) for v in sorted(versions))
            raise FormatError(path, f"unsupported {magic.decode()} version {version} (supported: {want})")
        sections: dict[int, tuple[int, int]] = {}
        order: list[int] = []
        pos = _HDR.size
        for i in range(n_sections):
            if pos + _SEC.size > size:
                raise FormatError(
                    path,
                    f"truncated: the header of section #{i + 1} of {n_sections} (at byte {pos}) is past the end of the file ({size} bytes)",
                    section=f"#{i + 1} of {n_sections}",
                )
            sid, ssize = _SEC.unpack_from(buf, pos)
            label = section_label(magic, sid)
            pos += _SEC.size
            if sid in sections:
                raise FormatError(path, f"duplicate section id {sid} (section #{i + 1} of {n_sections}; first seen at byte {sections[sid][0] - _SEC.size})", section=label)
            if ssize > size - pos:
                raise FormatError(
                    path,
                    f"truncated or overlapping: declared size {ssize} bytes runs past the end of the file "
                    f"(payload starts at byte {pos}, only {size - pos} bytes remain)",
                    section=label,
                )
            sections[sid] = (pos, ssize)
            order.append(sid)
            pos += ssize
        if pos != size:
            raise FormatError(path, f"{size - pos} trailing bytes after the last of {n_sections} sections (byte {pos} of {size})")
        return cls(path, buf, magic, version, sections, order, mm)

    # -- access -------------------------------------------------------------
    def label(self, sid: int, name: str | None = None) -> str:
        return section_label(self.magic, sid, name)

    def has(self, sid: int) -> bool:
        return sid in self.sections

    def section(self, sid: int, name: str | None = None) -> memoryview:
        """Zero-copy view of section `sid`'s payload; FormatError naming it if missing."""
        try:
            off, size = self.sections[sid]
        except KeyError:
            raise FormatError(self.path, "section is missing", section=self.label(sid, name)) from None
        return self._buf[off : off + size]

    def offset(self, sid: int, name: str | None = None) -> int:
        """Payload offset of section `sid` from the start of the file."""
        if sid not in self.sections:
            raise FormatError(self.path, "section is missing", section=self.label(sid, name))
        return self.sections[sid][0]

    def size(self, sid: int) -> int:
        return self.sections[sid][1]

    @property
    def buffer(self) -> memoryview:
        """The whole file (zero-copy)."""
        return self._buf

    @property
    def mmap(self):
        """The underlying mapping (or the bytes object for in-memory data)."""
        return self._mm if self._mm is not None else self._buf

    def changed(self) -> str:
        """"" while the mapped file is as it was opened; else what happened to it (truncated, rewritten in
        place, read past its end). In-memory data never changes."""
        mm = self._mm  # read once: another thread may close this file meanwhile
        return mm.changed() if mm is not None else ""

    def close(self) -> None:
        """Unmap the file. If numpy views into it are still alive, the mapping is
        released when the last one goes away instead."""
        try:
            self._buf.release()
        except (BufferError, ValueError):
            pass
        self._mm = None  # unmapped with the last buffer taken from it

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def u32(buf, off: int) -> int:
    return int.from_bytes(buf[off : off + 4], "little")


def u64(buf, off: int) -> int:
    return int.from_bytes(buf[off : off + 8], "little")


def uint(buf, off: int, n: int) -> int:
    return int.from_bytes(buf[off : off + n], "little")


# -- little-endian multi-limb integers as numpy uint64 arrays ----------------


# numpy is imported where it is used: the one-shot prover reads containers without it.


def int_to_limbs(x: int, n_limbs: int):
    import numpy as _np

    return _np.frombuffer(x.to_bytes(8 * n_limbs, "little"), dtype="<u8").copy()


def limbs_to_int(limbs) -> int:
    import numpy as _np

    return int.from_bytes(_np.ascontiguousarray(limbs, dtype="<u8").tobytes(), "little")


def first_not_below(limbs, modulus: int, threads: int = 0) -> int:
    """Index of the first row of `limbs` (shape (N, L), little-endian u64 limbs)
    whose value is >= modulus, or -1. One native pass, the GIL released, on up to
    `threads` threads (0: all cores). limbs: any buffer; numpy is imported only to copy
    a non-contiguous one (the one-shot prover passes the mapped witness: no numpy)."""
    view = memoryview(limbs)
    if not view.c_contiguous:
        import numpy as _np

        limbs = _np.ascontiguousarray(limbs)
        view = memoryview(limbs)
    if view.ndim != 2:
        raise ValueError("limbs must be (N, L)")
    nl = view.shape[1]
    if modulus >> (64 * nl):
        return -1  # every L-limb value is below the modulus
    return _scan.first_not_below(limbs, modulus.to_bytes(8 * nl, "little"), nl, threads)
