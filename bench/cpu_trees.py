#!/usr/bin/env python3
"""Whole `snarkd prove` of two (or more) source trees side by side, IFMA off and on.

Each tree is a checkout with its native core built in place (python setup.py build_ext
--inplace); its proofs run as child processes with PYTHONPATH=TREE/src, so "before" is a
checkout of the base commit and "after" this one, measured in the same run, rounds in
rotated order so that load from other processes moves every setting alike. The 8-lane
path is switched off in the child with the testing switch `_core._set_simd52(False)`,
which every tree has (the documented SNARKD_CPU_IFMA=off is newer than some trees).
The first proof of every (tree, circuit, path) is checked with `snarkjs groth16 verify`.
Each tree's modules are compiled to bytecode first, as an installed snarkd's are (byte_compile in
prove_vs_snarkjs.py); --source NAME runs that tree's children from source instead, every process
compiling its modules (what this harness measured before round 7 where PYTHONDONTWRITEBYTECODE is set).

Reports per setting the medians of wall time, process CPU time (user + system, all
threads) and each `--timings` phase, the peak RSS, and the load average around the run.

Usage: python bench/cpu_trees.py --tree before=/tmp/base --tree after=. \\
           --dir bench/work/chain16-bn128 --dir bench/work/sha256-bn128 [--runs 7] \\
           [--ifma off,on] [--threads 0] [--source NAME] [--no-backend-flag] [--json bench/results/OUT.json]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from prove_vs_rapidsnark import cpu_name  # noqa: E402
from prove_vs_snarkjs import SNARKJS, byte_compile, parse_timings, timed  # noqa: E402

CHILD = ("import sys; from snarkd.native import _core; _core._set_simd52(sys.argv[1] == 'on'); "
         "from snarkd.cli import main; sys.exit(main(sys.argv[2:]))")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tree", action="append", required=True, help="NAME=PATH of a built checkout")
    ap.add_argument("--dir", action="append", type=Path, required=True, help="circuit.zkey, witness.wtns, vk.json")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--ifma", default="off,on")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--no-verify", action="store_true", help="skip snarkjs groth16 verify of the first proofs")
    ap.add_argument("--source", action="append", default=[], metavar="NAME",
                    help="run this tree from source: no bytecode, each process compiles its modules (repeatable)")
    ap.add_argument("--no-backend-flag", action="store_true",
                    help="`snarkd prove` without --backend cpu, as the rapidsnark pairs run it ([prove] backend: cpu)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    trees = dict(t.split("=", 1) for t in args.tree)
    paths = [p for p in args.ifma.split(",") if p]
    tmp = Path(tempfile.mkdtemp(prefix="snarkd-trees-"))
    src = {}  # tree name -> the src/ folder its children import
    for name, path in trees.items():
        src[name] = Path(path).resolve() / "src"
        if name in args.source:  # a copy without the tree's __pycache__ folders, which its children may not write
            src[name] = shutil.copytree(src[name], tmp / f"{name}-src", ignore=shutil.ignore_patterns("__pycache__"))
        else:
            byte_compile(src[name])
    settings = [(name, d, path) for d in args.dir for path in paths for name in trees]

    def cmd(name, d, path, out):
        c = [sys.executable, "-c", CHILD, path, "prove", *([] if args.no_backend_flag else ["--backend", "cpu"]), str(d / "circuit.zkey"),
             str(d / "witness.wtns"), str(out / "proof.json"), str(out / "public.json"), "--timings", "--no-progress"]
        if args.threads:
            c += ["--threads", str(args.threads)]
        return c

    def env(name):
        e = dict(os.environ)
        e["PYTHONPATH"] = str(src[name])
        if name in args.source:
            e["PYTHONDONTWRITEBYTECODE"] = "1"
        return e

    rows = {s: {"wall": [], "cpu": [], "rss": [], "phases": []} for s in settings}
    verified = {}
    load = [os.getloadavg()[0]]
    for r in range(args.runs + 1):  # round 0 warms the page cache and verifies, not timed
        order = settings[r % len(settings):] + settings[: r % len(settings)]
        for s in order:
            name, d, path = s
            out = tmp / f"{name}-{d.name}-{path}"
            out.mkdir(exist_ok=True)
            wall, rss, err, cpu = timed(cmd(name, d, path, out), env(name))
            if r == 0:
                if not args.no_verify:
                    v = subprocess.run([str(SNARKJS), "groth16", "verify", str(d / "vk.json"), str(out / "public.json"),
                                        str(out / "proof.json")], capture_output=True, text=True)
                    ok = v.returncode == 0 and "OK" in v.stdout
                    verified[f"{name} {d.name} {path}"] = ok
                    if not ok:
                        raise SystemExit(f"snarkjs rejected the proof of {s}: {v.stdout}{v.stderr}")
                continue
            rows[s]["wall"].append(wall)
            rows[s]["cpu"].append(cpu)
            rows[s]["rss"].append(rss)
            rows[s]["phases"].append(parse_timings(err))
        load.append(os.getloadavg()[0])

    results = []
    for s, v in rows.items():
        name, d, path = s
        phases = {}
        for k in v["phases"][0] if v["phases"] else []:
            phases[k] = round(statistics.median(p.get(k, 0.0) for p in v["phases"]), 1)
        row = {"tree": name, "circuit": d.name, "ifma": path, "wall_s": round(statistics.median(v["wall"]), 3),
               "cpu_s": round(statistics.median(v["cpu"]), 3), "peak_rss_mib": round(max(v["rss"]) / 2**20, 1),
               "walls_s": [round(x, 3) for x in v["wall"]], "cpus_s": [round(x, 3) for x in v["cpu"]],
               "phases_ms": phases}
        results.append(row)
        ph = " ".join(f"{k} {phases[k]}" for k in phases if k.startswith(("ntt", "msm", "spmv")))
        print(f"{d.name:16} ifma {path:3} {name:8} wall {row['wall_s']:.3f} s cpu {row['cpu_s']:.3f} s "
              f"rss {row['peak_rss_mib']} MiB | {ph}", flush=True)
    base = list(trees)[0]
    for d in args.dir:
        for path in paths:
            b = next(x for x in results if x["tree"] == base and x["circuit"] == d.name and x["ifma"] == path)
            for x in results:
                if x["circuit"] == d.name and x["ifma"] == path and x["tree"] != base:
                    print(f"{d.name:16} ifma {path:3} {x['tree']}/{base}: wall {x['wall_s'] / b['wall_s']:.3f} "
                          f"cpu {x['cpu_s'] / b['cpu_s']:.3f}")
    meta = {"cpu": cpu_name(), "cores": os.cpu_count(), "runs": args.runs, "threads": args.threads or os.cpu_count(),
            "load_min": round(min(load), 2), "load_max": round(max(load), 2),
            "trees": {k: str(Path(v).resolve()) for k, v in trees.items()}, "verified_by_snarkjs": verified,
            "from_source": args.source, "backend_flag": not args.no_backend_flag,  # the other trees' modules were byte-compiled first
            "time": time.strftime("%Y-%m-%d %H:%M:%S")}
    print(f"load average {meta['load_min']}-{meta['load_max']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
