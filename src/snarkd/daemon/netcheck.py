"""Is a listen address free, and if not, who holds it?"""

from __future__ import annotations

import errno
import os
import socket
import stat

import psutil

from snarkd.config import Listen


def free_tcp_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on `host` now (for tests and benchmarks that start daemons)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _holders_tcp(port: int) -> list[str]:
    found = []
    try:
        conns = psutil.net_connections(kind="inet")
    except (psutil.AccessDenied, OSError):
        return found
    for c in conns:
        if c.laddr and c.laddr.port == port and c.status == psutil.CONN_LISTEN:
            found.append(_describe(c.pid))
    return sorted(set(found))


def _holders_unix(path: str) -> list[str]:
    found = []
    try:
        conns = psutil.net_connections(kind="unix")
    except (psutil.AccessDenied, OSError):
        return found
    for c in conns:
        if c.laddr == path:
            found.append(_describe(c.pid))
    return sorted(set(found))


def _describe(pid: int | None) -> str:
    if pid is None:
        return "a process this user cannot inspect (another user's, or in another namespace)"
    try:
        p = psutil.Process(pid)
        cmd = " ".join(p.cmdline()) or p.name()
        return f"pid {pid} ({cmd})"
    except psutil.AccessDenied:
        return f"pid {pid}"
    except psutil.Error:
        return f"pid {pid} (exited)"


def tcp_in_use(host: str, port: int) -> OSError | None:
    """Try to bind host:port the way the daemon will (SO_REUSEADDR, no SO_REUSEPORT)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        return OSError(errno.EADDRNOTAVAIL, f"cannot resolve {host!r}: {exc}")
    for family, stype, proto, _canon, addr in infos[:1]:
        s = socket.socket(family, stype, proto)
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind(addr)
        except OSError as exc:
            return exc
        finally:
            s.close()
    return None


def unix_in_use(path: str) -> bool | None:
    """True: something accepts connections there; False: a dead socket file; None: no file."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISSOCK(st.st_mode):
        raise OSError(errno.EEXIST, f"{path} exists and is not a socket")
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(1.0)
        s.connect(path)
        return True
    except (ConnectionRefusedError, FileNotFoundError):
        return False
    except OSError:
        return True
    finally:
        s.close()


def check_free(listen: Listen) -> str | None:
    """None when the daemon can bind `listen`, else a message naming the holder."""
    if listen.kind == "unix":
        try:
            used = unix_in_use(listen.path)
        except OSError as exc:
            return f"cannot listen on {listen}: {exc.strerror}"
        if used:
            holders = _holders_unix(listen.path)
            who = ", ".join(holders) if holders else "an unknown process"
            return f"address {listen} is already in use by {who}"
        return None
    err = tcp_in_use(listen.host, listen.port)
    if err is None:
        return None
    if err.errno == errno.EADDRINUSE:
        holders = _holders_tcp(listen.port)
        who = ", ".join(holders) if holders else "a process this user cannot see"
        return f"address {listen} is already in use by {who}"
    if err.errno == errno.EACCES:
        return f"cannot listen on {listen}: permission denied (ports below 1024 need privileges)"
    if err.errno == errno.EADDRNOTAVAIL:
        return f"cannot listen on {listen}: {listen.host} is not an address of this machine"
    return f"cannot listen on {listen}: {err.strerror or err}"


def is_free(listen: Listen) -> bool:
    if listen.kind == "unix":
        try:
            return not unix_in_use(listen.path)
        except OSError:
            return False
    return tcp_in_use(listen.host, listen.port) is None
