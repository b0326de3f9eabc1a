"""In-process G1 (or --g2: G2) MSM time with the mixed window layout off and on (`_core._set_msm_mixed(0)` /
`(1)`, alternated per round in one process), on either path (--ifma on|off): round 20 of
bench/cpu-notes.md, which let the IFMA path take the layout (msm/plan.hpp). 2^K points
(native_micro's tiled multiples of G1) and scalars uniform below r (Python integers, so the top
window holds what a real H MSM's does); prints per-setting medians of process CPU and wall time
and the results' sha256 (the two settings must agree) as one JSON line."""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", type=int, default=17)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--ifma", choices=["on", "off"], default="on")
    ap.add_argument("--g2", action="store_true", help="G2 points and msm_g2 instead of G1")
    ap.add_argument("--force", action="store_true",
                    help="mode 2 (the layout wherever it fits) against 0, for sizes the count leaves out")
    a = ap.parse_args()
    from native_micro import random_points
    from snarkd.native import _core
    mod = _core.bn254
    n = 1 << a.log
    pts = random_points(mod, a.g2, n, np.random.default_rng(20))
    msm = mod.msm_g2 if a.g2 else mod.msm_g1
    rng = random.Random(20)
    r = mod.FR_MODULUS
    sc = np.frombuffer(b"".join(rng.randrange(r).to_bytes(32, "little") for _ in range(n)),
                       dtype=np.uint64).reshape(n, 4).copy()
    _core._set_simd52(a.ifma == "on")
    res = {}
    on = 2 if a.force else 1
    for mode in (0, 1):  # warm-up, and the results of both
        _core._set_msm_mixed(on if mode else 0)
        res[mode] = hashlib.sha256(np.asarray(msm(pts, sc, a.threads)).tobytes()).hexdigest()[:16]
    cpu = {0: [], 1: []}
    wall = {0: [], 1: []}
    for i in range(a.runs):
        for mode in ((0, 1) if i % 2 == 0 else (1, 0)):
            _core._set_msm_mixed(on if mode else 0)
            c0, w0 = time.process_time(), time.perf_counter()
            msm(pts, sc, a.threads)
            cpu[mode].append(time.process_time() - c0)
            wall[mode].append(time.perf_counter() - w0)
    _core._set_msm_mixed(on)
    plan = _core._msm_plan(n, a.threads, 254)
    _core._set_msm_mixed(1)
    med = lambda v: round(1e3 * statistics.median(v), 2)
    print(json.dumps({"group": "g2" if a.g2 else "g1", "n": n, "threads": a.threads, "ifma": a.ifma, "uses_simd52": _core.uses_simd52(),
                      "forced": a.force, "plan_mixed": plan,
                      "cpu_ms_plain": med(cpu[0]), "cpu_ms_mixed": med(cpu[1]),
                      "ratio_cpu": round(statistics.median(cpu[1]) / statistics.median(cpu[0]), 4),
                      "pairs_lower": sum(x < y for x, y in zip(cpu[1], cpu[0])), "runs": a.runs,
                      "wall_ms_plain": med(wall[0]), "wall_ms_mixed": med(wall[1]),
                      "sha256_plain": res[0], "sha256_mixed": res[1], "load": Path("/proc/loadavg").read_text().split()[:3]}))


if __name__ == "__main__":
    main()
