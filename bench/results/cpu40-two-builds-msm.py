# Round 38: the same MSMs (H, A, B2 of a key, IFMA off, the lanes forced to one setting) through two builds of
# _core loaded side by side in one process (base's and this branch's .so), alternated rounds: whether a
# difference between the trees' whole proofs is their MSM code or the machine.
# chrt -f 50 python bench/results/cpu40-two-builds-msm.py THREADS ROUNDS KEYDIR LANES(0/1) BASE_SO NEW_SO
import importlib.machinery, importlib.util, random, statistics, sys, time
sys.path.insert(0, '/work/wt-cpu40/src')
from snarkd.formats.zkey_layout import KeyFile
from snarkd.formats.wtns import MappedWitness
T, R, D, lanes = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4] == '1'
mods = {}
for name, so in (('base', sys.argv[5]), ('cpu40', sys.argv[6])):
    spec = importlib.util.spec_from_file_location('_core', so, loader=importlib.machinery.ExtensionFileLoader('_core', so))
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    m._set_simd52(False); m._set_simd29(lanes); mods[name] = m
kf = KeyFile(D + '/circuit.zkey'); v = kf.views()
wit = bytes(MappedWitness.open(D + '/witness.wtns', 'w').values)
g1 = 96 if 'bls' in D else 64
rng = random.Random(1); r = getattr(mods['base'], kf.layout.curve.native).FR_MODULUS
hs = b''.join(rng.randrange(r).to_bytes(32, 'little') for _ in range(len(v['h']) // g1))
res, refs = {}, {}
for rd in range(R):
    for name in (('base', 'cpu40') if rd % 2 == 0 else ('cpu40', 'base')):
        mod = getattr(mods[name], kf.layout.curve.native)
        for k, f in (('h', lambda: mod.msm_h(v['h'], hs, T)), ('a', lambda: mod.msm_w(v['a'], wit, 0, False, T)),
                     ('b2', lambda: mod.msm_w(v['b2'], wit, 0, True, T))):
            p0 = time.process_time(); s = f(); res.setdefault((k, name), []).append((time.process_time() - p0) * 1e3)
            assert refs.setdefault(k, s) == s
for (k, name), c in sorted(res.items()):
    print(f"{k:3s} {name:6s} lanes {int(lanes)}: cpu med {statistics.median(c):7.1f} min {min(c):7.1f}")
