"""Helpers for the fault-injection suite: real `snarkd serve` processes whose exit we watch, faults
injected from outside (as a client or an operator would), results checked by snarkjs.

(A module of its own, not conftest.py: tests import it by a name no other test folder uses.)
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
import sys  # noqa: E402

for p in (str(TESTS / "daemon"), str(TESTS / "fuzz"), str(TESTS)):
    if p not in sys.path:
        sys.path.insert(0, p)

from cases import build_case  # noqa: E402
from daemon_helpers import Reaper, Setup, free_port, serve_foreground, wait_serving  # noqa: E402
from differential import snarkjs_verify  # noqa: E402

from snarkd.daemon.client import Client  # noqa: E402
from snarkd.formats.wtns import read_wtns  # noqa: E402
from snarkd.formats.zkey import read_zkey  # noqa: E402


@dataclass
class Case:
    """A fixture circuit's key, vk and witnesses (W1 = witnesses[0], ...), with each witness's public signals."""

    zkey: Path
    vk: Path
    witnesses: list[Path]
    publics: list[list[str]] = field(default_factory=list)


def case(name: str, *inputs: dict) -> Case:
    base = build_case(name, "bn128")
    ws = [base.circuit.witness(i) for i in inputs]
    with read_zkey(base.zkey) as z:
        n_public = z.n_public
    publics = [[str(v) for v in read_wtns(w).to_ints()[1 : 1 + n_public]] for w in ws]
    return Case(base.zkey, base.vk, ws, publics)


def all_valid(vk: Path, replies) -> bool:
    """snarkjs groth16.verify accepts every (proof, public) of these replies (one node process)."""
    cases = [{"vk": vk.read_bytes(), "public": json.dumps(r.public).encode(), "proof": json.dumps(r.proof).encode()}
             for r in replies]
    return bool(cases) and snarkjs_verify(cases) == ["valid"] * len(cases)


class Daemon:
    """One `snarkd serve` child of this test process (so its exit status is ours to see: a SIGBUS is -7)."""

    def __init__(self, tmp: Path, *, preload: dict, workers: int = 2, delay: str = "0s", witness_dirs=(),
                 extra: str = ""):
        self.dir = tmp
        self.setup = Setup(tmp, free_port())
        self.addr = self.setup.addr
        text = f'[debug]\nsynthesis_delay = "{delay}"\n' + extra
        self.config = self.setup.write(drain="5s", workers=workers, preload=preload,
                                       witness_dirs=[str(d) for d in witness_dirs], extra=text)
        self.reaper = Reaper()
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Daemon":
        self.proc = serve_foreground(self.config, self.reaper)
        wait_serving(self.addr, self.proc)
        return self

    def client(self, **kw) -> Client:
        return Client(self.addr, timeout=120, **kw)

    def assert_alive(self) -> None:
        assert self.proc.poll() is None, f"the daemon died: exit {self.proc.returncode}\n{self.log()[-3000:]}"
        with self.client() as c:
            assert c.health() == "SERVING"

    def log(self) -> str:
        return self.setup.log()

    def stop(self) -> None:
        """SIGTERM: the daemon must drain and exit 0."""
        try:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                rc = self.proc.wait(60)
                assert rc == 0, f"exit {rc}\n{self.log()[-3000:]}"
        finally:
            self.reaper.collect()


def place(src: Path, dst: Path) -> Path:
    """A private copy of a fixture file (fixtures are shared between worktrees: never changed in place)."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return dst


def cp(src: Path, dst: Path) -> None:
    """What an operator's `cp` does to a file that is in use: opened O_TRUNC, rewritten in place."""
    subprocess.run(["cp", str(src), str(dst)], check=True)
