"""qap_h (the QAP step, IFMA on) of 2^K (argv[2], default 17) random scalars, tables cached, THREADS (argv[1]):
min / lower quartile / median CPU of 15 calls. PYTHONPATH=TREE/src python bench/cpu29_qap_time.py 1"""
import statistics, sys, time
import numpy as np
from snarkd.native import _core
_core._set_simd52(True)
m = _core.bn254
logn = int(sys.argv[2]) if len(sys.argv) > 2 else 17
n = 1 << logn
rng = np.random.default_rng(1)
a = rng.integers(0, 2**63, size=(n, 4), dtype=np.uint64); a[:, 3] >>= 4
b = a[::-1].copy()
T = int(sys.argv[1])
qc = []
for _ in range(15):
    p0 = time.thread_time() if T == 1 else time.process_time()
    m.qap_h(a, b, T, False)
    qc.append(((time.thread_time() if T == 1 else time.process_time()) - p0) * 1e3)
print(f"min {min(qc):.1f} q1 {statistics.quantiles(qc, n=4)[0]:.1f} med {statistics.median(qc):.1f}")
