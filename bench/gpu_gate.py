#!/usr/bin/env python3
"""A quick correctness gate for one device run (seconds, not the whole suite): GPU MSMs
(G1, G2; plain bases and window tables; one digit sort shared across MSMs and a suffix),
an NTT and the H computation == the CPU core, both curves. Exit 0 when all agree.

    python bench/gpu_gate.py [--define MACRO ...]

--define: check a kernel variant (GpuDevice's defines) instead of the default build.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests" / "gpu"))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--define", action="append", default=[])
    a = ap.parse_args()
    import cupy
    from gpu_helpers import ints_to_fr, native, rand_fr, rand_points

    from snarkd.config import default
    from snarkd.gpu import device as gdevice

    dev = gdevice.get(0, cubin_dir=default("gpus.cubin_dir"), defines=tuple(a.define))
    R = {"bn254": 21888242871839275222246405745257275088548364400416034343698204186575808495617,
         "bls12_381": 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001}
    names = {"bn254": "bn128", "bls12_381": "bls12381"}
    bad = []
    for curve in ("bn254", "bls12_381"):
        nat = native(curve)
        rng = random.Random(7)
        n, off = 3001, 4
        w = ints_to_fr([rng.choice([0, 1, rng.randrange(R[curve])]) for _ in range(n)])
        wd = cupy.asarray(w.view(np.uint32).reshape(-1))
        for tables in (False, True):
            sorts = {}
            for g2, lo in ((False, 0), (True, 0), (False, off)):
                bases = rand_points(rng, names[curve], g2, n - lo)
                ref = (nat.msm_g2 if g2 else nat.msm_g1)(bases, np.ascontiguousarray(w[lo:]), 0)
                db = cupy.asarray(bases.view(np.uint32).reshape(-1))
                tab = dev.window_table(curve, g2, db, n - lo, 0) if tables else None
                got = dev.msm(curve, g2, db, wd, n, nat, table=tab, offset=lo, sorts=sorts, tag="w")
                ok = np.array_equal(np.asarray(got).reshape(-1), np.asarray(ref).reshape(-1))
                print(f"{curve} {'g2' if g2 else 'g1'} tables={tables} offset={lo}: {'ok' if ok else 'MISMATCH'}", flush=True)
                if not ok:
                    bad.append((curve, g2, tables, lo))
        for log_n in (5, 12):
            x = rand_fr(rng, R[curve], 1 << log_n)
            dom = dev.ntt_domain(curve, log_n)
            for inverse in (False, True):
                ref = x.copy()
                nat.ntt(ref, inverse)
                got = cupy.asnumpy(dom.ntt(cupy.asarray(x.view(np.uint32).reshape(-1)), inverse)).view("<u8").reshape(-1, 4)
                ok = np.array_equal(got, ref)
                if not ok:
                    break
            print(f"{curve} ntt 2^{log_n}: {'ok' if ok else 'MISMATCH'}", flush=True)
            if not ok:
                bad.append((curve, "ntt", log_n))
    print("GATE", "PASS" if not bad else f"FAIL {bad}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
