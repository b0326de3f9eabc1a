"""The long soak with faults (tests/soak/driver.py): jobs over both curves at j = 16, a bad request
every tenth, SIGTERM and kill -9 at random moments with restarts, then 1,000 steady proofs for RSS
and descriptors; every accepted job's proof also goes through `snarkjs groth16 verify`.

    python bench/soak.py [--jobs 400] [--steady 1000] [--n 30] [--no-snarkjs] [--out bench/results/soak.json]

Prints and writes one JSON object: jobs, rejected bad requests, faults, lost / strays / mixed-up /
invalid / duplicated (all must be empty), jobs re-run after a restart, and the steady run's RSS
after warm-up and at the end (and every 100 proofs), descriptors, s/proof. Exit 1 on any miss.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "soak"))

from driver import soak  # noqa: E402

RSS_GROWTH_MIB = 64


def snarkjs_verifier(workdir: Path):
    from snarkd.atomic import atomic_write_json

    snarkjs = REPO / "node_modules" / ".bin" / "snarkjs"
    vks = {}

    def check(kid: str, proof: dict, public: list) -> bool:
        if kid not in vks:
            from driver import make_keys

            vks[kid] = workdir / f"{kid}-vk.json"
            atomic_write_json(vks[kid], make_keys(workdir, ARGS.n)[kid]["vk"])
        p, q = workdir / "p.json", workdir / "q.json"
        atomic_write_json(p, proof)
        atomic_write_json(q, public)
        r = subprocess.run([str(snarkjs), "groth16", "verify", str(vks[kid]), str(q), str(p)], capture_output=True,
                           text=True)
        return r.returncode == 0 and "OK" in r.stdout

    return check


def main() -> int:
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=400)
    ap.add_argument("--steady", type=int, default=1000)
    ap.add_argument("--warmup", type=int, default=100)
    ap.add_argument("--n", type=int, default=30, help="chain constraints per key")
    ap.add_argument("--no-snarkjs", action="store_true")
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / "soak.json"))
    ARGS = ap.parse_args()
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with tempfile.TemporaryDirectory() as d:
        t0 = time.monotonic()
        out = soak(Path(d), port, ARGS.jobs, ARGS.steady, n=ARGS.n, warmup=ARGS.warmup,
                   snarkjs_verify=None if ARGS.no_snarkjs else snarkjs_verifier(Path(d)),
                   log=lambda m: print(m, file=sys.stderr, flush=True))
        out["total_seconds"] = round(time.monotonic() - t0, 1)
    out["machine"] = f"{platform.node()} {platform.machine()} {os.cpu_count()} cores"
    out["snarkjs_verified"] = not ARGS.no_snarkjs
    out["rss_growth_bound_mib"] = RSS_GROWTH_MIB
    misses = [k for k in ("lost", "strays", "mixed_up", "invalid", "duplicated") if out[k]]
    st = out["steady"]
    if st and (st["rss_growth_mib"] >= RSS_GROWTH_MIB or st["fds_end"] > st["fds_after_warmup"] + 4):
        misses.append("steady")
    out["ok"] = not misses and not out["log_errors"]
    text = json.dumps(out, indent=1)
    print(text)
    Path(ARGS.out).write_text(text + "\n")
    return 0 if out["ok"] else 1


ARGS = None

if __name__ == "__main__":
    sys.exit(main())
