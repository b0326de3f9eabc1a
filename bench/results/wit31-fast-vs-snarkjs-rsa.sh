#!/bin/bash
# The fast tier's time to a usable library against snarkjs's one run, alternated (ROUNDS rounds): `snarkjs wtns
# calculate`, then `snarkd witness --compile-tier fast` on a fresh copy of /tmp/s12/W (the -Og PCH kept in the cache
# by an earlier full build; CACHE=an empty folder: none), the stderr line giving the library's build wall and compiler CPU, GNU time the whole
# command's; the load before each round.
cd /work/wit31
S=/work/main/.venv/bin/snarkd
J=/work/main/node_modules/.bin/snarkjs
for r in $(seq 1 ${ROUNDS:-3}); do
  echo "== round $r load $(cat /proc/loadavg)"
  /usr/bin/time -f "snarkjs wall %e user %U sys %S" $J wtns calculate W/circuit.wasm W/inputs-90.json /tmp/wit31-js.wtns 2>&1
  rm -rf Wr; cp -r W Wr; rm -f Wr/circuit.wasm.wso
  SNARKD_WASM_CACHE=${CACHE:-/work/wit31/cache} PYTHONPATH=/work/wt-wit31/src /usr/bin/time -f "snarkd TIME wall %e user %U sys %S" $S witness --engine native --compile-tier fast --quiet Wr/circuit.wasm Wr/inputs-90.json /tmp/wit31-Wr.wtns 2>&1
  cmp /tmp/wit31-Wr.wtns /tmp/wit31-js.wtns && echo "wtns equal to snarkjs's"
done
echo "== end load $(cat /proc/loadavg)"
