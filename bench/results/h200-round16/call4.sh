# Call 4 (the stop's tree, after the cpu22 and wit22 merges): tests/gpu whole with the RSA and 2^20 chain keys made
# beside it; the RSA verifier from inputs (j = 16, three rounds); rapidsnark on the host's CPU again (11 rounds at
# 2^16-2^17, 3 at 2^20, all cores, then 2 cores).
RO=$OUT; export OUT=/tmp/r; mkdir -p $OUT; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
git log --oneline -1 2>/dev/null; nproc; grep -o -m1 avx512ifma /proc/cpuinfo || echo "no avx512ifma"
bash bench/stream.sh build 2>&1 | grep -E "^===|rror" | tail -4
(bash bench/stream.sh rsakey > /tmp/rsakey.log 2>&1; touch /tmp/rsakey.done) &
bash bench/stream.sh key20 shakey 2>&1 | grep -E "^===|setup|rror" | tail -3
timeout 250 bash bench/stream.sh tests
tar czf $RO/call4.tgz -C /tmp/r .
timeout 120 bash -c 'while [ ! -f /tmp/rsakey.done ]; do sleep 2; done'
RSA_COUNT=128 RSA_ROUNDS=3 timeout 100 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror" | cut -c1-300
python3 - $OUT/rsainputs/daemon-inputs-rsa.json <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); m=d["median_s_per_proof"]
print("rsa ratio", m["inputs_over_witness"], "w", m["witness"], "i", m["inputs"], "cores", [r["daemon_cpu_cores"] for r in d["runs"]])
for r in d["runs"]:
    p=r["phase_median_ms"]; print("  ", r["kind"], r["s_per_proof"], r["latency_ms"], "witness ms", p.get("witness"), "device", p.get("device"))
PY
tar czf $RO/call4.tgz -C /tmp/r .
CPUPAIRS_RUNS=11 timeout 200 bash bench/stream.sh cpupairs
tar czf $RO/call4.tgz -C /tmp/r .
