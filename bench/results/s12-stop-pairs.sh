# the twelfth session's stop measurements on main (alone on the VM)
cd /work/main && . .venv/bin/activate
export RAPIDSNARK=/work/ext/rapidsnark/build_prover/src/prover
uptime
python bench/prove_vs_rapidsnark.py --dir bench/work/chain16-bn128 --dir bench/work/sha256-bn128 --runs 11 --no-snarkjs --ifma on,off --json bench/results/s12-stop-vs-rapidsnark.json 2>&1 | tail -3
uptime
python bench/prove_vs_rapidsnark.py --dir bench/work/chain20-bn128 --runs 3 --no-snarkjs --ifma on,off --json bench/results/s12-stop-vs-rapidsnark-2p20.json 2>&1 | tail -3
uptime
SNARKD_CPU_IFMA=off python bench/prove_vs_snarkjs.py --dir bench/work/chain15-bls12381 --runs 5 --json bench/results/s12-stop-bls12381-vs-snarkjs-ifma-off.json 2>&1 | tail -4
uptime
# issue 37: the compiled library's build against one snarkjs wtns calculate, then the whole-process pairs
/usr/bin/time -f "compile: wall %e s, cpu %U+%S s, peak %M KiB" snarkd witness --engine native --compile --timings /tmp/s12/W/circuit.wasm /tmp/s12/W/inputs-1.json /tmp/s12/x.wtns 2>&1 | tail -8; ls -la /tmp/s12/W/circuit.wasm.wso
for i in 1 2 3; do /usr/bin/time -f "snarkjs wtns calculate: wall %e s, cpu %U+%S s" node node_modules/.bin/snarkjs wtns calculate /tmp/s12/W/circuit.wasm /tmp/s12/W/inputs-1.json /tmp/s12/s.wtns 2>&1 | tail -1; done
uptime
python bench/paired_cpu.py 25 "snarkd witness --engine native --quiet /tmp/s12/W/circuit.wasm /tmp/s12/W/inputs-90.json /tmp/s12/a.wtns" "env SNARKD_WITNESS_COMPILED=off snarkd witness --engine native --quiet /tmp/s12/W/circuit.wasm /tmp/s12/W/inputs-90.json /tmp/s12/b.wtns" "/tmp/wit22/C-cpp/circuit_cpp/circuit /tmp/s12/W/inputs-90.json /tmp/s12/c.wtns" 2>&1 | tee bench/results/s12-stop-paired-cpu-rsa.txt | tail -5
cmp /tmp/s12/a.wtns /tmp/s12/c.wtns && cmp /tmp/s12/b.wtns /tmp/s12/c.wtns && echo "rsa witnesses equal"
uptime
