#!/usr/bin/env python3
"""Best-of-60 time of one native BN254 pairing (snarkd.native._pairing), for comparing two trees'
builds: the tree is the one PYTHONPATH imports; the printed digest of the result compares them.

Usage: PYTHONPATH=TREE/src python bench/pairing_best.py LABEL   (cpu-notes round 13)
"""
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "verifier"))
import vhelpers as h  # noqa: E402
from py_ecc import optimized_bn128 as ecc  # noqa: E402

from snarkd.native import _pairing  # noqa: E402

m = _pairing.bn254
p = h.g1_bytes("bn128", ecc.multiply(ecc.G1, 12345))
q = h.g2_bytes("bn128", ecc.multiply(ecc.G2, 678))
r = m.pairing(p, q)
best = 1e9
for _ in range(60):
    t = time.perf_counter()
    m.pairing(p, q)
    best = min(best, time.perf_counter() - t)
label = sys.argv[1] if len(sys.argv) > 1 else ""
print(f"{label} pairing best {best * 1e6:.0f} us", hashlib.sha256(bytes(r)).hexdigest()[:16])
