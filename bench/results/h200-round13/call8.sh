# F: this tree (start-up heap frozen, GC pauses measured); NF: F without the freeze. tests/gpu whole on F while the
# 2^20 key builds; then lanes20 on F, NF, F. Everything under /tmp/r, one tarball back.
RO=$OUT; export OUT=/tmp/r; mkdir -p $OUT
K=/tmp/keys/chain20-bn128
bash bench/stream.sh build key20
rm -rf /tmp/NF; mkdir /tmp/NF; cp -a src bench setup.py pyproject.toml /tmp/NF/
sed -i 's/        frozen = freeze()/        frozen = 0/' /tmp/NF/src/snarkd/daemon/server.py; grep -c "frozen = 0" /tmp/NF/src/snarkd/daemon/server.py
timeout 220 bash bench/stream.sh tests
while [ ! -f $K/.done ]; do sleep 2; done
ln(){ echo "== lanes $2 $(date +%T)"; (cd $1 && timeout 110 python3 bench/daemon_gpu.py --key-dir $K --j 32 --count 384 --count-j1 80 --warm 32 --urgent-every 0.2 --out $OUT/lanes-$2 2>&1 | tail -1 | cut -c1-300); python3 - $OUT/lanes-$2/daemon-lanes.json <<'PY'
import json,sys
d=json.load(open(sys.argv[1]))
for r in d["runs"]:
    if "urgent_p99_over_idle_p99" in r:
        u=r["urgent"]; print("p50/idle", r["urgent_p50_over_idle_p50"], "p99/idle", r["urgent_p99_over_idle_p99"], u["latency_ms"], "all", r["all_proofs_throughput_ratio"], "gc", json.dumps(r.get("gc_pauses_mixed")))
        print(" slowest adm", [s["admission_ms"] for s in u["slowest"]], [s["latency_ms"] for s in u["slowest"]])
    else: print("idle", r["urgent"]["latency_ms"])
PY
}
ln . F1; ln /tmp/NF NF1; ln . F2
tar czf $RO/call8.tgz -C /tmp/r .
