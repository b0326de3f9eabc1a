"""In-process G1 MSM of 2^K (argv[2], default 17) points with uniform scalars, IFMA on, THREADS (argv[1]) threads:
the result hash and the min / lower quartile / median CPU of 9 calls (thread CPU at one thread). Run it against
two trees in turn: PYTHONPATH=TREE/src python bench/cpu29_msm_time.py 1"""
import statistics, sys, time, random, hashlib
from pathlib import Path
import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parent))
from native_micro import random_points
from snarkd.native import _core
_core._set_simd52(True)
mod = _core.bn254
logn = int(sys.argv[2]) if len(sys.argv) > 2 else 17
n = 1 << logn
pts = random_points(mod, False, n, np.random.default_rng(20))
rng = random.Random(20); r = mod.FR_MODULUS
sc = np.frombuffer(b"".join(rng.randrange(r).to_bytes(32, "little") for _ in range(n)), dtype=np.uint64).reshape(n, 4).copy()
T = int(sys.argv[1])
h = hashlib.sha256(np.asarray(mod.msm_g1(pts, sc, T)).tobytes()).hexdigest()[:12]
qc = []
for _ in range(9):
    p0 = time.thread_time() if T == 1 else time.process_time()
    mod.msm_g1(pts, sc, T)
    qc.append(((time.thread_time() if T == 1 else time.process_time()) - p0) * 1e3)
print(f"{h} min {min(qc):.1f} q1 {statistics.quantiles(qc, n=4)[0]:.1f} med {statistics.median(qc):.1f}")
