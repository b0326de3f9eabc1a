"""One tree's in-process G2 MSM time on the AVX-512 IFMA path (round 16, cpu-notes).

`--make OUT --curve C --log K`: 2^K distinct G2 points (A[i] + B[j] over two sets of
k*G, so buckets rarely meet equal x as the tiled native_micro points would) and
uniform scalars below r, saved to OUT (.npz), so every tree times the same input.
`--time IN`: `msm_g2` --runs times after one untimed warm-up, medians of process CPU
time and wall time plus the result's sha256 (trees must agree), one JSON line. Run
it with each tree's PYTHONPATH, alternately, from one shell command (g2_msm_trees.sh).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def make(out, cname, log):
    from native_micro import random_points, random_scalars
    from snarkd.native import _core
    mod = getattr(_core, cname)
    rng = np.random.default_rng(16)
    n, k = 1 << log, 1 << ((log + 1) // 2)
    a = random_points(mod, True, k, rng)[:k]
    b = random_points(mod, True, k, rng)[:k]
    ia, ib = np.divmod(np.arange(n), k)
    pts = mod.g2_add(np.ascontiguousarray(a[ia % k]).reshape(-1), np.ascontiguousarray(b[ib]).reshape(-1))
    np.savez(out, pts=pts.reshape(n, -1), sc=random_scalars(mod, n, rng), curve=cname)


def timed(path, runs, threads):
    from snarkd.native import _core
    d = np.load(path)
    mod = getattr(_core, str(d["curve"]))
    _core._set_simd52(True)
    pts, sc = np.ascontiguousarray(d["pts"]), np.ascontiguousarray(d["sc"])
    out = mod.msm_g2(pts, sc, threads)
    cpu, wall = [], []
    for _ in range(runs):
        c0, w0 = time.process_time(), time.perf_counter()
        out = mod.msm_g2(pts, sc, threads)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    print(json.dumps({"input": path, "n": len(pts), "threads": threads, "runs": runs,
                      "cpu_ms": round(1e3 * statistics.median(cpu), 2),
                      "wall_ms": round(1e3 * statistics.median(wall), 2),
                      "sha256": hashlib.sha256(np.asarray(out).tobytes()).hexdigest()[:16]}))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--make")
    ap.add_argument("--curve", default="bn254")
    ap.add_argument("--log", type=int, default=16)
    ap.add_argument("--time")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    if a.make:
        make(a.make, a.curve, a.log)
    if a.time:
        timed(a.time, a.runs, a.threads)
