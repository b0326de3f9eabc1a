"""A Python front for the compiled prototype, as a CLI would be: `python pyrun.py LIB.so INPUT.json OUT.wtns`:
the inputs read and encoded in Python (witness_calculator.js's names and hashes, as run.py's encode_inputs; only
json, struct and ctypes imported), the shared library (harness.cpp built with -DWC_SHARED and the generated C++,
-fPIC) loaded with ctypes, one witness written. For whole-process timings against circom's C++ generator and
`snarkd witness` (bench/paired_cpu.py). BN254 only, inputs without buses."""
import ctypes
import json
import struct
import sys

R = 21888242871839275222246405745257275088548364400416034343698204186575808495617


def flat(v, out):
    if isinstance(v, list):
        for x in v:
            flat(x, out)
    else:
        out.append(v)
    return out


words = []
for k, v in json.load(open(sys.argv[2])).items():
    h = 0xCBF29CE484222325
    for ch in k:
        h = ((h ^ ord(ch)) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    for i, x in enumerate(flat(v, [])):
        x = int(x) % R
        words += [h >> 32, h & 0xFFFFFFFF, i] + [(x >> (32 * j)) & 0xFFFFFFFF for j in range(8)]
buf = struct.pack("<%dI" % (1 + len(words)), len(words) // 11, *words)
lib = ctypes.CDLL(sys.argv[1])
lib.wc_compute.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p]
sys.exit(lib.wc_compute(buf, len(buf) // 4, sys.argv[3].encode()))
