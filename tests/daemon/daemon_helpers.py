"""Helpers for daemon tests: real processes, random free ports, tmp dirs, no leftovers.

(A module of its own, not conftest.py: tests import it by a name no other test folder uses.)
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import psutil

TESTS = Path(__file__).resolve().parent.parent
REPO = TESTS.parent
SRC = REPO / "src"
for p in (str(TESTS), str(SRC)):
    if p not in sys.path:
        sys.path.insert(0, p)

import oracle  # noqa: E402,F401 - re-exported for the daemon tests
from clirun import env, snarkd  # noqa: E402,F401 - re-exported for the daemon tests

from snarkd.daemon.netcheck import free_tcp_port  # noqa: E402


def free_port() -> int:
    return free_tcp_port()


def port_free(port: int) -> bool:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_gone(pid: int, timeout: float = 10) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)


def parse_started(stdout: str) -> dict:
    """`snarkd start` prints: snarkd started: pid N, listening on ADDR, config fingerprint FP"""
    for line in stdout.splitlines():
        if line.startswith("snarkd started: "):
            parts = dict(p.strip().rsplit(" ", 1) for p in line[len("snarkd started: "):].split(","))
            return {"pid": int(parts["pid"]), "listen": parts["listening on"], "fingerprint": parts["config fingerprint"]}
    raise AssertionError(f"no 'snarkd started' line in:\n{stdout}")


class Setup:
    """A tmp dir with a config for one daemon on a random free port."""

    def __init__(self, tmp: Path, port: int):
        self.dir = tmp
        self.port = port
        self.addr = f"127.0.0.1:{port}"
        self.pid_file = tmp / "run" / "snarkd.pid"
        self.log_file = tmp / "snarkd.log"
        self.config = tmp / "snarkd.toml"
        self.spool = tmp / "spool"

    def write(self, drain="10s", workers=1, preload: dict | None = None, extra: str = "", listen=None,
              name="snarkd.toml", witness_dirs: list | None = None) -> Path:
        lines = ["[daemon]", f'listen = "{listen or self.addr}"', f'pid_file = "{self.pid_file}"',
                 f'log_file = "{self.log_file}"', f'drain_timeout = "{drain}"',
                 "[transport]", f'witness_spool = "{self.spool}"', f"witness_dirs = {json.dumps(witness_dirs or [])}",
                 "[synthesis]", f"workers = {workers}", "threads = 1"]
        if preload:
            lines.append("[keys.preload]")
            lines += [f'{k} = "{v}"' for k, v in preload.items()]
        path = self.dir / name
        path.write_text("\n".join(lines) + "\n" + extra)
        return path

    def log(self) -> str:
        return self.log_file.read_text() if self.log_file.exists() else ""


class Reaper:
    """Kills whatever a test left running (and fails the test's teardown if it had to)."""

    def __init__(self):
        self.pids: list[int] = []
        self.procs: list[subprocess.Popen] = []
        self.pid_files: list[Path] = []

    def collect(self) -> list[int]:
        pids = list(self.pids)
        for pf in self.pid_files:
            if pf.exists():
                try:
                    pids.append(int(pf.read_text().split()[0]))
                except (ValueError, IndexError):
                    pass
        for p in self.procs:
            pids.append(p.pid)
        killed = []
        for pid in set(pids):
            if alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
                except ProcessLookupError:
                    pass
        for p in self.procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                pass
        return killed


def start_daemon(cfg: Path, reaper: Reaper, extra_env: dict | None = None, timeout: float = 180) -> int:
    """`snarkd start --config cfg` (asserted to succeed); the pid, left to the reaper."""
    r = snarkd("start", "--config", cfg, extra_env=extra_env, timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    pid = parse_started(r.stdout)["pid"]
    reaper.pids.append(pid)
    return pid


def serve_foreground(cfg: Path, reaper: Reaper, extra_env: dict | None = None) -> subprocess.Popen:
    """`snarkd serve` as our own child (so we see its exit code)."""
    proc = subprocess.Popen([sys.executable, "-m", "snarkd", "serve", "--config", str(cfg)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env(**(extra_env or {})))
    reaper.procs.append(proc)
    return proc


@contextmanager
def foreground_daemon(s: Setup, cfg: Path):
    """A `snarkd serve` child, serving, for a module's tests; stopped with SIGTERM after them (exit 0, pid file gone)."""
    reaper = Reaper()
    proc = serve_foreground(cfg, reaper)
    try:
        wait_serving(s.addr, proc)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                assert proc.wait(30) == 0
            finally:
                reaper.collect()
        assert not s.pid_file.exists()


def wait_serving(addr: str, proc: subprocess.Popen | None = None, timeout: float = 60):
    from snarkd.daemon.client import Client
    from snarkd.errors import SnarkdError

    deadline = time.monotonic() + timeout
    with Client(addr) as c:
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise AssertionError(f"daemon exited with {proc.returncode}:\n{proc.stderr.read()}")
            try:
                if c.health(timeout=1) == "SERVING":
                    return
            except SnarkdError:
                pass
            time.sleep(0.05)
    raise AssertionError(f"daemon on {addr} not SERVING after {timeout}s")


def status_json(cfg: Path) -> dict:
    r = snarkd("status", "--json", "--config", cfg)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout)
