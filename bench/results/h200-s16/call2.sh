# Call 2 (sixteenth session, main 0ad3a68 (cpu40 and wit36 merged), the same warm machine as calls 1 and 1b): issue 39's pairs on the host's CPU
# against rapidsnark (all cores, then two: bench/stream.sh cpupairs; proofs kept for snarkjs here).
RO=$OUT; export OUT=/tmp/r2; mkdir -p $OUT; export PYTHONPATH=$PWD/src
[ -f src/snarkd/native/_core*.so ] 2>/dev/null || bash bench/stream.sh build 2>&1 | grep -E "^===|rror" | tail -4
bash bench/stream.sh shakey key20 2>&1 | grep -E "setup|rror" | tail -3
CPUPAIRS_RUNS=11 timeout 480 bash bench/stream.sh cpupairs 2>&1 | grep -vE "^\s*$" | cut -c1-300
tar czf $RO/call2.tgz -C /tmp/r2 .
