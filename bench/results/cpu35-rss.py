import os, subprocess, sys, time
# usage: cpu35-rss.py TREE HUGE -- RSS samples of one snarkd prove (ms since start, VmRSS MiB), every ~0.5 ms
tree, hp = sys.argv[1], sys.argv[2]
Z = "/work/main/bench/work/sha256-bn128"
env = dict(os.environ, PYTHONPATH=tree + "/src", SNARKD_CPU_HUGE_PAGES=hp)
t0 = time.perf_counter()
p = subprocess.Popen(["/work/main/.venv/bin/snarkd", "prove", "--timings", f"{Z}/circuit.zkey", f"{Z}/witness.wtns", "/tmp/r1.json", "/tmp/r2.json"], env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
samples = []
while p.poll() is None:
    try:
        with open(f"/proc/{p.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS"):
                    samples.append(((time.perf_counter() - t0) * 1e3, int(line.split()[1]) / 1024))
    except OSError:
        break
    time.sleep(0.0005)
err = p.stderr.read().decode()
print(err.strip().splitlines()[-1][:400] if err else "")
last = -1
for t, r in samples:
    if abs(r - last) >= 1.0:
        print(f"{t:7.1f} ms {r:6.1f} MiB")
        last = r
print("max", max(r for _, r in samples))
