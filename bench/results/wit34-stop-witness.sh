#!/bin/bash
# Round 34: bench/results/s13-stop-witness.sh's measurement with this branch (T) and main (B, /tmp/wit34-base: main
# 1ca88df with its native extensions) side by side: the RSA verifier's witness as a whole process (`snarkd witness`,
# CPU medians by wait4, alternated): the full tier (-O3 library) on this branch and on main, circom's C++ generator
# (built once: /tmp/wit22/C-cpp), the fast tier, the interpreter (no library) and `snarkjs wtns calculate`; each
# .wtns compared with snarkjs's. Then SHA-256 (its replayed program) against circom's C++
# (bench/witness_vs_circom_cpp.py, --side main=B). Copies of /tmp/s13b/{Wn,Wf,Wi} in /tmp/wit34 (Wn: full tier,
# Wf: fast tier, Wi: no library); SHA-256's folder a copy of bench/work/sha256-bn128 (and -cpp) in /tmp/wit34/work.
N=${N:-15}
cd /tmp/wit34
PY=/work/main/.venv/bin/python
S=/work/main/.venv/bin/snarkd
T=/work/wt-wit34/src
B=/tmp/wit34-base/src
J=/work/main/node_modules/.bin/snarkjs
CPP=/tmp/wit22/C-cpp/circuit_cpp/circuit
echo "load $(cat /proc/loadavg)"
$PY /work/wt-wit34/bench/paired_cpu.py $N \
  "env PYTHONPATH=$T $S witness --engine native --quiet Wn/circuit.wasm Wn/inputs-90.json /tmp/wit34w-n.wtns" \
  "$CPP Wn/inputs-90.json /tmp/wit34w-c.wtns" \
  "env PYTHONPATH=$B $S witness --engine native --quiet Wn/circuit.wasm Wn/inputs-90.json /tmp/wit34w-b.wtns" \
  "env PYTHONPATH=$T $S witness --engine native --quiet Wf/circuit.wasm Wf/inputs-90.json /tmp/wit34w-f.wtns" \
  "env PYTHONPATH=$T SNARKD_WITNESS_COMPILED=off $S witness --engine native --quiet Wi/circuit.wasm Wi/inputs-90.json /tmp/wit34w-i.wtns" \
  "$J wtns calculate Wn/circuit.wasm Wn/inputs-90.json /tmp/wit34w-s.wtns"
echo "load $(cat /proc/loadavg)"
for s in n c b f i; do cmp /tmp/wit34w-$s.wtns /tmp/wit34w-s.wtns && echo "$s: .wtns equal to snarkjs's"; done
for d in n:Wn f:Wf; do IFS=: read s w <<< "$d"
  env PYTHONPATH=$T $S witness --engine native --quiet --timings $w/circuit.wasm $w/inputs-90.json /tmp/wit34w-t.wtns 2>&1 | grep -q "witness (compiled)" && echo "$s: the compiled library ran"
done
cd /work/wt-wit34 && PYTHONPATH=src $PY bench/witness_vs_circom_cpp.py --dir /tmp/wit34/work/sha256-bn128 --runs ${SHA_RUNS:-15} --snarkjs --side main=$B --json ${SHA_JSON:-bench/results/wit34-stop-witness-vs-circom-cpp-sha256.json} 2>&1 | tail -8
