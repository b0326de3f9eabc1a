# Issue 34's other bounds on this tree (start-up heap frozen): SHA-256 and the 2^20 chain from inputs vs from a
# witness (j = 32, three rounds each), the streamed 2^24 key under a 12 GiB budget with lanes.
RO=$OUT; export OUT=/tmp/r; mkdir -p $OUT
timeout 580 bash bench/stream.sh build key20 key24bn shakey inputs chaininputs lanes24s 2>&1 | grep -v "^\s*$" | grep -v "note:\|HostFn\|~~~\|warning:\|interp.hpp" | tail -40
tar czf $RO/call9.tgz -C /tmp/r .
