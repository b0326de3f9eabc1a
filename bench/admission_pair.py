#!/usr/bin/env python3
"""A daemon job's admission and latency, two source trees side by side in one run (issue 35's daemon changes).

    python bench/admission_pair.py --side before=/tmp/base --side after=. [--rounds 11] [--jobs 20] [--out F.json]

Each side is a `snarkd serve` of that tree's src/ with the bundled BN254 example preloaded (journal on, the
witness by reference through the spool, one synthesis worker, one native thread). Rounds alternate the sides; in
each, one client proves the example --jobs times, one job at a time, and the round's medians are kept: the
daemon's admission (the reply's `timings["admission"]`: the request checked, its witness read, the journal's claim,
the engine's submit) and the client's wall time per job. Reported per side: the median of the round medians; and
after/before, the median of the per-round ratios (the first side named is the base).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from snarkd.daemon.client import Client  # noqa: E402
from snarkd.daemon.netcheck import free_tcp_port  # noqa: E402

EXAMPLE = REPO / "examples" / "chain-bn128"


def start(tree: Path, work: Path) -> tuple[subprocess.Popen, str]:
    work.mkdir(parents=True)
    addr = f"127.0.0.1:{free_tcp_port()}"
    cfg = work / "snarkd.toml"
    cfg.write_text(f'[daemon]\nlisten = "{addr}"\npid_file = "{work / "snarkd.pid"}"\nlog_file = "{work / "log"}"\n'
                   f'[transport]\nwitness_spool = "{work / "spool"}"\n[synthesis]\nworkers = 1\nthreads = 1\n'
                   f'[keys.preload]\nchain = "{EXAMPLE / "chain.zkey"}"\n')
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "snarkd", "serve", "--config", str(cfg)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with Client(addr) as c:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if c.health(timeout=1) == "SERVING":
                    return proc, addr
            except Exception:  # noqa: BLE001 - not listening yet
                pass
            time.sleep(0.1)
    proc.kill()
    raise SystemExit(f"the daemon of {tree} did not start: see {work / 'log'}")


def round_of(addr: str, jobs: int) -> tuple[float, float]:
    """(median admission ms, median client wall ms) of `jobs` proofs, one at a time."""
    admission, wall = [], []
    with Client(addr) as c:
        for _ in range(jobs):
            t0 = time.perf_counter()
            reply = c.prove("chain", witness_paths=[str(EXAMPLE / "chain.wtns")])
            wall.append((time.perf_counter() - t0) * 1e3)
            admission.append(reply.timings["admission"])
    return statistics.median(admission), statistics.median(wall)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--side", action="append", required=True, metavar="NAME=TREE", help="twice: base first")
    ap.add_argument("--rounds", type=int, default=11)
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    sides = [s.split("=", 1) for s in a.side]
    if len(sides) != 2:
        raise SystemExit("--side twice: NAME=TREE of the base, then of the change")
    rows: dict[str, list] = {name: [] for name, _ in sides}
    with tempfile.TemporaryDirectory() as tmp:
        daemons = {name: start(Path(tree).resolve(), Path(tmp) / name) for name, tree in sides}
        try:
            for name, (_, addr) in daemons.items():
                round_of(addr, 3)  # warm: the first proofs of a key pay for its first mapping
            for r in range(a.rounds):
                for name, _ in (sides if r % 2 == 0 else sides[::-1]):
                    rows[name].append(round_of(daemons[name][1], a.jobs))
        finally:
            for proc, _ in daemons.values():
                proc.send_signal(signal.SIGTERM)
                proc.wait(60)
    (base, _), (change, _) = sides
    out = {"command": " ".join([Path(sys.argv[0]).name] + sys.argv[1:]), "load": os.getloadavg(),
           "sides": dict(sides), "rounds": rows,
           "median_ms": {n: {"admission": statistics.median(x[0] for x in v),
                             "wall": statistics.median(x[1] for x in v)} for n, v in rows.items()},
           "ratio": {k: statistics.median(c[i] / b[i] for b, c in zip(rows[base], rows[change]))
                     for i, k in enumerate(("admission", "wall"))}}
    text = json.dumps(out, indent=1)
    if a.out:
        a.out.write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
