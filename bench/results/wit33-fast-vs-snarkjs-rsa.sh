#!/bin/bash
# Round 33: the time to a usable library against snarkjs's one run, alternated (ROUNDS rounds): `snarkjs wtns
# calculate`, then `snarkd witness --engine native --compile-tier fast` on a fresh copy of the RSA verifier (W: a copy
# of /tmp/s12/W without its library) from the base tree and from this one, each with its precompiled runtime header
# kept (CACHE_BASE / CACHE_NEW: made by one full build of that tree first; NOPCH=1: empty caches, the first build
# ever); GNU time gives the whole command, the stderr line the library's build wall and compiler CPU.
W=${W:-/work/wit33/W}
S=/work/main/.venv/bin/snarkd
J=/work/main/node_modules/.bin/snarkjs
BASE=${BASE:-/tmp/wit33-base}; NEW=${NEW:-/work/wt-wit33}
T=$(mktemp -d /tmp/wit33-cmd.XXXX)
for r in $(seq 1 ${ROUNDS:-3}); do
  echo "== round $r load $(cat /proc/loadavg)"
  /usr/bin/time -f "snarkjs wall %e user %U sys %S" $J wtns calculate $W/circuit.wasm $W/inputs-90.json $T/js.wtns 2>&1
  for side in base new; do
    tree=$BASE; cache=${CACHE_BASE:-/tmp/w33/cache-base}
    [ $side = new ] && { tree=$NEW; cache=${CACHE_NEW:-/tmp/w33/cache-new}; }
    [ -n "$NOPCH" ] && { cache=$T/empty-$side-$r; mkdir -p $cache; }
    rm -rf $T/W; mkdir $T/W; cp $W/circuit.wasm $W/circuit.wasm.wprog $W/inputs-90.json $T/W/
    SNARKD_WASM_CACHE=$cache PYTHONPATH=$tree/src /usr/bin/time -f "$side fast TIME wall %e user %U sys %S" \
      $S witness --engine native --compile-tier fast $T/W/circuit.wasm $T/W/inputs-90.json $T/out.wtns 2>&1 | grep -v "^$"
    cmp $T/out.wtns $T/js.wtns && echo "$side: wtns equal to snarkjs's"
  done
done
echo "== end load $(cat /proc/loadavg)"
rm -rf $T
