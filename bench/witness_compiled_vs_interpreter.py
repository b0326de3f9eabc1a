"""A circuit's compiled witness library against the native interpreter's control-flow run, in one process, on any
field the library supports (BN254, BLS12-381), every witness checked against `snarkjs wtns calculate`.

    python bench/witness_compiled_vs_interpreter.py CIRCUIT.wasm IN1.json IN2.json ... [--rounds R] [--json OUT]
        [--snarkjs node_modules/.bin/snarkjs]

The library beside the .wasm is built first if none is kept (`NativeCalculator.compile()`: the product's flags;
its build time and size are reported). Then, round after round, each input runs on the library (lib.run) and on the
interpreter's control-flow run (the wasm's own control flow in the native core, what runs where no library is
kept), alternately; per witness the process CPU time (process_time: both runs are off the calling thread or
GIL-free, and counted). Every library witness is compared with snarkjs's .wtns (its values), and the interpreter's
with the library's.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("wasm")
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json")
    ap.add_argument("--snarkjs", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                                      "node_modules", ".bin", "snarkjs"))
    args = ap.parse_args()

    from snarkd.witness import load_input_json
    from snarkd.witness.native import NativeCalculator

    calc = NativeCalculator(args.wasm, cache=False, strict=True, compiled="on")
    info = calc.compile()
    lib = calc._compiled_program()
    if lib is None:
        raise SystemExit(f"{args.wasm}: no compiled library")
    size = calc.witness_size
    prepared = [[(q.hash, q.data) for q in calc.prepare(load_input_json(p))] for p in args.inputs]
    tmp = tempfile.mkdtemp(prefix="wc-vs-interp-")
    expect = []
    for i, p in enumerate(args.inputs):
        dest = os.path.join(tmp, f"{i}.wtns")
        subprocess.run([args.snarkjs, "wtns", "calculate", args.wasm, p, dest], check=True, capture_output=True)
        with open(dest, "rb") as fh:
            expect.append(fh.read()[-32 * size:])
    out = bytearray(32 * size)
    lib_ms: list[float] = []
    interp_ms: list[float] = []
    load0 = open("/proc/loadavg").read().split()[:3]
    for r in range(args.rounds):
        for i, inputs in enumerate(prepared):
            for side in (("lib", "interp") if (r + i) % 2 == 0 else ("interp", "lib")):
                t0 = time.process_time()
                if side == "lib":
                    status, message, _, _ = lib.run(inputs, out, size)
                    lib_ms.append((time.process_time() - t0) * 1e3)
                    if status != 0:
                        raise SystemExit(f"library on {args.inputs[i]}: {message}")
                    if r == 0 and bytes(out) != expect[i]:
                        raise SystemExit(f"library on {args.inputs[i]}: the witness differs from snarkjs's")
                else:
                    res = calc._run(inputs)
                    interp_ms.append((time.process_time() - t0) * 1e3)
                    if not res.ok:
                        raise SystemExit(f"interpreter on {args.inputs[i]}: {res.message}")
                    if r == 0 and bytes(memoryview(res.witness)) != expect[i]:
                        raise SystemExit(f"interpreter on {args.inputs[i]}: the witness differs from snarkjs's")
    load1 = open("/proc/loadavg").read().split()[:3]
    lm, im = statistics.median(lib_ms), statistics.median(interp_ms)
    res = {"wasm": args.wasm, "curve": calc.curve, "witness_size": size, "inputs": len(args.inputs),
           "rounds": args.rounds, "load": [load0, load1], "build": {k: info.get(k) for k in
                                                                    ("built", "build_s", "build_cpu_s", "bytes")},
           "compiled_ms": {"median": round(lm, 3), "q1": round(statistics.quantiles(lib_ms, n=4)[0], 3)},
           "interpreter_ms": {"median": round(im, 3), "q1": round(statistics.quantiles(interp_ms, n=4)[0], 3)},
           "speedup": round(im / lm, 2), "equal_to_snarkjs": True}
    print(f"{calc.curve}, {size} witness values, {args.rounds} rounds x {len(args.inputs)} inputs, load "
          f"{' '.join(load0)} -> {' '.join(load1)}")
    print(f"library built: {info.get('built')} ({info.get('build_s')} s, {info.get('build_cpu_s')} s compiler CPU, "
          f"{info.get('bytes')} bytes)")
    print(f"compiled library  CPU median {lm:.3f} ms per witness")
    print(f"interpreter       CPU median {im:.3f} ms per witness  ({im / lm:.2f}x the library's)")
    print("every witness equal to snarkjs wtns calculate's")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
