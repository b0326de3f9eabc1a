#!/usr/bin/env bash
# Round 38 (issue 39, cpu40): the paired sets, base (main d32056b in /tmp/cpu40-base) against this branch
# (/work/wt-cpu40), each command under chrt -f 50 (round 34's quiet-machine method). bash bench/results/cpu40-pairs.sh SET
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=/work/main/.venv/bin/python
SNARKD=/work/main/.venv/bin/snarkd
B=/tmp/cpu40-base/src; N=/work/wt-cpu40/src
W=/work/main/bench/work
out() { echo "bench/results/cpu40-paired-$1${SUFFIX:-}.txt"; }
pair() {  # name rounds dir ifma
  local name=$1 rounds=$2 d=$W/$3 ifma=$4
  { echo "# $(date -u) load $(cut -d' ' -f1-3 /proc/loadavg); $d, IFMA $ifma, A = base, B = cpu40"
    $PY bench/paired_cpu.py "$rounds" \
      "chrt -f 50 env SNARKD_CPU_IFMA=$ifma PYTHONPATH=$B $SNARKD prove -q $d/circuit.zkey $d/witness.wtns /tmp/cpu40/pa.json /tmp/cpu40/pua.json" \
      "chrt -f 50 env SNARKD_CPU_IFMA=$ifma PYTHONPATH=$N $SNARKD prove -q $d/circuit.zkey $d/witness.wtns /tmp/cpu40/pb.json /tmp/cpu40/pub.json"
    echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# cpu40's last proof verified by snarkjs: $(node_modules/.bin/snarkjs groth16 verify $d/vk.json /tmp/cpu40/pub.json /tmp/cpu40/pb.json 2>&1 | grep -c 'OK!')"
  } 2>&1 | tee "$(out "$name")"
}
case "$1" in
  bls-off) pair bls-off "${ROUNDS:-11}" chain15-bls12381 off ;;
  chain16-off) pair chain16-off "${ROUNDS:-11}" chain16-bn128 off ;;
  sha256-off) pair sha256-off "${ROUNDS:-11}" sha256-bn128 off ;;
  sha256-on) pair sha256-on "${ROUNDS:-21}" sha256-bn128 auto ;;
  chain20-off) pair chain20-off "${ROUNDS:-3}" chain20-bn128 off ;;
  *) echo "sets: bls-off chain16-off sha256-off sha256-on chain20-off"; exit 2 ;;
esac
