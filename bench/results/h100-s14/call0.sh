# Call 0 (fourteenth session, main 1ca88df = the thirteenth stop's tree: rounds 31 + 32, D5), asked for kind nvidia-h200:
# build; tests/gpu with the real GPU daemon scenario; the RSA verifier's key, `snarkd witness --compile` (fast tier,
# then full) and the daemon from inputs at j = 16 (16 synthesis workers, then 8).
RO=$OUT; export OUT=/tmp/r0; mkdir -p $OUT; export PYTHONPATH=$PWD/src; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
nproc; lscpu | grep "Model name"; nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; git log --oneline -1 2>/dev/null
bash bench/stream.sh build 2>&1 | grep -E "^===|rror" | tail -4
(bash bench/stream.sh rsakey > /tmp/rsakey.log 2>&1; touch /tmp/rsakey.done) &
bash bench/stream.sh shakey 2>&1 | grep -E "^===|setup|rror" | tail -3
timeout 300 bash bench/stream.sh tests
tar czf $RO/call0.tgz -C /tmp/r0 .
timeout 120 bash -c 'while [ ! -f /tmp/rsakey.done ]; do sleep 2; done'; tail -1 /tmp/rsakey.log
d=bench/work/rsa-bn128
/usr/bin/time -f "compile (both tiers) wall %e s cpu %U+%S" python3 -m snarkd witness --engine native --compile --timings $d/circuit.wasm \
  $(ls $d/pool/*.json | head -1) /tmp/w.wtns 2>&1 | tail -8
for s in 16 8; do
RSA_SYNTHESIS=$s RSA_COUNT=128 RSA_ROUNDS=3 timeout 100 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror|rsa inputs|^   " | cut -c1-300
cp $OUT/rsainputs/daemon-inputs-rsa.json $OUT/daemon-inputs-rsa-s$s-$(date +%s).json
tar czf $RO/call0.tgz -C /tmp/r0 .
done
rm -rf $OUT/rsainputs; tar czf $RO/call0.tgz -C /tmp/r0 .
