"""The control-flow run in process: CPU ms per distinct input of a value-dependent circuit (zk-email's RSA verifier:
a new signature each), this tree against others, interleaved round by round.

Each side runs in a process of its own (its source tree on PYTHONPATH) and times NativeCalculator._run (the
control-flow run alone: no replay tried, no process start) on DIR's inputs-1..N.json, after one warm-up run; the
witnesses' digest must agree across sides (every side's witnesses byte for byte the same).

    python bench/witness_control_flow_cpu.py --dir bench/work/rsa-bn128 --n 16 --rounds 4 \\
        --side before=/tmp/before/src [--json bench/results/witness-control-flow-cpu.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

CHILD = r"""
import hashlib, json, sys, time
from pathlib import Path
from snarkd.witness import NativeCalculator
d, n = Path(sys.argv[1]), int(sys.argv[2])
calc = NativeCalculator(d / "circuit.wasm", cache=False)
runs = [[(p.hash, p.data) for p in calc.prepare(json.loads((d / f"inputs-{i}.json").read_text()))]
        for i in range(1, n + 1)]
calc._run(runs[0])
ms, digest = [], hashlib.sha256()
for r in runs:
    t = time.process_time()
    res = calc._run(r)
    ms.append((time.process_time() - t) * 1e3)
    assert res.ok, res.message
    digest.update(bytes(res.witness))
print(json.dumps({"cpu_ms": ms, "digest": digest.hexdigest()}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, default=REPO / "bench" / "work" / "rsa-bn128")
    ap.add_argument("--n", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--side", action="append", default=[], metavar="NAME=SRC", help="another snarkd source tree")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    sides = {"snarkd": REPO / "src", **{n: Path(s).resolve() for n, _, s in (x.partition("=") for x in args.side)}}
    ms = {name: [] for name in sides}
    digests = set()
    for _ in range(args.rounds):
        for name, src in sides.items():
            out = subprocess.run([sys.executable, "-c", CHILD, str(args.dir), str(args.n)], check=True,
                                 capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(src))).stdout
            row = json.loads(out)
            ms[name] += row["cpu_ms"]
            digests.add(row["digest"])
    assert len(digests) == 1, "the sides' witnesses differ"
    result = {"benchmark": "control-flow run in process, CPU ms per distinct input", "dir": str(args.dir),
              "inputs": args.n, "rounds": args.rounds, "sources": {k: str(v) for k, v in sides.items()},
              "load": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
              "cpu_ms_median": {k: round(statistics.median(v), 1) for k, v in ms.items()},
              # the lower quartile too: on a shared machine other processes lengthen runs, never shorten them
              "cpu_ms_p25": {k: round(statistics.quantiles(v, n=4)[0], 1) for k, v in ms.items()},
              "cpu_ms_min": {k: round(min(v), 1) for k, v in ms.items()}, "cpu_ms": ms}
    print(json.dumps({k: v for k, v in result.items() if k != "cpu_ms"}, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
