# F: this tree (no yield points without lanes of two priorities; StageQueue waking one putter); A: F with
# 043671a's StageQueue (one condition for all); B: e2acc30. Engine j = 32 in turns, the daemon once each; then
# the whole tests/gpu and lanes20 on F. Everything under /tmp/r, one tarball back.
RO=$OUT; export OUT=/tmp/r; mkdir -p $OUT
B=.devcarry/before35; K=/tmp/keys/chain20-bn128
(cd $B && SNARKD_BUILD_JOBS=8 python3 setup.py -q build_ext --inplace >/tmp/bb.log 2>&1; echo before-build rc $? >>/tmp/bb.log) &
bash bench/stream.sh build key20; wait; tail -1 /tmp/bb.log
rm -rf /tmp/A; mkdir /tmp/A; cp -a src bench setup.py pyproject.toml /tmp/A/; cp .devcarry/stage_queue_043671a.py /tmp/A/src/snarkd/engine/stage_queue.py
while [ ! -f $K/.done ]; do sleep 2; done
dg(){ echo "== dg $2 $(date +%T)"; timeout 100 python3 $1/bench/daemon_gpu.py --key-dir $K --j 32 --count 192 --warm 32 --only $3 --out $OUT/dg-$2 2>&1 | grep -E "^(engine|daemon) |Error" | cut -c1-160; }
for t in 1 2 3; do dg . F$t engine; dg /tmp/A A$t engine; dg $B B$t engine; done
dg . Fd daemon; dg $B Bd daemon
bash bench/stream.sh tests
LANES_COUNT=384 LANES_COUNT_J1=80 timeout 150 bash bench/stream.sh lanes20 2>&1 | tail -3
tar czf $RO/call6.tgz -C /tmp/r .
