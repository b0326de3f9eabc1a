# Call 1 (tenth session): tests/gpu whole with the RSA and 2^20 chain keys made beside it; one-shot 2^20 cpu vs cuda;
# the RSA verifier from inputs (j = 16, three rounds) on the interpreter, then again with the compiled witness
# library (snarkd witness --compile, issue 37 round 27); rapidsnark on the host's CPU (IFMA on and off: off now takes
# the 4-lane AVX2 adders where they pay).
RO=$OUT; export OUT=/tmp/r; mkdir -p $OUT; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
git log --oneline -1 2>/dev/null; nproc; grep -o -m1 avx512ifma /proc/cpuinfo || echo "no avx512ifma"; c++ --version | head -1
bash bench/stream.sh build 2>&1 | grep -E "^===|rror" | tail -4
python3 -c "from snarkd.native import _core as c; print('simd29 bn254', c.simd29_default('bn254'), 'bls', c.simd29_default('bls12_381'))" 2>&1 | tail -1
(bash bench/stream.sh rsakey > /tmp/rsakey.log 2>&1; touch /tmp/rsakey.done) &
bash bench/stream.sh key20 shakey 2>&1 | grep -E "^===|setup|rror" | tail -3
timeout 230 bash bench/stream.sh tests
tar czf $RO/call1.tgz -C /tmp/r .
timeout 60 bash -c "while [ ! -f /tmp/keys/chain20-bn128/.done ]; do sleep 2; done"
for b in cpu cuda cpu cuda; do /usr/bin/time -f "oneshot 2^20 $b wall %e s cpu %U+%S peak %M KiB" python3 -m snarkd prove --backend $b \
  /tmp/keys/chain20-bn128/circuit.zkey /tmp/keys/chain20-bn128/witness.wtns /tmp/p-$b.json /tmp/q-$b.json 2>&1 | grep -E "oneshot|total|rror"; done
timeout 120 bash -c 'while [ ! -f /tmp/rsakey.done ]; do sleep 2; done'
d=bench/work/rsa-bn128
RSA_COUNT=128 RSA_ROUNDS=3 timeout 100 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror|rsa inputs|^   " | cut -c1-300
mv $OUT/rsainputs $OUT/rsainputs-interp; tar czf $RO/call1.tgz -C /tmp/r .
/usr/bin/time -f "compile wall %e s cpu %U+%S" python3 -m snarkd witness --engine native --compile --timings $d/circuit.wasm \
  $(ls $d/pool/*.json | head -1) /tmp/w.wtns 2>&1 | tail -6; ls -la $d/*.wso 2>&1 | head -2
RSA_COUNT=128 RSA_ROUNDS=3 timeout 100 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror|rsa inputs|^   " | cut -c1-300
tar czf $RO/call1.tgz -C /tmp/r .
