B=.devcarry/before35; K=/tmp/keys/chain20-bn128
(cd $B && SNARKD_BUILD_JOBS=8 python3 setup.py -q build_ext --inplace >/tmp/bb.log 2>&1; echo before-build rc $? >>/tmp/bb.log) &
bash bench/stream.sh build key20; wait; tail -1 /tmp/bb.log
while [ ! -f $K/.done ]; do sleep 2; done
dg(){ echo "== dg $2 $(date +%T)"; timeout 100 python3 $1/bench/daemon_gpu.py --key-dir $K --j 32 --count 192 --warm 32 --only $3 --out $OUT/dg-$2 "${@:4}" 2>&1 | grep -E "^(engine|daemon) " | cut -c1-160; }
gp(){ echo "== gp $2 $(date +%T)"; timeout 60 python3 $1/bench/gpu.py --curves bn254 --what h,g1,prove --min 18 --max 22 --step 2 --reps 7 --tag $2 --out $OUT/gpu-$2 >/dev/null 2>&1; }
ln(){ echo "== lanes $1 $(date +%T)"; timeout 100 python3 bench/daemon_gpu.py --key-dir $K --j 32 --count 384 --count-j1 80 --warm 32 --urgent-every 0.2 --out $OUT/lanes-$1 "${@:2}" 2>&1 | tail -1 | cut -c1-300; }
S5='switch_interval = "5ms"'
dg . a1 both; dg . s1 daemon --daemon-setting "$S5"; dg $B b1 both; gp . a1; gp $B b1
ln s5 --daemon-setting "$S5"; ln d05
dg . a2 daemon; dg . s2 daemon --daemon-setting "$S5"; dg $B b2 daemon; gp . a2; gp $B b2
