# Round 39: the same MSMs (H, A, B2 of a key, IFMA off, each build's own lane defaults) through two builds of _core
# loaded side by side in one process (base's and this branch's .so), adjacent pairs in alternated order; per MSM the
# CPU medians and the median of the per-pair ratios (drift under load cancels within a pair).
# chrt -f 50 python bench/results/cpu41-two-builds-msm.py THREADS PAIRS KEYDIR BASE_SO NEW_SO
import importlib.machinery, importlib.util, random, statistics, sys, time
sys.path.insert(0, '/work/wt-cpu41/src')
from snarkd.formats.zkey_layout import KeyFile
from snarkd.formats.wtns import MappedWitness
T, R, D = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
mods = {}
for name, so in (('base', sys.argv[4]), ('new', sys.argv[5])):
    spec = importlib.util.spec_from_file_location('_core', so, loader=importlib.machinery.ExtensionFileLoader('_core', so))
    m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
    m._set_simd52(False); mods[name] = m
kf = KeyFile(D + '/circuit.zkey'); v = kf.views()
wit = bytes(MappedWitness.open(D + '/witness.wtns', 'w').values)
rng = random.Random(1); r = getattr(mods['base'], kf.layout.curve.native).FR_MODULUS
hs = b''.join(rng.randrange(r).to_bytes(32, 'little') for _ in range(len(v['h']) // 64))
print(f"load {open('/proc/loadavg').read().split()[0]}", flush=True)
res, refs, ratio = {}, {}, {}
for rd in range(R):
    for k in ('h', 'a', 'b2'):
        got = {}
        for name in (('base', 'new') if rd % 2 == 0 else ('new', 'base')):
            mod = getattr(mods[name], kf.layout.curve.native)
            f = {'h': lambda: mod.msm_h(v['h'], hs, T), 'a': lambda: mod.msm_w(v['a'], wit, 0, False, T),
                 'b2': lambda: mod.msm_w(v['b2'], wit, 0, True, T)}[k]
            p0 = time.process_time(); s = f(); got[name] = (time.process_time() - p0) * 1e3
            res.setdefault((k, name), []).append(got[name])
            assert refs.setdefault(k, s) == s
        ratio.setdefault(k, []).append(got['new'] / got['base'])
    print(f"pair {rd} done, load {open('/proc/loadavg').read().split()[0]}", flush=True)
for k in ('h', 'a', 'b2'):
    rs = ratio[k]
    print(f"{k:3s}: cpu med base {statistics.median(res[(k, 'base')]):7.1f} new {statistics.median(res[(k, 'new')]):7.1f}; "
          f"new/base per pair median {statistics.median(rs):.3f} (min {min(rs):.3f}, max {max(rs):.3f}, n {len(rs)})")
