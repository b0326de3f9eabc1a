"""Daemon logging: timestamped, levelled lines to the log file (and stderr in the foreground).

[daemon] log_format = "text" writes

    2025-01-31T12:00:00.123+0100 INFO snarkd[1234]: message

and "json" one object per line with the same fields:

    {"time": "2025-01-31T12:00:00.123+0100", "level": "INFO", "process": "snarkd", "pid": 1234, "message": "..."}

(plus "exception" with the traceback, which the text form prints on the lines after).
A message's control characters (a newline in something a client sent) are escaped in the
text form, so one call is one line and no client can forge another. The log file is the
daemon's own: mode 0600 (`private_file`). `reopen_logs` reopens the log file (logrotate's
convention: SIGHUP after the file was moved).
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import re
import sys
import time

from snarkd.daemon.private_dir import open_private
from snarkd.errors import DaemonError

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_controls(text: str) -> str:
    """`text` on one line: control characters as \\n, \\r, \\t or \\xNN."""
    return _CONTROL.sub(lambda m: _NAMED.get(m.group(), f"\\x{ord(m.group()):02x}"), text)


def private_file(path: str | os.PathLike) -> None:
    """Create `path` (and its directory) if missing, and make it readable by the daemon's user only: the log
    names clients, keys and jobs. The directory and the file checked first (daemon/private_dir.py: no link
    followed, nothing of another user's chmodded or appended to)."""
    fd = open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.fchmod(fd, 0o600)
    finally:
        os.close(fd)


class _LogFileHandler(logging.handlers.WatchedFileHandler):
    """WatchedFileHandler whose every (re)open goes through open_private: a link planted where the log was
    (after logrotate moved it) is refused, never followed."""

    def _open(self):
        return os.fdopen(open_private(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600), "a",
                         encoding=self.encoding, errors=self.errors)


def _timestamp(record: logging.LogRecord) -> str:
    lt = time.localtime(record.created)
    return time.strftime("%Y-%m-%dT%H:%M:%S", lt) + f".{int(record.msecs):03d}" + time.strftime("%z", lt)


class Formatter(logging.Formatter):
    """2025-01-31T12:00:00.123+0100 INFO snarkd[1234]: message"""

    def formatTime(self, record, datefmt=None):  # noqa: N802
        return _timestamp(record)

    def __init__(self):
        super().__init__("%(asctime)s %(levelname)s snarkd[%(process)d]: %(message)s")

    def formatMessage(self, record):  # noqa: N802
        record.message = escape_controls(record.message)
        return super().formatMessage(record)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, process, pid, message (and exception)."""

    def format(self, record: logging.LogRecord) -> str:
        out = {"time": _timestamp(record), "level": record.levelname, "process": "snarkd", "pid": record.process,
               "message": record.getMessage()}
        if record.exc_info:
            out["exception"] = self.formatException(record.exc_info)
        return json.dumps(out, ensure_ascii=False)


FORMATTERS = {"text": Formatter, "json": JsonFormatter}


def setup_logging(log_file: str | None, level: str = "info", to_stderr: bool = True,
                  log_format: str = "text") -> logging.Logger:
    """Open the log file first of all; raises OSError with the path when it cannot."""
    log = logging.getLogger("snarkd")
    log.setLevel(getattr(logging, level.upper()))
    log.propagate = False
    for h in list(log.handlers):
        log.removeHandler(h)
        h.close()
    fmt = FORMATTERS[log_format]()
    if log_file:
        private_file(log_file)
        # WatchedFileHandler reopens the file after logrotate moves it.
        fh = _LogFileHandler(log_file, encoding="utf-8")
        fh.setFormatter(fmt)
        log.addHandler(fh)
    if to_stderr:
        sh = logging.StreamHandler(sys.stderr)
        sh.setFormatter(fmt)
        log.addHandler(sh)
    return log


def reopen_logs() -> tuple[list[str], list[str]]:
    """Reopen every log file (after logrotate moved it): (paths reopened, errors). A file that
    cannot be opened keeps the old stream, so no line is lost and the daemon lives on."""
    paths, errors = [], []
    for h in logging.getLogger("snarkd").handlers:
        if not isinstance(h, logging.FileHandler):
            continue
        h.acquire()
        try:
            try:
                new = h._open()
            except (OSError, DaemonError) as exc:
                errors.append(f"{h.baseFilename}: {getattr(exc, 'strerror', None) or exc}")
                continue
            old, h.stream = h.stream, new
            if old is not None:
                old.close()
            if isinstance(h, logging.handlers.WatchedFileHandler):
                h._statstream()  # what it watches is the new file now
        finally:
            h.release()
        paths.append(h.baseFilename)
    return paths, errors


def redirect_stdio(path: str) -> None:
    """Point file descriptors 1 and 2 at `path` (a daemonized process's stdout and stderr are its log)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    fd = open_private(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.dup2(fd, 1)
        os.dup2(fd, 2)
    finally:
        os.close(fd)


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
