#!/bin/bash
# usage: cpu35-faults.sh ROUNDS CIRCUIT [IFMA]  -- per proof: tree user(s) sys(s) minor-faults maxrss(KiB) wall(s),
# the trees alternated (base; cpu35 with SNARKD_CPU_HUGE_PAGES=off; cpu35 with auto)
R=$1; C=$2; IFMA=${3:-auto}
Z=/work/main/bench/work/$C/circuit.zkey; W=/work/main/bench/work/$C/witness.wtns
for i in $(seq $R); do
  for v in "base:/tmp/cpu35-base:auto" "off:${TREE:-/work/wt-cpu35}:off" "on:${TREE:-/work/wt-cpu35}:auto"; do
    IFS=: read name tree hp <<< "$v"
    /usr/bin/time -f "$name %U %S %R %M %e" env PYTHONPATH=$tree/src SNARKD_CPU_HUGE_PAGES=$hp SNARKD_CPU_IFMA=$IFMA \
      /work/main/.venv/bin/snarkd prove -q $Z $W /tmp/cpu35-p-$name.json /tmp/cpu35-q-$name.json 2>&1 | tail -1
  done
done
