"""The prepared-key sidecar (KEY.zkey.prep): per-key precomputation kept on disk.

    magic "snarkdPK" | u32 version | u32 H | H bytes of JSON header | u32 CRC-32C of the header
    (formats/checked_header.py) then the blocks, each at a 64-byte aligned offset the header gives,
    then a 32-byte HMAC-SHA256 tag of everything before it and of the zkey identity (formats/file_trust.py)

The JSON header names the zkey it was made from (size, modification time in
ns, SHA-256 of its protocol and header sections) and every block as
[offset, length, CRC-32C]. A reader checks all of it: a file that is not a
sidecar, has another version, belongs to another or a changed zkey, or has a
block whose checksum does not match raises PreparedError (the caller ignores
the file with a warning and can rebuild it). It is opened only as file_trust.open_cache allows (not through
a link, a regular file of this user or root, in a directory nobody else can write) and used only under this
user's tag: a sidecar made elsewhere, by someone else or for another key (its CRCs recomputed) is
refused. Blocks are handed out as zero-copy memoryviews of a read-only mapping. What the blocks hold is the
prover's business (snarkd.prover.prepared); this module knows only the box.
"""

from __future__ import annotations

import os

from snarkd.atomic import atomic_open
from snarkd.formats.checked_header import CRC, PREFIX, crc32c, pack, unpack
from snarkd.formats.file_trust import TAG_BYTES
from snarkd.formats.json_text import dumps_sorted  # json.dumps(sort_keys=True)'s text, without json's imports
from snarkd.native import _mapguard

MAGIC = b"snarkdPK"
VERSION = 2  # 2: the HMAC tag
ALIGN = 64
SUFFIX = ".prep"


class PreparedError(Exception):
    """The sidecar cannot be used: missing, stale (another or a changed zkey) or corrupt."""


def zkey_identity(zkey_path: str | os.PathLike, header_bytes: bytes) -> dict:
    """What a sidecar is bound to: the zkey's size and mtime, and a hash of its header
    sections (`header_bytes`: §1 and §2 as stored)."""
    import hashlib  # only when there is a sidecar to check

    st = os.stat(zkey_path)
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "header_sha256": hashlib.sha256(header_bytes).hexdigest()}


def write(path: str | os.PathLike, identity: dict, meta: dict, blocks: dict[str, bytes]) -> None:
    """Write a sidecar atomically (a reader never sees half a file)."""
    names = sorted(blocks)
    crcs = {name: crc32c(blocks[name]) for name in names}
    start = 4 * ALIGN
    while True:  # the blocks start after the header, whose length depends on their offsets
        pos, table = start, {}
        for name in names:
            table[name] = [pos, len(blocks[name]), crcs[name]]
            pos = _align(pos + len(blocks[name]))
        header = dumps_sorted({"version": VERSION, "zkey": identity, "meta": meta, "blocks": table}).encode()
        need = _align(PREFIX.size + len(header) + CRC.size)
        if need <= start:
            break
        start = need
    from snarkd.formats.file_trust import tag_stream

    with atomic_open(path, "w+b") as fh:
        fh.write(pack(MAGIC, VERSION, header))
        for name in names:
            fh.write(b"\0" * (table[name][0] - fh.tell()))
            fh.write(blocks[name])
        fh.flush()
        fh.write(tag_stream(fh.fileno(), fh.tell(), _context(identity)))


def _context(identity) -> bytes:
    return b"prep\0" + dumps_sorted(identity).encode()


def _align(x: int) -> int:
    return (x + ALIGN - 1) // ALIGN * ALIGN


class PreparedFile:
    """An opened, checked sidecar: .meta (dict), .blocks (name -> memoryview)."""

    def __init__(self, path: str | os.PathLike, identity: dict | None = None):
        self.path = os.fspath(path)
        self._mm = None
        self._buf = None
        self.blocks: dict[str, memoryview] = {}
        from snarkd.formats.file_trust import UntrustedCache, open_cache

        try:
            fd, st = open_cache(self.path)
        except UntrustedCache as e:
            raise PreparedError(str(e).removeprefix(f"{self.path}: ")) from None
        try:
            size = st.st_size
            if size < PREFIX.size + CRC.size + TAG_BYTES:
                raise PreparedError(f"too short ({size} bytes) to be a sidecar")
            try:  # guarded: a sidecar truncated under it reads as zeros instead of killing the process (SIGBUS)
                self._mm = _mapguard.Mapping(fd)
            except (ValueError, RuntimeError) as e:
                raise PreparedError(f"cannot map: {e}") from None
        finally:
            os.close(fd)
        try:
            self._open(identity)
        except BaseException:
            self.close()
            raise

    def _open(self, identity: dict | None) -> None:
        from snarkd.formats.file_trust import UntrustedCache, check_tag

        whole = memoryview(self._mm)
        buf = self._buf = whole[:-TAG_BYTES]
        obj, _ = unpack(buf, MAGIC, VERSION, "sidecar", PreparedError)
        if not isinstance(obj, dict):
            raise PreparedError("header is not an object (corrupt)")
        if identity is not None and obj.get("zkey") != identity:
            raise PreparedError("stale: made for another or an older version of the zkey")
        try:  # every byte: ~1 ms per 2 MB (SHA-256), once per load
            check_tag(self.path, buf, whole[-TAG_BYTES:], _context(obj.get("zkey")))
        except UntrustedCache as e:
            raise PreparedError(str(e).removeprefix(f"{self.path}: ")) from None
        finally:
            whole.release()
        self.meta = obj.get("meta", {})
        for name, (off, length, bcrc) in obj.get("blocks", {}).items():
            if off % ALIGN or off + length > len(buf):
                raise PreparedError(f"block {name} lies outside the file (truncated or corrupt)")
            view = buf[off : off + length]
            if crc32c(view) != bcrc:
                view.release()
                raise PreparedError(f"block {name}: checksum mismatch (corrupt)")
            self.blocks[name] = view

    def close(self) -> None:
        for v in self.blocks.values():
            v.release()
        self.blocks = {}
        if self._buf is not None:
            self._buf.release()
            self._buf = None
        self._mm = None  # unmapped with the last buffer taken from it

    def changed(self) -> str:
        """"" while the sidecar is as it was opened; else what happened to it (native._mapguard)."""
        mm = self._mm  # read once: another thread may close this file meanwhile
        return mm.changed() if mm is not None else ""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
