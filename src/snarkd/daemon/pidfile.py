"""The pid file: one daemon per pid file, held with an exclusive lock.

Format: the pid on the first line (so `kill $(head -1 FILE)` works), then one
JSON line recording who we are, so that `stop` can verify the process before
signalling it and a recycled pid is never mistaken for our daemon:

    12345
    {"pid": 12345, "create_time": 1718000000.12, "cmdline": [...], "listen": "127.0.0.1:9820", ...}

The lock (fcntl.flock, held for the daemon's lifetime) is the truth: a pid file
whose lock is free is stale, whatever it says.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
from dataclasses import dataclass
from pathlib import Path

import psutil

from snarkd.errors import DaemonError


@dataclass
class PidInfo:
    pid: int
    meta: dict

    @property
    def create_time(self) -> float | None:
        return self.meta.get("create_time")

    @property
    def cmdline(self) -> list | None:
        return self.meta.get("cmdline")


def read_pid_file(path: str | os.PathLike) -> PidInfo | None:
    """Parse a pid file; None when it does not exist. Garbage gives pid 0."""
    try:
        text = Path(path).read_text(errors="replace")
    except FileNotFoundError:
        return None
    lines = text.splitlines()
    pid, meta = 0, {}
    if lines:
        try:
            pid = int(lines[0].strip())
        except ValueError:
            pid = 0
    if len(lines) > 1:
        try:
            meta = json.loads(lines[1])
        except ValueError:
            meta = {}
    return PidInfo(pid, meta if isinstance(meta, dict) else {})


def process_identity(pid: int) -> dict | None:
    """create_time and cmdline of a live process (None if gone or a zombie)."""
    try:
        p = psutil.Process(pid)
        with p.oneshot():
            if p.status() == psutil.STATUS_ZOMBIE:
                return None
            return {"create_time": p.create_time(), "cmdline": p.cmdline()}
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:
        return {"create_time": None, "cmdline": None}


def is_same_process(info: PidInfo) -> tuple[bool, str]:
    """Is the process named by the pid file the one that wrote it? (verdict, why not)."""
    if info.pid <= 0:
        return False, "the pid file holds no valid pid"
    ident = process_identity(info.pid)
    if ident is None:
        return False, f"pid {info.pid} is not running"
    if ident["create_time"] is None:
        return False, f"pid {info.pid} belongs to another user (cannot inspect it)"
    if info.create_time is None or abs(ident["create_time"] - info.create_time) > 0.05:
        return False, f"pid {info.pid} was reused by another process: {' '.join(ident['cmdline'] or [])!r}"
    if info.cmdline is not None and ident["cmdline"] != info.cmdline:
        return False, f"pid {info.pid} now runs {' '.join(ident['cmdline'] or [])!r}"
    return True, ""


def lock_is_held(path: str | os.PathLike) -> bool:
    """True when some process holds the pid file's lock (i.e. a daemon owns it)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return True
        raise
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def describe_pid(pid: int) -> str:
    try:
        p = psutil.Process(pid)
        return f"pid {pid} ({' '.join(p.cmdline()) or p.name()})"
    except psutil.AccessDenied:
        return f"pid {pid} (another user's process)"
    except psutil.Error:
        return f"pid {pid}"


class PidFile:
    """Acquire with `acquire()`; the lock lives as long as the open descriptor."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.fd: int | None = None
        self.stale_warning: str | None = None

    def acquire(self, meta: dict) -> None:
        from snarkd.daemon.private_dir import open_private

        for _attempt in range(5):
            fd = open_private(self.path, os.O_RDWR | os.O_CREAT, 0o644)  # no link followed; the directory checked
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    raise DaemonError(f"cannot lock pid file {self.path}: {exc.strerror}") from None
                info = read_pid_file(self.path)
                holder = describe_pid(info.pid) if info and info.pid > 0 else "another process"
                listen = f" listening on {info.meta['listen']}" if info and info.meta.get("listen") else ""
                raise DaemonError(
                    f"another snarkd daemon is already running: {holder}{listen} holds the pid file {self.path}. "
                    f"Stop it first (snarkd stop --config ...) or use another pid_file and listen address."
                ) from None
            # The file may have been unlinked by an exiting daemon between our open and lock.
            try:
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            self.fd = fd
            break
        else:
            raise DaemonError(f"cannot lock pid file {self.path}: it keeps being replaced")
        old = read_pid_file(self.path)
        if old is not None and (old.pid or old.meta):
            ok, why = is_same_process(old)
            why = why if not ok else f"pid {old.pid} is alive but does not hold the lock"
            self.stale_warning = f"stale pid file {self.path} replaced ({why})"
        self.write(meta)

    def write(self, meta: dict) -> None:
        assert self.fd is not None
        data = f"{meta['pid']}\n{json.dumps(meta, sort_keys=True)}\n".encode()
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, data, 0)
        os.fsync(self.fd)

    def release(self) -> None:
        """Remove the file while still holding the lock, then drop the lock."""
        if self.fd is None:
            return
        try:
            if os.fstat(self.fd).st_ino == os.stat(self.path).st_ino:
                os.unlink(self.path)
        except FileNotFoundError:
            pass
        finally:
            os.close(self.fd)
            self.fd = None
