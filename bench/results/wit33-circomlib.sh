#!/bin/bash
# Round 33: the fast tier's rule on circomlib circuits from the tests (EdDSAPoseidonVerifier, Poseidon: D/circuit.wasm
# and D/input.json for D in $DIRS): the fast library of the base tree and of this one (each with its own kept
# precompiled runtime header) and this tree's full one built (bench/witness_compile_pair.py), then run in one process
# alternated (bench/witness_compiled_rate.py rate); then the product's `snarkd witness --compile-tier fast` on a fresh
# copy against `snarkjs wtns calculate` (the .wtns compared).
BASE=${BASE:-/tmp/wit33-base}; NEW=${NEW:-/work/wt-wit33}; PY=/work/main/.venv/bin/python
for D in ${DIRS:-/work/wit33/E /work/wit33/P}; do
  echo "== $D load $(cat /proc/loadavg)"
  K=$(mktemp -d /tmp/wit33-k.XXXX)
  $PY $NEW/bench/witness_compile_pair.py $D/circuit.wasm ${ROUNDS:-2} base=$BASE:tier=fast,units=1,cache_dir=/tmp/w33/cache-base \
    new=$NEW:tier=fast,units=1,cache_dir=/tmp/w33/cache-new full=$NEW:tier=full,units=1 --keep $K 2>&1 | grep -v "^round"
  PYTHONPATH=$NEW/src $PY $NEW/bench/witness_compiled_rate.py rate $D/circuit.wasm --any-translator --wso base-fast=$K/base.wasm.wso \
    --wso new-fast=$K/new.wasm.wso --wso full=$K/full.wasm.wso --inputs $D/input.json --rounds ${RATE_ROUNDS:-15} 2>&1 | tail -4
  rm -rf $K/W; mkdir $K/W; cp $D/circuit.wasm $K/W/
  /work/main/node_modules/.bin/snarkjs wtns calculate $D/circuit.wasm $D/input.json $K/js.wtns
  SNARKD_WASM_CACHE=/tmp/w33/cache-new PYTHONPATH=$NEW/src /work/main/.venv/bin/snarkd witness --engine native --compile-tier fast \
    --timings $K/W/circuit.wasm $D/input.json $K/out.wtns 2>&1 | grep -v "^$"
  cmp $K/out.wtns $K/js.wtns && echo "fast tier's .wtns equal to snarkjs's"
  rm -rf $K
done
echo "== end load $(cat /proc/loadavg)"
