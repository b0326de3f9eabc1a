# Call 2 (the machine still warm from call 1: its keys in /tmp/keys, bench/work/sha256-bn128): issue 39 on the host's
# CPU against rapidsnark's prover (81eddf1, ffiasm b9dce0a, built on the lead's VM and carried with its libgmp):
# chain 2^16, SHA-256 2^17 (11 rounds) and chain 2^20 (3), snarkd with IFMA on and off, all 16 cores, then 2 cores.
RO=$OUT; export OUT=/tmp/r2; mkdir -p $OUT; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
CPUPAIRS_RUNS=11 timeout 560 bash bench/stream.sh cpupairs
tar czf $RO/call2.tgz -C /tmp/r2 .
