"""In-process G1 MSM of 2^K points (uniform scalars, the H MSM's shape) on T threads under each task split
(_core._set_msm_split: 0 the window-order plan before round 31, 1 msm_tasks' cut tail, g >= 2 its last ranges finer),
the settings alternated round by round: per setting the result hash, the median process CPU and wall, and the
parallel regions' idle CPU (r.idle: T x the busiest thread - all threads, replayed on idle cores; see
bench/phase_cpu.py). State the load (printed) with the figures.

    PYTHONPATH=TREE/src python bench/cpu34_msm_split.py [--log-n 17] [--threads 2] [--rounds 9] [--ifma on]
        [--splits 0,1,3]
"""
import argparse
import hashlib
import os
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from native_micro import random_points  # noqa: E402
from snarkd.native import _core  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--log-n", type=int, default=17)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--rounds", type=int, default=9)
ap.add_argument("--ifma", default="on")
ap.add_argument("--splits", default="0,1,3")
ap.add_argument("--curve", default="bn254")
a = ap.parse_args()
_core._set_simd52(a.ifma == "on")
mod = getattr(_core, a.curve)
n = 1 << a.log_n
pts = random_points(mod, False, n, np.random.default_rng(20))
rng = random.Random(20)
r = mod.FR_MODULUS
sc = np.frombuffer(b"".join(rng.randrange(r).to_bytes(32, "little") for _ in range(n)), dtype=np.uint64).reshape(n, 4).copy()
splits = [int(x) for x in a.splits.split(",")]
res = {g: {"cpu": [], "wall": [], "idle": [], "hash": set()} for g in splits}
print(f"2^{a.log_n} G1 {a.curve}, T={a.threads}, IFMA {a.ifma}, plan {_core._msm_plan(n, a.threads)}, "
      f"load {os.getloadavg()[0]:.1f}", flush=True)
for g in splits:
    _core._set_msm_split(g)
    print(f"  split {g}: {len(_core._msm_tasks(n, a.threads))} tasks", flush=True)
for rd in range(a.rounds):
    for g in (splits if rd % 2 == 0 else splits[::-1]):
        _core._set_msm_split(g)
        _core._parallel_stats(True)
        w0, p0 = time.perf_counter(), time.process_time()
        out = mod.msm_g1(pts, sc, a.threads)
        p1, w1 = time.process_time(), time.perf_counter()
        st = _core._parallel_stats(False)
        d = res[g]
        d["cpu"].append((p1 - p0) * 1e3)
        d["wall"].append((w1 - w0) * 1e3)
        d["idle"].append(st["idle_ms"])
        d["hash"].add(hashlib.sha256(np.asarray(out).tobytes()).hexdigest()[:12])
for g in splits:
    d = res[g]
    print(f"split {g}: hash {','.join(sorted(d['hash']))} cpu med {statistics.median(d['cpu']):.1f} "
          f"min {min(d['cpu']):.1f} wall med {statistics.median(d['wall']):.1f} "
          f"r.idle med {statistics.median(d['idle']):.2f} ms")
print(f"load at end {os.getloadavg()[0]:.1f}")
