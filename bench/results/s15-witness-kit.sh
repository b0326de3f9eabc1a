#!/bin/bash
# The fifteenth session's witness kit (a new VM: 2-vCPU Intel Xeon, Emerald Rapids, AVX-512 IFMA): circom's C++
# generator of the RSA verifier and of SHA-256 (bench/witness_vs_circom_cpp.py builds CIRCUIT-cpp beside each folder:
# `circom2 --c`, `make`), and /tmp/s15/W: the RSA verifier's wasm and inputs with a .wprog recorded by the interpreter
# on inputs-1..4 (other signatures than the timed inputs-90: the program is marked value-dependent, so inputs-90 runs
# on the compiled library where one is kept, never on a replay of its own path).
set -e
cd /work/main
PY=/work/main/.venv/bin/python
export PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/work/main/src
for d in rsa-bn128 sha256-bn128; do
  $PY bench/witness_vs_circom_cpp.py --dir bench/work/$d --runs 7 --json /tmp/s15-kit-$d.json 2>&1 | tail -2
done
mkdir -p /tmp/s15/W
cp bench/work/rsa-bn128/circuit.wasm bench/work/rsa-bn128/inputs-*.json /tmp/s15/W/
rm -f /tmp/s15/W/circuit.wasm.wprog
for i in 1 2 3 4; do
  SNARKD_WITNESS_COMPILED=off .venv/bin/snarkd witness --engine native --quiet /tmp/s15/W/circuit.wasm /tmp/s15/W/inputs-$i.json /tmp/s15-kit.wtns
  node_modules/.bin/snarkjs wtns calculate /tmp/s15/W/circuit.wasm /tmp/s15/W/inputs-$i.json /tmp/s15-kit-ref.wtns
  cmp /tmp/s15-kit.wtns /tmp/s15-kit-ref.wtns && echo "inputs-$i: equal to snarkjs's"
done
ls -la /tmp/s15/W/circuit.wasm.wprog bench/work/rsa-bn128-cpp/circuit_cpp/circuit bench/work/sha256-bn128-cpp/circuit_cpp/circuit
