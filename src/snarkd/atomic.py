"""Atomic file output: a reader sees the old file or the whole new one, never half."""

from __future__ import annotations

import os
from contextlib import contextmanager


def _create_beside(path: str) -> tuple[int, str]:
    """(fd, name) of a new file `.NAME.RANDOM.tmp` in path's directory, created exclusively (0600, as mkstemp
    makes it: tempfile itself costs `snarkd witness` ~5 ms of imports)."""
    head, name = os.path.split(path)
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(100):
        tmp = os.path.join(head, f".{name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


@contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb", durable: bool = True):
    """Open a temp file beside `path`; on clean exit fsync (unless not `durable`: a cache that is rebuilt when
    lost) and rename it over `path`."""
    path = os.fspath(path)
    fd, tmp = _create_beside(path)
    try:
        # created 0600; give the file the mode a plain open() would.
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
    import json

    with atomic_open(path, "w") as fh:
        json.dump(obj, fh, indent=indent)
