"""One signature's control-flow run, REPS times in one process: the run profilers look at (callgrind's instruction
counts in docs/witnesses.md, perf's samples), without the bench's subprocesses and sides.

NativeCalculator._run on DIR/inputs-I.json (the control-flow run alone: no replay tried); each run's CPU ms and
the first 16 hex digits of its witness's SHA-256 go to stderr.

    PYTHONPATH=SRC valgrind --tool=callgrind '--toggle-collect=*Recorder*::exec*' \\
        python bench/witness_control_flow_run.py bench/work/rsa-bn128 1 2
    PYTHONPATH=SRC perf record -e cpu-clock -F 20000 python bench/witness_control_flow_run.py bench/work/rsa-bn128 1 10
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

from snarkd.witness import NativeCalculator


def main() -> int:
    if len(sys.argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    d, i = Path(sys.argv[1]), int(sys.argv[2])
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    calc = NativeCalculator(d / "circuit.wasm", cache=False)
    run = [(p.hash, p.data) for p in calc.prepare(json.loads((d / f"inputs-{i}.json").read_text()))]
    for _ in range(reps):
        t = time.process_time()
        res = calc._run(run)
        if not res.ok:
            print(f"{d / f'inputs-{i}.json'}: the control-flow run failed: {res.message}", file=sys.stderr)
            return 1
        ms = (time.process_time() - t) * 1e3
        print(f"{ms:.1f} ms  {hashlib.sha256(bytes(res.witness)).hexdigest()[:16]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
