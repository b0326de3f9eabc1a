#!/bin/bash
cd /work/wit31
echo "== S load $(cat /proc/loadavg)"
/usr/bin/time -f "snarkjs wall %e user %U sys %S" /work/main/node_modules/.bin/snarkjs wtns calculate S/circuit.wasm S/input.json /tmp/wit31-sha-ref.wtns 2>&1
SNARKD_WASM_CACHE=/work/wit31/cache PYTHONPATH=/work/wt-wit31/src /usr/bin/time -f "TIME wall %e user %U sys %S maxrss %M KB" /work/main/.venv/bin/snarkd witness --engine native --compile --timings --quiet S/circuit.wasm S/input.json /tmp/wit31-sha.wtns 2>&1
cmp /tmp/wit31-sha.wtns /tmp/wit31-sha-ref.wtns && echo "wtns equal to snarkjs's"
/usr/bin/time -f "snarkjs wall %e user %U sys %S" /work/main/node_modules/.bin/snarkjs wtns calculate S/circuit.wasm S/input.json /tmp/wit31-sha-ref2.wtns 2>&1
echo "== end load $(cat /proc/loadavg)"
