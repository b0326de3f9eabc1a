# Call 1 (issue 34): the from-inputs gap. SHA-256 2^17 at j = 32, three rounds each way per daemon run:
# P = this tree (a native witness from inputs replayed into page-locked memory), U = the same with PINNED_FRAME_MAX = 0
# (pageable, as before), alternated P U P U; then P with [synthesis] nice = 10; then one round of P with py-spy's GIL profile.
RO=$OUT; export OUT=/tmp/r; mkdir -p $OUT; export PATH=$(python3 -c "import sysconfig; print(sysconfig.get_path(\"scripts\"))"):$PATH
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader; nproc
bash bench/stream.sh build shakey 2>&1 | grep -E "^===|rror|zkey" | tail -6
rm -rf /tmp/U && mkdir /tmp/U && cp -a src bench setup.py pyproject.toml /tmp/U/ && \
  sed -i 's/^PINNED_FRAME_MAX = 256 << 20$/PINNED_FRAME_MAX = 0/' /tmp/U/src/snarkd/engine/engine.py && \
  grep -n '^PINNED_FRAME_MAX' /tmp/U/src/snarkd/engine/engine.py && mkdir -p /tmp/U/bench/work && ln -s $PWD/bench/work/sha256-bn128 /tmp/U/bench/work/sha256-bn128
run() {  # $1 tag, $2 tree, rest: options
  local tag=$1 tree=$2; shift 2
  (cd $tree && timeout 100 python3 bench/daemon_inputs.py --key-dir bench/work/sha256-bn128 --name sha256 --j 32 --rounds 3 "$@" --out $OUT/$tag 2>&1 | grep -E "inputs_over|Error|rror" | cut -c1-300)
  python3 - $OUT/$tag/daemon-inputs-sha256.json $tag <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); m=d["median_s_per_proof"]
print(sys.argv[2], "ratio", m["inputs_over_witness"], "w", m["witness"], "i", m["inputs"], "cores", [r["daemon_cpu_cores"] for r in d["runs"]])
for r in d["runs"]:
    p=r["phase_median_ms"]; print("  ", r["kind"], r["s_per_proof"], "device", p.get("device"), "upload", p.get("upload"), "kernels", p.get("kernels"), "witness", p.get("witness"), "gil", r.get("gil_held_fraction"))
PY
}
run P1 $PWD; run U1 /tmp/U; run P2 $PWD; run U2 /tmp/U
run N1 $PWD --nice 10
run G1 $PWD --rounds 1 --gil-profile
tar czf $RO/call1.tgz -C /tmp/r .
