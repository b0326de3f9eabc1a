# Call 3 (the stop's tree): the 2^20 chain key and the RSA verifier's key made in the background while tests/gpu runs
# whole; then, with nothing else running: SHA-256 from inputs vs from a witness, three daemon runs of three rounds
# (issue 34: <= 1.1x in three runs), one more with [synthesis] nice = 10; lanes20 (urgent p50/p99 <= 1.3x idle);
# the RSA verifier from inputs with a different signature per job, j = 16 (issue 37's daemon bound).
RO=$OUT; export OUT=/tmp/r; mkdir -p $OUT; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; nproc
bash bench/stream.sh build key20 shakey 2>&1 | grep -E "^===|setup:|rror" | tail -6
(bash bench/stream.sh rsakey > /tmp/rsakey.log 2>&1; touch /tmp/rsakey.done) &
timeout 240 bash bench/stream.sh tests
tar czf $RO/call3.tgz -C /tmp/r .
timeout 200 bash -c 'while [ ! -f /tmp/keys/chain20-bn128/.done ] || [ ! -f /tmp/rsakey.done ]; do sleep 2; done'
echo "keys ready $(date +%T)"; grep -E "rsakey|setup:|rror" /tmp/rsakey.log | tail -3
timeout 300 bash bench/stream.sh inputs inputs inputs 2>&1 | grep -E "===|rror" | cut -c1-300
INPUTS_RUNS=3 INPUTS_ARGS="--nice 10" timeout 100 bash bench/stream.sh inputs 2>&1 | grep -E "rror" | cut -c1-300  # inputs-4: nice 10
python3 - $OUT/inputs*/daemon-inputs-sha256.json <<'PY'
import json,sys
for f in sys.argv[1:]:
    d=json.load(open(f)); m=d["median_s_per_proof"]
    print(f.split("/")[-2], "ratio", m["inputs_over_witness"], "w", m["witness"], "i", m["inputs"], "per round", [r["s_per_proof"] for r in d["runs"]], "cores", [r["daemon_cpu_cores"] for r in d["runs"]])
PY
tar czf $RO/call3.tgz -C /tmp/r .
LANES_COUNT=384 LANES_COUNT_J1=80 timeout 150 bash bench/stream.sh lanes20 2>&1 | grep -E "^===|rror" | cut -c1-300
python3 - $OUT/lanes20*/daemon-lanes.json <<'PY'
import json,sys
for f in sys.argv[1:]:
    d=json.load(open(f))
    for r in d["runs"]:
        if "urgent_p99_over_idle_p99" in r:
            print(f.split("/")[-2], "p50/idle", r["urgent_p50_over_idle_p50"], "p99/idle", r["urgent_p99_over_idle_p99"], "p99/idle p50", r["urgent_p99_over_idle_p50"], r["urgent"]["latency_ms"], "all", r["all_proofs_throughput_ratio"])
        else: print(f.split("/")[-2], "idle", r["urgent"]["latency_ms"])
PY
tar czf $RO/call3.tgz -C /tmp/r .
RSA_COUNT=128 RSA_ROUNDS=3 timeout 200 bash bench/stream.sh rsainputs 2>&1 | grep -E "===|rror" | cut -c1-300
python3 - $OUT/rsainputs/daemon-inputs-rsa.json <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); m=d["median_s_per_proof"]
print("rsa ratio", m["inputs_over_witness"], "w", m["witness"], "i", m["inputs"], "cores", [r["daemon_cpu_cores"] for r in d["runs"]])
for r in d["runs"]:
    p=r["phase_median_ms"]; print("  ", r["kind"], r["s_per_proof"], r["latency_ms"], r["witnesses"], "witness ms", p.get("witness"), "device", p.get("device"), "busy", r["kernel_busy"])
PY
tar czf $RO/call3.tgz -C /tmp/r .
