#!/usr/bin/env bash
# One call on the GPU machine: build, check and time, step by step; results under $OUT (or ./out).
#
#   bash bench/h200.sh build tests gpu first_use engine
#   bash bench/h200.sh build key24 gate tests round2 large      (issue 16: one call)
#
# build      wheels from .whl/ (if any) into the machine's Python, the native core in place
# tests      the GPU test suite (tests/gpu), with prebuilt cubins from .cubins/ when present
# gpu        bench/gpu.py: NTT, G1/G2 MSM (plain and window table) at 2^20 and 2^24
# first_use  bench/gpu_first_use.py on the example keys (both curves: the packaged kernels' load against 100 ms)
#            and on a 2^17 chain key, and one-shot `snarkd prove` cpu vs cuda
# engine     bench/multi_gpu.py on a 2^20 chain key, devices [0] (and the tree in .old/ when present)
# daemon     bench/daemon_gpu.py on a 2^20 chain key: the daemon over gRPC vs the in-process engine, j = 1..32
# daemon2    the same on GPUs [0, 1] at j = 32 (an x2 machine)
# aggregate  bench/aggregate.py: SnarkPack n = 1,024 and 8,192, both curves, Miller loops on the GPU, and BN254 n = 8,192
#            on the CPU only beside it
# doctor     snarkd doctor on the GPU machine
# pack       $OUT as one results.tgz
# key24      in the background: the 2^24 chain key (r1cs + snarkd setup) and, beside it, its witness
# gate       bench/gpu_gate.py: the GPU MSMs, NTT and H against the CPU core (seconds); FLAGS (a kernel variant,
#            e.g. FLAGS="--define X") apply to gate, round2/3 and large
# round2     bench/gpu.py at 2^20 and 2^24, both curves, with kernel variants side by side ($VARIANTS)
# round3     bench/gpu.py like round2, with the NTT's radix-2 passes beside the default (--ntt-radix 1)
# large_stream  like large, with [gpus] memory_budget 12GiB: the key's bases do not fit and are streamed
# ceiling    bench/gpu_ceiling.py: field and point-add rates with no memory traffic (the compute ceilings)
# ncu        Nsight Compute on the G1 accumulation kernel (BN254, 2^22, plain bases): pipes, stalls, occupancy
# large      waits (until $KEY_WAIT s from the start) for key24, then bench/large_proof.py
# cluster    bench/cluster_gpu.py on a 2^20 chain key (x2 machine; Ray and its missing dependencies as wheels in
#            .whl/): two Ray nodes on this host, one GPU each, the front in front of them: 1 node vs 2, j = 32
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/src${PYTHONPATH:+:$PYTHONPATH}
[ -d .cubins ] && export SNARKD_GPU_CUBIN_DIR=$PWD/.cubins
KEYS=/tmp/keys
read -r -a FLAGS <<< "${FLAGS:-}"
T0=$(date +%s)
KEY_WAIT=${KEY_WAIT:-330}
step() { echo "=== $1 $(date +%T) (+$(( $(date +%s) - T0 )) s)"; }
wait_key24() {  # until key24's background jobs end, at most until $KEY_WAIT s from the start
  while kill -0 "${KEY_PID:-0}" 2>/dev/null || kill -0 "${WTNS_PID:-0}" 2>/dev/null; do
    if [ $(( $(date +%s) - T0 )) -gt "$KEY_WAIT" ]; then
      echo "key24 not ready after $KEY_WAIT s: stopping it"; kill "${KEY_PID:-0}" "${WTNS_PID:-0}" 2>/dev/null; break
    fi
    sleep 2
  done
}

for s in "$@"; do
  case $s in
  build)
    step build
    if ls .whl/*.whl >/dev/null 2>&1; then python3 -m pip install -q --no-index --no-deps --upgrade .whl/*.whl; fi
    SNARKD_BUILD_JOBS=16 python3 setup.py -q build_ext --inplace 2>&1 | tail -3
    if [ -d .old/src ]; then cp src/snarkd/native/*.so .old/src/snarkd/native/; fi
    ;;
  tests)
    step tests
    # proofs snarkjs cannot check here (no Node.js) are kept for tools/verify_later.sh on the development machine
    SNARKD_VERIFY_LATER="$OUT/verify-later" python3 -m pytest ${GPU_TESTS:-tests/gpu} -q -p no:cacheprovider 2>&1 | \
      tee "$OUT/gpu-tests.log" | tail -15
    ;;
  gpu)
    step gpu
    python3 bench/gpu.py --curves bn254,bls12_381 --min 20 --max 24 --step 4 --what ntt,g1,g2 --g2-max 20 \
      --table-c 0 --reps 5 --tag h200-now --out "$OUT" 2>&1 | tail -14
    ;;
  first_use)
    step first_use
    python3 bench/gpu_first_use.py --json "$OUT/first-use-examples.json" 2>&1 | grep -E "PASS|FAIL"  # both curves, fresh install
    python3 bench/make_chain_keys.py --power 17 --curves bn128 --no-check --out $KEYS 2>&1 | tail -2
    python3 bench/gpu_first_use.py --zkey $KEYS/chain17-bn128/circuit.zkey --wtns $KEYS/chain17-bn128/witness.wtns \
      --json "$OUT/first-use.json"
    python3 bench/make_chain_keys.py --power 19 --curves bn128 --no-check --out $KEYS 2>&1 | tail -1
    for p in 17 19; do for b in cpu cuda auto cpu cuda auto; do
      /usr/bin/time -f "2^$p $b wall %e s, peak RSS %M KiB" python3 -m snarkd prove --backend $b --timings \
        $KEYS/chain$p-bn128/circuit.zkey $KEYS/chain$p-bn128/witness.wtns /tmp/p-$b.json /tmp/q-$b.json 2>&1 | \
        grep -E "wall|msm_h|total|backend" | tr '\n' ' '; echo
    done; done
    ;;
  aggregate)
    step aggregate
    python3 bench/aggregate.py --n 1024 8192 --curves bn128 bls12381 --backend cuda --out "$OUT/aggregate-h200.json"
    python3 bench/aggregate.py --n 8192 --curves bn128 --backend cpu --out "$OUT/aggregate-h200.json"
    ;;
  engine)
    step engine
    [ -f $KEYS/chain20-bn128/circuit.zkey ] || python3 bench/make_chain_keys.py --power 20 --curves bn128 --no-check --out $KEYS 2>&1 | tail -1
    args=(run --key-dir $KEYS/chain20-bn128 --device-sets 0 --j 16 --threads 4 --fin 4 --wpd 2 --n-per-device 96)
    engine() {  # $1: label, $2: tree; keeps only the summary JSON (the machine returns 8 files at most)
      (cd "$2" && PYTHONPATH=$PWD/src python3 bench/multi_gpu.py "${args[@]}" --out /tmp/engine-$1 2>&1 | grep -E "s_per_proof" | tail -1)
      cp /tmp/engine-$1/multi_gpu.json "$OUT/engine-$1.json"
    }
    if [ -d .old/src ]; then engine old .old; fi
    engine new .
    if [ -d .old/src ]; then engine old2 .old; fi
    ;;
  daemon)
    step daemon
    [ -f $KEYS/chain20-bn128/circuit.zkey ] || python3 bench/make_chain_keys.py --power 20 --curves bn128 --no-check --out $KEYS 2>&1 | tail -1
    python3 bench/daemon_gpu.py --key-dir $KEYS/chain20-bn128 --devices ${DEVICES:-0} --j ${JS:-1,4,16,32} \
      --out "$OUT/daemon" 2>&1 | tail -12
    ;;
  daemon2)
    step daemon2
    [ -f $KEYS/chain20-bn128/circuit.zkey ] || python3 bench/make_chain_keys.py --power 20 --curves bn128 --no-check --out $KEYS 2>&1 | tail -1
    python3 bench/daemon_gpu.py --key-dir $KEYS/chain20-bn128 --devices 0,1 --j ${JS2:-32} --synthesis 24 --count 192 \
      --out "$OUT/daemon2" 2>&1 | tail -6
    ;;
  doctor)
    step doctor
    python3 -m snarkd doctor 2>&1 | tee "$OUT/doctor.txt" | tail -20
    ;;
  pack)  # everything under $OUT as one file (the machine returns 8 files at most)
    step pack
    (cd "$OUT" && tar czf /tmp/results.tgz . && find . -mindepth 1 -delete && mv /tmp/results.tgz .)
    ;;
  key24)
    step key24
    python3 bench/make_chain_keys.py --power 24 --curves bn128 --only key --out $KEYS > /tmp/key24-setup.log 2>&1 &
    KEY_PID=$!
    python3 bench/make_chain_keys.py --power 24 --curves bn128 --only witness --out $KEYS > /tmp/key24-wtns.log 2>&1 &
    WTNS_PID=$!
    ;;
  gate)
    step gate
    if python3 bench/gpu_gate.py "${FLAGS[@]}" >> "$OUT/gate.log" 2>&1; then echo "gate passed"; else echo "gate FAILED"; fi
    tail -3 "$OUT/gate.log"
    ;;
  round2|round3)  # the same timings; round 3's default: the NTT's radix-2 passes beside the default
    step $s
    if [ $s = round2 ]; then variants=${VARIANTS-} radix=${NTT_RADIX-}; else variants=${VARIANTS-} radix=${NTT_RADIX-1}; fi
    python3 bench/gpu.py "${FLAGS[@]}" --curves bn254,bls12_381 --min 20 --max 24 --step 4 --what "${WHAT-ntt,h,g1,g2}" \
      --g2-max 20 --table-c 0 --reps 5 --tag h200-r${s#round} --out "$OUT" --ntt-radix "$radix" \
      --variants "$variants" --variant-curves "${VARIANT_CURVES-bn254,bls12_381}" 2>&1 | tail -80
    ;;
  large_stream)
    step large_stream
    wait_key24
    if [ -f $KEYS/chain24-bn128/circuit.zkey ] && [ -f $KEYS/chain24-bn128/witness.wtns ]; then
      python3 bench/large_proof.py --key-dir $KEYS/chain24-bn128 --out "$OUT/large-stream" --n1 2 --n2 2 \
        --gpu-budget 12GiB 2>&1 | grep -v '^\[.*{"latency"' | tail -8
    fi
    ;;
  ceiling)
    step ceiling
    python3 bench/gpu_ceiling.py --json "$OUT/gpu-ceiling.json" 2>&1 | tail -12
    ;;
  ncu)
    step ncu
    NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
    if [ -z "$NCU" ]; then echo "no ncu on this machine"; else
      "$NCU" --kernel-name g1_accum_range --launch-count 1 --section SpeedOfLight --section ComputeWorkloadAnalysis \
        --section WarpStateStats --section Occupancy --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis \
        python3 bench/gpu.py --curves bn254 --min 22 --max 22 --what g1 --g2-max 0 --reps 1 --tag ncu --out /tmp/ncu \
        > "$OUT/ncu-g1-accum.txt" 2>&1
      grep -E "Throughput|Pipe|Stall|Occupancy|Registers|Issue|Executed Ipc|Warp Cycles|L1|L2|DRAM" "$OUT/ncu-g1-accum.txt" | head -60
    fi
    ;;
  large)
    step large
    wait_key24
    cat /tmp/key24-setup.log /tmp/key24-wtns.log | tee "$OUT/key24.log"
    step large_proof
    if [ -f $KEYS/chain24-bn128/circuit.zkey ] && [ -f $KEYS/chain24-bn128/witness.wtns ]; then
      python3 bench/large_proof.py "${FLAGS[@]}" --key-dir $KEYS/chain24-bn128 --out "$OUT/large" --n1 ${N1:-3} --n2 ${N2:-4} ${LARGE_ARGS:-} 2>&1 | tail -30
    fi
    ;;
  cluster)
    step cluster
    [ -f $KEYS/chain20-bn128/circuit.zkey ] || python3 bench/make_chain_keys.py --power 20 --curves bn128 --no-check --out $KEYS 2>&1 | tail -1
    python3 -c "import ray; print('ray', ray.__version__)" || { echo "ray is not installed: carry its wheels in .whl/"; exit 3; }
    python3 bench/cluster_gpu.py --key-dir $KEYS/chain20-bn128 --j ${JS:-32} --count ${COUNT:-384} --out "$OUT" 2>&1 | \
      grep -v network_util | tail -16
    ;;
  *) echo "unknown step $s"; exit 2 ;;
  esac
done
step done
