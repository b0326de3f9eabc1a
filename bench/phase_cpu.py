#!/usr/bin/env python3
"""Per-phase busy time of each thread in `snarkd prove --threads T`: where the second core idles.

Each proof runs in a child process whose PhaseTimer.phase is wrapped (this script only; the prover is
unchanged) to read, around every phase, the wall clock, the process CPU clock (all threads) and the
calling thread's CPU clock. The native pool runs task 0 on the calling thread, so per phase
  main  = the caller's CPU time, others = process CPU - main,
and with T = 2 the second core's idle time is wall - others (wall - main for the caller). Under load a
runnable thread waiting for a core counts as idle here too: state the load (printed) with the figures.
Trees with `_core._parallel_stats` (parallel.hpp's counters) also give load-free measures: per phase the
parallel regions, r.idle = sum over regions of T x (busiest thread's CPU) - (all threads' CPU), i.e. the
CPU time threads that finished early could have used, and serial = the caller's CPU outside regions (the
others have nothing to do then). r.idle + serial ~ the second core's idle time on an otherwise idle machine.
Whole-process wall and CPU (user + system of the child) are reported as well.

Usage: python bench/phase_cpu.py --tree PATH --dir bench/work/chain16-bn128 [--runs 5] [--threads 2]
           [--ifma on] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import time
T0 = (time.perf_counter(), time.process_time(), time.thread_time())
import json, sys
from contextlib import contextmanager
from snarkd.native import _core
_core._set_simd52(sys.argv[1] == 'on')
from snarkd.prover import timing
rec = {}
stats = getattr(_core, '_parallel_stats', None)  # trees before it have no counters
if stats: stats(True)
orig = timing.PhaseTimer.phase
@contextmanager
def phase(self, name):
    if stats:  # what ran since the last phase: outside the phases
        s = stats(True)
        r = rec.setdefault('(outside)', [0.0, 0.0, 0.0, 0, 0.0, 0.0])
        r[3] += s['regions']; r[4] += s['idle_ms']; r[5] += s['caller_ms']
    w0, p0, t0 = time.perf_counter(), time.process_time(), time.thread_time()
    with orig(self, name):
        yield
    r = rec.setdefault(name, [0.0, 0.0, 0.0, 0, 0.0, 0.0])
    r[0] += (time.perf_counter() - w0) * 1e3
    r[1] += (time.process_time() - p0) * 1e3
    r[2] += (time.thread_time() - t0) * 1e3
    if stats:
        s = stats(True)
        r[3] += s['regions']; r[4] += s['idle_ms']; r[5] += s['caller_ms']
timing.PhaseTimer.phase = phase
from snarkd.cli import main
T1 = (time.perf_counter(), time.process_time(), time.thread_time())
rc = main(sys.argv[3:])
T2 = (time.perf_counter(), time.process_time(), time.thread_time())
if stats:
    s = stats(False)
    r = rec.setdefault('(outside)', [0.0, 0.0, 0.0, 0, 0.0, 0.0])
    r[3] += s['regions']; r[4] += s['idle_ms']; r[5] += s['caller_ms']
# imports (from the first line here) and main() as a whole; '(outside)': main() less its phases
rec['(imports)'] = [(T1[i] - T0[i]) * 1e3 for i in range(3)] + [0, 0.0, 0.0]
o = rec.setdefault('(outside)', [0.0, 0.0, 0.0, 0, 0.0, 0.0])
for i in range(3):
    o[i] = (T2[i] - T1[i]) * 1e3 - sum(v[i] for k, v in rec.items() if not k.startswith('('))
with open(sys.argv[2], 'w') as f:
    json.dump(rec, f)
sys.exit(rc)
"""

ORDER = ("(imports)", "(outside)", "check", "spmv", "ntt", "msm_h", "msm_a", "msm_b1", "msm_c", "msm_b2", "assemble", "verify", "write")


def one(tree: Path, d: Path, ifma: str, threads: int, out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"))
    cmd = [sys.executable, "-c", CHILD, ifma, str(out / "phases.json"), "prove", str(d / "circuit.zkey"),
           str(d / "witness.wtns"), str(out / "proof.json"), str(out / "public.json"), "--no-progress",
           "--threads", str(threads)]
    r0 = os.times()
    w0 = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    wall = (time.perf_counter() - w0) * 1e3
    r1 = os.times()
    cpu = ((r1.children_user - r0.children_user) + (r1.children_system - r0.children_system)) * 1e3
    ph = json.loads((out / "phases.json").read_text())
    return {"wall": wall, "cpu": cpu, "phases": ph}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", type=Path, required=True)
    ap.add_argument("--dir", type=Path, action="append", required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ifma", default="on")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    res = {"tree": str(args.tree), "threads": args.threads, "ifma": args.ifma, "load": [os.getloadavg()], "dirs": {}}
    tmp = Path(tempfile.mkdtemp(prefix="snarkd-phase-cpu-"))
    for d in args.dir:
        runs = [one(args.tree.resolve(), d, args.ifma, args.threads, tmp) for _ in range(args.runs)]
        med = lambda xs: statistics.median(xs)  # noqa: E731
        names = [n for n in ORDER if n in runs[0]["phases"]] + [n for n in runs[0]["phases"] if n not in ORDER]
        # the phases' sums (the nested "h" is inside "ntt" and left out of them)
        for r in runs:
            ph = r["phases"]
            top = [v for k, v in ph.items() if not k.startswith("(") and k != "h"]
            ph["(phases)"] = [sum(v[i] for v in top) for i in range(6)]
        names.append("(phases)")
        rows = {}
        print(f"{d.name}: {args.runs} runs, threads {args.threads}, IFMA {args.ifma}; medians, ms")
        print(f"{'phase':10} {'wall':>8} {'cpu':>8} {'main':>8} {'others':>8} {'cpu/wall':>8} {'idle2':>8}"
              f" {'regions':>8} {'r.idle':>8} {'serial':>8}")
        for n in names:
            w = med([r["phases"][n][0] for r in runs])
            c = med([r["phases"][n][1] for r in runs])
            m = med([r["phases"][n][2] for r in runs])
            o = med([r["phases"][n][1] - r["phases"][n][2] for r in runs])
            idle = med([args.threads * r["phases"][n][0] - r["phases"][n][1] for r in runs])
            # with the counters: idle inside regions (threads done early) and the caller's CPU outside them
            # (serial: the other threads have nothing), both CPU time, so not moved by the load
            reg = med([r["phases"][n][3] for r in runs]) if len(runs[0]["phases"][n]) > 3 else 0
            ridle = med([r["phases"][n][4] for r in runs]) if reg else 0.0
            serial = med([r["phases"][n][2] - r["phases"][n][5] for r in runs]) if reg else 0.0
            rows[n] = {"wall": w, "cpu": c, "main": m, "others": o, "idle": idle, "regions": reg,
                       "region_idle": ridle, "serial": serial}
            print(f"{n:10} {w:8.1f} {c:8.1f} {m:8.1f} {o:8.1f} {c / w if w else 0:8.2f} {idle:8.1f}"
                  f" {reg:8.0f} {ridle:8.1f} {serial:8.1f}")
        pw, pc = med([r["wall"] for r in runs]), med([r["cpu"] for r in runs])
        print("(imports): the child's imports; (outside): main() less its phases; (phases): their sum;"
              " process: the child from fork to exit")
        print(f"{'process':10} {pw:8.1f} {pc:8.1f} {'':8} {'':8} {pc / pw:8.2f} {args.threads * pw - pc:8.1f}")
        res["dirs"][d.name] = {"phases": rows, "process": {"wall": pw, "cpu": pc}, "runs": runs}
    res["load"].append(os.getloadavg())
    print("load", res["load"])
    if args.json:
        args.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
