# Call 0 (thirteenth session, main 76d7639 before the helpers' rounds; asked for kind nvidia-h200, given an H100 host: 16-vCPU Xeon with IFMA):
# the RSA verifier's key, its compiled witness library, and the daemon from inputs at j = 16 (16 synthesis workers,
# twice) and 8 workers once.
RO=$OUT; export OUT=/tmp/r0; mkdir -p $OUT; export PYTHONPATH=$PWD/src; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
nproc; lscpu | grep "Model name"; nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; cat /sys/kernel/mm/transparent_hugepage/enabled
bash bench/stream.sh build 2>&1 | grep -E "^===|rror" | tail -4
bash bench/stream.sh rsakey > /tmp/rsakey.log 2>&1; tail -2 /tmp/rsakey.log
d=bench/work/rsa-bn128
/usr/bin/time -f "compile wall %e s cpu %U+%S" python3 -m snarkd witness --engine native --compile --timings $d/circuit.wasm \
  $(ls $d/pool/*.json | head -1) /tmp/w.wtns 2>&1 | tail -6
for s in 16 8 16; do
RSA_SYNTHESIS=$s RSA_COUNT=128 RSA_ROUNDS=3 timeout 100 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror|rsa inputs|^   " | cut -c1-300
cp $OUT/rsainputs/daemon-inputs-rsa.json $OUT/daemon-inputs-rsa-s$s-$(date +%s).json
tar czf $RO/call0.tgz -C /tmp/r0 .
done
