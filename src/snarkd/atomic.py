"""Atomic file output: a reader sees the old file or the whole new one, never half."""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb", durable: bool = True):
    """Open a temp file beside `path`; on clean exit fsync (unless not `durable`: a cache that is rebuilt when
    lost) and rename it over `path`."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        # mkstemp creates 0600; give the file the mode a plain open() would.
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, mode) as fh:
            yield fh
            fh.flush()
            if durable:
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_bytes(path: str | os.PathLike, data: bytes, durable: bool = True) -> None:
    with atomic_open(path, "wb", durable) as fh:
        fh.write(data)


def atomic_write_json(path: str | os.PathLike, obj, indent: int | None = 1) -> None:
    """JSON as snarkjs writes it (one-space indentation)."""
    with atomic_open(path, "w") as fh:
        json.dump(obj, fh, indent=indent)
