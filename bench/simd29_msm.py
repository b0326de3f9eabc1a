#!/usr/bin/env python3
"""In-process G1 MSM (BN254, or BLS12-381 with --curve bls12_381; G2 with --group g2): the scalar batch-affine adder
against the 4-lane AVX2 one (msm/bucket_simd29.hpp; G2: Simd29G2Add, only G2's switch flipped), IFMA off, alternated per round (order flipped every round), process CPU
time and wall time per MSM, medians. Bases: distinct random multiples of the generator (G2: sums A[i] + B[j]
of two sets of random points, bench/g2_msm_time.py's input); scalars uniform below r. The two paths' results are compared every round.

Usage: PYTHONPATH=src python bench/simd29_msm.py [--curve bn254|bls12_381] [--group g1|g2] [--log-n 16 17] [--rounds 9]
       [--threads 2] [--json OUT]
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
from snarkd.native._core import bls12_381, bn254

CURVES = {  # module, r, q, words of q, generator's affine x, y
    "bn254": (bn254, 21888242871839275222246405745257275088548364400416034343698204186575808495617,
              21888242871839275222246405745257275088696311157297823662689037894645226208583, 4, 1, 2),
    "bls12_381": (bls12_381, 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001,
                  0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB, 6,
                  0x17F1D3A73197D7942695638C4FA9AC0FC3688C4F9774B905A14E3A3F171BAC586C55E83FF97A1AEFFB3AF00ADB22C6BB,
                  0x08B3F481E3AAA0F1A09E30ED741D8AE4FCF5E095D5D00AF600DB18CB2C04B3EDD03CC744A2888AE40CAA232946C5E7E1),
}


def enc_many(xs, words=4):
    out = np.zeros((len(xs), words), dtype=np.uint64)
    for k, x in enumerate(xs):
        for i in range(words):
            out[k, i] = (x >> (64 * i)) & ((1 << 64) - 1)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--curve", choices=sorted(CURVES), default="bn254")
    ap.add_argument("--group", choices=["g1", "g2"], default="g1")
    ap.add_argument("--log-n", type=int, nargs="+", default=[16, 17])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args()
    rng = random.Random(2026)
    mod, R, Q, L, gx, gy = CURVES[args.curve]
    mont = lambda x: x * (1 << (64 * L)) % Q  # noqa: E731
    G = np.concatenate([enc_many([mont(gx)], L), enc_many([mont(gy)], L)]).reshape(-1)
    nmax = 1 << max(args.log_n)
    g2 = args.group == "g2"
    if g2:
        import sys
        from pathlib import Path
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from native_micro import random_points
        nrng = np.random.default_rng(16)
        k = 1 << ((max(args.log_n) + 1) // 2)
        a = random_points(mod, True, k, nrng)[:k]
        bb = random_points(mod, True, k, nrng)[:k]
        ia, ib = np.divmod(np.arange(nmax), k)
        bases = mod.g2_add(np.ascontiguousarray(a[ia % k]).reshape(-1), np.ascontiguousarray(bb[ib]).reshape(-1)).reshape(-1)
    else:
        bases = mod.g1_mul(G, enc_many([rng.randrange(1, R) for _ in range(nmax)]))
    pw = 4 * L if g2 else 2 * L  # words of a point
    msm = mod.msm_g2 if g2 else mod.msm_g1
    scalars = enc_many([rng.randrange(R) for _ in range(nmax)])
    _core._set_simd52(False)
    out = {"meta": {"curve": args.curve, "cpu_has_simd29": _core.cpu_has_simd29(),
                    "group": args.group, "simd29_default": _core.simd29_default(args.curve, g2), "threads": args.threads, "rounds": args.rounds, "loadavg_start": os.getloadavg()[0]},
           "results": []}
    for log_n in args.log_n:
        n = 1 << log_n
        b, s = bases[: pw * n], scalars[:n]
        t = {False: [], True: []}
        w = {False: [], True: []}
        for r in range(args.rounds):
            res = {}
            for on in ((False, True) if r % 2 == 0 else (True, False)):
                _core._set_simd29(on, args.curve, g2)
                c0, w0 = time.process_time(), time.perf_counter()
                res[on] = msm(b, s, threads=args.threads)
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
