# Call 1 (twelfth session, the stop's tree): build; tests/gpu (with the real GPU daemon scenario); the RSA verifier's key,
# its compiled witness library (rounds 29-30: memory kept per copy, the caller's frame; the build by units) and the daemon
# from inputs at j = 16 with 16 synthesis workers; issue 39's pairs on the host's CPU.
RO=$OUT; export OUT=/tmp/r1; mkdir -p $OUT; export PYTHONPATH=$PWD/src; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
nproc; lscpu | grep "Model name"; nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; cat /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag
bash bench/stream.sh build 2>&1 | grep -E "^===|rror" | tail -4
(bash bench/stream.sh rsakey > /tmp/rsakey.log 2>&1; touch /tmp/rsakey.done) &
(bash bench/stream.sh key20 > /tmp/key20.log 2>&1) &
bash bench/stream.sh shakey 2>&1 | grep -E "^===|setup|rror" | tail -3
timeout 220 bash bench/stream.sh tests
tar czf $RO/call1.tgz -C /tmp/r1 .
timeout 120 bash -c 'while [ ! -f /tmp/rsakey.done ]; do sleep 2; done'; tail -2 /tmp/rsakey.log
d=bench/work/rsa-bn128
/usr/bin/time -f "compile wall %e s cpu %U+%S" python3 -m snarkd witness --engine native --compile --timings $d/circuit.wasm \
  $(ls $d/pool/*.json | head -1) /tmp/w.wtns 2>&1 | tail -6
RSA_COUNT=128 RSA_ROUNDS=3 timeout 100 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror|rsa inputs|^   " | cut -c1-300
cp $OUT/rsainputs/daemon-inputs-rsa.json $OUT/daemon-inputs-rsa-s16.json
tar czf $RO/call1.tgz -C /tmp/r1 .
CPUPAIRS_RUNS=7 timeout 170 bash bench/stream.sh cpupairs 2>&1 | grep -E "round|rror" | tail -8
tar czf $RO/call1.tgz -C /tmp/r1 .
