# Call 1 (fourteenth session, the stop's tree: rounds 33 (the fast tier with the -O3 runtime object), 34 (witness start cuts), 36 (head start + the witness MSMs beside)):
# build; tests/gpu with the real GPU daemon scenario (the key-change
# circuits from .devcarry/fixtures-keychange.tgz: this machine has no Node.js); the RSA verifier's key, `snarkd witness
# --compile` and the daemon from inputs at j = 16 (16 synthesis workers). (The host CPU's pairs against rapidsnark dropped: the session's device time after failed starts.)
RO=$OUT; export OUT=/tmp/r1; mkdir -p $OUT; export PYTHONPATH=$PWD/src; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
nproc; lscpu | grep "Model name"; nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
mkdir -p .fixtures && tar xzf .devcarry/fixtures-keychange.tgz -C .fixtures
bash bench/stream.sh build 2>&1 | grep -E "^===|rror" | tail -4
(bash bench/stream.sh rsakey > /tmp/rsakey.log 2>&1; touch /tmp/rsakey.done) &
bash bench/stream.sh shakey 2>&1 | grep -E "^===|setup|rror" | tail -3
timeout 300 bash bench/stream.sh tests
tar czf $RO/call1.tgz -C /tmp/r1 .
timeout 120 bash -c 'while [ ! -f /tmp/rsakey.done ]; do sleep 2; done'; tail -1 /tmp/rsakey.log
d=bench/work/rsa-bn128
/usr/bin/time -f "compile wall %e s cpu %U+%S" python3 -m snarkd witness --engine native --compile --timings $d/circuit.wasm \
  $(ls $d/pool/*.json | head -1) /tmp/w.wtns 2>&1 | tail -8
for s in 16; do
RSA_SYNTHESIS=$s RSA_COUNT=128 RSA_ROUNDS=3 timeout 100 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror|rsa inputs|^   " | cut -c1-300
cp $OUT/rsainputs/daemon-inputs-rsa.json $OUT/daemon-inputs-rsa-s$s-$(date +%s).json
done
rm -rf $OUT/rsainputs; tar czf $RO/call1.tgz -C /tmp/r1 .
