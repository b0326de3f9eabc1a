"""The QAP step as a proof calls it (native qap_h: copies, c = a b, three coset shifts, the H values)
against three coset shifts alone, 2^17 random BN254 scalars, IFMA off (or on: the second argument,
round 20), medians of 9 in one process. Run it against two trees in turn (cpu-notes round 14):

    PYTHONPATH=TREE/src python bench/qap_h_time.py [THREADS] [on|off]
"""
import statistics
import sys
import time

import numpy as np

from snarkd.native import _core

_core._set_simd52(len(sys.argv) > 2 and sys.argv[2] == "on")
m = _core.bn254
n = 1 << 17
rng = np.random.default_rng(1)
a = rng.integers(0, 2**63, size=(n, 4), dtype=np.uint64)
a[:, 3] >>= 4  # below r: any value below r is a Montgomery form
b = a[::-1].copy()
T = int(sys.argv[1]) if len(sys.argv) > 1 else 2
q, qc, c = [], [], []
for _ in range(9):
    t0, p0 = time.perf_counter(), time.process_time()
    m.qap_h(a, b, T, False)
    q.append((time.perf_counter() - t0) * 1e3)
    qc.append((time.process_time() - p0) * 1e3)
    v = a.copy()
    t0 = time.perf_counter()
    for _ in range(3):
        m.coset_shift_evals(v, threads=T)
    c.append((time.perf_counter() - t0) * 1e3)
print(f"T={T} ifma {_core.uses_simd52()} qap_h median {statistics.median(q):.1f} ms (min {min(q):.1f}, CPU {statistics.median(qc):.1f}); "
      f"3 coset_shift_evals {statistics.median(c):.1f} (min {min(c):.1f})")
