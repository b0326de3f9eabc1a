# the stop's measurements on main (alone on the VM)
cd /work/main && . .venv/bin/activate
export RAPIDSNARK=/work/ext/rapidsnark/build_prover/src/prover
uptime
python bench/prove_vs_rapidsnark.py --dir bench/work/chain16-bn128 --dir bench/work/sha256-bn128 --runs 11 --no-snarkjs --ifma on,off --json bench/results/s11-stop-vs-rapidsnark.json 2>&1 | tail -30
uptime
python bench/prove_vs_rapidsnark.py --dir bench/work/chain20-bn128 --runs 3 --no-snarkjs --ifma on,off --json bench/results/s11-stop-vs-rapidsnark-2p20.json 2>&1 | tail -14
uptime
SNARKD_CPU_IFMA=off python bench/prove_vs_snarkjs.py --dir bench/work/chain15-bls12381 --runs 5 --json bench/results/s11-stop-bls12381-vs-snarkjs-ifma-off.json 2>&1 | tail -8
uptime
SNARKD_CPU_IFMA=off python bench/prove_vs_snarkjs.py --dir bench/work/chain15-bls12381 --runs 5 --json bench/results/s11-stop-bls12381-vs-snarkjs-ifma-off-2.json 2>&1 | tail -8
uptime
/usr/bin/time -f "compile: wall %e s, cpu %U+%S s, peak %M KiB" snarkd witness --engine native --compile --timings /tmp/s11/W/circuit.wasm /tmp/s11/W/inputs-1.json /tmp/s11/x.wtns 2>&1 | tail -8; ls -la /tmp/s11/W/circuit.wasm.wso
python bench/paired_cpu.py 25 "snarkd witness --engine native --quiet /tmp/s11/W/circuit.wasm /tmp/s11/W/inputs-90.json /tmp/s11/a.wtns" "env SNARKD_WITNESS_COMPILED=off snarkd witness --engine native --quiet /tmp/s11/W/circuit.wasm /tmp/s11/W/inputs-90.json /tmp/s11/b.wtns" "/tmp/wit22/C-cpp/circuit_cpp/circuit /tmp/s11/W/inputs-90.json /tmp/s11/c.wtns" 2>&1 | tee bench/results/s11-stop-paired-cpu-rsa.txt | tail -5
cmp /tmp/s11/a.wtns /tmp/s11/c.wtns && cmp /tmp/s11/b.wtns /tmp/s11/c.wtns && echo "rsa witnesses equal"
uptime
