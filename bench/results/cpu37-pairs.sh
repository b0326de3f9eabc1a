#!/bin/sh
# Round 35 (cpu37): base (main 76d7639 built in /tmp/cpu37-base) against this tree (/work/wt-cpu37), SHA-256 2^17
# and chain 2^16, on the 2-vCPU Zen 4 VM; run from /work/wt-cpu37. Outputs: bench/results/cpu37-*.{txt,json}.
set -e
P=/work/main/.venv/bin/python
W=/work/main/bench/work
O=/tmp/c37o
B=/tmp/cpu37-base/src
M=/work/wt-cpu37/src
unset PYTHONDONTWRITEBYTECODE
sha() { echo "env PYTHONPATH=$1 /work/main/.venv/bin/snarkd prove -q $W/sha256-bn128/circuit.zkey $W/sha256-bn128/witness.wtns $O/$2p.json $O/$2q.json"; }
chain() { echo "env PYTHONPATH=$1 /work/main/.venv/bin/snarkd prove -q $W/chain16-bn128/circuit.zkey $W/chain16-bn128/witness.wtns $O/$2p.json $O/$2q.json"; }
$P bench/paired_cpu.py 21 "$(sha $B b)" "$(sha $M m)" > bench/results/cpu37-paired-sha256.txt 2>&1
for t in base mine base mine; do
  tree=/tmp/cpu37-base; [ $t = mine ] && tree=/work/wt-cpu37
  PYTHONPATH=src $P bench/phase_cpu.py --tree $tree --dir $W/sha256-bn128 --runs 5 --ifma on --json $O/phase-$t.json
done > bench/results/cpu37-phase-sha256.txt 2>&1
RAPIDSNARK=/work/ext/rapidsnark/build_prover/src/prover PYTHONPATH=src $P bench/prove_vs_rapidsnark.py \
  --dir $W/sha256-bn128 --runs 11 --no-snarkjs --ifma on,off --tree base=/tmp/cpu37-base \
  --json bench/results/cpu37-vs-rapidsnark.json > bench/results/cpu37-vs-rapidsnark.txt 2>&1
$P bench/paired_cpu.py 15 "$(chain $B cb)" "$(chain $M cm)" > bench/results/cpu37-paired-chain16.txt 2>&1
