"""The native witness program under traffic that takes the wasm a new way per request (bigint-style loops
bounded by values: an extended-Euclid inverse and a shift-and-subtract reduction per limb), side by side: the
program rule of snarkd/witness/native.py (MAX_PATHS, MAX_PROGRAM_BYTES, least-replayed dropped first) and the
previous one (64 paths, no size bound, the 65th path on not kept). Each rule in a process of its own, one
process = one calculator, N distinct inputs in a row; every witness checked against the wasm engine's.

    python bench/witness_paths.py [--n 80] [--json bench/results/witness-paths.json]

Reports per rule: the time of request 1 and the median of the last 5 (each a recording: no kept path
matches), the .wprog's size after request 1 and after request N, paths kept, peak RSS.
"""

from __future__ import annotations

import argparse
import json
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
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "tests"))

SOURCE = r"""
pragma circom 2.0.0;

function inverse(x, m) {
    var t = 0;
    var newt = 1;
    var r = m;
    var newr = x % m;
    while (newr != 0) {
        var q = r \ newr;
        var tmp = t - q * newt;
        t = newt;
        newt = tmp;
        tmp = r - q * newr;
        r = newr;
        newr = tmp;
    }
    return t;
}

function slow_mod(x, m) {
    var bits = 0;
    var y = x;
    while (y > 0) { y = y >> 1; bits++; }
    var r = 0;
    for (var i = bits; i > 0; i--) {
        r = (r << 1) + ((x >> (i - 1)) & 1);
        if (r >= m) { r = r - m; }
    }
    return r;
}

template Big(K) {
    signal input x[K];
    signal input m;
    signal output inv[K];
    signal output red[K];
    for (var i = 0; i < K; i++) {
        inv[i] <-- inverse(x[i], m);
        red[i] <-- slow_mod(x[i], m);
    }
}

component main = Big(16);
"""


def inputs(n: int, seed: int = 1) -> list[dict]:
    rng = random.Random(seed)
    return [{"x": [str(rng.getrandbits(250)) for _ in range(16)], "m": str(rng.getrandbits(120) | 1)}
            for _ in range(n)]


def one_rule(rule: str, wasm: Path, n: int) -> dict:
    import numpy as np

    import snarkd.witness.native as native
    from snarkd.witness import NativeCalculator, WitnessCalculator

    if rule == "previous":
        native.MAX_PATHS, native.MAX_PROGRAM_BYTES = 64, 1 << 62
        native.NativeCalculator._keep = _previous_keep
    work = Path(tempfile.mkdtemp())
    try:
        w = work / "circuit.wasm"
        shutil.copyfile(wasm, w)
        calc = NativeCalculator(w, cache=False, strict=True)
        ref = WitnessCalculator(w, cache=False)
        prog = Path(f"{w}.wprog")
        times, sizes, sources = [], [], []
        for k, inp in enumerate(inputs(n)):
            t = time.perf_counter()
            raw, source = calc.calculate_bytes(inp)
            times.append(time.perf_counter() - t)
            sources.append(source)
            got = np.frombuffer(bytes(raw), dtype="<u8").reshape(-1, 4)
            assert np.array_equal(got, ref.calculate(inp).values), f"request {k}: another witness than the wasm's"
            sizes.append(prog.stat().st_size)
        return {"rule": rule, "requests": n, "first_s": round(times[0], 3),
                "last5_median_s": round(statistics.median(times[-5:]), 3),
                "wprog_bytes_after_1": sizes[0], "wprog_bytes_after_n": sizes[-1], "paths": calc.program.n_paths,
                "dropped_paths": calc.dropped_paths, "sources": {s: sources.count(s) for s in set(sources)},
                "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _previous_keep(self, path) -> None:  # before the bounds: up to 64 paths, then none kept
    if self.program.n_paths < 64:
        self.program.add_path(path)
        self._save()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=80)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--rule", choices=("current", "previous"), help=argparse.SUPPRESS)  # one child's rule
    ap.add_argument("--wasm", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.rule:
        print(json.dumps(one_rule(args.rule, args.wasm, args.n)))
        return 0
    import oracle

    wasm = oracle.compile_circuit(SOURCE, "bench_bigint_paths", "bn128") / "circuit_js" / "circuit.wasm"
    rows = []
    for rule in ("current", "previous"):
        out = subprocess.run([sys.executable, __file__, "--rule", rule, "--wasm", str(wasm), "--n", str(args.n)],
                             capture_output=True, text=True, check=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
        print(json.dumps(rows[-1]))
    result = {"command": f"python bench/witness_paths.py --n {args.n}", "circuit": "Big(16): extended Euclid "
              "inverse and shift-and-subtract mod of 16 250-bit values by a 120-bit modulus (BN254)",
              "date": time.strftime("%Y-%m-%d"), "rules": rows}
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
