# Round 39: the scalar adder's batch cap 512 (main) against CAP, one MSM at a time in adjacent pairs (order
# alternated), the per-pair CPU ratio's median: drift under load cancels within a pair.
# Needs bench/results/cpu41-knobs.patch applied and built (the knobs were not kept).
# chrt -f 50 python bench/results/cpu41-batch-pairs.py PAIRS KEYDIR h,a CAP
import sys, time, statistics, random, os
sys.path.insert(0, os.environ.get('TREE', '/work/wt-cpu41') + '/src')
from snarkd.formats.zkey_layout import KeyFile
from snarkd.formats.wtns import MappedWitness
from snarkd.native import _core
_core._set_simd52(False)
N = int(sys.argv[1]); D = sys.argv[2]; CAP = int(sys.argv[4])
kf = KeyFile(D + '/circuit.zkey'); v = kf.views(); mod = getattr(_core, kf.layout.curve.native)
wit = bytes(MappedWitness.open(D + '/witness.wtns', 'w').values)
rng = random.Random(1); r = mod.FR_MODULUS
hs = b''.join(rng.randrange(r).to_bytes(32, 'little') for _ in range(len(v['h']) // 64))
calls0 = {'h': lambda: mod.msm_h(v['h'], hs, 2), 'a': lambda: mod.msm_w(v['a'], wit, 0, False, 2), 'b2': lambda: mod.msm_w(v['b2'], wit, 0, True, 2)}
print(f"load {open('/proc/loadavg').read().split()[0]}", flush=True)
for k in sys.argv[3].split(','):
    f = calls0[k]; ratios = []; cpu = {512: [], CAP: []}; ref = None
    for i in range(N):
        got = {}
        for cap in ((512, CAP) if i % 2 == 0 else (CAP, 512)):
            _core._set_msm_batch(cap)
            p0 = time.process_time(); s = f(); got[cap] = (time.process_time() - p0) * 1e3
            assert (ref := ref or s) == s
            cpu[cap].append(got[cap])
        ratios.append(got[CAP] / got[512])
    print(f"{k}: cpu med 512 {statistics.median(cpu[512]):.1f} / {CAP} {statistics.median(cpu[CAP]):.1f}; per-pair ratio median "
          f"{statistics.median(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}), load {open('/proc/loadavg').read().split()[0]}", flush=True)
_core._set_msm_batch(0)
