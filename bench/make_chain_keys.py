#!/usr/bin/env python3
"""Benchmark keys for the chain circuit (tests/circuits/chain.circom) without circom or a ptau.

For each curve writes bench/work/chain<P>-<curve>/:
  circuit.r1cs   Chain(N), N = 2^P - 3 constraints (rows N + nPublic + 1 fill the 2^P domain exactly), emitted byte-identical to circom2's output
                 (public k, private x, output out; wires ONE, out, k, x, s[1..N-1])
  witness.wtns   for k = 3, x = 2 (computed directly; checked with `snarkjs wtns check`)
  input.json     {"k": 3, "x": 2}
  circuit.zkey   from `snarkd setup` (single-party dev key: NOT for production)
  vk.json        its verification key

Usage: python bench/make_chain_keys.py [--power 16] [--curves bn128,bls12381] [--seed HEX]
                                       [--no-check] [--snarkjs-prove]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from snarkd.curves.params import curve_by_name  # noqa: E402
from snarkd.setup.chain_circuit import chain_r1cs_bytes, chain_witness, wtns_bytes  # noqa: E402
from snarkd.setup.groth16_setup import parse_seed, setup  # noqa: E402

SNARKJS = REPO / "node_modules" / ".bin" / "snarkjs"
K, X = 3, 2


def snarkjs(*args) -> subprocess.CompletedProcess:
    proc = subprocess.run(["node", str(SNARKJS), *map(str, args)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"snarkjs {' '.join(map(str, args))} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def make(power: int, curve_name: str, seed: bytes | None, check: bool, prove: bool, out_root: Path, only: str = "") -> Path:
    """only: "" (everything), "key" (r1cs + setup) or "witness" (witness + input): the two
    halves can run as two processes at once for large powers (the witness is sequential Python)."""
    curve = curve_by_name(curve_name)
    n = (1 << power) - 3  # + nPublic (2) + 1 rows = 2^power: the largest circuit of domain 2^power
    d = out_root / f"chain{power}-{curve.name}"
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    if only != "witness":
        (d / "circuit.r1cs").write_bytes(chain_r1cs_bytes(n, curve))
    if only != "key":
        (d / "witness.wtns").write_bytes(wtns_bytes(chain_witness(n, curve, K, X), curve))
        (d / "input.json").write_text(json.dumps({"k": K, "x": X}) + "\n")
    print(f"[{curve.name}] {only or 'r1cs + witness'} ({n} constraints): {time.perf_counter() - t0:.1f}s", flush=True)
    if only == "witness":
        return d
    if check:
        t0 = time.perf_counter()
        snarkjs("wtns", "check", d / "circuit.r1cs", d / "witness.wtns")
        print(f"[{curve.name}] snarkjs wtns check: OK ({time.perf_counter() - t0:.1f}s)", flush=True)
    res = setup(d / "circuit.r1cs", d / "circuit.zkey", d / "vk.json", seed=seed)
    print(f"[{curve.name}] snarkd setup: {res.seconds['total']:.1f}s (domain 2^{res.domain_size.bit_length() - 1}, nVars {res.n_vars})", flush=True)
    if prove:
        t0 = time.perf_counter()
        snarkjs("groth16", "prove", d / "circuit.zkey", d / "witness.wtns", d / "snarkjs_proof.json", d / "snarkjs_public.json")
        out = snarkjs("groth16", "verify", d / "vk.json", d / "snarkjs_public.json", d / "snarkjs_proof.json")
        if "OK" not in out.stdout:
            raise SystemExit(f"[{curve.name}] snarkjs verify failed: {out.stdout}")
        print(f"[{curve.name}] snarkjs groth16 prove + verify with our key: OK ({time.perf_counter() - t0:.1f}s)", flush=True)
    return d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--power", type=int, default=16, help="log2 of the domain size (default 16)")
    ap.add_argument("--curves", default="bn128,bls12381")
    ap.add_argument("--seed", default="5eed", help="hex seed for reproducible keys (default 5eed); 'random' for the OS CSPRNG")
    ap.add_argument("--no-check", action="store_true", help="skip `snarkjs wtns check`")
    ap.add_argument("--snarkjs-prove", action="store_true", help="also prove and verify with snarkjs (slow for large circuits)")
    ap.add_argument("--out", default=str(REPO / "bench" / "work"))
    ap.add_argument("--only", choices=("key", "witness"), default="", help="make only the key (r1cs + setup) or only the witness")
    a = ap.parse_args()
    seed = None if a.seed == "random" else parse_seed(a.seed)
    for c in a.curves.split(","):
        d = make(a.power, c.strip(), seed, not a.no_check and not a.only, a.snarkjs_prove, Path(a.out), a.only)
        print(f"-> {d}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
