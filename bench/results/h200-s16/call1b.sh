# Call 1b (the same warm machine as call 1, whose build is kept): call 1's RSA part again, the key made after the
# build (call 1 made it beside the build, and `snarkd setup` ran before the native core existed: file not found)
RO=$OUT; export OUT=/tmp/r1b; mkdir -p $OUT; export PYTHONPATH=$PWD/src; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
ls src/snarkd/native/_core*.so >/dev/null || bash bench/stream.sh build 2>&1 | grep -E "^===|rror" | tail -4
bash bench/stream.sh rsakey 2>&1 | tail -2
d=bench/work/rsa-bn128
/usr/bin/time -f "compile (fast tier) wall %e s cpu %U+%S" python3 -m snarkd witness --engine native --compile --timings $d/circuit.wasm \
  $(ls $d/pool/*.json | head -1) /tmp/w.wtns 2>&1 | tail -4
RSA_SYNTHESIS=16 RSA_COUNT=128 RSA_ROUNDS=3 timeout 300 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror|rsa inputs|^   " | cut -c1-300
cp $OUT/rsainputs/daemon-inputs-rsa.json $OUT/daemon-inputs-rsa-s16-$(date +%s).json; rm -rf $OUT/rsainputs
tar czf $RO/call1b.tgz -C /tmp/r1b .
