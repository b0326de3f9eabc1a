#!/bin/bash
# Round 29: the product's request (NativeCalculator.calculate_bytes, bench/witness_compiled_rate.py threads
# --product) on the RSA verifier from N threads of one process: main's tree against this branch, each with and
# without a reused frame per thread (--frame: as a daemon passes its pooled page-locked frames where a GPU proves),
# alternated, REPS rounds. BASE: main's tree (built); B and W: folders with circuit.wasm, its value-dependent .wprog,
# inputs-*.json and circuit.wasm.wso built by main's and this branch's runtime. Writes OUT/wit29-threads-<side>-<rep>.json.
set -e
BASE=${BASE:-/tmp/wit29-base}; TREE=${TREE:-$(cd "$(dirname "$0")/../.." && pwd)}
W=${W:-/tmp/wit29/W}; B=${B:-/tmp/wit29/B}; OUT=${OUT:-/tmp/wit29/outp}
REPS=${REPS:-3}; RUNS=${RUNS:-8}; THREADS=${THREADS:-1,2,4,8}
PY=${PY:-/work/main/.venv/bin/python}
mkdir -p "$OUT"
IN=$(for i in $(seq 1 16); do echo -n "inputs-$i.json "; done)
for rep in $(seq 1 "$REPS"); do
  for side in base-frame kept-frame base-fresh kept-fresh; do
    case $side in base-*) src=$BASE/src; d=$B ;; *) src=$TREE/src; d=$W ;; esac
    case $side in *-frame) f=--frame ;; *) f= ;; esac
    echo "== $side rep $rep"
    (cd "$d" && PYTHONPATH=$src $PY "$TREE/bench/witness_compiled_rate.py" threads circuit.wasm --product $f \
      --inputs $IN --threads "$THREADS" --runs "$RUNS" --json "$OUT/wit29-threads-$side-$rep.json")
  done
done
