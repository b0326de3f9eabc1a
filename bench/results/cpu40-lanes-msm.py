# Rounds 37-38: G1 (msm_h, msm_w a) and G2 (msm_w b2) MSMs of a key with the AVX2 lanes on and off (IFMA off), alternated rounds.
# chrt -f 50 python bench/results/cpu40-lanes-msm.py THREADS ROUNDS KEYDIR h,a,b2
import sys, time, statistics, random
sys.path.insert(0, __import__('os').environ.get('TREE', '/work/wt-cpu40') + '/src')
from snarkd.formats.zkey_layout import KeyFile
from snarkd.formats.wtns import MappedWitness
from snarkd.native import _core
_core._set_simd52(False)
T = int(sys.argv[1]); R = int(sys.argv[2]); D = sys.argv[3]
kf = KeyFile(D + '/circuit.zkey'); v = kf.views(); mod = getattr(_core, kf.layout.curve.native)
wit = bytes(MappedWitness.open(D + '/witness.wtns', 'w').values)
g1 = 96 if 'bls' in D else 64
rng = random.Random(1); r = mod.FR_MODULUS
hs = b''.join(rng.randrange(r).to_bytes(32, 'little') for _ in range(len(v['h']) // g1))
calls0 = {'h': lambda: mod.msm_h(v['h'], hs, T), 'a': lambda: mod.msm_w(v['a'], wit, 0, False, T), 'b2': lambda: mod.msm_w(v['b2'], wit, 0, True, T)}
calls = {k: calls0[k] for k in sys.argv[4].split(',')}
res = {}; refs = {}
for rd in range(R):
    for s29 in ((True, False) if rd % 2 == 0 else (False, True)):
        _core._set_simd29(s29)
        for k, f in calls.items():
            p0, w0 = time.process_time(), time.perf_counter()
            s = f()
            c = res.setdefault((k, s29), ([], []))
            c[0].append((time.process_time() - p0) * 1e3); c[1].append((time.perf_counter() - w0) * 1e3)
            assert refs.setdefault(k, s) == s
_core._set_simd29(True)
for (k, s29), (c, wl) in sorted(res.items()):
    print(f"{k:3s} simd29 {'on ' if s29 else 'off'}: cpu med {statistics.median(c):7.1f} min {min(c):7.1f}  wall med {statistics.median(wl):7.1f}")
