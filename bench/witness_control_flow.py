"""Value-dependent circuits under traffic (issue 37, item 2): N distinct inputs through one NativeCalculator, before
(a source tree whose native engine records every miss: --src /work/main/src) and after (this tree: a program of
CONTROL_FLOW_AFTER paths runs the wasm's control flow natively for requests no path fits).

The circuit is tests/witness/circuits/bigint.circom (a small analogue of zk-email's RSAVerifier65537 witness code:
k-limb long division with value-dependent normalisation, quotient correction and carry loops; pow 65537 by
sixteen mul-mods), or torture.circom. Every witness is checked against the wasm engine's (wasmtime).

    python bench/witness_control_flow.py --n 50 [--bits 121 --limbs 9] [--curve bn128] \\
        [--side before=/work/main/src] [--side after=src] --json bench/results/witness-control-flow.json

Reports per side: the build, request 1's time and how it was made, the median of the first 5 and the last 5
requests, the slowest, the .wprog size after request 1 and after request N, paths kept, the requests by source,
peak RSS; and the wasm engine's median per request for scale.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def bigint_inputs(i: int, n: int, k: int) -> dict:
    r = random.Random(1000 + i)
    top_bits = r.randint(1, n)
    mod = (r.getrandbits(n * (k - 1) + top_bits) | (1 << (n * (k - 1) + top_bits - 1))) | 1
    sig = r.randrange(2, mod)
    msg = pow(sig, 65537, mod) if i % 2 == 0 else r.randrange(0, mod)
    lim = lambda x: [str((x >> (n * j)) & ((1 << n) - 1)) for j in range(k)]  # noqa: E731
    return {"signature": lim(sig), "modulus": lim(mod), "message": lim(msg)}


def torture_inputs(i: int) -> dict:
    return {"a": 1000 + 37 * i, "b": 3 + i, "s": i, "v": [i, 20, 3, 40]}


def compile_wasm(args) -> Path:
    sys.path.insert(0, str(REPO / "tests"))
    sys.path.insert(0, str(REPO / "tests" / "witness"))
    from wfixtures import compiled

    if args.circuit == "bigint":
        return compiled("bigint.circom", args.curve, compiler=args.compiler, N=args.bits, K=args.limbs).wasm
    return compiled("torture.circom", args.curve, compiler=args.compiler).wasm


def child(args) -> None:
    """One side, in a process of its own (sys.path: that side's source tree)."""
    import numpy as np

    from snarkd.witness import NativeCalculator, WitnessCalculator

    d = Path(tempfile.mkdtemp(prefix="wcf-"))
    wasm = d / "circuit.wasm"
    shutil.copyfile(args.wasm, wasm)
    inputs = [bigint_inputs(i, args.bits, args.limbs) if args.circuit == "bigint" else torture_inputs(i)
              for i in range(args.n)]
    ref = WitnessCalculator(wasm, cache=False)
    t = time.perf_counter()
    calc = NativeCalculator(wasm, cache=False)
    build_ms = (time.perf_counter() - t) * 1e3
    times, sources, sizes, paths = [], [], [], []
    wasm_ms = []
    for inp in inputs:
        t = time.perf_counter()
        raw, source = calc.calculate_bytes(inp)
        times.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        want = ref.calculate(inp).values
        wasm_ms.append((time.perf_counter() - t) * 1e3)
        got = np.frombuffer(bytes(raw), dtype="<u8").reshape(-1, 4)
        if not np.array_equal(got, want):
            raise SystemExit(f"witness differs from the wasm engine's for {inp}")
        sources.append(source)
        sizes.append(calc.loaded_from.stat().st_size if calc.loaded_from else 0)
        paths.append(calc.program.n_paths)
    shutil.rmtree(d, ignore_errors=True)
    med = statistics.median
    print(json.dumps({
        "build_ms": round(build_ms, 1),
        "request_1_ms": round(times[0], 2), "request_1_source": sources[0],
        "first_5_median_ms": round(med(times[:5]), 2), "last_5_median_ms": round(med(times[-5:]), 2),
        "request_n_ms": round(times[-1], 2), "max_ms": round(max(times), 2),
        "wprog_bytes_after_1": sizes[0], "wprog_bytes_after_n": sizes[-1],
        "paths_after_1": paths[0], "paths_after_n": paths[-1],
        "sources": {s: sources.count(s) for s in sorted(set(sources))},
        "per_request_ms": [round(x, 2) for x in times],
        "wasm_engine_median_ms": round(med(wasm_ms), 2),
        "identical_to_wasm_engine": True,
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--circuit", choices=("bigint", "torture"), default="bigint")
    ap.add_argument("--bits", type=int, default=121)
    ap.add_argument("--limbs", type=int, default=9)
    ap.add_argument("--curve", default="bn128")
    ap.add_argument("--compiler", default="circom2")
    ap.add_argument("--side", action="append", help="NAME=SRC_DIR (default: after=this tree's src)")
    ap.add_argument("--json")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--wasm", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args)
        return
    wasm = compile_wasm(args)
    sides = dict(s.split("=", 1) for s in (args.side or [f"after={REPO / 'src'}"]))
    out = {"command": " ".join([Path(sys.executable).name, *sys.argv]), "circuit": args.circuit, "n": args.n,
           "bits": args.bits if args.circuit == "bigint" else None,
           "limbs": args.limbs if args.circuit == "bigint" else None,
           "curve": args.curve, "compiler": args.compiler, "cpus": os.cpu_count(), "sides": {}}
    for name, src in sides.items():
        env = {**os.environ, "PYTHONPATH": str(Path(src).resolve()), "PYTHONDONTWRITEBYTECODE": "1"}
        cmd = [sys.executable, __file__, "--child", "--wasm", str(wasm), "--n", str(args.n), "--circuit",
               args.circuit, "--bits", str(args.bits), "--limbs", str(args.limbs), "--curve", args.curve]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"{name}: {proc.stderr[-2000:]}")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        res["src"] = str(src)
        out["sides"][name] = res
        print(name, {k: v for k, v in res.items() if k != "per_request_ms"}, flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
