"""Daemon logging: timestamped, levelled lines to the log file (and stderr in the foreground)."""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
import time
from pathlib import Path


class Formatter(logging.Formatter):
    """2025-01-31T12:00:00.123+0100 INFO snarkd[1234]: message"""

    def formatTime(self, record, datefmt=None):  # noqa: N802
        lt = time.localtime(record.created)
        return time.strftime("%Y-%m-%dT%H:%M:%S", lt) + f".{int(record.msecs):03d}" + time.strftime("%z", lt)

    def __init__(self):
        super().__init__("%(asctime)s %(levelname)s snarkd[%(process)d]: %(message)s")


def setup_logging(log_file: str | None, level: str = "info", to_stderr: bool = True) -> logging.Logger:
    """Open the log file first of all; raises OSError with the path when it cannot."""
    log = logging.getLogger("snarkd")
    log.setLevel(getattr(logging, level.upper()))
    log.propagate = False
    for h in list(log.handlers):
        log.removeHandler(h)
        h.close()
    fmt = Formatter()
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        # WatchedFileHandler reopens the file after logrotate moves it.
        fh = logging.handlers.WatchedFileHandler(log_file, encoding="utf-8")
        fh.setFormatter(fmt)
        log.addHandler(fh)
    if to_stderr:
        sh = logging.StreamHandler(sys.stderr)
        sh.setFormatter(fmt)
        log.addHandler(sh)
    return log


def flush_logs() -> None:
    for h in logging.getLogger("snarkd").handlers:
        try:
            h.flush()
        except Exception:
            pass


def tail(path: str | os.PathLike, n: int = 20, start: int = 0) -> list[str]:
    """The last n lines of a file from byte offset `start` on."""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            begin = max(start, size - 64 * 1024)
            fh.seek(begin)
            data = fh.read()
    except OSError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    if begin > start and lines:
        lines = lines[1:]  # drop a partial first line
    return lines[-n:]
