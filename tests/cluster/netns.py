"""Run a test program in a private network namespace (`unshare --net`): only its own loopback exists.

Ray's servers (GCS, raylets, object managers, workers) listen on every interface and use the address
Ray picks for the node. Inside a namespace of their own, every interface is that namespace's loopback:
nothing a test starts can be reached from outside it, and nothing it sends can leave.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import socket
import struct
import subprocess

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def loopback_up() -> None:
    """Bring `lo` up (a new namespace starts with it down); call first thing inside the namespace."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        flags = struct.unpack("16sH14s", fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH14s", b"lo", 0, b"")))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))
    finally:
        s.close()


def why_unavailable() -> str:
    """"" when this machine lets us make a network namespace; else why not."""
    exe = shutil.which("unshare")
    if exe is None:
        return "no `unshare` (util-linux) on this machine"
    r = subprocess.run([exe, "--net", "true"], capture_output=True, text=True)
    if r.returncode != 0:
        return f"`unshare --net` is not permitted here ({r.stderr.strip() or r.returncode}; it needs root)"
    return ""


def run(argv: list[str], timeout: float, env: dict | None = None, log_path=None) -> subprocess.CompletedProcess:
    """argv inside a new network namespace (its output to log_path when given)."""
    out = open(log_path, "w") if log_path else subprocess.PIPE  # noqa: SIM115 - closed below
    try:
        return subprocess.run(["unshare", "--net", "--", *argv], stdout=out, stderr=subprocess.STDOUT,
                              text=True, timeout=timeout, env=env or dict(os.environ))
    finally:
        if log_path:
            out.close()
