"""The daemon's runtime directories and files, checked like sshd's StrictModes.

The directory of the pid file, the log and the control socket is made 0700 when missing (os.mkdir: it fails
on anything already there, so a planted link is never followed into), then checked on every start: a real
directory (not a link), owned by the daemon's user (or root), that nobody else can write; the default runtime
directory (/tmp/snarkd-UID when XDG_RUNTIME_DIR is unset) must be the user's own, and is made 0700 (one an
older snarkd made 0755 is tightened). The files in it are
opened without following links (O_NOFOLLOW) and must be regular files of the daemon's user. Anything else is
refused with a DaemonError (exit 5) giving the reason and the fix: otherwise another user who owns or can
write the directory could point the log at a file of the daemon's user and have it appended to and chmodded.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from snarkd.errors import DaemonError


def _fix(d: Path) -> str:
    return (f"remove it (rm -r {d}) so the daemon makes its own, or set [daemon] pid_file, log_file and "
            "control_socket in a directory only the daemon's user can write")


def ensure_dir(d: str | os.PathLike, strict: bool = False) -> Path:
    """d made 0700 if missing, then checked (see the module docstring); strict: the user's own, mode 0700."""
    d = Path(d)
    if not os.path.lexists(d):
        if not d.parent.exists():
            d.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:  # made meanwhile: checked below like any other
            pass
        except OSError as exc:
            raise DaemonError(f"cannot create the runtime directory {d}: {exc.strerror or exc}") from None
    st = os.lstat(d)
    euid = os.geteuid()
    if strict and stat.S_ISDIR(st.st_mode) and st.st_uid == euid and stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(d, 0o700)  # the user's own (as made by an older snarkd, under umask 022): tightened, not refused
        st = os.lstat(d)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        why = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a directory"
    elif st.st_uid != euid and (strict or st.st_uid != 0):
        why = f"owned by uid {st.st_uid}, not by the daemon's user (uid {euid})"
    elif strict and stat.S_IMODE(st.st_mode) & 0o077:
        why = f"mode {stat.S_IMODE(st.st_mode):o}, not 700"
    elif st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX:
        why = f"writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    else:
        return d
    raise DaemonError(f"refusing the runtime directory {d}: {why}. Fix: {_fix(d)}")


def is_default_runtime_dir(d: str | os.PathLike) -> bool:
    from snarkd.config.settings import default_runtime_dir

    return Path(d) == default_runtime_dir()


def ensure_parent(path: str | os.PathLike) -> None:
    parent = Path(path).parent
    ensure_dir(parent, strict=is_default_runtime_dir(parent))


def open_private(path: str | os.PathLike, flags: int, mode: int = 0o600) -> int:
    """os.open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode) in a checked directory, the file a regular one of
    the daemon's user; DaemonError naming the file otherwise."""
    ensure_parent(path)
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode)
    except OSError as exc:
        what = "a symbolic link (refused)" if os.path.islink(path) else (exc.strerror or str(exc))
        raise DaemonError(f"cannot open {path}: {what}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
        os.close(fd)
        who = "not a regular file" if not stat.S_ISREG(st.st_mode) else f"owned by uid {st.st_uid}"
        raise DaemonError(f"refusing {path}: {who}, not a file of the daemon's user (uid {os.geteuid()}). "
                          f"Fix: remove it, or {_fix(Path(path).parent)}")
    os.set_blocking(fd, True)
    return fd
