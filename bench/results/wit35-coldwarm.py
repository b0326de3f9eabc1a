"""Fresh-process probe: the compiled library's first run (cold) and a second run (warm) in one `snarkd witness`
process, per folder, alternated; process CPU (all threads) and wall around each run. Usage: ROUNDS DIR..."""
import os, sys, json, statistics, subprocess
if len(sys.argv) > 1 and sys.argv[1] == "--child":
    import time
    import snarkd.witness.compiled as wc
    orig = wc.CompiledProgram.run
    res = []
    def run(self, *a, **k):
        for _ in range(2):
            c, w = time.process_time(), time.perf_counter()
            r = orig(self, *a, **k)
            res.append(((time.process_time() - c) * 1e3, (time.perf_counter() - w) * 1e3))
        fd = int(os.environ['CW_FD']); os.write(fd, json.dumps(res).encode()); os.close(fd)
        return r
    wc.CompiledProgram.run = run
    from snarkd.cli import main
    d = sys.argv[2]
    try:
        sys.argv = ["snarkd", "witness", "--engine", "native", "--quiet", f"{d}/circuit.wasm", f"{d}/inputs-90.json", f"/tmp/wit35/cw-{os.path.basename(d)}.wtns"]; main()
    except SystemExit:
        pass
    os._exit(0)
rounds, dirs = int(sys.argv[1]), sys.argv[2:]
out = {d: [] for d in dirs}
for k in range(rounds):
    for d in (dirs if k % 2 == 0 else dirs[::-1]):
        r, w = os.pipe()
        p = subprocess.Popen([sys.executable, __file__, "--child", d], pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, 'CW_FD': str(w)})
        os.close(w)
        data = b""
        while chunk := os.read(r, 65536):
            data += chunk
        os.close(r); p.wait()
        out[d].append(json.loads(data))
for d in dirs:
    m = lambda i, j: statistics.median(x[i][j] for x in out[d])
    print(f"{d}: cold run CPU {m(0,0):6.2f} wall {m(0,1):6.2f}  warm run CPU {m(1,0):6.2f} wall {m(1,1):6.2f}")
