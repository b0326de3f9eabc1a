# runs.py ROUNDS RUNS name... : alternate the harness exes, each round RUNS runs on each of in1..4; CPU ms medians
import subprocess,sys,statistics,hashlib
R=int(sys.argv[1]);N=int(sys.argv[2]);names=sys.argv[3:]
res={n:[] for n in names};dig={}
for r in range(R):
    for n in (names if r%2==0 else names[::-1]):
        for k in (1,2,3,4):
            out=subprocess.run(["/tmp/w33/b/exe_"+n,"/tmp/w33/in%d.bin"%k,"/tmp/w33/b/%s-%d.wtns"%(n,k),str(N)],capture_output=True,text=True,check=True).stdout
            res[n]+=[float(l.split()[3]) for l in out.splitlines() if l.startswith("run ")][1:]
            dig.setdefault(k,set()).add(hashlib.sha256(open("/tmp/w33/b/%s-%d.wtns"%(n,k),"rb").read()).hexdigest())
for n in names:
    v=sorted(res[n]);print("%-8s median %.2f ms  q1 %.2f  min %.2f  (n=%d)"%(n,statistics.median(v),v[len(v)//4],v[0],len(v)))
print("witnesses identical across exes:",all(len(s)==1 for s in dig.values()))
