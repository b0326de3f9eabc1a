#!/bin/bash
# Round 35 (issue 37): the RSA verifier's whole `snarkd witness` process against circom's C++ generator, CPU medians
# by wait4, alternated (bench/paired_cpu.py), on the fifteenth session's VM (2-vCPU Xeon, Emerald Rapids). Folders
# under /tmp/wit35/s15 are copies of /tmp/s15/W (the lead's kit: a .wprog recorded on inputs-1..4, so inputs-90 runs
# on the compiled library): Wf this branch's fast tier, Wn its full tier, Wb main's fast tier (base tree
# /tmp/wit35-base), Wbn main's full tier; each library built by its tree. Every .wtns compared with snarkjs's.
N=${N:-41}
cd /tmp/wit35/s15
S=/work/main/.venv/bin/snarkd
J=/work/main/node_modules/.bin/snarkjs
T=${T:-/work/wt-wit35/src}; B=${B:-/tmp/wit35-base/src}
CPP=/work/main/bench/work/rsa-bn128-cpp/circuit_cpp/circuit
export PYTHONDONTWRITEBYTECODE=1
echo "load $(cat /proc/loadavg)"
/work/main/.venv/bin/python /work/wt-wit35/bench/paired_cpu.py $N \
  "env PYTHONPATH=$T $S witness --engine native --quiet Wf/circuit.wasm Wf/inputs-90.json /tmp/wit35/p-f.wtns" \
  "$CPP Wf/inputs-90.json /tmp/wit35/p-c.wtns" \
  "env PYTHONPATH=$B $S witness --engine native --quiet Wb/circuit.wasm Wb/inputs-90.json /tmp/wit35/p-b.wtns" \
  "env PYTHONPATH=$T $S witness --engine native --quiet Wn/circuit.wasm Wn/inputs-90.json /tmp/wit35/p-n.wtns" \
  "env PYTHONPATH=$B $S witness --engine native --quiet Wbn/circuit.wasm Wbn/inputs-90.json /tmp/wit35/p-bn.wtns"
echo "load $(cat /proc/loadavg)"
$J wtns calculate Wf/circuit.wasm Wf/inputs-90.json /tmp/wit35/p-s.wtns
for s in f c b n bn; do cmp /tmp/wit35/p-$s.wtns /tmp/wit35/p-s.wtns && echo "$s: .wtns equal to snarkjs's"; done
