#!/bin/bash
# the product's path: `snarkd witness --compile` (both tiers) on a fresh copy, then on a second fresh copy (the PCH
# kept by the first's full tier now in the cache): each tier's time as the CLI says it, the whole command's by time
cd /work/wit31
for d in Wn Wn2; do
  echo "== $d load $(cat /proc/loadavg)"
  SNARKD_WASM_CACHE=/work/wit31/cache PYTHONPATH=/work/wt-wit31/src /usr/bin/time -f "TIME wall %e user %U sys %S maxrss %M KB" /work/main/.venv/bin/snarkd witness --engine native --compile --timings --quiet $d/circuit.wasm $d/inputs-90.json /tmp/wit31-$d-90.wtns 2>&1
  cmp /tmp/wit31-$d-90.wtns /work/wit31/ref-90.wtns && echo "wtns equal to snarkjs's"
done
echo "== end load $(cat /proc/loadavg)"
