#!/bin/bash
# the final pairs of round 32 (cpu35), base /tmp/cpu35-base (main f0cb370) against /work/wt-cpu35
cd /work/wt-cpu35
PY=/work/main/.venv/bin/python; SN=/work/main/.venv/bin/snarkd; R=bench/results
p() { echo "$SN prove -q /work/main/bench/work/$1/circuit.zkey /work/main/bench/work/$1/witness.wtns /tmp/cpu35-$2.json /tmp/cpu35-$2p.json"; }
$PY bench/paired_cpu.py 15 "env PYTHONPATH=/tmp/cpu35-base/src $(p sha256-bn128 a)" "env PYTHONPATH=/work/wt-cpu35/src $(p sha256-bn128 b)" "env SNARKD_CPU_HUGE_PAGES=off PYTHONPATH=/work/wt-cpu35/src $(p sha256-bn128 c)" > $R/cpu35-paired-sha256-final.txt 2>&1
$PY bench/paired_cpu.py 9 "env PYTHONPATH=/tmp/cpu35-base/src $(p chain16-bn128 d)" "env PYTHONPATH=/work/wt-cpu35/src $(p chain16-bn128 e)" > $R/cpu35-paired-chain16.txt 2>&1
$PY bench/paired_cpu.py 9 "env SNARKD_CPU_IFMA=off PYTHONPATH=/tmp/cpu35-base/src $(p sha256-bn128 f)" "env SNARKD_CPU_IFMA=off PYTHONPATH=/work/wt-cpu35/src $(p sha256-bn128 g)" > $R/cpu35-paired-sha256-ifma-off.txt 2>&1
$PY bench/paired_cpu.py 3 "env PYTHONPATH=/tmp/cpu35-base/src $(p chain20-bn128 h)" "env PYTHONPATH=/work/wt-cpu35/src $(p chain20-bn128 i)" > $R/cpu35-paired-chain20.txt 2>&1
for x in b c e g i; do case $x in b|c|g) d=sha256-bn128;; e) d=chain16-bn128;; i) d=chain20-bn128;; esac
  echo "$x $d $(node_modules/.bin/snarkjs groth16 verify /work/main/bench/work/$d/vk.json /tmp/cpu35-${x}p.json /tmp/cpu35-$x.json 2>&1 | tail -1)"; done > $R/cpu35-final-verify.txt
