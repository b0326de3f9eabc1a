B=.devcarry/before35; K=/tmp/keys/chain20-bn128
(cd $B && SNARKD_BUILD_JOBS=8 python3 setup.py -q build_ext --inplace >/tmp/bb.log 2>&1; echo before-build rc $? >>/tmp/bb.log) &
bash bench/stream.sh build key20 shakey; wait; tail -2 /tmp/bb.log
while [ ! -f $K/.done ]; do sleep 2; done
dg(){ echo "== dg $2 $(date +%T)"; timeout 150 python3 $1/bench/daemon_gpu.py --key-dir $K --j 1,32 --count 192 --count-j1 40 --warm 32 --out $OUT/dg-$2 2>&1 | tail -2 | cut -c1-700; }
gp(){ echo "== gp $2 $(date +%T)"; timeout 150 python3 $1/bench/gpu.py --min 18 --max 22 --step 2 --reps 5 --g2-max 22 --tag $2 --out $OUT/gpu-$2 2>&1 | tail -2 | cut -c1-300; }
dg . after; dg $B before; gp . after; gp $B before
LANES_COUNT=384 LANES_COUNT_J1=80 bash bench/stream.sh lanes20 inputs
