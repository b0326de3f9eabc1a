#!/bin/bash
# the fast tier's flags with a few cheap extras, direct g++ (the wit31 translator's RSA source, the kept -Og PCH),
# alternated; /usr/bin/time counts cc1plus, as and ld
cd /work/wit31
N=/work/wt-wit31/src/snarkd/native
F="-std=c++17 -fPIC -shared -fno-strict-aliasing -fvisibility=hidden -pthread -Og -DSNARKD_WC_HUGE="
for r in 1 2; do
  for v in base ggc pipe both; do
    case $v in base) X="";; ggc) X="--param ggc-min-expand=100 --param ggc-min-heapsize=262144";; pipe) X="-pipe";;
      both) X="-pipe --param ggc-min-expand=100 --param ggc-min-heapsize=262144";; esac
    /usr/bin/time -f "$r $v %e s wall %U user %S sys %M KB" g++ $F $X -Ipchg -I$N src/rsa31.cpp -o /tmp/wit31-x.so
  done
  echo "load $(cat /proc/loadavg)"
done
