RO=$OUT; export OUT=/tmp/r2; mkdir -p $OUT; export PYTHONPATH=$PWD/src; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
python3 -c "from snarkd.native import _core as c; print('simd29 bn254', c.simd29_default('bn254'), 'bls', c.simd29_default('bls12_381'))" 2>&1 | tail -1
ls /tmp/keys/ 2>&1; [ -f /tmp/keys/chain20-bn128/.done ] || (bash bench/stream.sh key20 2>&1 | tail -2)
for b in cpu cuda cpu cuda; do /usr/bin/time -f "oneshot 2^20 $b wall %e s cpu %U+%S peak %M KiB" python3 -m snarkd prove --backend $b \
  /tmp/keys/chain20-bn128/circuit.zkey /tmp/keys/chain20-bn128/witness.wtns /tmp/p-$b.json /tmp/q-$b.json 2>&1 | grep -E "oneshot|total|rror"; done
d=bench/work/rsa-bn128
/usr/bin/time -f "compile wall %e s cpu %U+%S" python3 -m snarkd witness --engine native --compile --timings $d/circuit.wasm \
  $(ls $d/pool/*.json | head -1) /tmp/w.wtns 2>&1 | tail -6; ls -la $d/*.wso 2>&1 | head -2
RSA_COUNT=128 RSA_ROUNDS=3 timeout 100 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror|rsa inputs|^   " | cut -c1-300
mv $OUT/rsainputs $OUT/rsainputs-compiled; tar czf $RO/call2.tgz -C /tmp/r2 .
CPUPAIRS_RUNS=7 timeout 300 bash bench/stream.sh cpupairs 2>&1 | tail -30
tar czf $RO/call2.tgz -C /tmp/r2 .
