"""Atomic file output: a reader sees the old file or the whole new one, never half."""

from __future__ import annotations

import os


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


class atomic_open:
    """Open a temp file beside `path`; on clean exit fsync (unless not `durable`: a cache that is rebuilt when
    lost) and rename it over `path`; on an exception the temp file is removed and `path` left as it was.
    (A class, not contextlib's generator: contextlib and what it imports, functools and collections, were ~2.5 ms
    of a one-shot `snarkd witness`, whose other imports need neither.)"""

    def __init__(self, path: str | os.PathLike, mode: str = "wb", durable: bool = True):
        self._path, self._mode, self._durable = os.fspath(path), mode, durable
        self._tmp = self._fh = None

    def __enter__(self):
        fd, self._tmp = _create_beside(self._path)
        try:
            # created 0600; give the file the mode a plain open() would.
            umask = os.umask(0)
            os.umask(umask)
            os.fchmod(fd, 0o666 & ~umask)
            self._fh = os.fdopen(fd, self._mode)
        except BaseException:
            os.close(fd)
            self._discard()
            raise
        return self._fh

    def __exit__(self, exc_type, exc, tb) -> bool:
        fh, self._fh = self._fh, None
        try:
            try:
                if exc_type is None:
                    fh.flush()
                    if self._durable:
                        os.fsync(fh.fileno())
            finally:
                fh.close()
            if exc_type is None:
                os.replace(self._tmp, self._path)
                return False
        except BaseException:
            self._discard()
            raise
        self._discard()
        return False  # the body's exception goes on

    def _discard(self) -> None:
        try:
            os.unlink(self._tmp)
        except FileNotFoundError:
            pass


def atomic_write_bytes(path: str | os.PathLike, data: bytes, durable: bool = True) -> None:
    with atomic_open(path, "wb", durable) as fh:
        fh.write(data)


def atomic_write_json(path: str | os.PathLike, obj, indent: int | None = 1) -> None:
    """JSON as snarkjs writes it (one-space indentation)."""
    import json

    with atomic_open(path, "w") as fh:
        json.dump(obj, fh, indent=indent)
