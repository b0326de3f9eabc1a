# the sixteenth session's stop measurements on main (the Xeon VM: 2-vCPU Intel Xeon, Emerald Rapids, AVX-512 IFMA; the lead
# alone on it; the witness side: s16-stop-witness.sh)
cd /work/main && . .venv/bin/activate
export RAPIDSNARK=/work/ext/rapidsnark/build_prover/src/prover
uptime
python bench/prove_vs_rapidsnark.py --dir bench/work/chain16-bn128 --dir bench/work/sha256-bn128 --runs 11 --no-snarkjs --ifma on,off --json bench/results/s16-stop-vs-rapidsnark.json 2>&1 | tail -3
uptime
python bench/prove_vs_rapidsnark.py --dir bench/work/chain20-bn128 --runs 3 --no-snarkjs --ifma on,off --json bench/results/s16-stop-vs-rapidsnark-2p20.json 2>&1 | tail -3
uptime
SNARKD_CPU_IFMA=off python bench/prove_vs_snarkjs.py --dir bench/work/chain15-bls12381 --runs 5 --json bench/results/s16-stop-bls12381-vs-snarkjs-ifma-off.json 2>&1 | tail -4
uptime
