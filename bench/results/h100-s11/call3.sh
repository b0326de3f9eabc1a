# Call 3 (eleventh session, the stop's tree): build; tests/gpu (with the real GPU daemon scenario); the RSA verifier's key,
# its compiled witness library (round 28: -O3, no ctypes) and the daemon from inputs at j = 16; issue 39's pairs.
RO=$OUT; export OUT=/tmp/r3; mkdir -p $OUT; export PYTHONPATH=$PWD/src; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
nproc; lscpu | grep "Model name"
bash bench/stream.sh build 2>&1 | grep -E "^===|rror" | tail -4
(bash bench/stream.sh rsakey > /tmp/rsakey.log 2>&1; touch /tmp/rsakey.done) &
(bash bench/stream.sh key20 > /tmp/key20.log 2>&1) &
bash bench/stream.sh shakey 2>&1 | grep -E "^===|setup|rror" | tail -3
timeout 200 bash bench/stream.sh tests
tar czf $RO/call3.tgz -C /tmp/r3 .
timeout 120 bash -c 'while [ ! -f /tmp/rsakey.done ]; do sleep 2; done'; tail -2 /tmp/rsakey.log
d=bench/work/rsa-bn128
/usr/bin/time -f "compile wall %e s cpu %U+%S" python3 -m snarkd witness --engine native --compile --timings $d/circuit.wasm \
  $(ls $d/pool/*.json | head -1) /tmp/w.wtns 2>&1 | tail -6
RSA_COUNT=128 RSA_ROUNDS=3 timeout 90 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror|rsa inputs|^   " | cut -c1-300
tar czf $RO/call3.tgz -C /tmp/r3 .
CPUPAIRS_RUNS=7 timeout 200 bash bench/stream.sh cpupairs 2>&1 | grep -E "round|rror" | tail -8
tar czf $RO/call3.tgz -C /tmp/r3 .
