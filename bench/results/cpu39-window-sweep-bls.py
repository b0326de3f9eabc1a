"""BLS12-381 chain 2^15: msm_h (G1, uniform scalars) and msm_w (witness, G1 'a' and G2 'b2'), forced windows, alternated rounds."""
import sys, time, statistics, random
sys.path.insert(0, __import__('os').environ.get('TREE', '/work/wt-cpu39') + '/src')
from snarkd.formats.zkey_layout import KeyFile
from snarkd.formats.wtns import MappedWitness
from snarkd.native import _core
ifma = sys.argv[1] == 'on'; T = int(sys.argv[2]); ws = [int(x) for x in sys.argv[3].split(',')]; R = int(sys.argv[4]); what = sys.argv[5]
_core._set_simd52(ifma)
D = sys.argv[6] if len(sys.argv) > 6 else '/work/main/bench/work/chain15-bls12381'
kf = KeyFile(D + '/circuit.zkey'); v = kf.views(); mod = getattr(_core, kf.layout.curve.native)
wit = bytes(MappedWitness.open(D + '/witness.wtns', 'w').values)
n = len(v['h']) // (kf.layout.curve.g1_bytes if hasattr(kf.layout.curve, 'g1_bytes') else 96)
rng = random.Random(1); r = mod.FR_MODULUS
hs = b''.join(rng.randrange(r).to_bytes(32, 'little') for _ in range(len(v['h']) // 96))
def call():
    if what == 'h': return mod.msm_h(v['h'], hs, T)
    if what == 'a': return mod.msm_w(v['a'], wit, 0, False, T)
    if what == 'b2': return mod.msm_w(v['b2'], wit, 0, True, T)
res = {w: ([], []) for w in ws}; ref = None
for rd in range(R):
    for w in (ws if rd % 2 == 0 else ws[::-1]):
        _core._set_msm_window(w)
        p0, w0 = time.process_time(), time.perf_counter()
        s = call()
        res[w][0].append((time.process_time() - p0) * 1e3); res[w][1].append((time.perf_counter() - w0) * 1e3)
        assert ref is None or s == ref; ref = s
_core._set_msm_window(0)
for w in ws:
    c, wl = res[w]
    print(f"{what} window {w:2d}: cpu med {statistics.median(c):7.1f} min {min(c):7.1f}  wall med {statistics.median(wl):7.1f} min {min(wl):7.1f}")
