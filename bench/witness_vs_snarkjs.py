"""snarkd witness calculation (circom .wasm under wasmtime) against snarkjs's (Node/V8).

For each circuit and curve, same .wasm and input.json, median of --runs runs:

  process  whole process: `snarkd witness` vs `snarkjs wtns calculate` (interpreter
           start, wasm compile, calculation, .wtns write); snarkd with its compiled-
           module cache filled by one earlier run (that first run is reported too)
  warm     in-process, module already compiled (what the daemon pays per request):
           WitnessCalculator.calculate_words vs circom_runtime's calculateWTNSBin on a
           reused WitnessCalculator in one Node process
  compile  in-process module compile + first instance (wasmtime) vs
           WitnessCalculatorBuilder (V8)

Every snarkd .wtns is checked byte-identical to snarkjs's. Prints a table and
writes JSON (--json, default bench/results/witness.json).

    python bench/witness_vs_snarkjs.py --runs 5
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
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "src"))

import oracle  # noqa: E402

SNARKJS = REPO / "node_modules" / ".bin" / "snarkjs"
WORK = REPO / "bench" / "work"

CHAIN = """pragma circom 2.0.0;
template Chain(N) {
    signal input k;
    signal input x;
    signal output out;
    signal s[N + 1];
    s[0] <== x;
    for (var i = 0; i < N; i++) {
        s[i + 1] <== s[i] * s[i] + k + i;
    }
    out <== s[N];
}
component main {public [k]} = Chain(%d);
"""

POSEIDON = """pragma circom 2.0.0;
include "circomlib/poseidon.circom";
// N chained Poseidon(2) hashes: h[i+1] = Poseidon(h[i], in[i]).
template Many(N) {
    signal input seed;
    signal input in[N];
    signal output out;
    component p[N];
    signal h[N + 1];
    h[0] <== seed;
    for (var i = 0; i < N; i++) {
        p[i] = Poseidon(2);
        p[i].inputs[0] <== h[i];
        p[i].inputs[1] <== in[i];
        h[i + 1] <== p[i].out;
    }
    out <== h[N];
}
component main {public [seed]} = Many(%d);
"""

NODE_WARM = r"""
import { WitnessCalculatorBuilder } from "circom_runtime";
import fs from "fs";
const [wasmPath, inputPath, runs] = process.argv.slice(2);
const input = JSON.parse(fs.readFileSync(inputPath, "utf8"));
let t = process.hrtime.bigint();
const wc = await WitnessCalculatorBuilder(fs.readFileSync(wasmPath), {});
const compileMs = Number(process.hrtime.bigint() - t) / 1e6;
const warm = [];
for (let i = 0; i < Number(runs); i++) {
  t = process.hrtime.bigint();
  await wc.calculateWTNSBin(input);
  warm.push(Number(process.hrtime.bigint() - t) / 1e6);
}
console.log(JSON.stringify({ compile_ms: compileMs, warm_ms: warm }));
"""


def circuits(quick: bool) -> list[tuple[str, str, int, bool]]:
    if quick:
        return [("chain", CHAIN, 1 << 12, False), ("poseidon", POSEIDON, 64, True)]
    return [("chain", CHAIN, 1 << 16, False), ("poseidon", POSEIDON, 256, True)]


def inputs_for(kind: str, n: int) -> dict:
    if kind == "chain":
        return {"k": "3", "x": "2"}
    return {"seed": "1", "in": [str(i * 7919 + 1) for i in range(n)]}


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall


def median_ms(xs: list[float]) -> float:
    return round(statistics.median(xs), 2)


def bench_one(kind: str, template: str, n: int, lib: bool, curve: str, runs: int, tmp: Path) -> dict:
    from snarkd.formats.wtns import write_wtns
    from snarkd.witness import WitnessCalculator

    t = time.perf_counter()
    d = oracle.compile_circuit(template % n, f"bench_{kind}_{n}", curve, include_circomlib=lib)
    print(f"[{kind} n={n} {curve}] compiled circuit ({time.perf_counter() - t:.1f}s)", file=sys.stderr)
    wasm = d / "circuit_js" / "circuit.wasm"
    inp = tmp / f"{kind}-{curve}-input.json"
    inp.write_text(json.dumps(inputs_for(kind, n)))
    inputs = inputs_for(kind, n)

    # process, cold: alternate snarkd / snarkjs
    ours_wtns, theirs_wtns = tmp / "ours.wtns", tmp / "theirs.wtns"
    ours_cmd = [sys.executable, "-m", "snarkd", "witness", str(wasm), str(inp), str(ours_wtns), "--quiet"]
    theirs_cmd = ["node", str(SNARKJS), "wtns", "calculate", str(wasm), str(inp), str(theirs_wtns)]
    env_cache = tmp / f"wasm-cache-{kind}-{curve}"
    os.environ["SNARKD_WASM_CACHE"] = str(env_cache)  # a fresh, empty compiled-module cache
    cold_ours = timed(ours_cmd) * 1e3  # compiles and fills the cache
    p_ours, p_theirs = [], []
    for _ in range(runs):
        p_ours.append(timed(ours_cmd) * 1e3)
        p_theirs.append(timed(theirs_cmd) * 1e3)
    identical = ours_wtns.read_bytes() == theirs_wtns.read_bytes()
    if not identical:
        raise RuntimeError(f"{kind} {curve}: snarkd .wtns differs from snarkjs's")

    # in-process: compile, then warm calculations
    t = time.perf_counter()
    calc = WitnessCalculator(wasm, cache=False)
    compile_ours = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    WitnessCalculator(wasm)
    cached_load_ours = (time.perf_counter() - t) * 1e3
    calc.calculate_words(inputs)  # first run: memory growth etc.
    warm_ours = []
    for _ in range(runs):
        t = time.perf_counter()
        calc.calculate_words(inputs)
        warm_ours.append((time.perf_counter() - t) * 1e3)
    t = time.perf_counter()
    w = calc.calculate(inputs)
    write_wtns(tmp / "inproc.wtns", calc.prime, w.values)
    calc_write_ms = (time.perf_counter() - t) * 1e3
    assert (tmp / "inproc.wtns").read_bytes() == theirs_wtns.read_bytes()

    WORK.mkdir(parents=True, exist_ok=True)
    script = WORK / "witness_warm.mjs"
    script.write_text(NODE_WARM)
    out = subprocess.run(["node", str(script), str(wasm), str(inp), str(runs + 1)], capture_output=True, text=True, check=True)
    node = json.loads(out.stdout.strip().splitlines()[-1])
    warm_theirs = node["warm_ms"][1:]

    row = {
        "circuit": kind,
        "n": n,
        "curve": curve,
        "witness_size": calc.witness_size,
        "input_values": calc.input_size,
        "wasm_bytes": wasm.stat().st_size,
        "process_ms": {"snarkd": median_ms(p_ours), "snarkjs": median_ms(p_theirs)},
        "warm_ms": {"snarkd": median_ms(warm_ours), "snarkjs": median_ms(warm_theirs)},
        "compile_ms": {"snarkd": round(compile_ours, 2), "snarkjs": round(node["compile_ms"], 2)},
        "snarkd_cached_module_load_ms": round(cached_load_ours, 2),
        "snarkd_process_cold_cache_ms": round(cold_ours, 2),
        "snarkd_calculate_and_write_ms": round(calc_write_ms, 2),
        "runs": {"process_snarkd": p_ours, "process_snarkjs": p_theirs, "warm_snarkd": warm_ours, "warm_snarkjs": warm_theirs},
        "byte_identical": identical,
    }
    for k in ("process_ms", "warm_ms", "compile_ms"):
        row[k]["ratio_snarkjs_over_snarkd"] = round(row[k]["snarkjs"] / row[k]["snarkd"], 3)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--curves", default="bn128,bls12381")
    ap.add_argument("--quick", action="store_true", help="small circuits (smoke test)")
    ap.add_argument("--json", type=Path, default=REPO / "bench" / "results" / "witness.json")
    args = ap.parse_args()
    if args.runs < 3:
        ap.error("--runs must be >= 3 (medians)")

    import wasmtime

    tmp = Path(tempfile.mkdtemp(prefix="snarkd-wbench-"))
    rows = []
    for kind, template, n, lib in circuits(args.quick):
        for curve in args.curves.split(","):
            rows.append(bench_one(kind, template, n, lib, curve, args.runs, tmp))

    hdr = f"{'circuit':<16}{'curve':<10}{'witness':>9}  {'process snarkd/snarkjs ms':>27} {'x':>6}  {'warm snarkd/snarkjs ms':>24} {'x':>6}  {'compile snarkd/snarkjs ms':>26}"
    print(hdr)
    print("-" * len(hdr))
    for r in rows:
        p, w, c = r["process_ms"], r["warm_ms"], r["compile_ms"]
        print(
            f"{r['circuit'] + ' ' + str(r['n']):<16}{r['curve']:<10}{r['witness_size']:>9}  "
            f"{p['snarkd']:>12.1f} / {p['snarkjs']:<12.1f} {p['ratio_snarkjs_over_snarkd']:>6.2f}  "
            f"{w['snarkd']:>10.1f} / {w['snarkjs']:<11.1f} {w['ratio_snarkjs_over_snarkd']:>6.2f}  "
            f"{c['snarkd']:>11.1f} / {c['snarkjs']:<11.1f}"
        )
    print("x = snarkjs time / snarkd time (> 1: snarkd faster); medians of", args.runs, "runs")
    for r in rows:
        print(
            f"{r['circuit']} {r['n']} {r['curve']}: snarkd first process run (empty module cache) "
            f"{r['snarkd_process_cold_cache_ms']:.0f} ms; cached module load {r['snarkd_cached_module_load_ms']:.0f} ms"
        )
    result = {
        "benchmark": "witness calculation: snarkd (wasmtime) vs snarkjs wtns calculate (node)",
        "runs": args.runs,
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version()},
        "versions": {
            "wasmtime": getattr(wasmtime, "__version__", None) or _pkg_version("wasmtime"),
            "node": subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip(),
            "snarkjs": json.loads((REPO / "node_modules" / "snarkjs" / "package.json").read_text())["version"],
            "circom_runtime": json.loads((REPO / "node_modules" / "circom_runtime" / "package.json").read_text())["version"],
        },
        "results": rows,
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.json}", file=sys.stderr)
    return 0


def _pkg_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


if __name__ == "__main__":
    sys.exit(main())
