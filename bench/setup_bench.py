#!/usr/bin/env python3
"""Benchmark `snarkd setup` on chain circuits (s[i+1] = s[i]^2 + k + i) of 2^P constraints.

The r1cs is emitted directly (byte-identical to circom2's, see
snarkd/setup/chain_circuit.py) into bench/work/chain<P>-<curve>/circuit.r1cs.
Each setup runs in a fresh subprocess that reports its wall time, phase
timings and peak RSS (getrusage ru_maxrss). Results: bench/results/setup.json.

Usage: python bench/setup_bench.py [--powers 16,20] [--curves bn128,bls12381] [--threads 0] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

CHILD = r"""
import json, resource, sys, time
from snarkd.setup.groth16_setup import setup
t0 = time.perf_counter()
res = setup(sys.argv[1], sys.argv[2], None, seed=b"bench", threads=int(sys.argv[3]), progress=False)
wall = time.perf_counter() - t0
print(json.dumps({"wall_s": wall, "phases_s": res.seconds, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "n_vars": res.n_vars, "domain_size": res.domain_size}))
"""


def ensure_r1cs(power: int, curve_name: str) -> Path:
    from snarkd.curves.params import curve_by_name
    from snarkd.setup.chain_circuit import chain_r1cs_bytes

    d = REPO / "bench" / "work" / f"chain{power}-{curve_by_name(curve_name).name}"
    d.mkdir(parents=True, exist_ok=True)
    p = d / "circuit.r1cs"
    want = chain_r1cs_bytes(1 << power, curve_by_name(curve_name))
    if not p.exists() or p.stat().st_size != len(want):
        p.write_bytes(want)
    return p


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--powers", default="16,20")
    ap.add_argument("--curves", default="bn128,bls12381")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "setup.json"))
    a = ap.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    runs = []
    for power in [int(p) for p in a.powers.split(",")]:
        for curve in a.curves.split(","):
            r1cs = ensure_r1cs(power, curve)
            zkey = r1cs.parent / "bench.zkey"
            for rep in range(a.repeat):
                load0 = os.getloadavg()
                proc = subprocess.run([sys.executable, "-c", CHILD, str(r1cs), str(zkey), str(a.threads)], capture_output=True, text=True, env=env)
                if proc.returncode != 0:
                    print(proc.stderr, file=sys.stderr)
                    raise SystemExit(f"setup failed for 2^{power} {curve}")
                res = json.loads(proc.stdout.strip().splitlines()[-1])
                res.update({"constraints": 1 << power, "power": power, "curve": curve, "repeat": rep, "zkey_bytes": zkey.stat().st_size,
                            "loadavg_before": load0, "loadavg_after": os.getloadavg()})
                zkey.unlink()
                runs.append(res)
                print(f"2^{power} {curve}: {res['wall_s']:.1f}s, peak RSS {res['peak_rss_mib']:.0f} MiB, zkey {res['zkey_bytes'] / 2**20:.0f} MiB "
                      f"(load {load0[0]:.1f})", flush=True)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {"benchmark": "snarkd setup, chain circuit", "date": time.strftime("%Y-%m-%dT%H:%M:%S"), "cpus": os.cpu_count(),
           "machine": platform.machine(), "processor": platform.processor(), "python": platform.python_version(), "threads": a.threads, "runs": runs}
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"-> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
