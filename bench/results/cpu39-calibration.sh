#!/usr/bin/env bash
# Round 37: what the AVX2 lanes' calibrations decide in N fresh processes (default 40), base (main 8cedf31: G1
# by the best of three 1,024-product timings at load, on at 1.25x; G2 by the best of three flushes, on at 0.95)
# against cpu39 (every adder by the median of five alternated flush ratios, on at 0.95), alternated per process.
# Per process: BN254 G1, BLS12-381 G1, BN254 G2, BLS12-381 G2 as 1 (lanes) or 0 (scalar).
# bash bench/results/cpu39-calibration.sh [N] > bench/results/cpu39-calibration.txt
N=${1:-40}
PY=/work/main/.venv/bin/python
CODE="from snarkd.native import _core; print(''.join(str(int(_core.simd29_default(c, g2))) for g2 in (False, True) for c in ('bn254', 'bls12_381')))"
echo "# $(date -u) load $(cut -d' ' -f1-3 /proc/loadavg); $N processes each; digits: BN254 G1, BLS G1, BN254 G2, BLS G2"
declare -A base cpu39
for i in $(seq 1 "$N"); do
  b=$(PYTHONPATH=/tmp/cpu39-base/src $PY -c "$CODE"); base[$b]=$(( ${base[$b]:-0} + 1 ))
  c=$(PYTHONPATH=/work/wt-cpu39/src $PY -c "$CODE"); cpu39[$c]=$(( ${cpu39[$c]:-0} + 1 ))
done
echo "base:  $(for k in "${!base[@]}"; do echo -n "$k x${base[$k]}  "; done)"
echo "cpu39: $(for k in "${!cpu39[@]}"; do echo -n "$k x${cpu39[$k]}  "; done)"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
