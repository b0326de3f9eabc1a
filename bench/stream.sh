#!/usr/bin/env bash
# Keys larger than the GPU, on one GPU machine: build, check and time the streamed path; results under $OUT.
#
#   bash bench/stream.sh build keys24 tests s24:bn128 pack          (one call)
#   bash bench/stream.sh s24:bls12381 drop:24 key26 s26 pack        (the next)
#
# build       wheels from .whl/ into the machine's Python, the native core in place
# keys24      in the background (setsid: outlives this call while the machine is held): the 2^24 chain keys of
#             both curves, key and witness as two processes each; /tmp/keys/chain24-CURVE/.done when ready
# key26       the same for the 2^26 BN254 key (~5 min on 16 cores, 47 GB of disk until its .r1cs is deleted)
# tests       tests/gpu (with the streamed-key tests); proofs snarkjs cannot check here are kept
# s24:CURVE   bench/large_proof.py on the 2^24 key, side by side in one run: bases resident without tables (full
#             budget, tables off), at each [gpus] memory_budget of BUDGETS (default 12GiB; snarkd's own choice of
#             streamed or resident there), and (BN254) resident with tables:
#             3 proofs one at a time, 4 at j = 4, a 10-partition job
# tables24    the BN254 2^24 key resident with tables alone (s24's last run)
# s26         as s24 on the 2^26 BN254 key: resident without tables, streamed at 12GiB
# s24small    the 2^24 BN254 key at memory_budget 3GiB (the 2^26-at-12GiB regime at a quarter of the size: the
#             CSR off the device, H parked): A·w, B·w from the streamed CSR vs on the CPU, beside resident
#             without tables and (the resident figure) with tables
# daemon24    bench/daemon_gpu.py on the 2^24 BN254 key at 12GiB: jobs of 10 partitions through the real daemon
#             (snarkd bench's runner over gRPC) beside the in-process engine
# ntt         bench/ntt_tables.py: NTT and H of old/src (a checkout of the sources before a change, carried) and
#             of src, side by side, outputs compared byte for byte
# nttsmall    the same at 2^16..2^22, three runs of each tree taken in turns, medians of their medians
# key20       the 2^20 BN254 chain key (background)
# lanes20     bench/daemon_gpu.py --urgent-every 0.2: urgent and bulk lanes through the daemon, 2^20 key resident
#             (named more than once: one run each, in lanes20/, lanes20-2/, ...)
#             (LANES_URGENT_CLIENT=thread,process: the urgent jobs from the bulk client's process, then their own)
# lanes24s    the same on the 2^24 key streamed at 12 GiB (bulk j = 4, urgent every 2 s)
# shakey      the SHA-256 2^17 key from .devcarry/ (r1cs and witness as .xz, wasm, input.json; `snarkd setup`)
# inputs      bench/daemon_inputs.py on that key: from inputs vs from a witness, j = 32, three rounds (named more than
#             once: one daemon run each, in inputs/, inputs-2/, ...; INPUTS_ARGS: more of its options)
# chaininputs bench/daemon_inputs.py on the 2^20 chain key (key20) with circom's wasm of Chain(1048573) carried as
#             .devcarry/chain20.wasm (`python bench/make_chain_wasm.py --power 20 --out .devcarry/chain20.wasm
#             --verify`): from inputs vs from a witness, j = 32, three rounds
# rsakey      zk-email's RSAVerifier65537(121,17) 2^18 key from .devcarry/rsa/ (bench/make_rsa_verifier.py
#             --signatures 160: circuit.r1cs.xz, circuit.wasm, input.json, inputs/inputs-N.json; `snarkd setup`,
#             seed 5eed) into bench/work/rsa-bn128 (its pool in pool/); independent of shakey
# rsainputs   bench/daemon_inputs.py on that key: from inputs vs from a witness, distinct RSA signatures (every
#             job in flight another one: inputs 1-32 the warm-up's only, 33-160 timed, one each per run; the
#             witnesses of the same 128 computed natively before timing), j = 16, three rounds; the daemon's
#             .wprog removed first (a defined start: the warm-up records, then every timed witness is a
#             control-flow run). RSA_SYNTHESIS (16) and RSA_THREADS (2): [synthesis] workers and threads; RSA_J (16),
#             RSA_COUNT (128), RSA_ROUNDS (3) for a smaller run; RSA_DEVICES (0; "" = the CPU where no GPU is); ends
#             with a summary (the ratio, each run's s/proof, latency and witness phase)
# js          clients/js/bench/bench.mjs (fullProve through the JavaScript client) on the SHA-256 key and the chain
#             example, Node.js and the client's dependencies from .nodecarry/ (node.xz, jsprod.tar.xz), dist carried
# cpupairs    issue 39 on the host's CPU: bench/prove_vs_rapidsnark.py against rapidsnark's prover (carried as
#             .devcarry/rs/prover.sh with the libraries it was linked against) on chain 2^16 (made here), SHA-256 2^17
#             (shakey) and chain 2^20 (key20), snarkd with IFMA on and off: all cores (CPUPAIRS_RUNS, 11; chain 2^20
#             3), then two cores (taskset -c 0,1, --threads 2; rapidsnark's pool still starts one thread per core of
#             the host: its threads share the two; CPUPAIRS_CORES="all" for the first only); no Node.js on the host, so each tool's first proof is kept in
#             $OUT/cpupairs/proofs-* to be checked with snarkjs elsewhere
# drop:P      delete the 2^P keys (disk)
# pack        $OUT as one results.tgz (the machine returns 8 files at most)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}
KEYS=/tmp/keys
T0=$(date +%s)
step() { echo "=== $1 $(date +%T) (+$(( $(date +%s) - T0 )) s) load $(cut -d' ' -f1 /proc/loadavg) disk $(df -h /tmp | awk 'NR==2 {print $4}') free"; }
make_key() {  # $1 power, $2 curve: in the background, in its own session
  local d=$KEYS/chain$1-$2
  mkdir -p "$d"
  [ -f "$d/.done" ] && return
  setsid nohup bash -c "python3 bench/make_chain_keys.py --power $1 --curves $2 --no-check --only key --out $KEYS > $d.key.log 2>&1 &
    python3 bench/make_chain_keys.py --power $1 --curves $2 --only witness --out $KEYS > $d.wtns.log 2>&1 &
    wait; rm -f $d/circuit.r1cs; touch $d/.done" > /dev/null 2>&1 < /dev/null &
}
wait_key() {  # $1 power, $2 curve, $3 most seconds
  local d=$KEYS/chain$1-$2 t=$(date +%s)
  while [ ! -f "$d/.done" ]; do
    if [ $(( $(date +%s) - t )) -gt "$3" ]; then echo "key 2^$1 $2 not ready after $3 s"; return 1; fi
    sleep 2
  done
  cat "$d.key.log" "$d.wtns.log" | tail -4
}
large() {  # $1 key dir, $2 out dir, $3 tag, rest: large_proof.py options
  local kd=$1 od=$2 tag=$3
  shift 3
  python3 bench/large_proof.py --key-dir "$kd" --out "$od" --tag "$tag" --threads 16 "$@" 2>&1 | \
    grep -E "stream plan|latency:|pipelined:|partitioned:|Error|error|Traceback|largest" | cut -c1-400
}

for s in "$@"; do
  case $s in
  build)
    step build
    if ls .whl/*.whl >/dev/null 2>&1; then python3 -m pip install -q --no-index --no-deps --upgrade .whl/*.whl 2>&1 | tail -2; fi
    SNARKD_BUILD_JOBS=16 python3 setup.py -q build_ext --inplace 2>&1 | tail -3
    ;;
  keys24) step keys24; make_key 24 bn128; make_key 24 bls12381 ;;
  key26) step key26; make_key 26 bn128 ;;
  drop:*) step "$s"; rm -rf $KEYS/chain${s#drop:}-* ;;
  tests)
    step tests
    SNARKD_VERIFY_LATER="$OUT/verify-later" python3 -m pytest ${GPU_TESTS:-tests/gpu} -q -p no:cacheprovider 2>&1 | \
      tee "$OUT/gpu-tests.log" | tail -15
    ;;
  s24:*)
    c=${s#s24:}
    step "$s"
    wait_key 24 "$c" ${KEY_WAIT:-400} || continue
    kd=$KEYS/chain24-$c od=$OUT/s24-$c
    large "$kd" "$od" resident --tables off --n1 3 --n2 4 --inflight 4 --partitions 10 --stream off
    for b in ${BUDGETS:-12GiB}; do
      large "$kd" "$od" "budget-$b" --gpu-budget "$b" --n1 3 --n2 4 --inflight 4 --partitions 10
    done
    if [ "$c" = bn128 ] && [ -z "${NO_TABLES_RUN:-}" ]; then large "$kd" "$od" tables --n1 3 --n2 0 --stream off; fi
    ;;
  s26)
    step s26
    wait_key 26 bn128 ${KEY_WAIT:-500} || continue
    kd=$KEYS/chain26-bn128 od=$OUT/s26-bn128
    large "$kd" "$od" streamed --gpu-budget 12GiB --n1 2 --n2 4 --inflight 4
    large "$kd" "$od" resident --tables off --n1 2 --n2 0 --stream off
    ;;
  s24small)
    step s24small
    wait_key 24 bn128 ${KEY_WAIT:-400} || continue
    kd=$KEYS/chain24-bn128 od=$OUT/s24small-bn128
    large "$kd" "$od" streamed --gpu-budget 3GiB --n1 3 --n2 4 --inflight 4
    large "$kd" "$od" cpu-spmv --gpu-budget 3GiB --n1 3 --n2 0 --stream-csr host
    large "$kd" "$od" resident --tables off --n1 3 --n2 0 --stream off
    large "$kd" "$od" tables --n1 2 --n2 0 --stream off
    ;;
  key24bn) step key24bn; make_key 24 bn128 ;;
  tables24)  # the resident figure alone: the 2^24 BN254 key with window tables, full budget
    step tables24
    wait_key 24 bn128 ${KEY_WAIT:-400} || continue
    large $KEYS/chain24-bn128 "$OUT/s24-bn128" tables --n1 3 --n2 0 --stream off
    ;;
  ntt)
    step ntt
    python3 bench/ntt_tables.py --src old/src --out "$OUT/ntt-before.json" > /dev/null
    python3 bench/ntt_tables.py --src src --out "$OUT/ntt-after.json" > /dev/null
    python3 bench/ntt_tables.py --compare "$OUT/ntt-before.json" "$OUT/ntt-after.json" | tee "$OUT/ntt-compare.txt"
    ;;
  nttsmall)  # the small domains, where one run's median moves by 10%: 3 runs of each tree, in turns, 51 reps
    step nttsmall
    b="" a=""
    for r in 1 2 3; do
      python3 bench/ntt_tables.py --src old/src --powers 16,18,20,22 --reps 51 --out "$OUT/ntt-small-before-$r.json" > /dev/null
      python3 bench/ntt_tables.py --src src --powers 16,18,20,22 --reps 51 --out "$OUT/ntt-small-after-$r.json" > /dev/null
      b="$b${b:+,}$OUT/ntt-small-before-$r.json" a="$a${a:+,}$OUT/ntt-small-after-$r.json"
    done
    python3 bench/ntt_tables.py --compare "$b" "$a" | tee "$OUT/ntt-small-compare.txt"
    ;;
  daemon24)
    step daemon24
    wait_key 24 bn128 ${KEY_WAIT:-400} || continue
    python3 bench/daemon_gpu.py --key-dir $KEYS/chain24-bn128 --gpu-budget 12GiB --partitions 10 --j 2 --count 4 \
      --warm 1 --synthesis 4 --threads 8 --wpd 1 --out "$OUT/daemon24" 2>&1 | tail -4
    ;;
  key20) step key20; make_key 20 bn128 ;;
  lanes20)  # urgent jobs every 200 ms beside bulk jobs at j = 32 on the 2^20 key, bases resident
    step lanes20
    wait_key 20 bn128 ${KEY_WAIT:-200} || continue
    LANES_RUNS=$(( ${LANES_RUNS:-0} + 1 ))  # each run of the step its own folder: lanes20, lanes20-2, ...
    python3 bench/daemon_gpu.py --key-dir $KEYS/chain20-bn128 --j 32 --count ${LANES_COUNT:-192} --count-j1 ${LANES_COUNT_J1:-40} --warm 32 \
      --urgent-every 0.2 --urgent-client ${LANES_URGENT_CLIENT:-thread} \
      --out "$OUT/lanes20$( [ $LANES_RUNS -gt 1 ] && echo -$LANES_RUNS)" 2>&1 | tail -3 | cut -c1-1500
    ;;
  lanes24s)  # the same on the 2^24 key streamed at 12 GiB: bulk at j = 4, an urgent job every 2 s
    step lanes24s
    wait_key 24 bn128 ${KEY_WAIT:-400} || continue
    python3 bench/daemon_gpu.py --key-dir $KEYS/chain24-bn128 --gpu-budget 12GiB --j 4 --count 16 --count-j1 5 \
      --warm 2 --synthesis 4 --threads 8 --wpd 1 --urgent-every 2 --urgent-share 0.25 --out "$OUT/lanes24s" 2>&1 | tail -3 | cut -c1-1500
    ;;
  shakey)  # the SHA-256 2^17 key from .devcarry (bench/make_sha256_key.py's r1cs, wasm, input, witness; seed 5eed)
    step shakey
    d=bench/work/sha256-bn128
    mkdir -p $d
    for f in circuit.r1cs witness.wtns; do [ -f $d/$f ] || xz -dc .devcarry/$f.xz > $d/$f; done
    cp -n .devcarry/circuit.wasm .devcarry/input.json $d/
    [ -f $d/circuit.zkey ] || python3 -m snarkd setup $d/circuit.r1cs $d/circuit.zkey --vk $d/vk.json --seed 5eed 2>&1 | tail -1
    ;;
  inputs)  # proofs from inputs beside proofs from a witness, SHA-256 at j = 32, three rounds
    step inputs
    INPUTS_RUNS=$(( ${INPUTS_RUNS:-0} + 1 ))  # each run of the step its own folder: inputs, inputs-2, inputs-3
    python3 bench/daemon_inputs.py --key-dir bench/work/sha256-bn128 --name sha256 --j 32 --rounds 3 ${INPUTS_ARGS:-} \
      --out "$OUT/inputs$( [ $INPUTS_RUNS -gt 1 ] && echo -$INPUTS_RUNS)" 2>&1 | tail -8 | cut -c1-600
    ;;
  chaininputs)  # from inputs vs from a witness on the 2^20 chain key (key20), j = 32, three rounds: circom's wasm of
                # Chain(1048573) from .devcarry/chain20.wasm (the key's r1cs is the one circom writes: chain_circuit.py)
    step chaininputs
    wait_key 20 bn128 ${KEY_WAIT:-200} || continue
    cp .devcarry/chain20.wasm $KEYS/chain20-bn128/circuit.wasm
    python3 bench/daemon_inputs.py --key-dir $KEYS/chain20-bn128 --name chain20 --j 32 --rounds 3 \
      --out "$OUT/chaininputs" 2>&1 | tail -3 | cut -c1-600
    ;;
  cpupairs)  # issue 39 on the host's CPU, against rapidsnark (see the list above)
    step cpupairs
    make_key 16 bn128
    wait_key 16 bn128 ${KEY_WAIT:-200} || continue
    wait_key 20 bn128 ${KEY_WAIT:-400} || continue
    o=$OUT/cpupairs; mkdir -p $o; n=${CPUPAIRS_RUNS:-11}
    grep -o -m1 "avx512ifma" /proc/cpuinfo || echo "no avx512ifma"
    export RAPIDSNARK=$PWD/.devcarry/rs/prover.sh
    for cores in ${CPUPAIRS_CORES:-all 2}; do
      if [ $cores = all ]; then pre=""; thr=0; else pre="taskset -c 0,1"; thr=2; fi
      $pre python3 bench/prove_vs_rapidsnark.py --dir $KEYS/chain16-bn128 --dir bench/work/sha256-bn128 --runs $n \
        --threads $thr --no-snarkjs --ifma on,off --keep-proofs $o/proofs-$cores --json $o/pairs-$cores.json \
        --note "H200 host CPU, $cores cores" 2>&1 | grep -E "round $n/|rror" | cut -c1-300
      [ $cores = all ] || [ -n "${CPUPAIRS_2P20_2:-}" ] || continue
      $pre python3 bench/prove_vs_rapidsnark.py --dir $KEYS/chain20-bn128 --runs 3 --threads $thr --no-snarkjs \
        --ifma on,off --keep-proofs $o/proofs-$cores --json $o/pairs-2p20-$cores.json \
        --note "H200 host CPU, $cores cores" 2>&1 | grep -E "round 3/|rror" | cut -c1-300
    done
    ;;
  rsakey)  # the RSA verifier's 2^18 key from .devcarry/rsa (bench/make_rsa_verifier.py's r1cs, wasm, inputs; seed 5eed)
    step rsakey
    d=bench/work/rsa-bn128
    mkdir -p $d/pool
    [ -f $d/circuit.r1cs ] || xz -dc .devcarry/rsa/circuit.r1cs.xz > $d/circuit.r1cs
    cp -n .devcarry/rsa/circuit.wasm .devcarry/rsa/input.json $d/
    cp -n .devcarry/rsa/inputs/inputs-*.json $d/pool/
    echo "rsakey: $(ls $d/pool | wc -l) inputs in $d/pool"
    [ -f $d/circuit.zkey ] || python3 -m snarkd setup $d/circuit.r1cs $d/circuit.zkey --vk $d/vk.json --seed 5eed 2>&1 | tail -1
    ;;
  rsainputs)  # proofs from inputs beside proofs from a witness, RSA verifier, distinct signatures, j = 16, three rounds
    step rsainputs
    d=bench/work/rsa-bn128
    rm -f $d/*.wprog
    python3 bench/daemon_inputs.py --key-dir $d --name rsa --inputs-dir $d/pool --warm-inputs 32 --devices "${RSA_DEVICES-0}" --j ${RSA_J:-16} \
      --count ${RSA_COUNT:-128} --warm 32 --rounds ${RSA_ROUNDS:-3} --synthesis ${RSA_SYNTHESIS:-16} --threads ${RSA_THREADS:-2} \
      --out "$OUT/rsainputs" 2>&1 | tail -10 | cut -c1-900
    # the summary each device call printed for itself before (ratio, per-run rate, latency, witness phase)
    python3 - "$OUT/rsainputs/daemon-inputs-rsa.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); m = d["median_s_per_proof"]
print("rsa inputs/witness", m["inputs_over_witness"], "witness", m["witness"], "inputs", m["inputs"],
      "daemon cores", [r["daemon_cpu_cores"] for r in d["runs"]])
for r in d["runs"]:
    p = r["phase_median_ms"]
    print("  ", r["kind"], r["s_per_proof"], r["latency_ms"], "witness ms", p.get("witness"), "device", p.get("device"))
PY
    ;;
  js)  # the JavaScript client's fullProve through a daemon on this machine (clients/js/bench), SHA-256 and chain:
       # Node.js and the client's production dependencies from .nodecarry/ (no snarkjs there: --skip-snarkjs)
    step js
    mkdir -p /tmp/nodebin
    [ -x /tmp/nodebin/node ] || { xz -dc .nodecarry/node.xz > /tmp/nodebin/node && chmod +x /tmp/nodebin/node; }
    (cd clients/js && tar xJf ../../.nodecarry/jsprod.tar.xz &&
      for c in bench/work/sha256-bn128 examples/chain-bn128; do
        SNARKD_PYTHON=python3 /tmp/nodebin/node bench/bench.mjs --circuit ../../$c -j 1,16 -n 64 --skip-snarkjs \
          > "$OUT/js-$(basename $c).json" 2> "$OUT/js-$(basename $c).log"; echo "js $c rc $?"
      done)
    ;;
  pack)
    step pack
    (cd "$OUT" && tar czf /tmp/results.tgz . && find . -mindepth 1 -delete && mv /tmp/results.tgz .)
    ;;
  *) echo "unknown step $s"; exit 2 ;;
  esac
done
step done
