"""In-process time of the prover's sparse products a = A·w, b = B·w (the "spmv" phase) on a key's
coefs section, as `snarkd prove` runs them without a prepared sidecar (`native.spmv_ab`), and from
the prepared CSR (`native.spmv_prepared`).

Usage: PYTHONPATH=TREE/src python bench/spmv_time.py DIR [--runs 21] [--threads 1,2] [--json OUT]
(DIR holds circuit.zkey and witness.wtns). Prints per (path, threads) the median and min wall and
process CPU ms of `--runs` calls after one warm-up, and a digest of (a, b) so trees can be compared.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--paths", default="ab,prepared")
    ap.add_argument("--json")
    args = ap.parse_args()
    from snarkd.formats.wtns import read_wtns
    from snarkd.formats.zkey_layout import open_zkey, read_layout
    from snarkd.native import _core

    nat = _core.bn254
    bf = open_zkey(f"{args.dir}/circuit.zkey")
    sec = bf.section(4)
    lay = read_layout(bf)
    domain = lay.domain_size
    w = read_wtns(f"{args.dir}/witness.wtns").values
    prep = nat.prepare_csr(sec, domain, lay.n_vars) if "prepared" in args.paths else None
    out = {}
    for path in args.paths.split(","):
        for t in (int(x) for x in args.threads.split(",")):
            call = (lambda: nat.spmv_ab(sec, w, domain, t)) if path == "ab" else (
                lambda: nat.spmv_prepared(prep, w, domain, t))
            a, b = call()
            dig = hashlib.sha256(bytes(memoryview(a)) + bytes(memoryview(b))).hexdigest()[:16]
            wall, cpu = [], []
            for _ in range(args.runs):
                c0, w0 = time.process_time(), time.perf_counter()
                call()
                wall.append(1e3 * (time.perf_counter() - w0))
                cpu.append(1e3 * (time.process_time() - c0))
            key = f"{path}-T{t}"
            out[key] = {"wall_med": statistics.median(wall), "wall_min": min(wall), "cpu_med": statistics.median(cpu),
                        "digest": dig}
            print(f"{key:14s} wall {statistics.median(wall):7.2f} (min {min(wall):6.2f}) ms  cpu "
                  f"{statistics.median(cpu):7.2f} ms  {dig}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
