# Round 37: the AVX2 switches a `snarkd prove` (IFMA off) ends with, in process (os._exit patched): digits BN254 G1, BLS G1, BN254 G2, BLS G2.
# chrt -f 50 python bench/results/cpu39-flags-after-proof.py TREE KEYDIR
import os, sys
tree = sys.argv[1]; d = sys.argv[2]
sys.path.insert(0, tree + '/src')
os.environ['SNARKD_CPU_IFMA'] = 'off'
def noexit(code=0):
    raise SystemExit(code)
os._exit = noexit
from snarkd.native import _core
from snarkd.cli import main
try:
    main(['prove', '-q', d + '/circuit.zkey', d + '/witness.wtns', '/tmp/cpu39/fp.json', '/tmp/cpu39/fpub.json'])
except SystemExit:
    pass
print(''.join(str(int(_core.uses_simd29(c, g2))) for g2 in (False, True) for c in ('bn254', 'bls12_381')))
