"""The G1 endomorphism split (GLV, ec/glv.hpp) on the CPU, before/after, IFMA on and off.

Part 1, the G1 MSM (`msm_g1`, in process): per curve and size, the plain Pippenger
(`_set_glv(0)`) against the split one (`_set_glv(2)`) and the default choice
(`_set_glv(1)`, the cost model), each with the AVX-512 IFMA kernels on and off
(`_set_simd52`), runs interleaved so load moves all alike. Bases: bench/native_micro's
tiled random points; scalars uniform below r.

Part 2, whole `snarkd prove KEY WTNS PROOF PUBLIC --timings` child processes (the same
four settings, rounds in rotated order); the first proof of each setting is checked with
`snarkjs groth16 verify`.

Usage: python bench/glv_cpu.py [--logs 16,18,20] [--curves bn254,bls12_381] [--runs 3]
       [--threads 0] [--dir bench/work/chain16-bn128 ...] [--prove-runs 5] [--json OUT]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))

from native_micro import random_points, random_scalars  # noqa: E402
from prove_vs_snarkjs import SNARKJS, parse_timings, timed  # noqa: E402

from snarkd.native import _core as native  # noqa: E402
from snarkd.native import _core  # noqa: E402

MODES = {"plain": 0, "glv": 2, "auto": 1}
CHILD = ("import sys; from snarkd.native import _core; _core._set_simd52(sys.argv[1] == '1'); "
         "_core._set_glv(int(sys.argv[2])); from snarkd.cli import main; sys.exit(main(sys.argv[3:]))")


def msm_part(curves, logs, runs, threads):
    rng = np.random.default_rng(7)
    rows = []
    for cname in curves:
        mod = getattr(native, cname)
        for lg in logs:
            n = 1 << lg
            P, S = random_points(mod, False, n, rng), random_scalars(mod, n, rng)
            for simd in (True, False):
                _core._set_simd52(simd)
                want = None
                t = {m: [] for m in MODES}
                for r in range(runs + 1):  # the first round warms up, not timed
                    for m, code in MODES.items():
                        _core._set_glv(code)
                        t0 = time.perf_counter()
                        out = mod.msm_g1(P, S, threads)
                        dt = time.perf_counter() - t0
                        if want is None:
                            want = out.copy()
                        assert np.array_equal(out, want), (cname, lg, m)
                        if r:
                            t[m].append(dt)
                row = {"curve": cname, "log_n": lg, "ifma": simd and _core.cpu_has_simd52(),
                       **{f"{m}_ms": round(statistics.median(v) * 1e3, 2) for m, v in t.items()},
                       **{f"{m}_runs_ms": [round(x * 1e3, 2) for x in v] for m, v in t.items()}}
                row["glv_over_plain"] = round(row["glv_ms"] / row["plain_ms"], 3)
                rows.append(row)
                print(f"{cname} 2^{lg} {'ifma' if row['ifma'] else 'avx2'}: plain {row['plain_ms']} ms, glv "
                      f"{row['glv_ms']} ms ({row['glv_over_plain']}), auto {row['auto_ms']} ms", flush=True)
    _core._set_simd52(True)
    _core._set_glv(1)
    return rows


def prove_part(dirs, runs, threads, simds=(True, False), modes=MODES, child=CHILD):
    """Whole proofs (`snarkd prove` children, rotated rounds, medians) of each (8-lane path on/off, split mode);
    child sets the switches from argv (modes: name -> mode); every setting's first proof is checked by snarkjs.
    bench/gls_cpu.py runs it for the G2 split."""
    rows = []
    settings = [("1" if simd else "0", m) for simd in simds for m in modes]
    for d in dirs:
        zkey, wtns = d / "circuit.zkey", d / "witness.wtns"
        res = {s: {"wall": [], "phases": []} for s in settings}
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(runs):
                order = settings[r % len(settings):] + settings[: r % len(settings)]
                for simd, m in order:
                    proof, public = Path(tmp) / f"p{simd}{m}.json", Path(tmp) / f"q{simd}{m}.json"
                    cmd = [sys.executable, "-c", child, simd, str(modes[m]), "prove", str(zkey), str(wtns),
                           str(proof), str(public), "--timings"]
                    if threads:
                        cmd += ["--threads", str(threads)]
                    wall, _rss, err, _cpu = timed(cmd)
                    res[(simd, m)]["wall"].append(wall)
                    res[(simd, m)]["phases"].append(parse_timings(err))
                    if r == 0:  # every setting's proof verifies
                        subprocess.run([str(SNARKJS), "groth16", "verify", str(d / "vk.json"), str(public), str(proof)],
                                       check=True, capture_output=True)
        for (simd, m), v in res.items():
            phases = {k: round(statistics.median(p.get(k, 0.0) for p in v["phases"]), 1) for k in v["phases"][0]}
            rows.append({"dir": str(d.relative_to(REPO)) if d.is_relative_to(REPO) else str(d), "mode": m,
                         "ifma": simd == "1" and bool(_core.cpu_has_simd52()),
                         "wall_s": round(statistics.median(v["wall"]), 3),
                         "wall_runs_s": [round(x, 3) for x in v["wall"]], "phases_ms": phases, "verified": True,
                         "load": round(os.getloadavg()[0], 2)})
            print(f"{d.name} {'ifma' if simd == '1' else 'scalar'} {m}: {rows[-1]['wall_s']} s "
                  f"{ {k: phases.get(k) for k in ('msm_h', 'msm_a', 'msm_b1', 'msm_c', 'msm_b2')} }", flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--logs", default="16,18,20")
    ap.add_argument("--curves", default="bn254,bls12_381")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--dir", type=Path, action="append", default=[])
    ap.add_argument("--prove-runs", type=int, default=5)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    load0 = os.getloadavg()
    t0 = time.time()
    out = {"command": "python bench/glv_cpu.py " + " ".join(sys.argv[1:]), "cpu": platform.processor() or platform.machine(),
           "cores": os.cpu_count(), "cpu_has_ifma": bool(_core.cpu_has_simd52()),
           "msm": msm_part(a.curves.split(","), [int(x) for x in a.logs.split(",") if x], a.runs, a.threads),
           "prove": prove_part(a.dir, a.prove_runs, a.threads)}
    out["load_before"] = [round(x, 2) for x in load0]
    out["load_after"] = [round(x, 2) for x in os.getloadavg()]
    out["seconds"] = round(time.time() - t0, 1)
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
