#!/bin/bash
# After the fast tier's GCC collector thresholds (compiled._flags): the product's `snarkd witness --compile` on a
# fresh copy of /tmp/s12/W (the PCH's key changed with the flags: none kept for it yet; the full tier makes it), then
# `--compile-tier fast` on two more fresh copies (the PCH used), each beside a `snarkjs wtns calculate` run
# (wall and CPU by GNU time), the .wtns compared with snarkjs's.
cd /work/wit31
S=/work/main/.venv/bin/snarkd
J=/work/main/node_modules/.bin/snarkjs
js() { /usr/bin/time -f "snarkjs wall %e user %U sys %S" $J wtns calculate W/circuit.wasm W/inputs-90.json /tmp/wit31-js.wtns 2>&1; }
for d in Wg1 Wg2 Wg3; do rm -rf $d; cp -r W $d; rm -f $d/circuit.wasm.wso; done
for d in Wg1 Wg2 Wg3; do
  tier=$([ $d = Wg1 ] && echo both || echo fast)
  echo "== $d --compile-tier $tier load $(cat /proc/loadavg)"
  js
  SNARKD_WASM_CACHE=/work/wit31/cache PYTHONPATH=/work/wt-wit31/src /usr/bin/time -f "TIME wall %e user %U sys %S maxrss %M KB" $S witness --engine native --compile-tier $tier --timings --quiet $d/circuit.wasm $d/inputs-90.json /tmp/wit31-$d.wtns 2>&1
  cmp /tmp/wit31-$d.wtns /tmp/wit31-js.wtns && echo "wtns equal to snarkjs's"
  js
done
echo "== end load $(cat /proc/loadavg)"
