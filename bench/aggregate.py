#!/usr/bin/env python3
"""SnarkPack aggregation: time, size and peak memory per n and curve.

    python bench/aggregate.py [--n 64 1024 8192] [--curves bn128 bls12381] [--backend cpu|cuda] [--out bench/results/aggregate.json]

Each (curve, n) runs in its own process (so its peak RSS is its own): n synthetic Groth16 proofs
of one key with 1 public input (tests/aggregate/synthetic.py: the verifier sees exactly what it
sees for prover-made proofs), a development SRS of max_n = n, then `prover.aggregate` (median of
REPEAT runs; wall and CPU seconds; --backend cuda: the Miller loops on GPU 0, after one
untimed n = 64 aggregate that loads the kernels), the aggregate's bytes and JSON size, `verifier.verify` (median of 7; the parsed
aggregate, as `snarkd verify-aggregate` runs it after reading the JSON) and the parse time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests" / "aggregate"))
sys.path.insert(0, str(REPO / "bench"))


def _cpu() -> float:
    """CPU seconds of this process (all its threads): less sensitive than wall time to other load."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def one(curve_name: str, n: int, backend: str = "cpu") -> dict:
    from snarkd.aggregate import proof_format, prover, srs as srs_mod, verifier
    from snarkd.curves.params import curve_by_name
    import agg_synthetic as synthetic

    curve = curve_by_name(curve_name)
    st = synthetic.make(curve, n, n_public=1)
    srs = srs_mod.dev_srs(curve, max(n, 2))
    key = srs.specialize(n)
    gpu = None
    if backend == "cuda":
        from snarkd.gpu.device import get

        gpu = get(0)
        small = synthetic.make(curve, 64, n_public=1)
        prover.aggregate(srs_mod.dev_srs(curve, 64).specialize(64), small.vk, small.public, small.A, small.B, small.C,
                         gpu=gpu)
    repeat = 3 if n <= 1024 or gpu is not None else 1
    times, cpu = [], []
    for _ in range(repeat):
        c, t = _cpu(), time.perf_counter()
        agg = prover.aggregate(key, st.vk, st.public, st.A, st.B, st.C, gpu=gpu)
        times.append(time.perf_counter() - t)
        cpu.append(_cpu() - c)
    raw = agg.to_bytes()
    doc = proof_format.to_json(agg, srs.id, srs.dev, st.vk.digest, st.public)
    text = json.dumps(doc)
    parse = []
    for _ in range(5):
        t = time.perf_counter()
        parsed = proof_format.from_bytes(curve, n, proof_format.read_json(json.loads(text), "agg").proof)
        parse.append(time.perf_counter() - t)
    ver, ver_cpu = [], []
    for _ in range(7):
        c, t = _cpu(), time.perf_counter()
        ok = verifier.verify(srs, st.vk, st.public, parsed)
        ver.append(time.perf_counter() - t)
        ver_cpu.append(_cpu() - c)
        assert ok
    return {"curve": curve_name, "n": n, "backend": backend, "aggregate_s": statistics.median(times), "aggregate_runs": times,
            "aggregate_cpu_s": statistics.median(cpu), "verify_cpu_ms": 1e3 * statistics.median(ver_cpu),
            "load_average_1min": os.getloadavg()[0],
            "proof_bytes": len(raw), "json_bytes": len(text), "json_bytes_without_public": len(text) - len(json.dumps(doc["public"])),
            "parse_and_check_ms": 1e3 * statistics.median(parse), "verify_ms": 1e3 * statistics.median(ver),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, nargs="+", default=[64, 1024, 8192])
    ap.add_argument("--curves", nargs="+", default=["bn128", "bls12381"])
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "aggregate.json"))
    ap.add_argument("--backend", choices=("cpu", "cuda"), default="cpu", help="where the Miller loops run")
    ap.add_argument("--one", nargs=2, metavar=("CURVE", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]), args.backend)))
        return
    from prove_vs_rapidsnark import cpu_name

    rows = []
    for curve in args.curves:
        for n in args.n:
            out = subprocess.run([sys.executable, __file__, "--one", curve, str(n), "--backend", args.backend], capture_output=True, text=True, check=True)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            row["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            print(json.dumps(row), flush=True)
            rows.append(row)
    # rows of (curve, n) not measured this time stay from the last run (each row has its date and load)
    out_path = Path(args.out)
    if out_path.exists():
        done = {(r["curve"], r["n"], r.get("backend", "cpu")) for r in rows}
        rows = [r for r in json.loads(out_path.read_text()).get("rows", [])
                if (r["curve"], r["n"], r.get("backend", "cpu")) not in done] + rows
        rows.sort(key=lambda r: (r["curve"] != "bn128", r.get("backend", "cpu"), r["n"]))
    doc = {"machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus", "cpu": cpu_name(),
           "note": f"{os.cpu_count()}-core machine, possibly shared: each row has its load average",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rows": rows}
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
