"""In-process time of a proof's four witness MSMs as `snarkd prove` runs them on the CPU backend
(prover/cpu.py): `msm_w` over A, B1, C (from the first value after the public inputs) on G1, then B2
on G2, one call at a time on the same witness.

Usage: PYTHONPATH=TREE/src python bench/witness_msm_time.py DIR [--runs 7] [--threads 2] [--ifma off]
(DIR holds circuit.zkey and witness.wtns). Prints the median and min process CPU and wall ms of the
four calls together (after one warm-up sequence), each call's median CPU ms, and a digest of the four
sums so trees can be compared.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ifma", default="off")
    args = ap.parse_args()
    from snarkd.formats.wtns import read_wtns
    from snarkd.formats.zkey_layout import open_zkey, read_layout
    from snarkd.native import _core

    _core._set_simd52(args.ifma == "on")
    nat = _core.bn254
    bf = open_zkey(f"{args.dir}/circuit.zkey")
    lay = read_layout(bf)
    w = read_wtns(f"{args.dir}/witness.wtns").values
    calls = [("a", bf.section(5), 0, False), ("b1", bf.section(6), 0, False),
             ("c", bf.section(8), lay.n_public + 1, False), ("b2", bf.section(7), 0, True)]
    t = args.threads

    def sequence(per):
        out = []
        for name, sec, start, g2 in calls:
            c0 = time.process_time()
            out.append(nat.msm_w(sec, w, start, g2, t))
            per[name].append(1e3 * (time.process_time() - c0))
        return out

    per = {c[0]: [] for c in calls}
    dig = hashlib.sha256(b"".join(sequence(per))).hexdigest()[:16]
    per = {c[0]: [] for c in calls}
    wall, cpu = [], []
    for _ in range(args.runs):
        c0, w0 = time.process_time(), time.perf_counter()
        sequence(per)
        wall.append(1e3 * (time.perf_counter() - w0))
        cpu.append(1e3 * (time.process_time() - c0))
    each = "  ".join(f"{k} {statistics.median(v):.1f}" for k, v in per.items())
    print(f"T{t} cpu {statistics.median(cpu):8.1f} (min {min(cpu):8.1f}) ms  wall {statistics.median(wall):8.1f} "
          f"(min {min(wall):8.1f}) ms  [{each}]  {dig}", flush=True)


if __name__ == "__main__":
    main()
