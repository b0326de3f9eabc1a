#!/bin/bash
# -Og with the kept PCH, GCC's collector thresholds default vs raised, direct g++, 4 more alternations
cd /work/wit31
N=/work/wt-wit31/src/snarkd/native
F="-std=c++17 -fPIC -shared -fno-strict-aliasing -fvisibility=hidden -pthread -Og -DSNARKD_WC_HUGE="
G="--param ggc-min-expand=100 --param ggc-min-heapsize=262144"
for r in 1 2 3 4; do
  if [ $((r % 2)) = 1 ]; then order="base ggc"; else order="ggc base"; fi
  for v in $order; do
    X=$([ $v = ggc ] && echo "$G")
    /usr/bin/time -f "$r $v %e s wall %U user %S sys %M KB" g++ $F $X -Ipchg -I$N src/rsa31.cpp -o /tmp/wit31-x.so
  done
  echo "load $(cat /proc/loadavg)"
done
