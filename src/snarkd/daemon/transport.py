"""How witnesses reach the daemon: inline, by reference, or streamed in chunks.

    inline     ProveRequest.witness(es): each bounded by a .wtns of the job's key (`check_inline`, on the request's
               wire bytes before protobuf decodes them: an oversized witness is never parsed or copied), then
               parsed by the engine in place, a view of the request's bytes
    by path    ProveRequest.witness_paths: read into the daemon's own memory at admission (`read`), bounded by a
               .wtns of the job's key before a byte is read. Never memory-mapped: a client that truncates or
               rewrites the file after Submit changes nothing (no SIGBUS, no proof of other bytes). A path must
               resolve, after symlinks, inside the spool or a [transport] witness_dirs directory
               (engine.paths.ClientPaths); anything else is PERMISSION_DENIED naming that rule, never the file.
    streamed   ProveStream / SubmitStream: at most [limits] max_partitions partitions, each bounded by a .wtns of
               the key before its buffer is allocated; chunks copied into one buffer per partition

The spool ([transport] witness_spool) is the daemon's own directory, created 0700: only processes of the
daemon's user (who can read what the daemon reads anyway) can put files there, named as the client names them
(32 hex digits, .wtns); any other name there is refused like a path outside the rule. A file named from the
spool is consumed: removed once read (or, with the journal on, kept by it). The spool holds a token file
`.token-<hex>` that the Status reply names, so a client can tell that it shares the daemon's file system before
it writes there.

The copy is the price: a 2^20 witness (32 MiB) from the page cache into a fresh buffer takes 7 ms on one
thread of the H200 host (15 ms on the 2-core development machine), where mapping it cost about a millisecond;
it is read in 4 MiB parts by up to 8 threads (daemon/parallel_io.py), 3-4 ms there. The journal's copy of a
hard-linked file costs another 10-11 ms there (bench/witness_copy.py), written while the engine works on the job.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

from snarkd.daemon.parallel_io import read_into
from snarkd.engine.errors import TooLarge
from snarkd.engine.paths import PathRule
from snarkd.errors import FormatError, InputError, PermissionDenied
from snarkd.formats.wtns import Witness, parse_wtns, wtns_size

log = logging.getLogger("snarkd")
SLACK = 1 << 20  # a .wtns may exceed the key's exact size by this much (extra sections)
SPOOL_NAME = re.compile(r"[0-9a-f]{32}\.wtns")  # how clients name what they put in the spool (Client._spool_one)


def witness_bound(n_vars: int) -> int:
    """The most bytes a .wtns for a key of n_vars values is taken at (inline, by path, or streamed)."""
    return wtns_size(n_vars) + SLACK


def too_large(what: str, size: int, key_id: str, n_vars: int) -> TooLarge:
    return TooLarge(f"{what}: {size} bytes, more than a .wtns of key {key_id!r} can be ({wtns_size(n_vars)} bytes "
                    f"for its {n_vars} values, at most {witness_bound(n_vars)} taken); refused before it was read")


def check_inline(sizes, key_id: str, n_vars: int) -> None:
    """TooLarge for the first inline witness (by its size) that no .wtns of the key can be."""
    many = len(sizes) > 1
    for i, n in enumerate(sizes):
        if n > witness_bound(n_vars):
            raise too_large(f"inline witness{f' (partition {i})' if many else ''}", n, key_id, n_vars)


MAX_FIELDS = 4096  # fields walked on the wire before leaving the check to the decoded request


def wire_witness_sizes(data) -> tuple[str, list[int]] | None:
    """(key_id, sizes of the inline witnesses: fields 2 and 5) of a serialized ProveRequest, read off its wire
    format without decoding it (decoding copies every witness); None when the bytes are not plainly a message
    (protobuf's decoding then says why) or have more than MAX_FIELDS fields (the decoded request is checked)."""
    key, sizes, pos, end = b"", [], 0, len(data)
    try:
        for _ in range(MAX_FIELDS):
            if pos == end:
                return key.decode("utf-8"), sizes
            tag, pos = _varint(data, pos)
            field, wire = tag >> 3, tag & 7
            if wire == 0:
                pos = _varint(data, pos)[1]
            elif wire in (1, 5):
                pos += 8 if wire == 1 else 4
            elif wire == 2:
                n, pos = _varint(data, pos)
                if field == 1:
                    key = bytes(data[pos : pos + n])
                elif field in (2, 5):
                    sizes.append(n)
                pos += n
            else:
                return None
            if pos > end:
                return None
    except (IndexError, UnicodeDecodeError):
        return None
    return None


def _varint(data, pos: int) -> tuple[int, int]:
    value = shift = 0
    while shift < 70:
        b = data[pos]
        value |= (b & 0x7F) << shift
        pos += 1
        if b < 0x80:
            return value, pos
        shift += 7
    raise IndexError("varint too long")


class Spool:
    """The by-reference witness directory, made at startup and emptied of what a previous run left."""

    def __init__(self, path: str):
        self.path = Path(path)
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = self.path.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise InputError(f"[transport] witness_spool {self.path}: not a directory owned by this user")
        os.chmod(self.path, 0o700)
        for f in self.path.iterdir():  # witnesses of a previous run, never read
            f.unlink(missing_ok=True)
        self.token = secrets.token_hex(16)
        (self.path / f".token-{self.token}").touch(mode=0o600)

    def close(self) -> None:
        (self.path / f".token-{self.token}").unlink(missing_ok=True)


@dataclass
class Received:
    """A by-reference witness, read: from here on its bytes are the daemon's own."""

    witness: Witness
    data: object  # the file's bytes as read (a numpy uint8 array; the witness's values are a view of it)
    spooled: Path | None  # the spool file it came from (consumed), None for a witness_dirs file
    linked: bool  # the file had other names when it was read (a hard link): its inode is not the daemon's alone


def read_file(path: Path, name: str, limit: int, over=None, buffer=None):
    """The bytes of regular file `path`, read (not mapped) into a buffer of the daemon's own; refused before a
    byte is read when larger than `limit` (`over(size)` gives the error). Returns (bytes, other names it has).
    O_NOFOLLOW: a symlink put in place after the path was checked is refused, not followed. buffer(nbytes): where
    the bytes go (ProvingEngine.witness_buffer: page-locked for an urgent lane's GPU upload), read by the pool of
    urgent lanes; None: a fresh array, by the shared pool."""
    import numpy as np

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError(f"{name}: no such regular file ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # a FIFO or device would block or stream forever: regular files only
            raise InputError(f"{name}: no such regular file")
        if st.st_size == 0:
            raise InputError(f"{name}: empty witness")
        if st.st_size > limit:
            raise over(st.st_size) if over else InputError(f"{name}: {st.st_size} bytes, more than {limit}")
        data = np.empty(st.st_size, dtype=np.uint8) if buffer is None else buffer(st.st_size)  # read over whole
        got = read_into(fd, memoryview(data), st.st_size, urgent=buffer is not None)
        if got != st.st_size:
            raise InputError(f"{name}: the file shrank while it was read (from {st.st_size} bytes)")
        return data, st.st_nlink - 1
    finally:
        os.close(fd)


def read_witness(path: Path, name: str, key_id: str, n_vars: int, buffer=None) -> tuple[Witness, object, int]:
    """(the witness, its bytes, other names the file has) of the .wtns at `path`, read into the daemon's memory
    (`buffer`: read_file's) and bounded by a .wtns of the key before a byte is read."""
    data, links = read_file(path, name, witness_bound(n_vars), lambda size: too_large(name, size, key_id, n_vars),
                            buffer)
    try:
        return parse_wtns(data, name, copy=False), data, links
    except FormatError as exc:
        raise InputError(f"{name}: {exc}") from None


class Transport:
    def __init__(self, spool: Spool | None, rule: PathRule | None):
        self.spool = spool
        self.rule = rule  # ClientPaths.witnesses: the spool and [transport] witness_dirs
        self._spool_dir = Path(os.path.realpath(spool.path)) if spool is not None else None

    def resolve(self, path: str) -> tuple[Path, bool]:
        """(the real path, whether it is consumed) of a by-reference witness, or PermissionDenied."""
        what = "witness path"
        if self.rule is None:
            raise PermissionDenied(f"{what}: this daemon reads no witness by reference ([transport] witness_spool "
                                   f"and witness_dirs are off)")
        real = self.rule.resolve(path, what)
        if self._spool_dir is not None and real.is_relative_to(self._spool_dir):
            if real.parent != self._spool_dir or not SPOOL_NAME.fullmatch(real.name):  # the token, or not a client's
                raise self.rule.refusal(path, what)
            return real, True
        return real, False

    def read(self, paths: list[str], key_id: str, n_vars: int, keep: bool = False, buffer=None) -> list[Received]:
        """The witnesses at these paths, read into the daemon's memory (`buffer`: read_file's), each bounded by a
        .wtns of the key. Files from the spool are consumed: removed once read, or, with `keep` (the journal's),
        left for the caller (Received.spooled) and removed by it."""
        out: list[Received] = []
        taken: list[Path] = []  # spool files named so far
        try:
            for i, p in enumerate(paths):
                real, consumed = self.resolve(p)
                taken += [real] if consumed else []
                name = f"witness{f' (partition {i})' if len(paths) > 1 else ''} {p}"
                try:
                    w, data, links = read_witness(real, name, key_id, n_vars, buffer)
                finally:
                    if consumed and not keep:
                        real.unlink(missing_ok=True)
                out.append(Received(w, data, real if consumed else None, links > 0))
        except BaseException:
            for real in taken:  # refused: nothing named from the spool stays there
                real.unlink(missing_ok=True)
            raise
        return out

    @staticmethod
    def assemble(chunks, n_vars_of, max_partitions: int) -> tuple[object, list[Witness]]:
        """(request, witnesses) from a ProveStream: the first chunk names the request and each partition's
        size; those are bounded (n_vars_of(key_id), max_partitions) first, and the buffers hold only the bytes sent."""
        first = next(chunks, None)
        if first is None or not first.HasField("request"):
            raise InputError("a witness stream must start with a message that carries the request")
        req, sizes = first.request, first.partition_bytes
        if not sizes:
            raise InputError("a witness stream must give partition_bytes: the .wtns size of each partition")
        if len(sizes) > max_partitions:
            raise TooLarge(f"the witness stream declares {len(sizes)} partitions, more than [limits] max_partitions "
                           f"({max_partitions})")
        sizes = list(sizes)
        n_vars = n_vars_of(req.key_id)
        if max(sizes) > witness_bound(n_vars):
            raise too_large("a partition of the witness stream", max(sizes), req.key_id, n_vars)
        # Buffers grow with the bytes that arrive, never allocated from the declared sizes: a stream that
        # declares 256 large partitions and sends 4 KB holds 4 KB (issue 33: 4 such calls took 1 GB).
        bufs: list[bytearray] = []
        part, pos = 0, 0
        msg = first
        while True:
            data = memoryview(msg.data)
            while data:
                if part == len(sizes):
                    raise InputError(f"the witness stream sent more bytes than partition_bytes declared ({sum(sizes)})")
                if part == len(bufs):
                    bufs.append(bytearray())
                take = min(len(data), sizes[part] - pos)
                bufs[part] += data[:take]
                data, pos = data[take:], pos + take
                if pos == sizes[part]:
                    part, pos = part + 1, 0
            msg = next(chunks, None)
            if msg is None:
                break
            if msg.HasField("request"):
                raise InputError("the witness stream carries the request twice")
        if part != len(sizes):
            raise InputError(f"the witness stream ended early: partition {part} has {pos} of {sizes[part]} bytes")
        many = len(bufs) > 1
        return req, [parse_wtns(b, f"streamed witness{f' (partition {i})' if many else ''}", copy=False)
                     for i, b in enumerate(bufs)]

