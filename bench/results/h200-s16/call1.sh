# Call 1 (sixteenth session, main d32056b: prover/, engine/, daemon/, gpu/, cluster/ as 8cedf31, whose tests/gpu
# passed on an H100 at the fourteenth stop): build; the RSA verifier's key, `snarkd witness --compile` and the daemon
# from inputs at j = 16 (issue 37's bound names an H200 host); then tests/gpu with the real GPU daemon scenario as time
# allows (the key-change circuits from .devcarry/fixtures-keychange.tgz: no Node.js there).
RO=$OUT; export OUT=/tmp/r1; mkdir -p $OUT; export PYTHONPATH=$PWD/src; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
nproc; lscpu | grep -E "Model name" | cut -c1-80; grep -o -m1 avx512ifma /proc/cpuinfo; nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
mkdir -p .fixtures && tar xzf .devcarry/fixtures-keychange.tgz -C .fixtures
(bash bench/stream.sh rsakey > /tmp/rsakey.log 2>&1; touch /tmp/rsakey.done) &
bash bench/stream.sh build 2>&1 | grep -E "^===|rror" | tail -4
timeout 100 bash -c 'while [ ! -f /tmp/rsakey.done ]; do sleep 2; done'; tail -1 /tmp/rsakey.log
d=bench/work/rsa-bn128
/usr/bin/time -f "compile (fast tier) wall %e s cpu %U+%S" python3 -m snarkd witness --engine native --compile --timings $d/circuit.wasm \
  $(ls $d/pool/*.json | head -1) /tmp/w.wtns 2>&1 | tail -4
RSA_SYNTHESIS=16 RSA_COUNT=128 RSA_ROUNDS=3 timeout 100 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror|rsa inputs|^   " | cut -c1-300
cp $OUT/rsainputs/daemon-inputs-rsa.json $OUT/daemon-inputs-rsa-s16-$(date +%s).json; rm -rf $OUT/rsainputs
tar czf $RO/call1.tgz -C /tmp/r1 .
bash bench/stream.sh shakey 2>&1 | grep -E "setup|rror" | tail -2
timeout 300 bash bench/stream.sh tests
tar czf $RO/call1.tgz -C /tmp/r1 .
