#!/usr/bin/env python3
"""Benchmark key for a bit-valued BN254 circuit: circomlib's SHA-256 over 1016 input bits
(3 compression blocks, ~89k constraints, domain 2^17) with the 256 digest bits as
public outputs. Nearly every witness value is 0 or 1, as in real hashing circuits.

Writes bench/work/sha256-bn128/: circuit.r1cs, circuit.wasm (circom2), input.json,
witness.wtns (`snarkd witness`), circuit.zkey + vk.json (`snarkd setup`, a single-party
development key: NOT for production).

Usage: python bench/make_sha256_key.py [--bits 1016] [--seed 5eed]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

SOURCE = """pragma circom 2.0.0;
include "circomlib/sha256/sha256.circom";

template Sha256Bits(N) {{
    signal input in[N];
    signal output out[256];
    component h = Sha256(N);
    for (var i = 0; i < N; i++) {{
        in[i] * (in[i] - 1) === 0;
        h.in[i] <== in[i];
    }}
    for (var i = 0; i < 256; i++) out[i] <== h.out[i];
}}

component main = Sha256Bits({bits});
"""


def run(cmd: list, cwd: Path | None = None) -> None:
    t0 = time.perf_counter()
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    print(f"{Path(str(cmd[1] if cmd[0] in ('node', sys.executable) else cmd[0])).name} {cmd[2] if len(cmd) > 2 else ''}: "
          f"{time.perf_counter() - t0:.1f}s", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bits", type=int, default=1016, help="message length in bits (default 1016: 3 blocks)")
    ap.add_argument("--seed", default="5eed", help="hex seed for `snarkd setup` (reproducible keys)")
    ap.add_argument("--out", default=str(REPO / "bench" / "work" / "sha256-bn128"))
    a = ap.parse_args()
    d = Path(a.out)
    d.mkdir(parents=True, exist_ok=True)
    (d / "circuit.circom").write_text(SOURCE.format(bits=a.bits))
    lib = d / "circomlib"
    if lib.exists():
        shutil.rmtree(lib)
    shutil.copytree(REPO / "node_modules" / "circomlib" / "circuits", lib)  # circom2 (WASI) reads below its cwd only
    try:
        run(["node", REPO / "node_modules" / "circom2" / "cli.js", "circuit.circom", "--r1cs", "--wasm", "-o", "."], cwd=d)
    finally:
        shutil.rmtree(lib)
    shutil.copy2(d / "circuit_js" / "circuit.wasm", d / "circuit.wasm")
    msg = bytes((i * 37 + 11) & 0xFF for i in range((a.bits + 7) // 8))
    bits = [(msg[i // 8] >> (7 - i % 8)) & 1 for i in range(a.bits)]
    (d / "input.json").write_text(json.dumps({"in": bits}) + "\n")
    snarkd = [sys.executable, "-m", "snarkd"]
    run([*snarkd, "witness", d / "circuit.wasm", d / "input.json", d / "witness.wtns", "--quiet"])
    run([*snarkd, "setup", d / "circuit.r1cs", d / "circuit.zkey", "--vk", d / "vk.json", "--seed", a.seed])
    if a.bits % 8 == 0:
        print("sha256:", hashlib.sha256(msg).hexdigest())
    print(f"-> {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
