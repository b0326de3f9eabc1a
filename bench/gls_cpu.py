"""The G2 endomorphism split (GLS, ec/glv.hpp's psi) on the CPU, before/after.

Part 1, the G2 MSM (`msm_g2`, in process; Groth16's B2 MSM runs through the same
msm() without IFMA), with the AVX-512 IFMA kernels on and off (`_set_simd52`, --ifma):
per curve and size, the plain Pippenger (`_set_gls(0)`) against
the split one (`_set_gls(2)`) and the default choice (`_set_gls(1)`, the cost model),
runs interleaved (rotated order each round) so load moves all alike; the first round
warms up and is not timed; medians of wall time and of the process's CPU time (all
threads; the pool joins, never spins, so CPU time is the work done and moves less with
the load of a shared machine than wall time). Bases: bench/native_micro's tiled random G2
points; scalars uniform below r. Every output is compared with the plain one.

Part 1b (--b2 DIR), a key's B2 MSM over its witness as the prover calls it
(`msm_witness`), in process, the same way.

Part 2, whole `snarkd prove KEY WTNS PROOF PUBLIC --timings` child processes with the
G2 split off / forced / default, IFMA on and off (rounds in rotated order); the first proof of each
setting is checked with `snarkjs groth16 verify`.

Usage: python bench/gls_cpu.py [--logs 10,12,14,16,18] [--curves bn254,bls12_381] [--runs 5]
       [--threads 0] [--ifma on,off] [--full 1.0] [--b2 bench/work/chain16-bls12381 ...]
       [--dir bench/work/chain16-bn128 ...] [--prove-runs 5] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from native_micro import random_points, random_scalars  # noqa: E402
import glv_cpu  # noqa: E402

from snarkd.native import _core as native  # noqa: E402
from snarkd.native import _core  # noqa: E402

MODES = {"plain": 0, "gls": 2, "auto": 1}
CHILD = ("import sys; from snarkd.native import _core; _core._set_simd52(sys.argv[1] == '1'); "
         "_core._set_gls(int(sys.argv[2])); from snarkd.cli import main; sys.exit(main(sys.argv[3:]))")


def msm_part(curves, logs, runs, threads, simds, full=1.0):
    rng = np.random.default_rng(7)
    rows = []
    names = list(MODES)
    for cname in curves:
        mod = getattr(native, cname)
        for lg in logs:
            n = 1 << lg
            P, S = random_points(mod, True, n, rng), random_scalars(mod, n, rng)
            if full < 1.0:  # a witness-like mix: the other scalars 0 or 1
                bits = rng.random(n) >= full
                S[bits] = 0
                S[bits, 0] = rng.integers(0, 2, size=int(bits.sum()))
            want = None
            sets = [(simd, m) for simd in simds for m in names]
            t = {s: [] for s in sets}
            cpu = {s: [] for s in sets}
            for r in range(runs + 1):  # the first round warms up, not timed
                for simd, m in sets[r % len(sets):] + sets[: r % len(sets)]:
                    _core._set_simd52(simd)
                    _core._set_gls(MODES[m])
                    c0, t0 = time.process_time(), time.perf_counter()
                    out = mod.msm_g2(P, S, threads)
                    dt, dc = time.perf_counter() - t0, time.process_time() - c0
                    if want is None:
                        want = out.copy()
                    assert np.array_equal(out, want), (cname, lg, simd, m)
                    if r:
                        t[(simd, m)].append(dt)
                        cpu[(simd, m)].append(dc)
            for simd in simds:
                row = {"curve": cname, "log_n": lg, "ifma": simd and bool(_core.cpu_has_simd52()), "full": full,
                       **{f"{m}_ms": round(statistics.median(t[(simd, m)]) * 1e3, 2) for m in names},
                       **{f"{m}_runs_ms": [round(x * 1e3, 2) for x in t[(simd, m)]] for m in names},
                       **{f"{m}_cpu_ms": round(statistics.median(cpu[(simd, m)]) * 1e3, 2) for m in names},
                       "load": round(os.getloadavg()[0], 2)}
                row["gls_over_plain"] = round(row["gls_ms"] / row["plain_ms"], 3)
                row["auto_over_plain"] = round(row["auto_ms"] / row["plain_ms"], 3)
                row["gls_over_plain_cpu"] = round(row["gls_cpu_ms"] / row["plain_cpu_ms"], 3)
                rows.append(row)
                print(f"{cname} 2^{lg} {'ifma' if row['ifma'] else 'scalar'}: plain {row['plain_ms']} ms, gls {row['gls_ms']} ms ({row['gls_over_plain']}), "
                      f"auto {row['auto_ms']} ms ({row['auto_over_plain']}); cpu time {row['plain_cpu_ms']} / {row['gls_cpu_ms']} ms "
                      f"({row['gls_over_plain_cpu']}) load {row['load']}", flush=True)
    _core._set_gls(1)
    _core._set_simd52(True)
    return rows


def b2_part(dirs, runs, threads, simds):
    """Groth16's B2 MSM of a key over its witness (the prover's msm_witness call), in process,
    the settings interleaved as in msm_part"""
    from snarkd.formats.wtns import read_wtns
    from snarkd.prover import ProvingKey

    rows = []
    names = list(MODES)
    for d in dirs:
        with ProvingKey.load(d / "circuit.zkey") as key:
            zk, nat = key.zkey, key.native
            w = np.ascontiguousarray(read_wtns(d / "witness.wtns").values)
            sets = [(simd, m) for simd in simds for m in names]
            t = {s: [] for s in sets}
            cpu = {s: [] for s in sets}
            want = None
            for r in range(runs + 1):
                for simd, m in sets[r % len(sets):] + sets[: r % len(sets)]:
                    _core._set_simd52(simd)
                    _core._set_gls(MODES[m])
                    c0, t0 = time.process_time(), time.perf_counter()
                    out = nat.msm_witness(w, [], [(zk.b2, 0)], threads)[1][0]
                    dt, dc = time.perf_counter() - t0, time.process_time() - c0
                    if want is None:
                        want = out.copy()
                    assert np.array_equal(out, want), (d, simd, m)
                    if r:
                        t[(simd, m)].append(dt)
                        cpu[(simd, m)].append(dc)
        for simd in simds:
            row = {"dir": str(d.relative_to(REPO)) if d.is_relative_to(REPO) else str(d),
                   "ifma": simd and bool(_core.cpu_has_simd52()),
                   **{f"{m}_ms": round(statistics.median(t[(simd, m)]) * 1e3, 2) for m in names},
                   **{f"{m}_cpu_ms": round(statistics.median(cpu[(simd, m)]) * 1e3, 2) for m in names},
                   **{f"{m}_runs_ms": [round(x * 1e3, 2) for x in t[(simd, m)]] for m in names},
                   "load": round(os.getloadavg()[0], 2)}
            row["gls_over_plain_cpu"] = round(row["gls_cpu_ms"] / row["plain_cpu_ms"], 3)
            row["auto_over_plain_cpu"] = round(row["auto_cpu_ms"] / row["plain_cpu_ms"], 3)
            rows.append(row)
            print(f"B2 {d.name} {'ifma' if row['ifma'] else 'scalar'}: cpu plain {row['plain_cpu_ms']} gls "
                  f"{row['gls_cpu_ms']} ({row['gls_over_plain_cpu']}) auto {row['auto_cpu_ms']} "
                  f"({row['auto_over_plain_cpu']}); wall {row['plain_ms']} / {row['gls_ms']} / {row['auto_ms']} "
                  f"load {row['load']}", flush=True)
    _core._set_gls(1)
    _core._set_simd52(True)
    return rows


def prove_part(dirs, runs, threads, simds):
    """Whole proofs with the G2 split off / forced / by the cost model (glv_cpu.prove_part with this switch)."""
    return glv_cpu.prove_part(dirs, runs, threads, simds, MODES, CHILD)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--logs", default="10,12,14,16,18")
    ap.add_argument("--curves", default="bn254,bls12_381")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--dir", type=Path, action="append", default=[])
    ap.add_argument("--prove-runs", type=int, default=5)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--b2", type=Path, action="append", default=[], help="key dir: its B2 MSM in process")
    ap.add_argument("--full", type=float, default=1.0, help="fraction of full scalars; the rest 0 or 1 (msm part)")
    ap.add_argument("--ifma", default="on,off", help="IFMA settings to run: on, off or on,off")
    a = ap.parse_args()
    simds = [x == "on" for x in a.ifma.split(",")]
    load0 = os.getloadavg()
    t0 = time.time()
    out = {"command": "python bench/gls_cpu.py " + " ".join(sys.argv[1:]), "cpu": platform.processor() or platform.machine(),
           "cores": os.cpu_count(), "cpu_has_ifma": bool(_core.cpu_has_simd52()),
           "msm": msm_part(a.curves.split(","), [int(x) for x in a.logs.split(",") if x], a.runs, a.threads, simds, a.full),
           "b2": b2_part(a.b2, a.runs, a.threads, simds),
           "prove": prove_part(a.dir, a.prove_runs, a.threads, simds)}
    out["load_before"] = [round(x, 2) for x in load0]
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    out["seconds"] = round(time.time() - t0, 1)
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
