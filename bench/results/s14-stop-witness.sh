#!/bin/bash
# The fourteenth stop's witness measurement (main after rounds 33-34; the lead alone on the VM): the RSA verifier's
# witness as a whole process (`snarkd witness`, CPU medians by wait4, alternated): the fast tier (what `--compile`
# builds now: generated code -Og, runtime object -O3), the full tier (-O3), main 1ca88df's full tier (B:
# /tmp/wit33-base, its own library in Wb), circom's C++ generator (/tmp/wit22/C-cpp), the interpreter (no library)
# and `snarkjs wtns calculate`; each .wtns compared with snarkjs's. Then SHA-256 (its replayed program) against
# circom's C++ (bench/witness_vs_circom_cpp.py). Libraries built first in /tmp/s14/{Wf,Wn} by this tree.
N=${N:-21}
cd /tmp/s14
PY=/work/main/.venv/bin/python
S=/work/main/.venv/bin/snarkd
T=/work/main/src
B=/tmp/wit33-base/src
J=/work/main/node_modules/.bin/snarkjs
CPP=/tmp/wit22/C-cpp/circuit_cpp/circuit
export PYTHONDONTWRITEBYTECODE=1
# each folder's .wprog is /tmp/s12/W's (recorded on other signatures: value-dependent), so inputs-90 runs on the
# compiled library; a .wprog that recorded inputs-90's own path would replay it instead (the first run here did: 80 ms)
for d in Wf Wn Wi Wb; do cp /tmp/s12/W/circuit.wasm.wprog $d/; done
[ -f Wf/circuit.wasm.wso ] || /usr/bin/time -f "fast tier: wall %e s, cpu %U+%S" env PYTHONPATH=$T $S witness --engine native --compile Wf/circuit.wasm Wf/inputs-1.json /tmp/s14w.wtns 2>&1 | tail -2
[ -f Wn/circuit.wasm.wso ] || /usr/bin/time -f "full tier: wall %e s, cpu %U+%S" env PYTHONPATH=$T $S witness --engine native --compile-tier full Wn/circuit.wasm Wn/inputs-1.json /tmp/s14w.wtns 2>&1 | tail -2
[ -f Wi/circuit.wasm.wprog ] || env PYTHONPATH=$T $S witness --engine native Wi/circuit.wasm Wi/inputs-1.json /tmp/s14w.wtns
echo "load $(cat /proc/loadavg)"
$PY /work/main/bench/paired_cpu.py $N \
  "env PYTHONPATH=$T $S witness --engine native --quiet Wf/circuit.wasm Wf/inputs-90.json /tmp/s14w-f.wtns" \
  "$CPP Wf/inputs-90.json /tmp/s14w-c.wtns" \
  "env PYTHONPATH=$T $S witness --engine native --quiet Wn/circuit.wasm Wn/inputs-90.json /tmp/s14w-n.wtns" \
  "env PYTHONPATH=$B $S witness --engine native --quiet Wb/circuit.wasm Wb/inputs-90.json /tmp/s14w-b.wtns" \
  "env PYTHONPATH=$T SNARKD_WITNESS_COMPILED=off $S witness --engine native --quiet Wi/circuit.wasm Wi/inputs-90.json /tmp/s14w-i.wtns" \
  "$J wtns calculate Wf/circuit.wasm Wf/inputs-90.json /tmp/s14w-s.wtns"
echo "load $(cat /proc/loadavg)"
for s in f c n b i; do cmp /tmp/s14w-$s.wtns /tmp/s14w-s.wtns && echo "$s: .wtns equal to snarkjs's"; done
for d in f:Wf n:Wn; do IFS=: read s w <<< "$d"
  env PYTHONPATH=$T $S witness --engine native --quiet --timings $w/circuit.wasm $w/inputs-90.json /tmp/s14w-t.wtns 2>&1 | grep "witness (compiled)\|tier" | head -2
done
cd /work/main && PYTHONPATH=src $PY bench/witness_vs_circom_cpp.py --dir /tmp/s14/sha256-bn128 --runs ${SHA_RUNS:-15} --snarkjs --side main=$B --json bench/results/s14-stop-witness-vs-circom-cpp-sha256.json 2>&1 | tail -8
