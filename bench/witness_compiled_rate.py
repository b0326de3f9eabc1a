"""The compiled witness library in one process against circom's C++ generator as a whole process, and the cost of
building the library at each optimisation level.

    python bench/witness_compiled_rate.py build CIRCUIT.wasm --opt -O2 --opt -O3 [--curve bn128] [--out DIR]
    python bench/witness_compiled_rate.py rate CIRCUIT.wasm --wso NAME=LIB.wso ... --inputs IN1.json IN2.json ...
        [--cpp CIRCOM_CPP_BINARY] [--rounds R] [--json OUT.json]
    python bench/witness_compiled_rate.py threads CIRCUIT.wasm --wso LIB.wso --inputs IN1.json ... [--threads 1,2,4,8]
        [--runs R] [--json OUT.json]

build: translates and compiles the library once per level (--extra: more flags, an experiment) (snarkd.witness.compiled.build, the product's code), each
in a fresh child so that its compiler's CPU time and peak RSS (RUSAGE_CHILDREN of that child) are its own; the
libraries are written to DIR/circuit-O2.wasm.wso etc.

rate: each library loaded in this process (compiled.load: its tag and identity checked, then a memfd) and run on
every input, round after round, the libraries alternated; per witness the process CPU time of the run alone
(inputs prepared beforehand; the GIL-free run is on a thread of the library's own, so process_time counts it). With
--cpp, circom's C++ binary runs on the same inputs, alternated with the rounds, its CPU time from wait4 (a whole
process: its start, input.json, the run, the .wtns). The rate ratio is the binary's median over a library's. Every
library's witness is compared with the binary's .wtns (its values section), when --cpp is given.

threads: a daemon's synthesis workers in miniature: N threads of this process each run the library R times on
distinct inputs (thread t's run r takes input (t * R + r) mod K), side by side (the pool loads one copy per thread
running at once; a warm-up run per thread first, so copies are loaded before the timing). Per N: the process's
getrusage over the timed batch (user and sys CPU, minor faults) divided by the runs, each run's wall time (median),
and the throughput (runs over the batch's wall time). Every witness is compared with a single-threaded run's on the
same input. At N above the core count the wall is contended by design: CPU and sys per run are what compare.
--product: each run is the product's request instead (NativeCalculator.calculate_bytes on the input's dict: the
inputs prepared, the witness block mapped fresh per run, the library found beside the .wasm; --wso unused), as a
daemon's synthesis workers call it. --frame (with --product): each thread passes a frame of its own, reused run after
run, as the daemon's pooled page-locked frames are where a GPU proves (engine._witness_frame).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

BUILD_CHILD = r"""
import hashlib, json, resource, sys, time
from snarkd.witness import compiled
wasm, curve, opt, dest = sys.argv[1:5]
compiled.FLAGS = compiled.FLAGS + sys.argv[5:]  # --extra: an experiment's flags (the product's are FLAGS + opt)
data = open(wasm, "rb").read()
sha = hashlib.sha256(data).hexdigest()
info = compiled.build(data, sha, curve, [dest], opt=opt, name=wasm)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
info["children_cpu_s"] = round(r.ru_utime + r.ru_stime, 2)
info["children_peak_rss_mib"] = round(r.ru_maxrss / 1024, 1)
print(json.dumps(info))
"""


def build(args) -> int:
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for opt in args.opt:
        dest = os.path.join(args.out, f"circuit{opt}{''.join(args.extra)}.wasm.wso")
        if os.path.exists(dest):
            os.unlink(dest)
        got = subprocess.run([sys.executable, "-c", BUILD_CHILD, args.wasm, args.curve, opt, dest, *args.extra],
                             capture_output=True, text=True)
        if got.returncode:
            raise SystemExit(got.stderr[-3000:])
        info = json.loads(got.stdout)
        rows.append({"opt": opt, "extra": args.extra, **{k: info[k] for k in ("build_s", "build_cpu_s", "children_peak_rss_mib", "bytes",
                                                           "compiler_version", "path")}})
        print(f"{opt}: {info['build_cpu_s']} s compiler CPU, {info['build_s']} s wall, peak RSS "
              f"{info['children_peak_rss_mib']} MiB, {info['bytes']} bytes -> {dest}", flush=True)
    out = {"wasm": args.wasm, "load": open("/proc/loadavg").read().split()[:3], "builds": rows}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


def _cpp_cpu_ms(binary: str, inp: str, out: str) -> float:
    pid = os.fork()
    if pid == 0:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.execv(binary, [binary, inp, out])
    _, status, usage = os.wait4(pid, 0)
    if status:
        raise SystemExit(f"{binary} {inp}: exit status {status}")
    return (usage.ru_utime + usage.ru_stime) * 1e3


def _accept_its_sources(compiled, path: str) -> None:
    """--any-translator: libraries built by other trees' translators (their identity's source digest another tree's)
    loaded side by side in this process: the next load takes the digest its file records. Its HMAC tag (this user's
    key) is still checked; a bench's comparison of two trees' output only, never the product's path."""
    from snarkd.formats.checked_header import PREFIX, unpack

    with open(path, "rb") as fh:
        lead = fh.read(PREFIX.size)
        buf = lead + fh.read(PREFIX.unpack(lead)[2] + 4)
    digest = unpack(buf, compiled.MAGIC, compiled.VERSION, "compiled witness library", ValueError)[0]["identity"]["sources"]
    compiled._digest_sources = lambda deps, _d=digest: _d


def rate(args) -> int:
    from snarkd.witness import compiled
    from snarkd.witness import load_input_json
    from snarkd.witness.native import NativeCalculator

    wasm = args.wasm
    with open(wasm, "rb") as fh:
        sha = hashlib.sha256(fh.read()).hexdigest()
    calc = NativeCalculator(wasm, cache=False, strict=True)
    libs = {}
    for spec in args.wso:
        name, path = spec.split("=", 1)
        if args.any_translator:
            _accept_its_sources(compiled, path)
        libs[name] = compiled.load([path], sha, calc.curve)
        if libs[name] is None:
            raise SystemExit(f"{path}: no library")
    prepared = [[(q.hash, q.data) for q in calc.prepare(load_input_json(p))] for p in args.inputs]
    size = calc.witness_size
    out = bytearray(32 * size)
    expect = []
    tmp = tempfile.mkdtemp(prefix="wcrate-")
    if args.cpp:
        for i, p in enumerate(args.inputs):
            dest = os.path.join(tmp, f"{i}.wtns")
            _cpp_cpu_ms(args.cpp, p, dest)
            with open(dest, "rb") as fh:
                expect.append(fh.read()[-32 * size:])
    times: dict[str, list[float]] = {n: [] for n in libs}
    cpp: list[float] = []
    load0 = open("/proc/loadavg").read().split()[:3]
    for r in range(args.rounds):
        order = list(libs) if r % 2 == 0 else list(libs)[::-1]
        for name in order:
            lib = libs[name]
            for i, inputs in enumerate(prepared):
                t0 = time.process_time()
                status, message, _, _ = lib.run(inputs, out, size)
                times[name].append((time.process_time() - t0) * 1e3)
                if status != 0:
                    raise SystemExit(f"{name} on {args.inputs[i]}: {message}")
                if expect and r == 0 and bytes(out) != expect[i]:
                    raise SystemExit(f"{name} on {args.inputs[i]}: the witness differs from circom's C++")
        if args.cpp:
            for p in args.inputs:
                cpp.append(_cpp_cpu_ms(args.cpp, p, os.path.join(tmp, "c.wtns")))
    load1 = open("/proc/loadavg").read().split()[:3]
    res = {"wasm": wasm, "inputs": len(args.inputs), "rounds": args.rounds, "load": [load0, load1],
           "compiled_ms": {}, "equal_to_cpp": bool(expect)}
    print(f"{args.rounds} rounds x {len(args.inputs)} inputs, load {' '.join(load0)} -> {' '.join(load1)}")
    cpp_med = statistics.median(cpp) if cpp else None
    for name, v in times.items():
        med = statistics.median(v)
        q1 = statistics.quantiles(v, n=4)[0]
        res["compiled_ms"][name] = {"median": round(med, 2), "q1": round(q1, 2), "n": len(v)}
        extra = f"  rate {cpp_med / med:.2f}x circom's C++ (whole process)" if cpp_med else ""
        print(f"{name}: CPU median {med:.2f} ms per witness (lower quartile {q1:.2f}){extra}")
        if cpp_med:
            res["compiled_ms"][name]["rate_vs_cpp"] = round(cpp_med / med, 3)
    if cpp:
        q1 = statistics.quantiles(cpp, n=4)[0]
        res["cpp_ms"] = {"median": round(cpp_med, 2), "q1": round(q1, 2), "n": len(cpp)}
        print(f"circom's C++ whole process: CPU median {cpp_med:.2f} ms (lower quartile {q1:.2f})"
              + ("; every witness equal" if expect else ""))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=1)
    return 0


def threads(args) -> int:
    import resource
    import threading

    from snarkd.witness import compiled
    from snarkd.witness import load_input_json
    from snarkd.witness.native import NativeCalculator

    with open(args.wasm, "rb") as fh:
        sha = hashlib.sha256(fh.read()).hexdigest()
    calc = NativeCalculator(args.wasm, cache=False, strict=True)
    size = calc.witness_size
    dicts = [load_input_json(p) for p in args.inputs]
    if args.product:
        lib = calc._compiled_program()
        if lib is None or not calc.value_dependent:
            raise SystemExit(f"{args.wasm}: no compiled library beside it, or its .wprog is not value-dependent")

        def one(k: int, buf) -> tuple[int, str, bytes]:
            frame = (lambda n: buf.setdefault(n, bytearray(n))) if args.frame else None  # a pool: one a size
            raw, source = calc.calculate_bytes(dicts[k], frame=frame)
            return (0 if source == "control" else 1), source, hashlib.sha256(raw).digest()
    else:
        lib = compiled.load([args.wso], sha, calc.curve)
        if lib is None:
            raise SystemExit(f"{args.wso}: no library")
        prepared = [[(q.hash, q.data) for q in calc.prepare(d)] for d in dicts]

        def one(k: int, buf) -> tuple[int, str, bytes]:
            status, message, _, _ = lib.run(prepared[k], buf, size)
            return status, message, hashlib.sha256(buf).digest()
    expect = []
    out = {} if args.product else bytearray(32 * size)
    for i in range(len(dicts)):  # the reference: one thread, each input once
        status, message, digest = one(i, out)
        if status != 0:
            raise SystemExit(f"{args.inputs[i]}: {message}")
        expect.append(digest)
    res = {"wasm": args.wasm, "wso": args.wso, "product": args.product, "frame": args.frame, "inputs": len(args.inputs),
           "runs_per_thread": args.runs,
           "load": [open("/proc/loadavg").read().split()[:3]], "by_threads": {}}
    for n in [int(x) for x in args.threads.split(",")]:
        walls: list[list[float]] = [[] for _ in range(n)]
        bad: list[str] = []
        gate = threading.Barrier(n + 1)

        pools: list = [{} if args.product else bytearray(32 * size) for _ in range(n)]  # kept from the warm-up

        def work(t: int, runs: int, record: bool) -> None:
            buf = pools[t]
            gate.wait()
            for r in range(runs):
                k = (t * runs + r) % len(dicts)
                t0 = time.perf_counter()
                status, message, digest = one(k, buf)
                dt = (time.perf_counter() - t0) * 1e3
                if status != 0 or digest != expect[k]:
                    bad.append(f"thread {t} input {args.inputs[k]}: {message or 'another witness'}")
                if record:
                    walls[t].append(dt)
            gate.wait()

        for record, runs in ((False, 1), (True, args.runs)):  # a warm-up round (copies loaded), then the timed one
            ths = [threading.Thread(target=work, args=(t, runs, record)) for t in range(n)]
            for th in ths:
                th.start()
            gate.wait()
            r0, w0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            gate.wait()
            r1, w1 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
            for th in ths:
                th.join()
        if bad:
            raise SystemExit("; ".join(bad[:5]))
        total = n * args.runs
        all_walls = [x for w in walls for x in w]
        row = {"runs": total, "user_ms": round((r1.ru_utime - r0.ru_utime) * 1e3 / total, 2),
               "sys_ms": round((r1.ru_stime - r0.ru_stime) * 1e3 / total, 2),
               "minflt": round((r1.ru_minflt - r0.ru_minflt) / total, 1),
               "nivcsw": round((r1.ru_nivcsw - r0.ru_nivcsw) / total, 1),
               "wall_median_ms": round(statistics.median(all_walls), 2),
               "per_s": round(total / (w1 - w0), 2), "copies": lib.copies}
        row["cpu_ms"] = round(row["user_ms"] + row["sys_ms"], 2)
        res["by_threads"][n] = row
        print(f"N={n}: CPU {row['cpu_ms']:.2f} ms a run (user {row['user_ms']:.2f}, sys {row['sys_ms']:.2f}), "
              f"{row['minflt']:.0f} minor faults, wall median {row['wall_median_ms']:.2f} ms, "
              f"{row['per_s']:.2f} witnesses/s ({total} runs, every witness equal)", flush=True)
    res["load"].append(open("/proc/loadavg").read().split()[:3])
    print(f"load {' '.join(res['load'][0])} -> {' '.join(res['load'][1])}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=1)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("wasm")
    b.add_argument("--opt", action="append", default=[])
    b.add_argument("--extra", action="append", default=[], help="another compiler flag (an experiment)")
    b.add_argument("--curve", default="bn128")
    b.add_argument("--out", default=".")
    b.add_argument("--json")
    r = sub.add_parser("rate")
    r.add_argument("wasm")
    r.add_argument("--wso", action="append", default=[])
    r.add_argument("--inputs", nargs="+", required=True)
    r.add_argument("--cpp")
    r.add_argument("--rounds", type=int, default=5)
    r.add_argument("--any-translator", action="store_true",
                   help="load libraries that other trees' translators built (see _accept_its_sources)")
    r.add_argument("--json")
    t = sub.add_parser("threads")
    t.add_argument("wasm")
    t.add_argument("--wso")
    t.add_argument("--product", action="store_true", help="NativeCalculator.calculate_bytes per run")
    t.add_argument("--frame", action="store_true", help="with --product: a reused frame per thread")
    t.add_argument("--inputs", nargs="+", required=True)
    t.add_argument("--threads", default="1,2,4,8")
    t.add_argument("--runs", type=int, default=8, help="timed runs per thread")
    t.add_argument("--json")
    args = ap.parse_args()
    return {"build": build, "rate": rate, "threads": threads}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
