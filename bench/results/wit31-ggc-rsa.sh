#!/bin/bash
# GCC's collector thresholds raised (--param ggc-min-expand=100 --param ggc-min-heapsize=262144): the same library
# (byte for byte), its CPU and peak RSS, at -Og (PCH) and -O3 (no PCH), alternated
cd /work/wit31
N=/work/wt-wit31/src/snarkd/native
B="-std=c++17 -fPIC -shared -fno-strict-aliasing -fvisibility=hidden -pthread"
G="--param ggc-min-expand=100 --param ggc-min-heapsize=262144"
for r in 1 2; do
  /usr/bin/time -f "$r O3 %e s wall %U user %S sys %M KB" g++ $B -O3 -I$N src/rsa31.cpp -o /tmp/wit31-o3a.so
  /usr/bin/time -f "$r O3+ggc %e s wall %U user %S sys %M KB" g++ $B -O3 $G -I$N src/rsa31.cpp -o /tmp/wit31-o3b.so
  echo "load $(cat /proc/loadavg)"
done
cmp /tmp/wit31-o3a.so /tmp/wit31-o3b.so && echo "O3: the same library byte for byte"
g++ $B -Og -DSNARKD_WC_HUGE= -Ipchg -I$N src/rsa31.cpp -o /tmp/wit31-oga.so
g++ $B -Og -DSNARKD_WC_HUGE= $G -Ipchg -I$N src/rsa31.cpp -o /tmp/wit31-ogb.so
cmp /tmp/wit31-oga.so /tmp/wit31-ogb.so && echo "Og: the same library byte for byte"
