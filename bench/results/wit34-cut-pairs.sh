#!/bin/bash
# Round 34 (issue 37): each cut of `snarkd witness`'s whole process against main (1ca88df), paired CPU medians by
# wait4 (bench/paired_cpu.py), the RSA verifier's full-tier library (a copy of /tmp/s13b/Wn in /tmp/wit34/Wn).
# Trees: /tmp/wit34-base (main), /tmp/wit34/t_hash (OpenSSL's sha256/hmac_new called directly, no hashlib/hmac
# imports), t_types (no types import in cli/witness.py), t_zero (the compiled run's witness buffer in huge pages),
# and this branch (all of them); each tree's src/ with main's native extensions (the cuts are Python only).
N=${N:-41}
cd /tmp/wit34
S=/work/main/.venv/bin/snarkd
A="witness --engine native --quiet Wn/circuit.wasm Wn/inputs-90.json /tmp/wit34/o.wtns"
/work/main/.venv/bin/python /work/wt-wit34/bench/paired_cpu.py $N "env PYTHONPATH=/tmp/wit34-base/src $S $A" \
  "env PYTHONPATH=/tmp/wit34/t_hash/src $S $A" "env PYTHONPATH=/tmp/wit34/t_types/src $S $A" \
  "env PYTHONPATH=/tmp/wit34/t_zero/src $S $A" "env PYTHONPATH=/work/wt-wit34/src $S $A"
