"""Round-26 prototype driver: a circom wasm compiled to C++ (translate.py + runtime.hpp), built with g++, and run on
input files through circom's witness protocol (harness.cpp); optionally each witness compared byte for byte with
`snarkjs wtns calculate`.

  python bench/wasm_compile/run.py --wasm W.wasm --build /tmp/DIR [--opt -O2] [--runs N] [--snarkjs] INPUT.json...

Prints one JSON line per input (cpu/wall ms per run, whether the .wtns equals snarkjs's) and the build's times.
BN254 only (runtime.hpp's field). Nothing is written beside the wasm: the C++, objects and .wtns go to --build.
"""
import argparse
import hashlib
import json
import os
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

BN254_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617
CXX = ["g++", "-std=c++17", "-fno-strict-aliasing", "-I" + HERE, "-I" + os.path.join(ROOT, "src/snarkd/native")]


def fnv(s):
    h = 0xCBF29CE484222325
    for ch in s:
        h ^= ord(ch)
        h = (h * 0x100000001B3) % 2 ** 64
    return h


def flat(v):
    if isinstance(v, list):
        out = []
        for x in v:
            out += flat(x)
        return out
    return [v]


def qualify(prefix, v, out):
    # witness_calculator.js's qualify_input: objects (buses) by '.', arrays of objects by [i]
    if isinstance(v, dict):
        for k, x in v.items():
            qualify(prefix + ("." if prefix else "") + k, x, out)
    elif isinstance(v, list) and flat(v) and isinstance(flat(v)[0], dict):
        for i, x in enumerate(v):
            qualify("%s[%d]" % (prefix, i), x, out)
    else:
        out[prefix] = v


def encode_inputs(path, n32=8, prime=BN254_R):
    inp = {}
    qualify("", json.load(open(path)), inp)
    words = []
    count = 0
    for k, v in inp.items():
        h = fnv(k)
        for i, x in enumerate(flat(v)):
            x = int(x) % prime
            words += [h >> 32, h & 0xFFFFFFFF, i] + [(x >> (32 * j)) & 0xFFFFFFFF for j in range(n32)]
            count += 1
    return struct.pack("<%dI" % (1 + len(words)), count, *words)


def build(wasm, bdir, opt="-O2", native=True):
    from translate import translate  # (not needed to encode inputs: pyrun.py imports this module)

    os.makedirs(bdir, exist_ok=True)
    t0 = time.time()
    src, m = translate(open(wasm, "rb").read(), native=native)
    t_tr = time.time() - t0
    cpp = os.path.join(bdir, "gen.cpp")
    open(cpp, "w").write(src)
    t0 = time.time()
    subprocess.check_call(CXX + [opt, "-c", cpp, "-o", os.path.join(bdir, "gen.o")])
    t_gen = time.time() - t0
    subprocess.check_call(CXX + ["-O2", "-c", os.path.join(HERE, "harness.cpp"), "-o", os.path.join(bdir, "harness.o")])
    exe = os.path.join(bdir, "witness")
    subprocess.check_call(CXX + ["-o", exe, os.path.join(bdir, "harness.o"), os.path.join(bdir, "gen.o")])
    info = {"translate_s": round(t_tr, 3), "gxx_s": round(t_gen, 2), "opt": opt, "cpp_bytes": len(src),
            "obj_bytes": os.path.getsize(os.path.join(bdir, "gen.o")), "wasm_bytes": os.path.getsize(wasm)}
    return exe, info


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wasm", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--opt", default="-O2")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--snarkjs", action="store_true")
    ap.add_argument("--no-native", action="store_true", help="ffwasm's field functions translated, not native")
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("inputs", nargs="+")
    a = ap.parse_args()
    exe = os.path.join(a.build, "witness")
    if not a.no_build:
        exe, info = build(a.wasm, a.build, a.opt, native=not a.no_native)
        print(json.dumps({"build": info}), flush=True)
    snarkjs = os.path.join(ROOT, "node_modules/.bin/snarkjs")
    for path in a.inputs:
        name = os.path.basename(path).rsplit(".", 1)[0]
        ib = os.path.join(a.build, name + ".bin")
        open(ib, "wb").write(encode_inputs(path))
        out = os.path.join(a.build, name + ".wtns")
        r = subprocess.run([exe, ib, out, str(a.runs)], capture_output=True, text=True)
        rec = {"input": path, "rc": r.returncode}
        if r.returncode:
            rec["stderr"] = r.stderr[-2000:]
        else:
            lines = r.stdout.split("\n")
            rec["cpu_ms"] = [float(l.split()[3]) for l in lines if l.startswith("run ")]
            rec["wall_ms"] = [float(l.split()[5]) for l in lines if l.startswith("run ")]
        if a.snarkjs and not r.returncode:
            ref = os.path.join(a.build, name + ".snarkjs.wtns")
            subprocess.check_call(["node", snarkjs, "wtns", "calculate", a.wasm, path, ref],
                                  stdout=subprocess.DEVNULL)
            rec["equal_snarkjs"] = open(ref, "rb").read() == open(out, "rb").read()
            rec["sha256"] = hashlib.sha256(open(out, "rb").read()).hexdigest()[:16]
        print(json.dumps(rec), flush=True)


if __name__ == "__main__":
    main()
