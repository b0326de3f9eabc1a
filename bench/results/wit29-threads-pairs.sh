#!/bin/bash
# Round 29: the compiled RSA witness from N threads of one process (bench/witness_compiled_rate.py threads),
# main's runtime (a fresh reservation per run) against this branch's (the memory and the stack kept per copy), and
# this branch with the MADV_DONTNEED reset (a bench-only build), alternated, REPS rounds.
# BASE: main's tree (built), W: a folder with the RSA verifier's circuit.wasm, .wprog and inputs-*.json and this
# branch's library, B: the same with main's library, V: this branch's library built with
# -DSNARKD_WC_BENCH_RESET_DONTNEED. SIDES: which of base kept dontneed (wit29-threads-stack/ had a fourth,
# pthreadstack, against a stack kept per copy: that change and its bench macro were dropped, not measurable).
# Writes OUT/wit29-threads-<side>-<rep>.json.
set -e
BASE=${BASE:-/tmp/wit29-base}; TREE=${TREE:-$(cd "$(dirname "$0")/../.." && pwd)}
W=${W:-/tmp/wit29/W}; B=${B:-/tmp/wit29/B}; V=${V:-/tmp/wit29/V}; OUT=${OUT:-/tmp/wit29/out}
SIDES=${SIDES:-base kept dontneed}
REPS=${REPS:-3}; RUNS=${RUNS:-6}; THREADS=${THREADS:-1,2,4,8}
PY=${PY:-/work/main/.venv/bin/python}
mkdir -p "$OUT"
IN=$(for i in $(seq 1 16); do echo -n "inputs-$i.json "; done)
for rep in $(seq 1 "$REPS"); do
  for side in $SIDES; do
    case $side in
      base) src=$BASE/src; d=$B; wso=$B/circuit.wasm.wso ;;
      kept) src=$TREE/src; d=$W; wso=$W/circuit.wasm.wso ;;
      dontneed) src=$TREE/src; d=$V; wso=$(ls $V/*.wso | head -1) ;;
    esac
    echo "== $side rep $rep"
    (cd "$d" && PYTHONPATH=$src $PY "$TREE/bench/witness_compiled_rate.py" threads circuit.wasm --wso "$wso" \
      --inputs $IN --threads "$THREADS" --runs "$RUNS" --json "$OUT/wit29-threads-$side-$rep.json")
  done
done
