"""msm_h on SHA-256's H bases with uniform scalars, forced windows, alternated rounds: CPU (process) and wall medians."""
import sys, time, statistics, random
sys.path.insert(0, __import__('os').environ.get('TREE', '/work/wt-cpu39') + '/src')
from snarkd.formats.zkey_layout import KeyFile
from snarkd.native import _core
ifma = sys.argv[1] == 'on'; T = int(sys.argv[2]); ws = [int(x) for x in sys.argv[3].split(',')]; R = int(sys.argv[4])
_core._set_simd52(ifma)
kf = KeyFile.open('/work/main/bench/work/sha256-bn128/circuit.zkey') if hasattr(KeyFile, 'open') else KeyFile('/work/main/bench/work/sha256-bn128/circuit.zkey')
hb = kf.views()['h']
n = len(hb) // 64
rng = random.Random(1); r = _core.bn254.FR_MODULUS
h = b''.join(rng.randrange(r).to_bytes(32, 'little') for _ in range(n))
res = {w: ([], []) for w in ws}; ref = None
for rd in range(R):
    order = ws if rd % 2 == 0 else ws[::-1]
    for w in order:
        _core._set_msm_window(w)
        p0, w0 = time.process_time(), time.perf_counter()
        s = _core.bn254.msm_h(hb, h, T)
        res[w][0].append((time.process_time() - p0) * 1e3); res[w][1].append((time.perf_counter() - w0) * 1e3)
        assert ref is None or s == ref; ref = s
for w in ws:
    c, wl = res[w]
    print(f"window {w:2d}: cpu med {statistics.median(c):7.1f} min {min(c):7.1f}  wall med {statistics.median(wl):7.1f} min {min(wl):7.1f}")
