# Round 38: one repeated set, cpu40 against main in the same rounds (chrt -f 50, IFMA off): chain 2^16 + SHA-256 (11), BLS12-381 2^15 vs snarkjs (7), chain 2^20 (3). SET=N bash bench/results/cpu40-set.sh
cd /work/wt-cpu40 && export PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/work/wt-cpu40/src RAPIDSNARK=/work/ext/rapidsnark/build_prover/src/prover
P=/work/main/.venv/bin/python; W=/work/main/bench/work
echo "load $(cut -d' ' -f1-3 /proc/loadavg) $(date)"
chrt -f 50 $P bench/prove_vs_rapidsnark.py --dir $W/chain16-bn128 --dir $W/sha256-bn128 --runs 11 --no-snarkjs --ifma off --tree base=/tmp/cpu40-base --json bench/results/cpu40-vs-rapidsnark-off-${SET:-2}.json > /dev/null 2>&1
echo "load $(cut -d' ' -f1-3 /proc/loadavg) $(date)"
env -u RAPIDSNARK chrt -f 50 $P bench/prove_vs_rapidsnark.py --dir $W/chain15-bls12381 --runs 7 --ifma off --tree base=/tmp/cpu40-base --json bench/results/cpu40-bls-vs-snarkjs-off-${SET:-2}.json > /dev/null 2>&1
echo "load $(cut -d' ' -f1-3 /proc/loadavg) $(date)"
chrt -f 50 $P bench/prove_vs_rapidsnark.py --dir $W/chain20-bn128 --runs 3 --no-snarkjs --ifma off --tree base=/tmp/cpu40-base --json bench/results/cpu40-vs-rapidsnark-2p20-off-${SET:-2}.json > /dev/null 2>&1
echo "load $(cut -d' ' -f1-3 /proc/loadavg) $(date)"
$P bench/results/cpu40-summary.py bench/results/cpu40-vs-rapidsnark-off-${SET:-2}.json bench/results/cpu40-bls-vs-snarkjs-off-${SET:-2}.json bench/results/cpu40-vs-rapidsnark-2p20-off-${SET:-2}.json
