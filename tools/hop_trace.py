"""The module hops of one snarkd command, in order: each call that crosses from one module of src/snarkd into another
(or into a native extension), read with sys.setprofile. ARCHITECTURE.md's three traces were taken with it.

    python tools/hop_trace.py prove KEY.zkey W.wtns proof.json public.json
    python tools/hop_trace.py witness --engine native CIRCUIT.wasm input.json w.wtns
    python tools/hop_trace.py --after Status --until handle_exit serve --config snarkd.toml
        # a daemon: from its first Status call to SIGTERM's handler; the hops print when it has stopped
    python tools/hop_trace.py prove --addr HOST:PORT --key chain W.wtns proof.json public.json
        # a job to it (ARCHITECTURE.md's: tests/daemon/test_job_trace.py takes the pair)

It runs this tree's src/ (first on sys.path). A hop is a module's calls into one other module, counted once however
often they come (the first such call is shown). Left out: imports (module bodies), logging and metrics, and calls among config/'s
own modules (the validator behind one entry call). `<-` marks a call into a module already on the thread's stack
below its caller: down and back up.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src" / "snarkd") + os.sep
QUIET = {"daemon/logsetup.py", "daemon/metrics.py"}  # logging and counters: on every path, no work of the path's


def module_of(filename: str) -> str | None:
    return filename[len(SRC):] if filename.startswith(SRC) else None


class Hops:
    def __init__(self, after: str | None, until: str | None):
        self.after, self.until, self.on, self.done = after, until, after is None, False
        self.rows: list[tuple[str, str, str, str, bool]] = []
        self._seen: set[tuple[str, str]] = set()  # (module, module it called)

    def _keep(self, thread, caller, func, callee, back_up) -> None:
        target = callee.rsplit(".", 1)[0]
        if caller.startswith("config/") and target.startswith("config/") or target in QUIET or caller in QUIET:
            return
        key = (caller, target)
        if key not in self._seen:
            self._seen.add(key)
            self.rows.append((thread, caller, func, callee, back_up))

    def profile(self, frame, event, arg):
        if event == "call":
            callee, back = module_of(frame.f_code.co_filename), frame.f_back
            if callee is None or frame.f_code.co_name == "<module>":
                return
            if not self.on:
                self.on = callee == "daemon/service.py" and frame.f_code.co_name == self.after
            self.done = self.done or frame.f_code.co_name == self.until
            if not self.on or self.done:
                return
            while back is not None and module_of(back.f_code.co_filename) is None:
                back = back.f_back  # through the standard library (contextlib, threading) to snarkd's caller
            if back is None:
                return
            caller = module_of(back.f_code.co_filename)
            if caller is None or caller == callee:
                return
            stack, f = set(), back
            while f is not None:
                if f.f_code.co_name == "<module>" and module_of(f.f_code.co_filename):
                    return  # an import's work, not the command's
                stack.add(module_of(f.f_code.co_filename))
                f = f.f_back
            stack.discard(caller)
            self._keep(threading.current_thread().name, caller, back.f_code.co_name,
                       f"{callee}.{frame.f_code.co_name}", callee in stack)
        elif event == "c_call" and self.on and not self.done:
            owner = getattr(arg, "__module__", None)
            caller = module_of(frame.f_code.co_filename)
            if caller and isinstance(owner, str) and owner.startswith("snarkd.native"):
                self._keep(threading.current_thread().name, caller, frame.f_code.co_name,
                           f"{owner.replace('snarkd.', '').replace('.', '/', 1)}.{arg.__name__}", False)

    def report(self) -> str:
        threads = len({row[0] for row in self.rows}) > 1
        lines = []
        for i, (thread, caller, func, callee, up) in enumerate(self.rows, 1):
            target, name = callee.rsplit(".", 1)
            hop = f"{caller.removesuffix('.py')} {'<-' if up else '->'} {target.removesuffix('.py')}"
            lines.append(f"{i:3d}  {f'{thread[:8]:<9}' if threads else ''}{hop:<50} {func} -> {name}")
        return "\n".join(lines) + f"\n{len(self.rows)} hops\n"


def main(argv: list[str]) -> int:
    after = until = None
    while argv[:1] in (["--after"], ["--until"]):
        if argv[0] == "--after":
            after = argv[1]
        else:
            until = argv[1]
        argv = argv[2:]
    sys.path.insert(0, str(Path(SRC).parent))
    from snarkd.cli import main as snarkd_main

    hops = Hops(after, until)
    sys.setprofile(hops.profile)
    threading.setprofile(hops.profile)
    try:
        rc = snarkd_main(argv)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        sys.stderr.write(hops.report())
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
