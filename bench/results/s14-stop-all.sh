# the fourteenth stop's local measurements, one after the other (the lead alone on the VM)
cd /work/main
N=21 bash bench/results/s14-stop-witness.sh > bench/results/s14-stop-witness.txt 2>&1
bash bench/results/s14-stop-pairs.sh > bench/results/s14-stop-pairs.txt 2>&1
