# Call 1 (eighth session, main after the cpu20/cpu21/wit21 merges): tests/gpu whole, the RSA verifier's key and the
# 2^20 chain key made beside it; then, with nothing else running, the RSA verifier from inputs with a different
# signature per job, j = 16, three rounds (issue 37's daemon bound), and a first look at rapidsnark on the host.
RO=$OUT; export OUT=/tmp/r; mkdir -p $OUT; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; nproc; lscpu | grep -E "Model name|Thread|Core|Flags" | cut -c1-200
grep -o -m1 avx512ifma /proc/cpuinfo || echo "no avx512ifma"
bash bench/stream.sh build 2>&1 | grep -E "^===|rror" | tail -4
.devcarry/rs/prover.sh 2>&1 | head -2
(bash bench/stream.sh rsakey > /tmp/rsakey.log 2>&1; touch /tmp/rsakey.done) &
bash bench/stream.sh key20 shakey 2>&1 | grep -E "^===|setup|rror" | tail -3
timeout 280 bash bench/stream.sh tests
tar czf $RO/call1.tgz -C /tmp/r .
timeout 120 bash -c 'while [ ! -f /tmp/rsakey.done ]; do sleep 2; done'
echo "key ready $(date +%T)"; grep -E "rsakey|setup:|rror" /tmp/rsakey.log | tail -3
RSA_COUNT=128 RSA_ROUNDS=3 timeout 200 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror" | cut -c1-300
python3 - $OUT/rsainputs/daemon-inputs-rsa.json <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); m=d["median_s_per_proof"]
print("rsa ratio", m["inputs_over_witness"], "w", m["witness"], "i", m["inputs"], "cores", [r["daemon_cpu_cores"] for r in d["runs"]])
for r in d["runs"]:
    p=r["phase_median_ms"]; print("  ", r["kind"], r["s_per_proof"], r["latency_ms"], r["witnesses"], "witness ms", p.get("witness"), "device", p.get("device"), "busy", r["kernel_busy"])
PY
ls /tmp/keys/; tar czf $RO/call1.tgz -C /tmp/r .
