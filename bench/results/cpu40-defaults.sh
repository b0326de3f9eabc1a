#!/usr/bin/env bash
# Round 38: the AVX2 lanes' defaults in N fresh processes per tree (BN254 G1, BN254 G2, BLS G1, BLS G2; 1 = lanes),
# base (main's calibrations) then cpu40 (the CPUID rule). bash bench/results/cpu40-defaults.sh N
N=${1:-20}
for t in /tmp/cpu40-base /work/wt-cpu40; do
  echo "# $t load $(cut -d' ' -f1 /proc/loadavg)"
  for i in $(seq "$N"); do
    PYTHONPATH=$t/src /work/main/.venv/bin/python -c "
from snarkd.native import _core
print(''.join(str(int(_core.simd29_default(c, g2))) for c in ('bn254', 'bls12_381') for g2 in (False, True)))"
  done | sort | uniq -c
done
