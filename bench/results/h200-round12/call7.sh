# this tree (groth16_blind with the GIL released; StageQueue waking one putter; no yield points without lanes)
# against e2acc30: the engine at j = 32 three turns, the daemon two. Everything under /tmp/r, one tarball back.
RO=$OUT; export OUT=/tmp/r; mkdir -p $OUT
B=.devcarry/before35; K=/tmp/keys/chain20-bn128
(cd $B && SNARKD_BUILD_JOBS=8 python3 setup.py -q build_ext --inplace >/tmp/bb.log 2>&1; echo before-build rc $? >>/tmp/bb.log) &
bash bench/stream.sh build key20; wait; tail -1 /tmp/bb.log
while [ ! -f $K/.done ]; do sleep 2; done
dg(){ echo "== dg $2 $(date +%T)"; timeout 100 python3 $1/bench/daemon_gpu.py --key-dir $K --j 32 --count 192 --warm 32 --only $3 --out $OUT/dg-$2 2>&1 | grep -E "^(engine|daemon) |Error" | cut -c1-160; }
for t in 1 2 3; do dg . G$t engine; dg $B B$t engine; done
for t in 1 2; do dg . Gd$t daemon; dg $B Bd$t daemon; done
tar czf $RO/call7.tgz -C /tmp/r .
