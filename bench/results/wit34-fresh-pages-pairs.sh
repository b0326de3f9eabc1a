#!/bin/bash
# Round 34: the fresh-pages cut (file_trust.fresh_pages: a one-shot's large buffers in huge pages populated at once:
# the compiled run's witness block, a replay's frame, a witness program read whole) against the tree before it
# (/tmp/wit34/t_head: wit34 at "cli/witness: SimpleNamespace ...") and main (/tmp/wit34-base), paired CPU medians by
# wait4, SHA-256 (its replayed program, a copy of bench/work/sha256-bn128 in /tmp/wit34/work) then the RSA verifier.
N=${N:-41}
cd /tmp/wit34
S=/work/main/.venv/bin/snarkd
for A in "witness --engine native --quiet work/sha256-bn128/circuit.wasm work/sha256-bn128/input.json /tmp/wit34/sha.wtns" \
         "witness --engine native --quiet Wn/circuit.wasm Wn/inputs-90.json /tmp/wit34/o.wtns"; do
  /work/main/.venv/bin/python /work/wt-wit34/bench/paired_cpu.py $N "env PYTHONPATH=/tmp/wit34-base/src $S $A" \
    "env PYTHONPATH=/tmp/wit34/t_head/src $S $A" "env PYTHONPATH=/work/wt-wit34/src $S $A"
done
