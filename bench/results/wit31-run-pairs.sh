#!/bin/bash
# Round 31: the RSA verifier's witness as a whole process (`snarkd witness`, CPU medians by wait4, alternated):
# base (main's tree, the lead's -O3 library of main's translator), this branch's full tier (-O3) and fast tier (-Og),
# the interpreter (no library), and `snarkjs wtns calculate` (its one run, the 3x bound's unit); then each .wtns
# compared with snarkjs's. W* are copies of /tmp/s12/W under /work/wit31 (Wb: its .wso; Wn: this branch's
# `--compile` (both tiers, full at the end); Wf: `--compile-tier fast`; Wi: none).
set -e
N=${N:-15}
cd /work/wit31
PY=/work/main/.venv/bin/python
S=/work/main/.venv/bin/snarkd
B=/tmp/wit31-base/src
T=/work/wt-wit31/src
J=/work/main/node_modules/.bin/snarkjs
echo "load $(cat /proc/loadavg)"
$PY /work/wt-wit31/bench/paired_cpu.py $N \
  "env PYTHONPATH=$B $S witness --engine native --quiet Wb/circuit.wasm Wb/inputs-90.json /tmp/wit31-b.wtns" \
  "env PYTHONPATH=$T $S witness --engine native --quiet Wn/circuit.wasm Wn/inputs-90.json /tmp/wit31-n.wtns" \
  "env PYTHONPATH=$T $S witness --engine native --quiet Wf/circuit.wasm Wf/inputs-90.json /tmp/wit31-f.wtns" \
  "env PYTHONPATH=$T SNARKD_WITNESS_COMPILED=off $S witness --engine native --quiet Wi/circuit.wasm Wi/inputs-90.json /tmp/wit31-i.wtns" \
  "$J wtns calculate W/circuit.wasm W/inputs-90.json /tmp/wit31-s.wtns"
echo "load $(cat /proc/loadavg)"
for s in b n f i; do cmp /tmp/wit31-$s.wtns /tmp/wit31-s.wtns && echo "$s: .wtns equal to snarkjs's"; done
for d in b:Wb:$B n:Wn:$T f:Wf:$T; do IFS=: read s w p <<< "$d"
  env PYTHONPATH=$p $S witness --engine native --quiet --timings $w/circuit.wasm $w/inputs-90.json /tmp/wit31-t.wtns 2>&1 | grep -q "witness (compiled)" && echo "$s: the compiled library ran"
done
