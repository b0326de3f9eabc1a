"""Native witness generation against the wasm engine and snarkjs, side by side in one run.

For each circuit (BN254): the same .wasm and input.json, every witness checked byte-identical to
`snarkjs wtns calculate`.

  warm      in process, one core: NativeCalculator.calculate (replay) vs WitnessCalculator.calculate
            (wasmtime), medians of --runs after a warm-up
  build     building the native program (a fresh one: record from placeholder inputs, compile, save)
            against one warm wasm run, and against the wasm engine's own first use (compile + run)
  process   whole processes: `snarkd witness --engine native` (program kept from an earlier run),
            `snarkd witness --engine wasm` (compiled module cached), `snarkjs wtns calculate`; medians
  rss       peak RSS of each of those processes (os.wait4)

    python bench/witness_native.py --runs 5 [--circuits sha256,chain16,chain20] [--json OUT]
"""

from __future__ import annotations

import os

# numpy's OpenBLAS threads spin between calls and, on a 2-core machine, take a core from whichever
# calculator runs (recording was 1.6x slower with them): one thread, for every path measured here alike
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse
import json
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "src"))

import oracle  # noqa: E402

from prove_vs_rapidsnark import cpu_name  # noqa: E402  (bench/ is on sys.path)
from witness_vs_snarkjs import CHAIN, SNARKJS  # noqa: E402  the same chain circuit, the same snarkjs

SHA256 = """pragma circom 2.0.0;
include "circomlib/sha256/sha256.circom";
template Sha256Bits(N) {
    signal input in[N];
    signal output out[256];
    component h = Sha256(N);
    for (var i = 0; i < N; i++) {
        in[i] * (in[i] - 1) === 0;
        h.in[i] <== in[i];
    }
    for (var i = 0; i < 256; i++) out[i] <== h.out[i];
}
component main = Sha256Bits(1016);
"""


def circuits(names: list[str]):
    for name in names:
        if name == "sha256":
            rng = random.Random(5)
            yield name, SHA256, True, {"in": [rng.getrandbits(1) for _ in range(1016)]}
        elif name.startswith("chain"):
            # the largest chain of domain 2^P (as bench/make_chain_keys.py builds its keys)
            yield name, CHAIN % ((1 << int(name[5:])) - 3), False, {"k": "3", "x": "2"}
        else:
            raise SystemExit(f"unknown circuit {name!r}")


TIME = shutil.which("time") or "/usr/bin/time"


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes) of one child process. The RSS comes from GNU time: a child's own
    rusage would count the pages it shared with this (large) process between fork and exec."""
    start = time.perf_counter()
    proc = subprocess.run([TIME, "-f", "maxrss_kib=%M", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          env=env, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:5])} failed: {proc.stderr[-2000:]}")
    rss = [line for line in proc.stderr.splitlines() if line.startswith("maxrss_kib=")][-1]
    return wall, int(rss.split("=")[1]) * 1024


def median_ms(xs: list[float]) -> float:
    return round(statistics.median(xs) * 1e3, 2)


def bench_one(name: str, source: str, lib: bool, inputs: dict, runs: int, tmp: Path) -> dict:
    from snarkd.witness import NativeCalculator, WitnessCalculator

    t = time.perf_counter()
    d = oracle.compile_circuit(source, f"wbench_{name}", "bn128", include_circomlib=lib)
    print(f"[{name}] compiled ({time.perf_counter() - t:.1f} s)", file=sys.stderr)
    work = tmp / name
    work.mkdir()
    wasm = work / "circuit.wasm"
    shutil.copy(d / "circuit_js" / "circuit.wasm", wasm)
    inp = work / "input.json"
    inp.write_text(json.dumps(inputs))
    ref = work / "snarkjs.wtns"
    subprocess.run(["node", str(SNARKJS), "wtns", "calculate", str(wasm), str(inp), str(ref)], check=True,
                   capture_output=True)

    # warm, in process, one core
    wc = WitnessCalculator(wasm, cache=work / "cache", max_instances=1)
    wc.calculate(inputs)
    t = time.perf_counter()
    nc = NativeCalculator(wasm, cache=False)
    build_s = time.perf_counter() - t
    build_stats = nc.program.path_stats()[0]
    program_bytes = nc.loaded_from.stat().st_size if nc.loaded_from else None
    nc.calculate(inputs)
    warm_w, warm_n = [], []
    for _ in range(runs):
        t = time.perf_counter()
        ww = wc.calculate(inputs)
        warm_w.append(time.perf_counter() - t)
        t = time.perf_counter()
        wn = nc.calculate(inputs)
        warm_n.append(time.perf_counter() - t)
    assert (ww.values == wn.values).all(), f"{name}: native and wasm witnesses differ"
    assert nc.stats.wasm == 0 and nc.stats.recorded == 0, nc.stats
    t = time.perf_counter()
    WitnessCalculator(wasm, cache=False).calculate(inputs)  # the wasm engine's first use: compile + run
    wasm_first_s = time.perf_counter() - t
    del wc, nc

    # whole processes
    env = dict(os.environ, SNARKD_WASM_CACHE=str(work / "cache"), PYTHONPATH=str(REPO / "src"))
    ours = [sys.executable, "-m", "snarkd", "witness", str(wasm), str(inp)]
    out_n, out_w, out_j = work / "n.wtns", work / "w.wtns", work / "j.wtns"
    timed(ours + [str(out_n), "--engine", "native", "--quiet"], env)  # program built and kept
    timed(ours + [str(out_w), "--engine", "wasm", "--quiet"], env)  # module compiled and cached
    p_n, p_w, p_j, rss_n, rss_w, rss_j = [], [], [], [], [], []
    for _ in range(runs):
        for cmd, wall, rss in ((ours + [str(out_n), "--engine", "native", "--quiet"], p_n, rss_n),
                               (ours + [str(out_w), "--engine", "wasm", "--quiet"], p_w, rss_w),
                               (["node", str(SNARKJS), "wtns", "calculate", str(wasm), str(inp), str(out_j)], p_j,
                                rss_j)):
            s, r = timed(cmd, env)
            wall.append(s)
            rss.append(r)
    for out in (out_n, out_w, out_j):
        assert out.read_bytes() == ref.read_bytes(), f"{name}: {out.name} differs from snarkjs"
    row = {
        "circuit": name,
        "witness_size": wn.values.shape[0],
        "wasm_bytes": wasm.stat().st_size,
        "warm_ms": {"native": median_ms(warm_n), "wasm": median_ms(warm_w)},
        "build_ms": {"native_program": round(build_s * 1e3, 1), "wasm_first_use": round(wasm_first_s * 1e3, 1)},
        "program": {**build_stats, "file_bytes": program_bytes},
        "process_ms": {"native": median_ms(p_n), "wasm": median_ms(p_w), "snarkjs": median_ms(p_j)},
        "peak_rss_mib": {"native": round(max(rss_n) / 2**20, 1), "wasm": round(max(rss_w) / 2**20, 1),
                         "snarkjs": round(max(rss_j) / 2**20, 1)},
        "runs": {"warm_native_s": warm_n, "warm_wasm_s": warm_w, "process_native_s": p_n, "process_wasm_s": p_w,
                 "process_snarkjs_s": p_j},
        "byte_identical_to_snarkjs": True,
    }
    row["warm_ms"]["speedup"] = round(row["warm_ms"]["wasm"] / row["warm_ms"]["native"], 1)
    # against the median warm wasm run (one run alone is too noisy a yardstick)
    row["build_ms"]["one_wasm_run"] = median_ms(warm_w)
    row["build_ms"]["over_one_wasm_run"] = round(build_s / statistics.median(warm_w), 2)
    row["process_ms"]["native_over_snarkjs"] = round(row["process_ms"]["native"] / row["process_ms"]["snarkjs"], 2)
    print(f"[{name}] warm native {row['warm_ms']['native']} ms vs wasm {row['warm_ms']['wasm']} ms "
          f"({row['warm_ms']['speedup']}x); build {row['build_ms']['native_program']} ms "
          f"({row['build_ms']['over_one_wasm_run']}x one wasm run); process native {row['process_ms']['native']} "
          f"/ wasm {row['process_ms']['wasm']} / snarkjs {row['process_ms']['snarkjs']} ms; peak RSS "
          f"{row['peak_rss_mib']}", file=sys.stderr)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--circuits", default="sha256,chain16,chain20")
    ap.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "witness-native.json")
    args = ap.parse_args()
    if args.runs < 3:
        ap.error("--runs must be >= 3 (medians)")
    tmp = Path(tempfile.mkdtemp(prefix="snarkd-wnative-"))
    rows = [bench_one(*c, args.runs, tmp) for c in circuits(args.circuits.split(","))]
    shutil.rmtree(tmp, ignore_errors=True)
    hdr = (f"{'circuit':<10}{'witness':>9}  {'warm native/wasm ms':>22} {'x':>6}  {'build ms (x wasm run)':>22}  "
           f"{'process native/wasm/snarkjs ms':>32}  {'peak RSS native/wasm/snarkjs MiB':>34}")
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        w, b, p, m = r["warm_ms"], r["build_ms"], r["process_ms"], r["peak_rss_mib"]
        print(f"{r['circuit']:<10}{r['witness_size']:>9}  {w['native']:>10.2f} / {w['wasm']:<9.2f} {w['speedup']:>6}  "
              f"{b['native_program']:>12.1f} ({b['over_one_wasm_run']:>5.2f}x)  "
              f"{p['native']:>9.1f} / {p['wasm']:>8.1f} / {p['snarkjs']:<9.1f}  "
              f"{m['native']:>10} / {m['wasm']:>8} / {m['snarkjs']:<8}")
    print(f"medians of {args.runs} runs; machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    result = {
        "benchmark": "native witness (replay) vs the wasm engine (wasmtime) vs snarkjs wtns calculate, BN254",
        "runs": args.runs,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "cpu": cpu_name()},
        "results": rows,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
