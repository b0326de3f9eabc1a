# round 34 (cpu36) paired sets: base = /tmp/cpu36-base (main 76d7639), cpu36 = /work/wt-cpu36 (this branch)
cd /work/wt-cpu36
S=/work/main/.venv/bin/snarkd
P="/work/main/.venv/bin/python bench/paired_cpu.py"
pair() {  # rounds dir out [env...]
  n=$1 d=/work/main/bench/work/$2 out=$3; shift 3
  $P $n "env $* PYTHONPATH=/tmp/cpu36-base/src $S prove -q $d/circuit.zkey $d/witness.wtns /tmp/cpu36-a.json /tmp/cpu36-ap.json" \
        "env $* PYTHONPATH=/work/wt-cpu36/src $S prove -q $d/circuit.zkey $d/witness.wtns /tmp/cpu36-b.json /tmp/cpu36-bp.json" > bench/results/$out 2>&1
  node_modules/.bin/snarkjs groth16 verify $d/vk.json /tmp/cpu36-bp.json /tmp/cpu36-b.json 2>&1 | tail -1 >> bench/results/$out
}
pair 7 chain16-bn128 cpu36-paired-chain16.txt
pair 5 chain15-bls12381 cpu36-paired-chain15-bls.txt
pair 9 sha256-bn128 cpu36-paired-sha256-ifma-off.txt SNARKD_CPU_IFMA=off
pair 3 chain20-bn128 cpu36-paired-chain20.txt
# the real-time wall sets (chrt -f 50: the load waits while a proof runs): see cpu36-paired-sha256-rt.txt, -chain16-rt.txt
