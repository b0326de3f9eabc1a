"""The long translator fuzz (tests/fuzz/translator_fuzz.py): N mutated circom .wasm modules through the compiled
witness program's translator (a refusal or a translation, never another exception), and a sample of the translations
of modules wasmtime validates built with -fsanitize=address,undefined and run on the seed's inputs (a witness or a
trap, never a sanitizer report); the three seeds themselves are built and run that way first.

    python bench/witness_translator_fuzz.py [--n 10000] [--seed 28] [--sanitize 20] [--json OUT]

Needs g++ (or $CXX) with the sanitizers, and `npm ci` (the seeds are compiled with circom). Exit 1 on any finding.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "tests", "fuzz"), os.path.join(ROOT, "tests")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--sanitize", type=int, default=20)
    ap.add_argument("--json")
    args = ap.parse_args()
    import translator_fuzz

    work = tempfile.mkdtemp(prefix="translator-fuzz-")
    load0 = open("/proc/loadavg").read().split()[:3]
    report = translator_fuzz.fuzz(args.n, args.seed, sanitize=args.sanitize, workdir=work,
                                  log=lambda m: print(m, file=sys.stderr, flush=True))
    report["load"] = [load0, open("/proc/loadavg").read().split()[:3]]
    report["workdir"] = work
    bad = report["findings"] or any(r["outcome"] != "ok" for r in report["sanitized"])
    print(json.dumps({k: v for k, v in report.items() if k != "sanitized"}, indent=1))
    print("sanitized:", report["sanitized_outcomes"])
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
