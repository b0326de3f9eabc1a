# round 36 (cpu38) paired sets: base = /tmp/cpu38-base (main 1ca88df), cpu38 = /work/wt-cpu38 (this branch).
# usage: bash bench/results/cpu38-pairs.sh SET   (each SET writes bench/results/cpu38-paired-SET.txt)
cd /work/wt-cpu38
S=/work/main/.venv/bin/snarkd
PY=/work/main/.venv/bin/python
P="$PY bench/paired_cpu.py"
E=bench/results/cpu38-entry.py
W=/work/main/bench/work
pair() {  # rounds dir out [prefix...]: base vs cpu38, the console script
  n=$1 d=$W/$2 out=bench/results/cpu38-paired-$3.txt; shift 3
  { cat /proc/loadavg; $P $n "$* env PYTHONPATH=/tmp/cpu38-base/src $S prove -q $d/circuit.zkey $d/witness.wtns /tmp/cpu38-a.json /tmp/cpu38-ap.json" \
        "$* env PYTHONPATH=/work/wt-cpu38/src $S prove -q $d/circuit.zkey $d/witness.wtns /tmp/cpu38-b.json /tmp/cpu38-bp.json"; cat /proc/loadavg; } > $out 2>&1
  node_modules/.bin/snarkjs groth16 verify $d/vk.json /tmp/cpu38-bp.json /tmp/cpu38-b.json 2>&1 | tail -1 >> $out
}
heads() {  # rounds dir out [prefix...]: cpu38 with its head start off vs on (round 34's overlap on in both)
  n=$1 d=$W/$2 out=bench/results/cpu38-paired-$3.txt; shift 3
  { cat /proc/loadavg; $P $n "$* env PYTHONPATH=/work/wt-cpu38/src $PY $E off prove -q $d/circuit.zkey $d/witness.wtns /tmp/cpu38-a.json /tmp/cpu38-ap.json" \
        "$* env PYTHONPATH=/work/wt-cpu38/src $PY $E on prove -q $d/circuit.zkey $d/witness.wtns /tmp/cpu38-b.json /tmp/cpu38-bp.json"; cat /proc/loadavg; } > $out 2>&1
  node_modules/.bin/snarkjs groth16 verify $d/vk.json /tmp/cpu38-bp.json /tmp/cpu38-b.json 2>&1 | tail -1 >> $out
}
prefault() {  # rounds dir out [prefix...]: cpu38's head start without its H-section prefault vs with it
  n=$1 d=$W/$2 out=bench/results/cpu38-paired-$3.txt; shift 3
  { cat /proc/loadavg; $P $n "$* env PYTHONPATH=/work/wt-cpu38/src $PY $E noprefault prove -q $d/circuit.zkey $d/witness.wtns /tmp/cpu38-a.json /tmp/cpu38-ap.json" \
        "$* env PYTHONPATH=/work/wt-cpu38/src $PY $E on prove -q $d/circuit.zkey $d/witness.wtns /tmp/cpu38-b.json /tmp/cpu38-bp.json"; cat /proc/loadavg; } > $out 2>&1
  node_modules/.bin/snarkjs groth16 verify $d/vk.json /tmp/cpu38-bp.json /tmp/cpu38-b.json 2>&1 | tail -1 >> $out
}
case $1 in
  sha256-rt) pair 21 sha256-bn128 sha256-rt chrt -f 50 ;;
  sha256) pair 21 sha256-bn128 sha256 ;;
  sha256-heads-rt) heads 21 sha256-bn128 sha256-heads-rt chrt -f 50 ;;
  sha256-ifma-off-rt) pair 11 sha256-bn128 sha256-ifma-off-rt chrt -f 50 env SNARKD_CPU_IFMA=off ;;
  chain16) pair 9 chain16-bn128 chain16 ;;
  chain20) pair 3 chain20-bn128 chain20 ;;
  # the final build (after the head start's importlib change): more rounds
  sha256-heads-rt-61) heads 61 sha256-bn128 sha256-heads-rt-61 chrt -f 50 ;;
  sha256-rt-final) pair 31 sha256-bn128 sha256-rt-final chrt -f 50 ;;
  chain20-5) pair 5 chain20-bn128 chain20-5 ;;
  sha256-prefault-rt) prefault 41 sha256-bn128 sha256-prefault-rt chrt -f 50 ;;
  sha256-rt-prefault-build) pair 31 sha256-bn128 sha256-rt-prefault-build chrt -f 50 ;;
  sha256-rt-stop) pair 31 sha256-bn128 sha256-rt-stop chrt -f 50 ;;  # the final build, after the prefault revert
  chain16-rt) pair 9 chain16-bn128 chain16-rt chrt -f 50 ;;
  chain15-bls) pair 7 chain15-bls12381 chain15-bls ;;
esac
