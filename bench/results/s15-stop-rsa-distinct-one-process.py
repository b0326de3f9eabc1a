# One process, the RSA verifier with the fast library kept, 24 distinct signatures: each witness vs snarkjs's, the .wprog size after each
import os, subprocess, sys, time, shutil
sys.path.insert(0, "/work/main/src")
from snarkd.witness.native import NativeCalculator
import json
W = "/tmp/finW"; shutil.rmtree(W, ignore_errors=True); os.makedirs(W)
for f in ["circuit.wasm", "circuit.wasm.wprog", "circuit.wasm.wso"]:
    src = f"/tmp/s15stop/Wf/{f}"
    if os.path.exists(src): shutil.copy(src, W)
calc = NativeCalculator(f"{W}/circuit.wasm", strict=True)
sizes = []
for i in range(100, 124):
    inp = json.load(open(f"/tmp/s15/W/inputs-{i}.json"))
    t = time.perf_counter(); raw, source = calc.calculate_bytes(inp); ms = (time.perf_counter() - t) * 1e3
    subprocess.run(["node", "/work/main/node_modules/.bin/snarkjs", "wtns", "calculate", f"{W}/circuit.wasm", f"/tmp/s15/W/inputs-{i}.json", "/tmp/fin-ref.wtns"], check=True, capture_output=True)
    ref = open("/tmp/fin-ref.wtns", "rb").read()
    ok = bytes(raw) == ref[-len(raw):]
    sizes.append(os.path.getsize(f"{W}/circuit.wasm.wprog"))
    print(f"inputs-{i}: {source} {ms:.1f} ms equal={ok} wprog={sizes[-1]}", flush=True)
    assert ok
print("wprog first/last", sizes[0], sizes[-1], "stats", calc.stats)
