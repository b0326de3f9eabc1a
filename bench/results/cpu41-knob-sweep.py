# Round 39: a key's H, A and B2 MSMs (IFMA off) under the experimental knobs, rotated rounds, CPU and wall ms.
# Needs bench/results/cpu41-knobs.patch applied and built (the knobs were not kept).
# chrt -f 50 python bench/results/cpu41-knob-sweep.py T ROUNDS KEYDIR h,a,b2 b512,b1024,pf8,pf16,...
# bN: the scalar adder's batch cap N (_set_msm_batch); pfN: the flush's prefetch distance (_set_flush_prefetch);
# a token may combine both: b1024+pf16.
import sys, time, statistics, random, os
sys.path.insert(0, os.environ.get('TREE', '/work/wt-cpu41') + '/src')
from snarkd.formats.zkey_layout import KeyFile
from snarkd.formats.wtns import MappedWitness
from snarkd.native import _core
_core._set_simd52(False)
T = int(sys.argv[1]); R = int(sys.argv[2]); D = sys.argv[3]
cs = sys.argv[5].split(',')
kf = KeyFile(D + '/circuit.zkey'); v = kf.views(); mod = getattr(_core, kf.layout.curve.native)
wit = bytes(MappedWitness.open(D + '/witness.wtns', 'w').values)
g1 = 96 if 'bls' in D else 64
rng = random.Random(1); r = mod.FR_MODULUS
hs = b''.join(rng.randrange(r).to_bytes(32, 'little') for _ in range(len(v['h']) // g1))
calls0 = {'h': lambda: mod.msm_h(v['h'], hs, T), 'a': lambda: mod.msm_w(v['a'], wit, 0, False, T), 'b2': lambda: mod.msm_w(v['b2'], wit, 0, True, T)}
calls = {k: calls0[k] for k in sys.argv[4].split(',')}
def setk(tok):
    b, pf = 512, 8
    for part in tok.split('+'):
        if part.startswith('b'): b = int(part[1:])
        elif part.startswith('pf'): pf = int(part[2:])
    _core._set_msm_batch(b); _core._set_flush_prefetch(pf)
print(f"load {open('/proc/loadavg').read().split()[0]}", flush=True)
res = {}; refs = {}
for rd in range(R):
    order = cs[rd % len(cs):] + cs[:rd % len(cs)]
    for c in order:
        setk(c)
        for k, f in calls.items():
            p0, w0 = time.process_time(), time.perf_counter()
            s = f()
            cc = res.setdefault((k, c), ([], []))
            cc[0].append((time.process_time() - p0) * 1e3); cc[1].append((time.perf_counter() - w0) * 1e3)
            assert refs.setdefault(k, s) == s, (k, c)
    print(f"round {rd} done, load {open('/proc/loadavg').read().split()[0]}", flush=True)
setk('')
for (k, c), (cp, wl) in sorted(res.items()):
    print(f"{k:3s} {c:>10s}: cpu med {statistics.median(cp):7.1f} min {min(cp):7.1f}  wall med {statistics.median(wl):7.1f}", flush=True)
