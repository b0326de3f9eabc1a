"""Whole-process `snarkd prove` against `snarkjs groth16 prove`, same key and witness, one run.

Runs alternate (snarkd, snarkjs, snarkd, ...) so machine noise hits both alike;
reports medians, the ratio, snarkd's per-phase medians and each side's peak RSS
(from wait4 on the child). Every snarkd proof is checked with snarkjs verify once.

    python bench/prove_vs_snarkjs.py --dir bench/work/chain16-bn128 --runs 5 --json bench/results/prove-bn128.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SNARKJS = REPO / "node_modules" / ".bin" / "snarkjs"


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, int, str, float]:
    """(wall seconds, peak RSS bytes, stderr, CPU seconds user + system) of one child process (env: its
    environment, else this one's)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed ({code}): {err[-2000:]}")
    return wall, usage.ru_maxrss * 1024, err, usage.ru_utime + usage.ru_stime


def byte_compile(src: Path | None = None) -> Path:
    """Compile snarkd's modules (src: a tree's src/ folder; None: the snarkd this interpreter imports) to bytecode
    once, before anything is timed, as pip does when it installs the package. Where PYTHONDONTWRITEBYTECODE is set
    (this repository's sandboxes set it) nothing else writes the .pyc files, and every timed `snarkd prove` of a
    tree run from source compiled its ~30 modules again: ~50 ms of process CPU (a tenth of a small proof's) that
    an installed snarkd never spends (bench/cpu-notes.md, round 7). Returns the package folder."""
    import compileall

    if src is None:
        import importlib.util

        pkg = Path(importlib.util.find_spec("snarkd").submodule_search_locations[0])
    else:
        pkg = Path(src) / "snarkd"
    if not compileall.compile_dir(str(pkg), quiet=1):
        raise RuntimeError(f"compileall failed in {pkg}")
    return pkg


def parse_timings(stderr: str) -> dict[str, float]:
    out = {}
    for line in stderr.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == "ms":
            try:
                out[parts[0]] = float(parts[1])
            except ValueError:
                pass
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, required=True, help="folder with circuit.zkey, witness.wtns, vk.json")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    zkey, wtns, vk = args.dir / "circuit.zkey", args.dir / "witness.wtns", args.dir / "vk.json"
    tmp = Path(tempfile.mkdtemp(prefix="snarkd-bench-"))
    ours = [sys.executable, "-m", "snarkd", "prove", str(zkey), str(wtns), str(tmp / "p.json"), str(tmp / "q.json"), "--timings"]
    if args.threads:
        ours += ["--threads", str(args.threads)]
    theirs = ["node", str(SNARKJS), "groth16", "prove", str(zkey), str(wtns), str(tmp / "sp.json"), str(tmp / "sq.json")]

    byte_compile()  # as installed: no module compiled from source inside a timed process
    timed(ours)  # warm the page cache for both
    ok = subprocess.run(["node", str(SNARKJS), "groth16", "verify", str(vk), str(tmp / "q.json"), str(tmp / "p.json")], capture_output=True, text=True)
    verified = ok.returncode == 0
    s_wall, j_wall, s_rss, j_rss, phases = [], [], [], [], []
    for i in range(args.runs):
        w, rss, err, _ = timed(ours)
        s_wall.append(w), s_rss.append(rss), phases.append(parse_timings(err))
        w, rss, _, _ = timed(theirs)
        j_wall.append(w), j_rss.append(rss)
        print(f"run {i + 1}/{args.runs}: snarkd {s_wall[-1]:.3f}s  snarkjs {j_wall[-1]:.3f}s", file=sys.stderr)

    names = list(phases[0])
    phase_median = {n: statistics.median(p.get(n, 0.0) for p in phases) for n in names}
    from snarkd.formats.zkey import read_zkey

    zk = read_zkey(zkey)
    hdr = (zk.curve.name, zk.n_vars, zk.domain_size)
    zk.close()
    result = {
        "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cpus",
        "curve": hdr[0],
        "n_vars": hdr[1],
        "domain_size": hdr[2],
        "runs": args.runs,
        "bytecode": "compiled before timing (byte_compile)",
        "snarkd_verified_by_snarkjs": verified,
        "snarkd_s": s_wall,
        "snarkjs_s": j_wall,
        "snarkd_median_s": statistics.median(s_wall),
        "snarkjs_median_s": statistics.median(j_wall),
        "speedup": statistics.median(j_wall) / statistics.median(s_wall),
        "snarkd_peak_rss_mib": max(s_rss) / 2**20,
        "snarkjs_peak_rss_mib": max(j_rss) / 2**20,
        "snarkd_phase_median_ms": phase_median,
    }
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0 if verified else 1


if __name__ == "__main__":
    sys.exit(main())
