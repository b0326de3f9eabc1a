"""zk-email's RSAVerifier65537(121, 17) (from @zk-email/circuits on npm) for the witness benches.

Writes bench/work/rsa-bn128/: circuit.circom, circuit.wasm and circuit.r1cs (circom2; the r1cs for `snarkd setup`:
a 2^18 domain, see stream.sh's rsakey), input.json (a real RSA-2048 PKCS#1 v1.5
SHA-256 signature, made with `cryptography`), and inputs-N.json with --signatures N more (each another key and
message: value-dependent work, another course through the wasm's long division). The npm package goes to
bench/work/rsa-npm (its own package.json there, so npm does not touch the repository's).

    python bench/make_rsa_verifier.py [--signatures 3] [--out bench/work/rsa-bn128]
    python bench/witness_vs_circom_cpp.py --dir bench/work/rsa-bn128
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = "@zk-email/circuits@6.3.4"
N_BITS, K_LIMBS = 121, 17
SOURCE = """pragma circom 2.1.6;
include "@zk-email/circuits/lib/rsa.circom";
component main { public [modulus] } = RSAVerifier65537(121, 17);
"""


def limbs(x: int) -> list[str]:
    return [str((x >> (N_BITS * i)) & ((1 << N_BITS) - 1)) for i in range(K_LIMBS)]


def signed_input(seed: int) -> dict:
    """A fresh RSA-2048 key and a PKCS#1 v1.5 SHA-256 signature of a message: the circuit's message is the
    digest (its 256 bits in the low limbs), as zk-email feeds it."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    message = f"snarkd bench message {seed}".encode()
    signature = key.sign(message, padding.PKCS1v15(), hashes.SHA256())
    digest = int.from_bytes(hashlib.sha256(message).digest(), "big")
    return {"message": limbs(digest), "signature": limbs(int.from_bytes(signature, "big")),
            "modulus": limbs(key.public_key().public_numbers().n)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--signatures", type=int, default=3, help="more inputs, inputs-1.json ... (not timed)")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "work" / "rsa-bn128")
    args = ap.parse_args()
    npm_dir = REPO / "bench" / "work" / "rsa-npm"
    npm_dir.mkdir(parents=True, exist_ok=True)
    if not (npm_dir / "node_modules" / "@zk-email" / "circuits").exists():
        (npm_dir / "package.json").write_text('{"private": true}\n')
        subprocess.run(["npm", "i", "--no-audit", "--no-fund", "--prefix", str(npm_dir), PACKAGE], check=True)
    d = args.out
    d.mkdir(parents=True, exist_ok=True)
    (d / "circuit.circom").write_text(SOURCE)
    lib = d / "lib"  # circom2 (WASI) reads below its cwd only; kept for the C++ build (witness_vs_circom_cpp.py)
    if lib.exists():
        shutil.rmtree(lib)
    for name in ("@zk-email", "circomlib"):
        shutil.copytree(npm_dir / "node_modules" / name, lib / name, symlinks=False)
    subprocess.run(["node", str(REPO / "node_modules" / "circom2" / "cli.js"), "circuit.circom", "--wasm", "--r1cs", "-l", "lib",
                    "-o", "."], cwd=d, check=True, capture_output=True)
    shutil.copy2(d / "circuit_js" / "circuit.wasm", d / "circuit.wasm")
    (d / "input.json").write_text(json.dumps(signed_input(0)) + "\n")
    for i in range(1, args.signatures + 1):
        (d / f"inputs-{i}.json").write_text(json.dumps(signed_input(i)) + "\n")
    print(f"-> {d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
