"""The compiled witness library in one process against circom's C++ generator as a whole process, and the cost of
building the library at each optimisation level.

    python bench/witness_compiled_rate.py build CIRCUIT.wasm --opt -O2 --opt -O3 [--curve bn128] [--out DIR]
    python bench/witness_compiled_rate.py rate CIRCUIT.wasm --wso NAME=LIB.wso ... --inputs IN1.json IN2.json ...
        [--cpp CIRCOM_CPP_BINARY] [--rounds R] [--json OUT.json]

build: translates and compiles the library once per level (--extra: more flags, an experiment) (snarkd.witness.compiled.build, the product's code), each
in a fresh child so that its compiler's CPU time and peak RSS (RUSAGE_CHILDREN of that child) are its own; the
libraries are written to DIR/circuit-O2.wasm.wso etc.

rate: each library loaded in this process (compiled.load: its tag and identity checked, then a memfd) and run on
every input, round after round, the libraries alternated; per witness the process CPU time of the run alone
(inputs prepared beforehand; the GIL-free run is on a thread of the library's own, so process_time counts it). With
--cpp, circom's C++ binary runs on the same inputs, alternated with the rounds, its CPU time from wait4 (a whole
process: its start, input.json, the run, the .wtns). The rate ratio is the binary's median over a library's. Every
library's witness is compared with the binary's .wtns (its values section), when --cpp is given.
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
    args = ap.parse_args()
    return build(args) if args.cmd == "build" else rate(args)


if __name__ == "__main__":
    sys.exit(main())
