#!/bin/bash
# The stop's tree (rounds 31 + 32 merged): the fast tier's time to a usable library against snarkjs's one run, alternated
# (ROUNDS rounds): `snarkjs wtns calculate`, then `snarkd witness --compile-tier fast` on a fresh copy of W (the RSA
# verifier, /tmp/s12/W without its library; the runtime's PCH kept in CACHE by the first, untimed, full build: round 31),
# the stderr line giving the library's build wall and compiler CPU, GNU time the whole command's; then the full tier
# alone the same way; the load before each round.
cd /tmp/s13b
S=/work/main/.venv/bin/snarkd
J=/work/main/node_modules/.bin/snarkjs
export SNARKD_WASM_CACHE=/tmp/s13b/cache PYTHONPATH=/work/main/src
[ -d cache ] || { rm -rf W0; cp -r W W0; $S witness --engine native --compile-tier full --quiet W0/circuit.wasm W0/inputs-90.json /tmp/s13b-0.wtns; }
for r in $(seq 1 ${ROUNDS:-3}); do
  echo "== round $r load $(cat /proc/loadavg)"
  /usr/bin/time -f "snarkjs wall %e user %U sys %S" $J wtns calculate W/circuit.wasm W/inputs-90.json /tmp/s13b-js.wtns 2>&1
  for tier in fast full; do
    rm -rf Wr; cp -r W Wr
    /usr/bin/time -f "snarkd $tier TIME wall %e user %U sys %S" $S witness --engine native --compile-tier $tier Wr/circuit.wasm Wr/inputs-90.json /tmp/s13b-Wr.wtns 2>&1 | grep -v "^$"
    cmp /tmp/s13b-Wr.wtns /tmp/s13b-js.wtns && echo "$tier: wtns equal to snarkjs's"
  done
done
echo "== end load $(cat /proc/loadavg)"
