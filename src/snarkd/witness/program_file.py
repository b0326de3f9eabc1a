"""The native witness program on disk (CIRCUIT.wasm.wprog): what `NativeCalculator` built from a
circuit's .wasm, kept so that the next process replays at once instead of recording again.

    magic "snarkdWP" | u32 version | u32 H | H bytes of JSON header | u32 CRC-32C of the header
    (formats/checked_header.py) | the program (the native core's serialization) | u32 CRC-32C of the program
    | 32-byte HMAC-SHA256 tag of the opening (prefix, header, its CRC) and of the identity: the header tag
    | 32-byte HMAC-SHA256 tag of all the above and of the identity (formats/file_trust.py)

The header tag lets a reader trust the header alone (`read(..., defer_below=)`): a value-dependent program whose
paths have served no replays (an RSA verifier's) is not read, hashed or checked by a one-shot `snarkd witness`
that never replays it (6.8 MB: ~10 ms of its whole process); the body is read, and the whole file's tag checked,
only when it is loaded (`DeferredBody.load`, from the descriptor opened first: a file replaced since is not read).

The header binds the file to one .wasm (its SHA-256), one `sanity_check` setting and this layout
version, and carries what Python needs before the native core is involved (the field, the sizes,
the input signal table). A file that is not ours, has another version, belongs to another wasm or
setting, or fails a checksum raises ProgramFileError: the caller ignores it with a warning and
rebuilds. The whole file is read into memory, never mapped: a program file truncated or rewritten
by someone else can make a load fail, never a process crash.

A program decides the witness, so the file is data to check, not trust (issue 33): it is read only through
file_trust.read_cache (not through a link, a regular file of this user or root, in a directory nobody else
can write, at most MAX_BYTES, and under this user's HMAC tag bound to the identity: another circuit's program
re-bound to this wasm with its CRCs recomputed, or a file planted by another user, is refused and rebuilt);
it is written only where it would pass those checks.

Where: beside the .wasm when that directory is writable, else in the compiled-module cache
([keys] wasm_cache) under the wasm's hash.
"""

from __future__ import annotations

import os

from snarkd.atomic import atomic_open
from snarkd.formats.checked_header import CRC, PREFIX, crc32c, pack, unpack
from snarkd.formats.json_text import dumps_sorted

MAGIC = b"snarkdWP"
VERSION = 3  # 2: the HMAC tag; 3: the header tag
SUFFIX = ".wprog"
MAX_BYTES = 16 << 30  # read before its tag is checked: bounded (a 2^20 SHA-256 circuit's program is 70 MB)


class ProgramFileError(Exception):
    """The program file cannot be used: missing, stale (another wasm or setting) or corrupt."""


def one_shot_huge_pages() -> bool:
    """Whether a one-shot process's large buffers (a program read here, witness/native's witness blocks and replay
    frames) are fresh huge pages (file_trust.fresh_pages): [cpu] huge_pages as the native witness module holds it
    (snarkd.native.apply_huge_pages), in a process without numpy (the one-shot CLI; a daemon has numpy loaded):
    Python's mmap.madvise holds the GIL while the kernel populates the pages (a 2^20 circuit's 70 MB program:
    milliseconds), where a plain read or numpy's empty leaves it to a daemon's other threads."""
    import sys

    from snarkd.native import _witness

    return sys.modules.get("numpy") is None and bool(_witness.huge_pages())


def identity(wasm_sha256: str, sanity_check: bool) -> dict:
    """What a program is bound to: the wasm's bytes, circom's sanity-check flag (init(1) runs other
    code), and the native core's instruction set (native/witness/program.hpp PROGRAM_FORMAT)."""
    from snarkd.native import _witness

    return {"wasm_sha256": wasm_sha256, "sanity_check": bool(sanity_check), "layout": VERSION,
            "instructions": int(_witness.PROGRAM_FORMAT)}


def candidates(wasm_path: str | os.PathLike | None, wasm_sha256: str,
               cache_dir: str | os.PathLike | None) -> list[str]:
    """Where a program for this wasm may be, in the order they are tried (strings: pathlib stays out of a cached
    program's load)."""
    out = []
    if wasm_path is not None:
        out.append(f"{os.fspath(wasm_path)}{SUFFIX}")
    if cache_dir is not None:
        out.append(os.path.join(os.fspath(cache_dir), f"{wasm_sha256[:40]}{SUFFIX}"))
    return out


def _context(ident: dict) -> bytes:
    # json.dumps(ident, sort_keys=True)'s text, without the json package's imports (re, enum: ~3 ms of a cached run)
    return b"wprog\0" + dumps_sorted(ident).encode()


def _head_context(ident: dict) -> bytes:
    return _context(ident) + b"\0header"  # another context: a header tag is never taken for a whole file's


def write(path: str | os.PathLike, ident: dict, meta: dict, program, keep: list[int] | None = None) -> None:
    """program: the program's bytes, or the native Program itself, which writes them straight to the file
    (`write_to`: a 2^20 circuit's program is 70 MB, never held as one more copy; keep: only these of its paths).
    The tag is computed over what was written, read back from the file (the page cache) in chunks."""
    from snarkd.formats.file_trust import TAG_BYTES, tag as head_tag, tag_stream

    header = dumps_sorted({"identity": ident, "meta": meta}).encode()
    opening = pack(MAGIC, VERSION, header)
    with atomic_open(path, "w+b", durable=False) as fh:  # a cache: a file lost to a power cut is rebuilt
        fh.write(opening)
        if hasattr(program, "write_to"):
            fh.flush()
            crc, _ = program.write_to(fh.fileno(), keep)
            fh.seek(0, os.SEEK_END)
        else:
            fh.write(program)
            crc = crc32c(program)
        fh.write(CRC.pack(crc))
        fh.write(head_tag(opening, _head_context(ident)))
        fh.flush()
        tag = tag_stream(fh.fileno(), fh.tell(), _context(ident))
        assert len(tag) == TAG_BYTES
        fh.write(tag)


def save(paths: list, ident: dict, meta: dict, program, keep: list[int] | None = None):
    """Write to the first place that takes it and where it would be trusted when read back; None when none
    does (the program then lives in this process only)."""
    return save_first(paths, lambda path: write(path, ident, meta, program, keep))


def save_first(paths: list, write_to):
    """The first of `paths` whose folder can be made, would be trusted when read back (formats/file_trust.py) and
    takes write_to(path) without an OSError; None when none does. The program's and the compiled library's
    (witness/compiled) one rule for where a cache file goes."""
    from snarkd.formats.file_trust import UntrustedCache, dir_problem

    for path in paths:
        folder = os.path.dirname(os.fspath(path)) or "."
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            if dir_problem(folder):
                continue
            write_to(path)
            return path
        except (OSError, UntrustedCache):
            continue
    return None


def _why_untrusted(exc, path, ident: dict) -> str:
    """What a refused file seems to be: a program of another wasm or setting says so (its header, untrusted,
    only read for the message)."""
    why = str(exc).removeprefix(f"{path}: ")
    data = exc.data or b""
    if len(data) >= PREFIX.size and bytes(data[: len(MAGIC)]) == MAGIC:
        version = PREFIX.unpack(bytes(data[: PREFIX.size]))[1]
        if 1 <= version < VERSION:  # an earlier snarkd's file: its tag is over another layout, not a damage
            return (f"in an old format (version {version}, this snarkd writes version {VERSION}): rebuilt once "
                    "in the current one")
    try:
        obj, _ = unpack(exc.data or b"", MAGIC, VERSION, "witness program", ValueError)
        if isinstance(obj, dict) and obj.get("identity") != ident:
            return f"stale: made from another .wasm or with another sanity-check setting ({why})"
    except Exception:
        pass
    return why


class DeferredBody:
    """A program file's body not read yet: `load()` reads the file open since its header was checked, checks the
    whole file's tag and that its opening is the one checked, and gives the program's bytes (ProgramFileError
    otherwise)."""

    def __init__(self, path: str, fd: int, size: int, opening: bytes, ident: dict):
        self.path, self._fd, self._size, self._opening, self._ident = path, fd, size, opening, ident

    def load(self) -> memoryview:
        from snarkd.formats.file_trust import TAG_BYTES, UntrustedCache, check_tag

        if self._fd < 0:
            raise ProgramFileError("its body was loaded or dropped already")
        try:
            buf = os.pread(self._fd, self._size, 0)
        except OSError as exc:
            raise ProgramFileError(f"cannot read its body ({exc.strerror or exc})") from None
        finally:
            self.close()
        if len(buf) != self._size or not buf.startswith(self._opening):
            raise ProgramFileError("changed since its header was read")
        data = memoryview(buf)[:-TAG_BYTES]
        try:
            check_tag(self.path, data, buf[-TAG_BYTES:], _context(self._ident))
        except UntrustedCache as exc:
            raise ProgramFileError(_why_untrusted(exc, self.path, self._ident)) from None
        return _program_of(data, len(self._opening))

    def close(self) -> None:
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    def __del__(self):
        self.close()


def _program_of(data, body: int) -> memoryview:
    """The program's bytes (a view) in a file's checked data (its whole-file tag removed)."""
    from snarkd.formats.file_trust import TAG_BYTES

    end = len(data) - TAG_BYTES - CRC.size  # the header tag, then the whole file's
    if end < body:
        raise ProgramFileError(f"too short ({len(data)} bytes) to be a witness program")
    # no CRC-32C of the program here: the HMAC tag over it matched, and it catches all a CRC would
    return data[body:end]


def unserved(meta: dict, replays: int) -> bool:
    """A file written value-dependent whose paths had served fewer than `replays` replays (its header says how
    many; files without the count are loaded at once)."""
    hits = meta.get("hits")
    return bool(meta.get("value_dependent")) and type(hits) is int and 0 <= hits < replays


def _read_deferred(path: str, ident: dict, replays: int):
    """(meta, DeferredBody) when the header's tag matches and it is `unserved` (the body can wait); None when the
    whole file is to be read now."""
    from snarkd.formats.file_trust import TAG_BYTES, UntrustedCache, open_cache, tag_matches

    try:
        fd, st = open_cache(path)
    except UntrustedCache as exc:
        raise ProgramFileError(str(exc).removeprefix(f"{path}: ")) from None
    keep = False
    try:
        size = st.st_size
        lead = os.pread(fd, PREFIX.size, 0)
        if len(lead) < PREFIX.size or not PREFIX.size + 2 * CRC.size + 2 * TAG_BYTES <= size <= MAX_BYTES:
            return None  # the whole read says what is wrong
        hlen = PREFIX.unpack(lead)[2]
        if PREFIX.size + hlen + 2 * CRC.size + 2 * TAG_BYTES > size:
            return None
        opening = os.pread(fd, PREFIX.size + hlen + CRC.size, 0)
        tags = os.pread(fd, 2 * TAG_BYTES, size - 2 * TAG_BYTES)
        if len(opening) != PREFIX.size + hlen + CRC.size or len(tags) != 2 * TAG_BYTES:
            return None
        if not tag_matches(opening, tags[:TAG_BYTES], _head_context(ident)):
            return None  # the whole read checks the whole file's tag, and says why it is refused
        obj, _ = unpack(opening, MAGIC, VERSION, "witness program", ProgramFileError)
        if not isinstance(obj, dict) or obj.get("identity") != ident:
            raise ProgramFileError("stale: made from another .wasm or with another sanity-check setting")
        meta = obj.get("meta")
        if not isinstance(meta, dict):
            raise ProgramFileError("header without meta (corrupt)")
        if not unserved(meta, replays):
            return None
        keep = True
        return meta, DeferredBody(path, fd, size, opening, ident)
    except OSError as exc:
        raise ProgramFileError(f"cannot read it ({exc.strerror or exc})") from None
    finally:
        if not keep:
            os.close(fd)


def read(path: str | os.PathLike, ident: dict, defer_below: int | None = None) -> tuple[dict, memoryview | DeferredBody]:
    """(meta, the program's bytes) of a checked file bound to `ident`; ProgramFileError otherwise. defer_below:
    a header under a matching header tag that is `unserved(meta, defer_below)` gives (meta, DeferredBody): the
    body is read later."""
    from snarkd.formats.file_trust import UntrustedCache, read_cache

    if not os.path.lexists(path):
        raise ProgramFileError("not found")
    path = os.fspath(path)
    if defer_below is not None:
        got = _read_deferred(path, ident, defer_below)
        if got is not None:
            return got
    try:
        # in huge pages unless [cpu] huge_pages is off: SHA-256's 3.2 MB program read in 0.7 ms, not 1.7 (round 34)
        data = read_cache(path, _context(ident), MAX_BYTES, huge_pages=one_shot_huge_pages())
    except UntrustedCache as exc:
        raise ProgramFileError(_why_untrusted(exc, path, ident)) from None
    if len(data) < PREFIX.size + 2 * CRC.size:
        raise ProgramFileError(f"too short ({len(data)} bytes) to be a witness program")
    obj, body = unpack(data, MAGIC, VERSION, "witness program", ProgramFileError, tail=CRC.size)
    if not isinstance(obj, dict) or obj.get("identity") != ident:
        raise ProgramFileError("stale: made from another .wasm or with another sanity-check setting")
    meta = obj.get("meta")
    if not isinstance(meta, dict):
        raise ProgramFileError("header without meta (corrupt)")
    return meta, _program_of(data, body)
