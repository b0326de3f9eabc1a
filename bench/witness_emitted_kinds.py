"""What the compiled witness library's emitted C++ is made of (round 32): each statement line of a translation
(`python -m snarkd.witness.compiled.translate CIRCUIT.wasm OUT.cpp`) counted by kind from its pattern: constants and
locals copied into the operand variables, operations, checked loads and stores, native field calls, calls, control
flow, loop tops (fuel) and prologues (stack and fuel), rolled loops.

    python bench/witness_emitted_kinds.py OUT.cpp [OUT2.cpp ...]
"""
import collections
import re
import sys


def kinds(path):
    c = collections.Counter()
    for line in open(path):
        s = line.strip()
        if re.fullmatch(r"[il]\d+ = -?\d+(LL)?;|[il]\d+ = INT(32|64)_MIN;", s):
            c["const"] += 1
        elif re.fullmatch(r"[il]\d+ = [vc]\d+;", s):
            c["local.get/param"] += 1
        elif re.fullmatch(r"v\d+ = [il]\d+;", s):
            c["local.set/tee"] += 1
        elif "rt::ld<" in s:
            c["load (checked)"] += 1
        elif "rt::st<" in s:
            c["store (checked)"] += 1
        elif "rt::nat_" in s:
            c["native field call"] += 1
        elif "rt::tick()" in s:
            c["loop top + fuel"] += 1
        elif s == "rt::enter();":
            c["prologue (stack+fuel)"] += 1
        elif re.match(r"[il]\d+ = f\d+\(|f\d+\(|[il]\d+ = s\d+\(|return s\d+", s):
            c["call"] += 1
        elif re.fullmatch(r"[il]\d+ = .*;", s):
            c["op"] += 1
        elif s.startswith(("if", "}", "L", "goto", "switch", "case", "default", "return", "else")):
            c["control"] += 1
        elif s.startswith("for (uint32_t k"):
            c["rolled loop"] += 1
        else:
            c["other"] += 1
    return c


if __name__ == "__main__":
    for path in sys.argv[1:]:
        c = kinds(path)
        tot = sum(c.values())
        print("%s: %d lines; %s" % (path, tot, ", ".join("%s %d (%.1f%%)" % (k, v, 100 * v / tot)
                                                           for k, v in c.most_common())))
