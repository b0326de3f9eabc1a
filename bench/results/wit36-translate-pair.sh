#!/bin/bash
# Round 36: the RSA verifier's translation to C++ (translate_units, one unit; fresh processes, its first call, so
# numpy's import in the roll search is counted as in a first build), BASE's translator and NEW's alternated, ROUNDS
# rounds: wall and process CPU of the call, and the source's SHA-256 (equal: the same C++).
W=${W:-/tmp/wit36/W}; PY=/work/main/.venv/bin/python
for r in $(seq 1 ${ROUNDS:-7}); do
  for side in base new; do
    tree=${BASE:-/tmp/wit36-base}; [ $side = new ] && tree=${NEW:-/work/wt-wit36}
    PYTHONPATH=$tree/src $PY -c "
import time, hashlib, sys
from snarkd.witness.compiled.translate import translate_units
b = open('$W/circuit.wasm', 'rb').read()
t, c = time.perf_counter(), time.process_time()
src, _ = translate_units(b, 1)
print('$side round $r: translate %.3f s wall %.3f s CPU, source %s, load %s' % (time.perf_counter() - t,
      time.process_time() - c, hashlib.sha256(src[0].encode()).hexdigest()[:16], open('/proc/loadavg').read().split()[0]))"
  done
done
