# issue 35's 2^20 service path: this tree without yield points (no lanes: one priority level), this tree with them
# (a lane of priority 10 configured, every job in the default lane), and e2acc30, in turns
B=.devcarry/before35; K=/tmp/keys/chain20-bn128
(cd $B && SNARKD_BUILD_JOBS=8 python3 setup.py -q build_ext --inplace >/tmp/bb.log 2>&1; echo before-build rc $? >>/tmp/bb.log) &
bash bench/stream.sh build key20; wait; tail -1 /tmp/bb.log
while [ ! -f $K/.done ]; do sleep 2; done
dg(){ echo "== dg $2 $(date +%T)"; timeout 100 python3 $1/bench/daemon_gpu.py --key-dir $K --j 32 --count 192 --warm 32 --only $3 --out $OUT/dg-$2 "${@:4}" 2>&1 | grep -E "^(engine|daemon) " | cut -c1-160; }
LY='lanes={"urgent": {"priority": 10}}'
for t in 1 2 3; do dg . a$t engine; dg . y$t engine --engine-setting "$LY"; dg $B b$t engine; done
dg . a4 daemon; dg $B b4 daemon
