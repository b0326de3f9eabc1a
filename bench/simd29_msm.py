#!/usr/bin/env python3
"""In-process BN254 G1 MSM: the scalar batch-affine adder against the 4-lane AVX2 one
(msm/bucket_simd29.hpp), IFMA off, alternated per round (order flipped every round), process CPU
time and wall time per MSM, medians. Bases: distinct random multiples of the generator; scalars
uniform below r. The two paths' results are compared every round.

Usage: PYTHONPATH=src python bench/simd29_msm.py [--log-n 16 17] [--rounds 9] [--threads 2] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time

import numpy as np

from snarkd.native import _core
from snarkd.native._core import bn254

R = 21888242871839275222246405745257275088548364400416034343698204186575808495617
Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583


def enc_many(xs):
    out = np.zeros((len(xs), 4), dtype=np.uint64)
    for k, x in enumerate(xs):
        for i in range(4):
            out[k, i] = (x >> (64 * i)) & ((1 << 64) - 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--log-n", type=int, nargs="+", default=[16, 17])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args()
    rng = random.Random(2026)
    mont = lambda x: x * (1 << 256) % Q  # noqa: E731
    G = np.concatenate([enc_many([mont(1)]), enc_many([mont(2)])]).reshape(-1)
    nmax = 1 << max(args.log_n)
    bases = bn254.g1_mul(G, enc_many([rng.randrange(1, R) for _ in range(nmax)]))
    scalars = enc_many([rng.randrange(R) for _ in range(nmax)])
    _core._set_simd52(False)
    out = {"meta": {"cpu_has_simd29": _core.cpu_has_simd29(), "simd29_default": _core.simd29_default(),
                    "threads": args.threads, "rounds": args.rounds, "loadavg_start": os.getloadavg()[0]},
           "results": []}
    for log_n in args.log_n:
        n = 1 << log_n
        b, s = bases[: 2 * 4 * n], scalars[:n]
        t = {False: [], True: []}
        w = {False: [], True: []}
        for r in range(args.rounds):
            res = {}
            for on in ((False, True) if r % 2 == 0 else (True, False)):
                _core._set_simd29(on)
                c0, w0 = time.process_time(), time.perf_counter()
                res[on] = bn254.msm_g1(b, s, threads=args.threads)
                t[on].append(time.process_time() - c0)
                w[on].append(time.perf_counter() - w0)
            assert np.array_equal(res[False], res[True]), "the paths disagree"
        row = {"log_n": log_n, "scalar_cpu_s": statistics.median(t[False]), "lanes_cpu_s": statistics.median(t[True]),
               "scalar_wall_s": statistics.median(w[False]), "lanes_wall_s": statistics.median(w[True]),
               "scalar_cpus_s": t[False], "lanes_cpus_s": t[True]}
        row["cpu_ratio"] = row["lanes_cpu_s"] / row["scalar_cpu_s"]
        row["wall_ratio"] = row["lanes_wall_s"] / row["scalar_wall_s"]
        out["results"].append(row)
        print(f"2^{log_n}: CPU scalar {row['scalar_cpu_s']:.4f} s, lanes {row['lanes_cpu_s']:.4f} s "
              f"({row['cpu_ratio']:.3f}x); wall {row['scalar_wall_s']:.4f} / {row['lanes_wall_s']:.4f} "
              f"({row['wall_ratio']:.3f}x)")
    out["meta"]["loadavg_end"] = os.getloadavg()[0]
    print(f"load {out['meta']['loadavg_start']:.2f} -> {out['meta']['loadavg_end']:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
