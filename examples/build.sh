#!/usr/bin/env bash
# Rebuilds the bundled example keys with circom2 + snarkjs (npm ci first).
# The outputs are committed, so users never need Node.js to try snarkd.
set -euo pipefail
cd "$(dirname "$0")"
BIN=../node_modules/.bin
# circom2 by its package: .bin/circom2 may be circom2-208's (circom 2.0.8, a test oracle) as well
CIRCOM=../node_modules/circom2/cli.js
for curve in bn128 bls12381; do
  d=chain-$curve
  ptau_curve=$curve; [ $curve = bls12381 ] && ptau_curve=bls12-381
  rm -rf "$d" && mkdir -p "$d" && cp chain.circom "$d/"
  (cd "$d"
   node ../$CIRCOM chain.circom --r1cs --wasm -p $curve -o . >/dev/null
   mv chain_js/chain.wasm . && rm -rf chain_js
   node ../$BIN/snarkjs powersoftau new $ptau_curve 7 p0.ptau >/dev/null
   node ../$BIN/snarkjs powersoftau contribute p0.ptau p1.ptau --name=example -e="snarkd example $curve" >/dev/null
   node ../$BIN/snarkjs powersoftau prepare phase2 p1.ptau pf.ptau >/dev/null
   node ../$BIN/snarkjs groth16 setup chain.r1cs pf.ptau c0.zkey >/dev/null
   node ../$BIN/snarkjs zkey contribute c0.zkey chain.zkey --name=example -e="snarkd example zkey $curve" >/dev/null
   node ../$BIN/snarkjs zkey export verificationkey chain.zkey vk.json >/dev/null
   echo '{"x": "3", "k": "7"}' > input.json
   node ../$BIN/snarkjs wtns calculate chain.wasm input.json chain.wtns
   rm -f p0.ptau p1.ptau pf.ptau c0.zkey)
done
