#!/bin/bash
# The sixteenth stop's witness measurement (the new VM: 2-vCPU Intel Xeon, Emerald Rapids; the lead alone on it):
# the RSA verifier's witness as a whole process (`snarkd witness`, CPU medians by wait4, alternated): the fast tier
# (what `--compile` builds), the full tier (-O3), BASE's fast tier (its own library), circom's C++ generator
# (bench/work/rsa-bn128-cpp, built by s15-witness-kit.sh), the interpreter (no library) and `snarkjs wtns calculate`;
# each .wtns compared with snarkjs's. Then SHA-256 (its replayed program) against circom's C++
# (bench/witness_vs_circom_cpp.py). Folders: copies of /tmp/s15/W (the kit: its .wprog recorded on inputs-1..4, so
# inputs-90 runs on the compiled library).
N=${N:-41}
BASE=${BASE:-/tmp/s16-base}   # a checkout of the session's start (d32056b), native modules copied in
mkdir -p /tmp/s16stop && cd /tmp/s16stop
PY=/work/main/.venv/bin/python
S=/work/main/.venv/bin/snarkd
T=/work/main/src
B=$BASE/src
J=/work/main/node_modules/.bin/snarkjs
CPP=/work/main/bench/work/rsa-bn128-cpp/circuit_cpp/circuit
export PYTHONDONTWRITEBYTECODE=1
for d in Wf Wn Wi Wb; do mkdir -p $d; cp /tmp/s15/W/circuit.wasm /tmp/s15/W/inputs-1.json /tmp/s15/W/inputs-90.json /tmp/s15/W/circuit.wasm.wprog $d/; done
[ -f Wf/circuit.wasm.wso ] || /usr/bin/time -f "fast tier: wall %e s, cpu %U+%S" env PYTHONPATH=$T $S witness --engine native --compile Wf/circuit.wasm Wf/inputs-1.json /tmp/s16w.wtns 2>&1 | tail -2
[ -f Wn/circuit.wasm.wso ] || /usr/bin/time -f "full tier: wall %e s, cpu %U+%S" env PYTHONPATH=$T $S witness --engine native --compile-tier full Wn/circuit.wasm Wn/inputs-1.json /tmp/s16w.wtns 2>&1 | tail -2
[ -f Wb/circuit.wasm.wso ] || /usr/bin/time -f "base fast tier: wall %e s, cpu %U+%S" env PYTHONPATH=$B $S witness --engine native --compile Wb/circuit.wasm Wb/inputs-1.json /tmp/s16w.wtns 2>&1 | tail -2
echo "load $(cat /proc/loadavg)"
$PY /work/main/bench/paired_cpu.py $N \
  "env PYTHONPATH=$T $S witness --engine native --quiet Wf/circuit.wasm Wf/inputs-90.json /tmp/s16w-f.wtns" \
  "$CPP Wf/inputs-90.json /tmp/s16w-c.wtns" \
  "env PYTHONPATH=$T $S witness --engine native --quiet Wn/circuit.wasm Wn/inputs-90.json /tmp/s16w-n.wtns" \
  "env PYTHONPATH=$B $S witness --engine native --quiet Wb/circuit.wasm Wb/inputs-90.json /tmp/s16w-b.wtns" \
  "env PYTHONPATH=$T SNARKD_WITNESS_COMPILED=off $S witness --engine native --quiet Wi/circuit.wasm Wi/inputs-90.json /tmp/s16w-i.wtns" \
  "$J wtns calculate Wf/circuit.wasm Wf/inputs-90.json /tmp/s16w-s.wtns"
echo "load $(cat /proc/loadavg)"
for s in f c n b i; do cmp /tmp/s16w-$s.wtns /tmp/s16w-s.wtns && echo "$s: .wtns equal to snarkjs's"; done
cd /work/main && PYTHONPATH=src $PY bench/witness_vs_circom_cpp.py --dir bench/work/sha256-bn128 --runs ${SHA_RUNS:-15} --snarkjs --side base=$B --json bench/results/s16-stop-witness-vs-circom-cpp-sha256.json 2>&1 | tail -3
# The first build on an empty cache against one snarkjs run (round 33's command; base and this tree alternated).
NOPCH=1 ROUNDS=${FIRST_ROUNDS:-3} W=/tmp/s15/W BASE=$BASE NEW=/work/main bash bench/results/wit33-fast-vs-snarkjs-rsa.sh 2>&1 | grep -E "==|wall|equal|library"
