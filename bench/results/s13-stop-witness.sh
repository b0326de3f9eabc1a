#!/bin/bash
# The thirteenth session's stop (main with rounds 31 + 32): the RSA verifier's witness as a whole process (`snarkd
# witness`, CPU medians by wait4, alternated): the full tier (-O3 library), the fast tier (-Og), the interpreter
# (no library), circom's C++ generator (`circom --c` + make, built once: /tmp/wit22/C-cpp) and `snarkjs wtns calculate`;
# each .wtns compared with snarkjs's. Then SHA-256 (its replayed program) against circom's C++ (bench/witness_vs_circom_cpp.py).
# W*: copies of /tmp/s12/W under /tmp/s13b (Wn: --compile-tier full; Wf: --compile-tier fast; Wi: no library).
N=${N:-15}
cd /tmp/s13b
PY=/work/main/.venv/bin/python
S=/work/main/.venv/bin/snarkd
T=/work/main/src
J=/work/main/node_modules/.bin/snarkjs
CPP=/tmp/wit22/C-cpp/circuit_cpp/circuit
echo "load $(cat /proc/loadavg)"
$PY /work/main/bench/paired_cpu.py $N \
  "env PYTHONPATH=$T $S witness --engine native --quiet Wn/circuit.wasm Wn/inputs-90.json /tmp/s13w-n.wtns" \
  "$CPP W/inputs-90.json /tmp/s13w-c.wtns" \
  "env PYTHONPATH=$T $S witness --engine native --quiet Wf/circuit.wasm Wf/inputs-90.json /tmp/s13w-f.wtns" \
  "env PYTHONPATH=$T SNARKD_WITNESS_COMPILED=off $S witness --engine native --quiet Wi/circuit.wasm Wi/inputs-90.json /tmp/s13w-i.wtns" \
  "$J wtns calculate W/circuit.wasm W/inputs-90.json /tmp/s13w-s.wtns"
echo "load $(cat /proc/loadavg)"
for s in n c f i; do cmp /tmp/s13w-$s.wtns /tmp/s13w-s.wtns && echo "$s: .wtns equal to snarkjs's"; done
for d in n:Wn f:Wf; do IFS=: read s w <<< "$d"
  env PYTHONPATH=$T $S witness --engine native --quiet --timings $w/circuit.wasm $w/inputs-90.json /tmp/s13w-t.wtns 2>&1 | grep -q "witness (compiled)" && echo "$s: the compiled library ran"
done
cd /work/main && PYTHONPATH=src $PY bench/witness_vs_circom_cpp.py --dir bench/work/sha256-bn128 --runs 15 --snarkjs --json bench/results/s13-stop-witness-vs-circom-cpp-sha256.json 2>&1 | tail -6
