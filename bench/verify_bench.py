"""Groth16 verification speed: snarkd (native pairing) vs snarkjs vs py_ecc.

For each curve, a snarkjs proof of the `chain` fixture circuit is verified by
  - snarkd in-process: `snarkd.verifier.verify_files` (JSON read + parse + native
    check), cold (prepared-key cache cleared every run) and warm (cache hit);
  - the whole `snarkd verify` CLI process (python -m snarkd verify ...);
  - `snarkjs groth16 verify` (node process);
  - the py_ecc reference verifier (in-process).
Medians of several runs; results in bench/results/verify.json.

    python bench/verify_bench.py [--runs 30] [--cli-runs 5] [--pyecc-runs 3]
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

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "verifier"), str(REPO / "src")]

import conftest  # noqa: E402
import oracle  # noqa: E402

import snarkd.verifier.groth16 as g16  # noqa: E402
from snarkd.verifier import verify_files  # noqa: E402
from ref_verifier import verify_reference  # noqa: E402


def timed(fn, runs: int, setup=None) -> dict:
    wall, cpu = [], []
    for _ in range(runs):
        if setup:
            setup()
        t0, c0 = time.perf_counter(), time.process_time()
        ok = fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - t0)
        assert ok, "verification failed during the benchmark"
    return {"median_ms": statistics.median(wall) * 1e3, "min_ms": min(wall) * 1e3,
            "cpu_median_ms": statistics.median(cpu) * 1e3, "runs": runs}


def timed_proc(cmd, runs: int, env=None) -> dict:
    wall = []
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        wall.append(time.perf_counter() - t0)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    return {"median_ms": statistics.median(wall) * 1e3, "min_ms": min(wall) * 1e3, "runs": runs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--cli-runs", type=int, default=5)
    ap.add_argument("--pyecc-runs", type=int, default=3)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "verify.json"))
    args = ap.parse_args()

    env = dict(os.environ, PYTHONPATH=str(REPO / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    results = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                           "loadavg_start": os.getloadavg()}, "curves": {}}
    for curve in ("bn128", "bls12381"):
        case = conftest.build_case("chain", curve)
        d = Path(tempfile.mkdtemp(prefix=f"verify-bench-{curve}-"))
        proof, public = case.circuit.snarkjs_prove(case.wtns, d)
        vk = case.vk
        files = (vk, public, proof)
        n_public = len(json.loads(public.read_text()))
        r = {"circuit": "chain", "n_public": n_public}
        verify_files(*files)  # load the module, build the Frobenius constants
        r["snarkd_inprocess_cold"] = timed(lambda: verify_files(*files), args.runs, setup=g16._PREPARED.clear)
        r["snarkd_inprocess_warm"] = timed(lambda: verify_files(*files), args.runs)
        r["snarkd_cli_process"] = timed_proc([sys.executable, "-m", "snarkd", "verify", "-q", *map(str, files)], args.cli_runs, env)
        r["snarkjs_process"] = timed_proc(["node", str(oracle.npm_bin("snarkjs")), "groth16", "verify", *map(str, files)], args.cli_runs)
        vkj, pubj, prj = (json.loads(Path(p).read_text()) for p in files)
        r["py_ecc_inprocess"] = timed(lambda: verify_reference(vkj, pubj, prj), args.pyecc_runs)
        results["curves"][curve] = r
        print(f"{curve}: snarkd cold {r['snarkd_inprocess_cold']['median_ms']:.2f} ms "
              f"(cpu {r['snarkd_inprocess_cold']['cpu_median_ms']:.2f}), warm {r['snarkd_inprocess_warm']['median_ms']:.2f} ms "
              f"(cpu {r['snarkd_inprocess_warm']['cpu_median_ms']:.2f}), CLI {r['snarkd_cli_process']['median_ms']:.0f} ms, "
              f"snarkjs {r['snarkjs_process']['median_ms']:.0f} ms, py_ecc {r['py_ecc_inprocess']['median_ms']:.0f} ms", flush=True)
    results["machine"]["loadavg_end"] = os.getloadavg()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
