#!/bin/bash
# Round 31's measurements of the compiled library's build at each level (the exact commands; M = /work/main, main
# 76d7639's translator; T = the wit31 tree, whose translator lets -DSNARKD_WC_HUGE= put the huge functions at the
# command line's level: "nh"), each build a fresh child (wall, CPU with its compilers, peak RSS), alternated; then the
# in-process run of the libraries kept (rate, CPU per witness). R = bench/work/rsa-bn128.
M=/work/main; T=/work/wt-wit31; R=$M/bench/work/rsa-bn128; PY=$M/.venv/bin/python
$PY $T/bench/witness_compile_pair.py $R/circuit.wasm 2 O0=$M:opt=-O0,units=1 Og=$M:opt=-Og,units=1 \
  O1=$M:opt=-O1,units=1 O2=$M:opt=-O2,units=1 O3=$M:opt=-O3,units=1 --keep /work/wit31/olev/rsa \
  --json wit31-olevels-rsa.json > wit31-olevels-rsa.txt 2>&1
$PY $T/bench/witness_compile_pair.py $R/circuit.wasm 2 "O0nh=$T:opt=-O0 -DSNARKD_WC_HUGE=,units=1" \
  "Ognh=$T:opt=-Og -DSNARKD_WC_HUGE=,units=1" "O1nh=$T:opt=-O1 -DSNARKD_WC_HUGE=,units=1" "Og=$T:opt=-Og,units=1" \
  "O3=$T:opt=-O3,units=1" --keep /work/wit31/olev/rsa-nh --json wit31-olevels-nohuge-rsa.json \
  > wit31-olevels-nohuge-rsa.txt 2>&1
# (rate: libraries copied aside from the --keep folders after round 0)
PYTHONPATH=$M/src $PY $T/bench/witness_compiled_rate.py rate $R/circuit.wasm --any-translator --wso O0=O0.wasm.wso \
  --wso Og=Og.wasm.wso --wso O1=O1.wasm.wso --wso O2=O2.wasm.wso --inputs $R/inputs-{1..4}.json --rounds 3 \
  --json wit31-inprocess-olevels-rsa.json
PYTHONPATH=$T/src $PY $T/bench/witness_compiled_rate.py rate $R/circuit.wasm --any-translator \
  --wso O0nh=O0nh.wasm.wso --wso Ognh=Ognh.wasm.wso --wso O1nh=O1nh.wasm.wso --inputs $R/inputs-{1..4}.json \
  --rounds 3 --json wit31-inprocess-nohuge-rsa.json
# the product's tiers (Wf: `--compile-tier fast`, Wn: `--compile`, both from wit31-cli-*.sh)
PYTHONPATH=$T/src $PY $T/bench/witness_compiled_rate.py rate $R/circuit.wasm --wso fast=Wf/circuit.wasm.wso \
  --wso full=Wn/circuit.wasm.wso --inputs $R/inputs-{1..8}.json --rounds 3 --json wit31-inprocess-tiers-rsa.json
# the field functions out of line (what a prebuilt object would do to the compile; one pair, direct g++, the main
# translator's source at -O1: natcopy = the native folder with nat_Fr_* marked noinline)
F="-std=c++17 -fPIC -shared -fno-strict-aliasing -fvisibility=hidden -pthread -O1 -DSNARKD_WC_HUGE="
/usr/bin/time -f "A-noinline-nat O1nh %e s %U+%S %M KB" g++ $F -Inatcopy src/rsa.cpp -o /tmp/wit31-rsaA.so
/usr/bin/time -f "ref O1nh %e s %U+%S %M KB" g++ $F -I$T/src/snarkd/native src/rsa.cpp -o /tmp/wit31-rsaR.so
# where -Og's time goes with the PCH (the wit31 translator's source)
F="-std=c++17 -fPIC -fno-strict-aliasing -fvisibility=hidden -pthread -Og -DSNARKD_WC_HUGE="
g++ $F -I$T/src/snarkd/native -x c++-header $T/src/snarkd/native/witness/compiled_runtime.hpp \
  -o pchg/witness/compiled_runtime.hpp.gch
g++ $F -shared -Winvalid-pch -Ipchg -I$T/src/snarkd/native -ftime-report src/rsa31.cpp -o /tmp/wit31-og.so \
  2> wit31-ftime-report-og-pch-rsa.txt
