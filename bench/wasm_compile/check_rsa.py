"""The compiled RSA verifier on DIR/inputs-1..N.json in one process (one run each, distinct signatures, after one
warm-up run of inputs-1), every witness's values (the .wtns's section 2) against the sha256 digests of an earlier
snarkjs-checked run (bench/witness_control_flow.py's JSON, --digests-from). Prints the CPU ms of each run.

  python bench/wasm_compile/check_rsa.py --exe BUILD/witness --dir DIR --n 160 \
      --digests-from bench/results/wit22-witness-control-flow-rsa-160.json [--json OUT]

--product instead of --exe: the product's path in one process (NativeCalculator on DIR/circuit.wasm, its .wprog
value-dependent and its compiled library DIR/circuit.wasm.wso built by `snarkd witness --compile`): every witness
from calculate_bytes, which must have run the library (compiled_runs), CPU ms per request.
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import encode_inputs  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe")
    ap.add_argument("--product", action="store_true")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--n", type=int, default=160)
    ap.add_argument("--digests-from", required=True)
    ap.add_argument("--tmp", default="/tmp/wit26/check")
    ap.add_argument("--json")
    a = ap.parse_args()
    os.makedirs(a.tmp, exist_ok=True)
    if a.product:
        return product(a)
    args = []
    for i in range(1, a.n + 1):
        b = os.path.join(a.tmp, "in-%d.bin" % i)
        open(b, "wb").write(encode_inputs(os.path.join(a.dir, "inputs-%d.json" % i)))
        args += [b, os.path.join(a.tmp, "out-%d.wtns" % i)]
    # the first pair once as warm-up (its run discarded), then every pair once
    r = subprocess.run([a.exe, args[0], os.path.join(a.tmp, "warm.wtns"), "1"] + args, capture_output=True, text=True)
    if r.returncode:
        raise SystemExit(r.stderr)
    cpu = [float(l.split()[3]) for l in r.stdout.split("\n") if l.startswith("run ")][1:]
    earlier = json.load(open(a.digests_from))["sides"]
    want = [s for s in earlier.values() if len(s["witness_sha256"]) >= a.n and
            str(s.get("identical_to_snarkjs", "")).startswith("%d of %d" % ((len(s["witness_sha256"]),) * 2))]
    want = want[0]["witness_sha256"][: a.n]
    got = []
    for i in range(1, a.n + 1):
        w = open(os.path.join(a.tmp, "out-%d.wtns" % i), "rb").read()
        got.append(hashlib.sha256(w[76:]).hexdigest())  # section 2's values (n8 = 32: a 76-byte header)
    same = sum(x == y for x, y in zip(got, want))
    out = {"n": a.n, "identical_to_snarkjs_digests": "%d of %d" % (same, a.n), "cpu_ms": cpu,
           "cpu_ms_median": statistics.median(cpu), "cpu_ms_min": min(cpu),
           "tenth_medians": [statistics.median(cpu[k:k + a.n // 10]) for k in range(0, a.n, max(1, a.n // 10))]}
    print(json.dumps({k: v for k, v in out.items() if k != "cpu_ms"}))
    if a.json:
        open(a.json, "w").write(json.dumps(out, indent=1) + "\n")
    if same != a.n:
        raise SystemExit("witnesses differ")


def want_digests(a):
    earlier = json.load(open(a.digests_from))["sides"]
    want = [s for s in earlier.values() if len(s["witness_sha256"]) >= a.n and
            str(s.get("identical_to_snarkjs", "")).startswith("%d of %d" % ((len(s["witness_sha256"]),) * 2))]
    return want[0]["witness_sha256"][: a.n]


def product(a):
    import time

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                    "src"))
    from snarkd.witness import NativeCalculator, load_input_json

    calc = NativeCalculator(os.path.join(a.dir, "circuit.wasm"), strict=True)
    inputs = [load_input_json(os.path.join(a.dir, "inputs-%d.json" % i)) for i in range(1, a.n + 1)]
    calc.calculate_bytes(inputs[0])  # warm-up (the library loaded)
    got, cpu = [], []
    for x in inputs:
        t = time.process_time()
        raw, source = calc.calculate_bytes(x)
        cpu.append((time.process_time() - t) * 1e3)
        got.append(hashlib.sha256(raw).hexdigest())
    want = want_digests(a)
    same = sum(x == y for x, y in zip(got, want))
    out = {"n": a.n, "path": "product: NativeCalculator.calculate_bytes, compiled library %s" % calc.compiled_library,
           "compiled_runs": calc.compiled_runs, "sources": calc.stats.as_dict(),
           "identical_to_snarkjs_digests": "%d of %d" % (same, a.n), "cpu_ms_median": statistics.median(cpu),
           "cpu_ms_min": min(cpu), "cpu_ms": [round(c, 2) for c in cpu]}
    print(json.dumps({k: v for k, v in out.items() if k != "cpu_ms"}))
    if a.json:
        open(a.json, "w").write(json.dumps(out, indent=1) + "\n")
    if same != a.n or calc.compiled_runs != a.n + 1:
        raise SystemExit("witnesses differ, or not every one from the compiled library")


if __name__ == "__main__":
    main()
