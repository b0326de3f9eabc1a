"""Where a one-shot `snarkd witness --engine native` spends its CPU time and minor page faults outside the witness
run itself: the CLI's native path step by step in one fresh process, each step's CPU ms (user + system, getrusage)
and minor faults, what the interpreter's start had cost before the first line (`start`), and the rest to the exit.

    python bench/witness_startup_steps.py CIRCUIT.wasm INPUT.json OUT.wtns [--runs N]

Each run is a fresh child (the same interpreter, PYTHONPATH as given, bytecode cached); medians over N runs. The steps
are those of snarkd.cli.witness.run_witness with snarkd's own functions; `run` is the witness calculation
(`calculate_bytes`: a replay, or the control-flow run), so start + the rest is what a process adds around it.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys

CHILD = r'''
import resource, sys  # json only at the end: its import (re, enum) is no step of the CLI's
def now():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * 1e3, r.ru_minflt
steps = []
last = now()
steps.append(("start", last[0], last[1]))
def mark(name):
    global last
    t = now()
    steps.append((name, t[0] - last[0], t[1] - last[1]))
    last = t
wasm, inp, out = sys.argv[1:4]
import snarkd.cli.witness as cw
mark("import cli")
from snarkd.config import deferred
from snarkd.witness import load_input_json, make_calculator
from snarkd.formats.wtns import write_wtns
mark("import witness")
inputs = load_input_json(inp)
mark("inputs json")
from snarkd.native import _witness
mark("load _witness")
calc = make_calculator(wasm, "native", on_fallback=print, cache=deferred("keys.wasm_cache"))
mark("calculator (wasm read+sha, .wprog header)")
calc.prepare(inputs)
mark("prepare inputs")
if calc._program is None and calc._parsed is None:
    calc._module()
mark("wasm decode")
values, source = calc.calculate_bytes(inputs)
mark("run (" + source + ")")
write_wtns(out, calc.prime, values, durable=False)
mark("write .wtns")
import json
sys.stdout.write(json.dumps(steps))
sys.stdout.flush()
import os
os._exit(0)
'''


def main() -> int:
    args = sys.argv[1:]
    runs = 9
    if "--runs" in args:
        i = args.index("--runs")
        runs = int(args[i + 1])
        del args[i: i + 2]
    wasm, inp, out = args
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # bytecode cached, as users run
    table: dict[str, list[tuple[float, int]]] = {}
    for _ in range(runs):
        got = subprocess.run([sys.executable, "-c", CHILD, wasm, inp, out], capture_output=True, text=True, check=True,
                             env=env)
        for name, ms, flt in json.loads(got.stdout):
            table.setdefault(name, []).append((ms, flt))
    print(f"{runs} runs, load {open('/proc/loadavg').read().split()[0]}; medians: CPU ms, minor faults")
    total_ms = total_flt = 0.0
    for name, vals in table.items():
        ms = statistics.median(v[0] for v in vals)
        flt = statistics.median(v[1] for v in vals)
        total_ms += ms
        total_flt += flt
        print(f"  {name:<44} {ms:7.1f} ms {flt:7.0f} faults")
    print(f"  {'sum':<44} {total_ms:7.1f} ms {total_flt:7.0f} faults")
    return 0


if __name__ == "__main__":
    sys.exit(main())
