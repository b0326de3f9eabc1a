# Call 2 (same warm machine): the daemon from inputs again, 16 and 8 synthesis workers, and one-shot --backend auto.
RO=$OUT; export OUT=/tmp/r2; mkdir -p $OUT; export PYTHONPATH=$PWD/src; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
RSA_SYNTHESIS=8 RSA_COUNT=128 RSA_ROUNDS=3 timeout 100 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror|rsa inputs|^   " | cut -c1-300
cp $OUT/rsainputs/daemon-inputs-rsa.json $OUT/daemon-inputs-rsa-s8.json
tar czf $RO/call2.tgz -C /tmp/r2 .
RSA_COUNT=128 RSA_ROUNDS=3 timeout 100 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror|rsa inputs|^   " | cut -c1-300
cp $OUT/rsainputs/daemon-inputs-rsa.json $OUT/daemon-inputs-rsa-s16-2.json
tar czf $RO/call2.tgz -C /tmp/r2 .
