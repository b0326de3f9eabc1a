"""How witnesses reach the daemon: inline, by reference, or streamed in chunks.

    inline     ProveRequest.witness(es): parsed by the engine in place, a view of the request's bytes
    by path    ProveRequest.witness_paths: memory-mapped read-only (page cache, no copy through Python).
               A path must resolve, after symlinks, inside the spool or a [transport] witness_dirs
               directory; anything else is PERMISSION_DENIED naming that rule, never the file.
    streamed   ProveStream / SubmitStream: chunks copied into one buffer per partition, each bounded by
               the size of a .wtns for the key (a client cannot make the daemon allocate more)

The spool ([transport] witness_spool) is the daemon's own directory, created 0700: only processes of the
daemon's user (who can read what the daemon reads anyway) can put files there. A file named from the
spool is consumed: removed as soon as it is mapped (the mapping outlives the name). The spool holds a
token file `.token-<hex>` that the Status reply names, so a client can tell that it shares the daemon's
file system before it writes there.
"""

from __future__ import annotations

import logging
import os
import secrets
import stat
from pathlib import Path

from snarkd.engine.paths import MAX_PATH
from snarkd.errors import FormatError, InputError, PermissionDenied
from snarkd.formats.wtns import Witness, map_wtns, parse_wtns, wtns_size

log = logging.getLogger("snarkd")
SLACK = 1 << 20  # a streamed .wtns may exceed the key's exact size by this much (extra sections)


class Spool:
    """The by-reference witness directory, made at startup and emptied of what a previous run left."""

    def __init__(self, path: str):
        self.path = Path(path)
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = self.path.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
            raise InputError(f"[transport] witness_spool {self.path}: not a directory owned by this user")
        os.chmod(self.path, 0o700)
        for f in self.path.iterdir():  # witnesses of a previous run, never mapped
            f.unlink(missing_ok=True)
        self.token = secrets.token_hex(16)
        (self.path / f".token-{self.token}").touch(mode=0o600)

    def close(self) -> None:
        (self.path / f".token-{self.token}").unlink(missing_ok=True)


class Transport:
    def __init__(self, spool: Spool | None, witness_dirs: list[str]):
        self.spool = spool
        self.dirs = [Path(d).resolve() for d in witness_dirs]

    def resolve(self, path: str) -> tuple[Path, bool]:
        """(the real path, whether it is consumed) of a by-reference witness, or PermissionDenied."""
        if not path or "\0" in path or len(path.encode("utf-8", "surrogateescape")) > MAX_PATH:  # realpath would raise
            raise PermissionDenied(f"witness path: not a usable path (empty, a NUL byte, or longer than {MAX_PATH} "
                                   f"bytes)")
        real = Path(os.path.realpath(path))
        if self.spool is not None and real.parent == self.spool.path.resolve():
            return real, True
        if any(real.is_relative_to(d) for d in self.dirs):
            return real, False
        allowed = ([str(self.spool.path)] if self.spool else []) + [str(d) for d in self.dirs]
        raise PermissionDenied(f"witness path {path!r}: by-reference witnesses must resolve inside "
                               f"{' or '.join(allowed) or 'an allowed directory'} ([transport] witness_spool, "
                               f"witness_dirs)")

    def map(self, paths: list[str], keep: list | None = None) -> list[Witness]:
        """The witnesses at these paths, memory-mapped. Files from the spool are consumed: removed once
        mapped, or, given `keep`, left in place with their real paths appended to it (for the journal)."""
        out = []
        for i, p in enumerate(paths):
            real, consumed = self.resolve(p)
            name = f"witness{f' (partition {i})' if len(paths) > 1 else ''} {p}"
            w = None
            try:
                if not real.is_file():  # a FIFO or device would block or stream forever: regular files only
                    raise InputError(f"{name}: no such regular file")
                if real.stat().st_size == 0:
                    raise InputError(f"{name}: empty witness")
                w = map_wtns(real)
            except FormatError as exc:
                raise InputError(f"{name}: {exc}") from None
            finally:
                if consumed and (keep is None or w is None):  # mapped (the mapping outlives the name), or refused
                    real.unlink(missing_ok=True)
            if consumed and keep is not None:
                keep.append(real)
            w.path = name
            out.append(w)
        return out

    @staticmethod
    def assemble(chunks, n_vars_of) -> tuple[object, list[Witness]]:
        """(request, witnesses) from a ProveStream: the first chunk names the request and each partition's
        size; n_vars_of(key_id) bounds those sizes."""
        first = next(chunks, None)
        if first is None or not first.HasField("request"):
            raise InputError("a witness stream must start with a message that carries the request")
        req, sizes = first.request, list(first.partition_bytes)
        if not sizes:
            raise InputError("a witness stream must give partition_bytes: the .wtns size of each partition")
        limit = wtns_size(n_vars_of(req.key_id)) + SLACK
        if max(sizes) > limit:
            raise InputError(f"partition_bytes {max(sizes)} is larger than a .wtns of key {req.key_id!r} can be "
                             f"({limit} bytes)")
        bufs = [bytearray(n) for n in sizes]
        part, pos = 0, 0
        msg = first
        while True:
            data = memoryview(msg.data)
            while data:
                if part == len(bufs):
                    raise InputError(f"the witness stream sent more bytes than partition_bytes declared ({sum(sizes)})")
                take = min(len(data), len(bufs[part]) - pos)
                bufs[part][pos : pos + take] = data[:take]
                data, pos = data[take:], pos + take
                if pos == len(bufs[part]):
                    part, pos = part + 1, 0
            msg = next(chunks, None)
            if msg is None:
                break
            if msg.HasField("request"):
                raise InputError("the witness stream carries the request twice")
        if part != len(bufs):
            raise InputError(f"the witness stream ended early: partition {part} has {pos} of {sizes[part]} bytes")
        many = len(bufs) > 1
        return req, [parse_wtns(b, f"streamed witness{f' (partition {i})' if many else ''}", copy=False)
                     for i, b in enumerate(bufs)]

