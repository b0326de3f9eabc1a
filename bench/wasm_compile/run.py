"""Bench driver of the compiled witness program: a circom wasm translated by the package's translator
(snarkd.witness.compiled.translate, runtime native/witness/compiled_runtime.hpp), built with g++ into an executable
(harness.cpp, the product's entry), and run on input files; optionally each witness compared byte for byte with
`snarkjs wtns calculate`. (The product builds a shared library instead: `snarkd witness --compile`.)

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
sys.path.insert(0, os.path.join(ROOT, "src"))

BN254_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617
CXX = ["g++", "-std=c++17", "-fno-strict-aliasing", "-pthread", "-I" + os.path.join(ROOT, "src/snarkd/native")]


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
    words = []  # the entry's encoding (compiled_entry.hpp): per signal its hash halves, its count, its values
    for k, v in inp.items():
        h = fnv(k)
        vals = flat(v)
        words += [h >> 32, h & 0xFFFFFFFF, len(vals)]
        for x in vals:
            x = int(x) % prime
            words += [(x >> (32 * j)) & 0xFFFFFFFF for j in range(n32)]
    return struct.pack("<%dI" % len(words), *words)


def build(wasm, bdir, opt="-O2", native=True):
    from snarkd.witness.compiled.translate import translate

    os.makedirs(bdir, exist_ok=True)
    t0 = time.time()
    src, m = translate(open(wasm, "rb").read(), native=native)
    t_tr = time.time() - t0
    cpp = os.path.join(bdir, "gen.cpp")
    open(cpp, "w").write(src)
    t0 = time.time()
    exe = os.path.join(bdir, "witness")
    subprocess.check_call(CXX + [opt, '-DGEN="%s"' % os.path.abspath(cpp), os.path.join(HERE, "harness.cpp"),
                                 "-o", exe])
    t_gen = time.time() - t0
    info = {"translate_s": round(t_tr, 3), "gxx_s": round(t_gen, 2), "opt": opt, "cpp_bytes": len(src),
            "exe_bytes": os.path.getsize(exe), "wasm_bytes": os.path.getsize(wasm)}
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
