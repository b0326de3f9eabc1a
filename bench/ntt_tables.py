#!/usr/bin/env python3
"""NTT and H timings of one source tree, for side-by-side runs of two (e.g. before and after a change to
gpu/ntt.py or kernels.cu's NTT passes): each run times the same seeded inputs and records a SHA-256 of every
output, so `--compare` both checks that two trees compute the same bytes and puts their medians side by side.

    python bench/ntt_tables.py --src OLD/src --out old.json
    python bench/ntt_tables.py --src src --out new.json
    python bench/ntt_tables.py --compare old.json new.json
    python bench/ntt_tables.py --compare old1.json,old2.json new1.json,new2.json   (runs taken in turns: medians)

Per (curve, 2^k): the domain's build time and device bytes (NttDomain.nbytes), the forward and the inverse
natural-order NTT, and H in place (h_from: three coset NTT pairs and the element-wise steps); medians of
--reps runs timed with CUDA events. The domain is the one a resident proof takes on a large card (the full
coset-shift table; --split-shift: the two small tables of a streamed key's domain). Only gpu.ntt and gpu.module are imported (no native core needed).
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import statistics
import sys
import time


FULL = True  # --split-shift: the split shift tables (a streamed key's) where the tree has both


def run(src: str, powers: list[int], reps: int) -> dict:
    sys.path.insert(0, src)
    import cupy
    import numpy as np

    from snarkd.gpu import module as gmodule
    from snarkd.gpu.ntt import NttDomain

    cc = str(cupy.cuda.Device(0).compute_capability)
    rows = []
    for curve, top in (("bn254", 0x0FFFFFFF), ("bls12_381", 0x3FFFFFFF)):
        mod = gmodule.load(curve, cc)
        for k in powers:
            n = 1 << k
            rng = np.random.default_rng(k)
            host = rng.integers(0, 1 << 32, size=(2, n, 8), dtype=np.uint32)
            host[:, :, 7] &= top  # below r: any element is a valid input
            t0 = time.perf_counter()
            # the domain a resident proof takes on this device (the full shift table where the budget has room)
            full = {"full_tables": True} if "full_tables" in inspect.signature(NttDomain).parameters and FULL else {}
            dom = NttDomain(mod, curve, k, **full)
            cupy.cuda.Device(0).synchronize()
            build_s = time.perf_counter() - t0
            x = cupy.asarray(host[0].reshape(-1))
            y = cupy.asarray(host[1].reshape(-1))
            out = cupy.empty_like(x)

            def timed(fn):
                ts = []
                for _ in range(reps):
                    a, b = cupy.cuda.Event(), cupy.cuda.Event()
                    a.record()
                    fn()
                    b.record()
                    b.synchronize()
                    ts.append(cupy.cuda.get_elapsed_time(a, b))
                return round(statistics.median(ts), 3)

            row = {"curve": curve, "log_n": k, "domain_build_s": round(build_s, 3), "domain_mib": round(dom.nbytes / 2**20, 1),
                   "full_tables": bool(full)}
            row["ntt_ms"] = timed(lambda: dom.ntt(x, False, out))
            row["ntt_sha256"] = hashlib.sha256(out.get().tobytes()).hexdigest()
            row["intt_ms"] = timed(lambda: dom.ntt(x, True, out))
            row["intt_sha256"] = hashlib.sha256(out.get().tobytes()).hexdigest()
            hs = [None]

            def h():
                hs[0] = None  # the last run's output goes before the next is made
                hs[0] = dom.h_from([x.copy(), y.copy()])

            row["h_ms"] = timed(h)
            row["h_sha256"] = hashlib.sha256(hs[0].get().tobytes()).hexdigest()
            del hs, dom, x, y, out
            cupy.get_default_memory_pool().free_all_blocks()
            rows.append(row)
            print(json.dumps(row), flush=True)
    return {"src": src, "gpu": cupy.cuda.runtime.getDeviceProperties(0)["name"].decode(), "reps": reps, "rows": rows}


def merged(runs: list[dict]) -> dict:
    """Several runs of one tree (taken in turns with the other's, in separate processes) as one: per row,
    the median of the runs' medians (small domains take tens of microseconds, where one run's clocks and
    launch overheads move a median by 10%); the outputs' digests must agree between runs."""
    rows = []
    for group in zip(*(r["rows"] for r in runs)):
        row = dict(group[0])
        for op in ("ntt", "intt", "h"):
            if len({g[f"{op}_sha256"] for g in group}) != 1:
                raise SystemExit(f"{row['curve']} 2^{row['log_n']} {op}: outputs differ between runs of one tree")
            row[f"{op}_ms"] = round(statistics.median(g[f"{op}_ms"] for g in group), 4)
        rows.append(row)
    return {**runs[0], "rows": rows, "runs": len(runs)}


def compare(a: dict, b: dict) -> int:
    """Print the two runs side by side; 1 if any output differs."""
    bad = 0
    print(f"{'curve':10} {'k':>3} {'op':5} {'before ms':>10} {'after ms':>10} {'ratio':>6}  same  MiB before/after")
    for ra, rb in zip(a["rows"], b["rows"]):
        for op in ("ntt", "intt", "h"):
            same = ra[f"{op}_sha256"] == rb[f"{op}_sha256"]
            bad |= not same
            print(f"{ra['curve']:10} {ra['log_n']:>3} {op:5} {ra[op + '_ms']:>10} {rb[op + '_ms']:>10} "
                  f"{rb[op + '_ms'] / ra[op + '_ms']:>6.3f}  {'yes' if same else 'NO'}   {ra['domain_mib']}/{rb['domain_mib']}")
    return int(bad)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--src", default="src")
    ap.add_argument("--out")
    ap.add_argument("--powers", default="16,20,22,24,26")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="two runs' JSON files (or comma lists)")
    ap.add_argument("--split-shift", action="store_true",
                    help="time the coset shift's two ~sqrt(n) tables (a streamed key's domain) where the tree has the choice")
    args = ap.parse_args()
    global FULL
    FULL = not args.split_shift
    if args.compare:
        a, b = (merged([json.load(open(p)) for p in side.split(",")]) for side in args.compare)
        return compare(a, b)
    res = run(args.src, [int(p) for p in args.powers.split(",")], args.reps)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
