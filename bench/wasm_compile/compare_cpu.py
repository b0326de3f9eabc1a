"""In process, CPU ms per distinct RSA input: snarkd's control-flow run (bench/witness_control_flow_cpu.py's child:
NativeCalculator._run alone, after one warm-up) against the compiled prototype (harness: one warm-up run of
inputs-1, then inputs-1..N once each), the two alternated round by round (the order reversed every other round).

  PYTHONPATH=src python bench/wasm_compile/compare_cpu.py --exe BUILD/witness --dir DIR --n 8 --rounds 10 \
      [--exe NAME=OTHER/witness ...] [--json OUT]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
from run import encode_inputs  # noqa: E402
from witness_control_flow_cpu import CHILD  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", action="append", required=True, help="[NAME=]path of a compiled harness")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--n", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--tmp", default="/tmp/wit26/cmp")
    ap.add_argument("--json")
    a = ap.parse_args()
    os.makedirs(a.tmp, exist_ok=True)
    pairs = []
    for i in range(1, a.n + 1):
        b = os.path.join(a.tmp, "in-%d.bin" % i)
        open(b, "wb").write(encode_inputs(os.path.join(a.dir, "inputs-%d.json" % i)))
        pairs += [b, os.path.join(a.tmp, "out-%d.wtns" % i)]
    exes = dict((e.split("=", 1) if "=" in e else ("compiled", e)) for e in a.exe)
    sides = {"interpreter": []} | {k: [] for k in exes}
    loads = []
    for r in range(a.rounds):
        order = list(sides) if r % 2 == 0 else list(sides)[::-1]
        loads.append(os.getloadavg()[0])
        for s in order:
            if s == "interpreter":
                out = subprocess.run([sys.executable, "-c", CHILD, a.dir, str(a.n)], capture_output=True, text=True,
                                     check=True)
                sides[s] += json.loads(out.stdout.strip().split("\n")[-1])["cpu_ms"]
            else:
                out = subprocess.run([exes[s], pairs[0], os.path.join(a.tmp, "warm.wtns"), "1"] + pairs,
                                     capture_output=True, text=True, check=True)
                sides[s] += [float(l.split()[3]) for l in out.stdout.split("\n") if l.startswith("run ")][1:]
    res = {"n": a.n, "rounds": a.rounds, "load_1min": [round(x, 2) for x in loads],
           "sides": {s: {"cpu_ms_median": round(statistics.median(v), 2),
                         "cpu_ms_lower_quartile": round(statistics.quantiles(v, n=4)[0], 2),
                         "cpu_ms_min": round(min(v), 2), "runs": len(v)} for s, v in sides.items()}}
    print(json.dumps(res, indent=1))
    if a.json:
        res["exes"] = exes
        res["command"] = " ".join(sys.argv)
        open(a.json, "w").write(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
