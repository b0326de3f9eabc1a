# The final tree: tests/gpu whole (while the 2^20 key builds), SHA-256 from inputs once more, lanes20 once more.
RO=$OUT; export OUT=/tmp/r; mkdir -p $OUT
bash bench/stream.sh build key20 shakey 2>&1 | grep -E "^===|setup:|rror" | tail -6
timeout 220 bash bench/stream.sh tests
timeout 90 bash bench/stream.sh inputs 2>&1 | grep -E "^sha256|==="
LANES_COUNT=384 LANES_COUNT_J1=80 timeout 150 bash bench/stream.sh lanes20 2>&1 | tail -2 | cut -c1-300
python3 - $OUT/lanes20/daemon-lanes.json <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
for r in d["runs"]:
    if "urgent_p99_over_idle_p99" in r:
        print("p50/idle", r["urgent_p50_over_idle_p50"], "p99/idle", r["urgent_p99_over_idle_p99"], "p99/idle p50", r["urgent_p99_over_idle_p50"], r["urgent"]["latency_ms"], "all", r["all_proofs_throughput_ratio"], "gc2", json.dumps(r["gc_pauses_mixed"]["2"]))
    else: print("idle", r["urgent"]["latency_ms"])
PY
tar czf $RO/call11.tgz -C /tmp/r .
