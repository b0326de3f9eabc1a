# Call 2 (issue 34): the daemon's GIL load cut (the self-check reads its key once, the kernels' functions looked up
# once, the Montgomery radix's inverse kept, public.json with C's string encoder) and a native witness from inputs
# replayed into page-locked memory: T = this tree, B = 0110419 (the last stop), alternated, SHA-256 2^17 from
# inputs vs from a witness at j = 32, three rounds each per daemon run; py-spy's GIL profile in each run's first round.
RO=$OUT; export OUT=/tmp/r; mkdir -p $OUT; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
bash bench/stream.sh build shakey 2>&1 | grep -E "^===|rror" | tail -4
rm -rf /tmp/B && mkdir /tmp/B && tar xzf .devcarry/base.tgz -C /tmp/B && cp src/snarkd/native/*.so /tmp/B/src/snarkd/native/ && \
  cp bench/daemon_inputs.py /tmp/B/bench/ && mkdir -p /tmp/B/bench/work && ln -s $PWD/bench/work/sha256-bn128 /tmp/B/bench/work/sha256-bn128
run() {  # $1 tag, $2 tree, rest: options
  local tag=$1 tree=$2; shift 2
  (cd $tree && timeout 100 python3 bench/daemon_inputs.py --key-dir bench/work/sha256-bn128 --name sha256 --j 32 --rounds 3 --gil-profile "$@" --out $OUT/$tag 2>&1 | grep -E "Error|rror" | cut -c1-300)
  python3 - $OUT/$tag/daemon-inputs-sha256.json $tag <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); m=d["median_s_per_proof"]
print(sys.argv[2], "ratio", m["inputs_over_witness"], "w", m["witness"], "i", m["inputs"], "cores", [r["daemon_cpu_cores"] for r in d["runs"]], "gil", [r.get("gil_held_fraction") for r in d["runs"][:2]])
for r in d["runs"]:
    p=r["phase_median_ms"]; print("  ", r["kind"], r["s_per_proof"], r["latency_ms"]["p50"], "device", p.get("device"), "upload", p.get("upload"), "kernels", p.get("kernels"), "finalize", p.get("finalize"), "verify", p.get("verify"), "busy", r["kernel_busy"])
PY
}
run T1 $PWD; run B1 /tmp/B; run T2 $PWD; run B2 /tmp/B; run T3 $PWD; run B3 /tmp/B
tar czf $RO/call2.tgz -C /tmp/r .
