"""systemd's notify protocol (Type=notify): one datagram to $NOTIFY_SOCKET."""

from __future__ import annotations

import os
import socket


def notify(state: str) -> bool:
    """Send e.g. "READY=1" or "STOPPING=1"; False when not under systemd (or it failed)."""
    addr = os.environ.get("NOTIFY_SOCKET")
    if not addr:
        return False
    if addr[0] == "@":  # abstract namespace
        addr = "\0" + addr[1:]
    elif addr[0] != "/":
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.connect(addr)
            s.sendall(state.encode())
        return True
    except OSError:
        return False
