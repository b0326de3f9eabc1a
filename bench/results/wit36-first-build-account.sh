#!/bin/bash
# Round 36: where a first fast build's time goes (the RSA verifier; TREE's translator and headers; CPU by GNU time):
# the Python side (imports, validate, translation), then the compiler's steps on the generated unit alone: the
# runtime header parsed (-fsyntax-only on a file that includes it only), the unit parsed, the unit compiled against
# the runtime object's declarations (the installed or kept object's case), the unit with the runtime inline at -O3
# (a first build with no object), the runtime object itself (-O3), the link; ROUNDS rounds, alternated.
W=${W:-/tmp/wit36/W}; TREE=${TREE:-/work/wt-wit36}; PY=/work/main/.venv/bin/python
T=$(mktemp -d /tmp/wit36-acct.XXXX); N=$TREE/src/snarkd/native
F="-std=c++17 -fPIC -fno-strict-aliasing -fvisibility=hidden -pthread -I$N"
FAST="-Og -DSNARKD_WC_HUGE= -DSNARKD_WC_RUNTIME_O3"
echo '#include "witness/compiled_runtime.hpp"' > $T/hdr.cpp
PYTHONPATH=$TREE/src $PY - $W/circuit.wasm $T/unit.cpp <<'PYEOF'
import sys, time
t0 = time.perf_counter()
from snarkd.witness.compiled.translate import translate_units
from snarkd.witness.wasm_runtime import validate_module
t1 = time.perf_counter()
b = open(sys.argv[1], "rb").read()
validate_module(b, "circuit.wasm"); t2 = time.perf_counter()
src, _ = translate_units(b, 1); t3 = time.perf_counter()
open(sys.argv[2], "w").write(src[0])
print("python: imports %.3f s, validate %.3f s, translate %.3f s (%d lines, %d bytes)"
      % (t1 - t0, t2 - t1, t3 - t2, src[0].count("\n"), len(src[0])))
PYEOF
t(){ /usr/bin/time -f "$1: wall %e user %U sys %S rss %MkB" "${@:2}" 2>&1 | tail -1; }
for r in $(seq 1 ${ROUNDS:-2}); do
  echo "== round $r load $(cut -d' ' -f1-3 /proc/loadavg)"
  t header-parse c++ $F $FAST -DSNARKD_WC_RUNTIME_EXTERN -fsyntax-only $T/hdr.cpp
  t unit-parse c++ $F $FAST -DSNARKD_WC_RUNTIME_EXTERN -fsyntax-only $T/unit.cpp
  t unit-with-object c++ $F $FAST -DSNARKD_WC_RUNTIME_EXTERN -c $T/unit.cpp -o $T/ext.o
  t unit-runtime-inline c++ $F $FAST -c $T/unit.cpp -o $T/inl.o
  t runtime-object c++ $F -O3 -DSNARKD_WC_RUNTIME_OBJECT -c $T/hdr.cpp -o $T/rto.o
  t link c++ $F -shared $T/rto.o $T/ext.o -o $T/ext.so
done
echo "== end load $(cut -d' ' -f1-3 /proc/loadavg)"
rm -rf $T
