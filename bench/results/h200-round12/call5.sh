# issue 35's 2^20 service path, taken apart: A this tree; N this tree without the full NTT tables (FULL_TABLES_SHARE
# raised so no domain takes them, as before 6f5db82/159c852); K = N with e2acc30's kernels (its cubins under this
# tree's source hash, [gpus] cubin_dir); B e2acc30. Engine only, j = 32, in turns.
B=.devcarry/before35; K=/tmp/keys/chain20-bn128; R=/tmp/r; mkdir -p $R
(cd $B && SNARKD_BUILD_JOBS=8 python3 setup.py -q build_ext --inplace >/tmp/bb.log 2>&1; echo before-build rc $? >>/tmp/bb.log) &
bash bench/stream.sh build key20; wait; tail -1 /tmp/bb.log
rm -rf /tmp/N; mkdir /tmp/N; cp -a src bench setup.py pyproject.toml /tmp/N/
sed -i 's/^FULL_TABLES_SHARE = 64 /FULL_TABLES_SHARE = 1 << 40 /' /tmp/N/src/snarkd/gpu/ntt.py; grep -n "^FULL_TABLES_SHARE" /tmp/N/src/snarkd/gpu/ntt.py
H=$(PYTHONPATH=src python3 -c "from snarkd.gpu.module import source_hash; print(source_hash())"); echo hash $H
mkdir -p /tmp/oldk; for c in bn254 bls12_381; do cp $B/src/snarkd/gpu/kernels/kernels-$c-sm90-*.cubin /tmp/oldk/kernels-$c-sm90-$H.cubin; done; ls -la /tmp/oldk
while [ ! -f $K/.done ]; do sleep 2; done
dg(){ echo "== dg $2 $(date +%T)"; timeout 100 python3 $1/bench/daemon_gpu.py --key-dir $K --j 32 --count 192 --warm 32 --only engine --out $R/$2 "${@:3}" 2>&1 | grep -E "^(engine|daemon) |Error|error" | cut -c1-160; }
for t in 1 2 3; do dg . A$t; dg /tmp/N N$t; dg /tmp/N K$t --engine-setting 'cubin_dir="/tmp/oldk"'; dg $B B$t; done
cd $R && for d in */; do cp $d/daemon-gpu.json ${d%/}.json 2>/dev/null; done; tar czf $OUT/call5.tgz *.json
