"""circom wasm -> C++: a structured translation of every function (round 26's prototype, made a product in round 27).

Each wasm function becomes one C++ function; the operand stack becomes one C++ local per (depth, type)
(`i3`, `l3`), so the C++ compiler allocates registers; blocks and loops become labels and gotos, `if` a C++ `if`,
br_table a switch. Memory is one linear byte array (`M`, native/witness/compiled_runtime.hpp): every load and store
is checked against its current size (a trap past it), every function's prologue checks the stack left and the fuel,
every loop iteration the fuel. Functions whose names are circom's ffwasm field functions (Fr_add, Fr_mul, ...; the
name section) and whose types are theirs are called as native implementations from the runtime instead of their
translated wasm bodies. Round 32: runs of one straight-line sequence that circom unrolled, repeated with stepping
constants, become C++ loops (`_rolls`): the compiler's time follows the code's size.

A module this translator does not handle (another import, a feature circom does not emit, a body it cannot follow)
raises `Refused`: the caller builds nothing and the engine keeps its other paths. The module is expected to have
passed wasm validation first (the builder validates it): the translator follows valid code only.
Usage: python -m snarkd.witness.compiled.translate circuit.wasm out.cpp [UNITS] [--no-native]
"""
import sys

from snarkd.witness.compiled.wasm_parse import Module, Reader, VT


class Refused(Exception):
    """The module is not one the translator handles: no compiled program for it."""


# circom's host imports (module "runtime"), with their types: any other import is refused
IMPORTS = {"exceptionHandler": (["i32"], []), "printErrorMessage": ([], []), "writeBufferMessage": ([], []),
           "showSharedRWMemory": ([], [])}
# the exports the entry (compiled_entry.hpp) calls, with their types
EXPORTS = {"getFieldNumLen32": ([], ["i32"]), "getWitnessSize": ([], ["i32"]), "getSharedRWMemoryStart": ([], ["i32"]),
           "writeSharedRWMemory": (["i32", "i32"], []), "readSharedRWMemory": (["i32"], ["i32"]),
           "init": (["i32"], []), "setInputSignal": (["i32", "i32", "i32"], []), "getWitness": (["i32"], []),
           "getRawPrime": ([], []), "getMessageChar": ([], ["i32"])}
HUGE_LINES = 3000  # a function of more lines than this is compiled at -O1 (SNARKD_WC_HUGE; GCC only)
MAX_FRAME_VARS = 20000  # locals and operand-stack variables of one function (its C++ frame: bounded stack use)
MAX_TABLE = 1 << 20

# ffwasm functions done natively (runtime.hpp: nat_<name>), with their arities (all i32 pointers).
NATIVE = ["Fr_copy", "Fr_copyn", "Fr_add", "Fr_sub", "Fr_mul", "Fr_square", "Fr_neg", "Fr_div", "Fr_inv",
          "Fr_idiv", "Fr_mod", "Fr_pow", "Fr_eq", "Fr_neq", "Fr_lt", "Fr_gt", "Fr_leq", "Fr_geq", "Fr_land",
          "Fr_lor", "Fr_lnot", "Fr_band", "Fr_bor", "Fr_bxor", "Fr_bnot", "Fr_shl", "Fr_shr", "Fr_isTrue",
          "Fr_toInt"]

NATIVE_ARITY = {"Fr_copyn": 3, "Fr_isTrue": 1, "Fr_toInt": 1, "Fr_copy": 2, "Fr_square": 2, "Fr_neg": 2,
                "Fr_inv": 2, "Fr_lnot": 2, "Fr_bnot": 2}
NATIVE_RESULT = {"Fr_isTrue", "Fr_toInt"}


def native_type(nm):
    """(params, results) of the native implementation of the ffwasm function `nm`."""
    return ["i32"] * NATIVE_ARITY.get(nm, 3), ["i32"] if nm in NATIVE_RESULT else []


CT = {"i32": "int32_t", "i64": "int64_t", "f32": "float", "f64": "double"}
PFX = {"i32": "i", "i64": "l", "f32": "f", "f64": "d"}

# opcode -> (mnemonic, immediate kind)
LOADS = {0x28: ("i32", "int32_t", 4), 0x29: ("i64", "int64_t", 8), 0x2C: ("i32", "int8_t", 1),
         0x2D: ("i32", "uint8_t", 1), 0x2E: ("i32", "int16_t", 2), 0x2F: ("i32", "uint16_t", 2),
         0x30: ("i64", "int8_t", 1), 0x31: ("i64", "uint8_t", 1), 0x32: ("i64", "int16_t", 2),
         0x33: ("i64", "uint16_t", 2), 0x34: ("i64", "int32_t", 4), 0x35: ("i64", "uint32_t", 4)}
STORES = {0x36: ("i32", "int32_t"), 0x37: ("i64", "int64_t"), 0x3A: ("i32", "uint8_t"), 0x3B: ("i32", "uint16_t"),
          0x3C: ("i64", "uint8_t"), 0x3D: ("i64", "uint16_t"), 0x3E: ("i64", "uint32_t")}


def u(t):
    return "uint32_t" if t == "i32" else "uint64_t"


# binary ops: opcode -> (type, C expression with a, b)
BIN = {}
for base, t in ((0x6A, "i32"), (0x7C, "i64")):
    U = u(t)
    bits = 32 if t == "i32" else 64
    ops = ["({T})(({U})a + ({U})b)", "({T})(({U})a - ({U})b)", "({T})(({U})a * ({U})b)",
           "rt::divs_{B}(a, b)", "rt::divu_{B}(a, b)", "rt::rems_{B}(a, b)", "rt::remu_{B}(a, b)",
           "(a & b)", "(a | b)", "(a ^ b)", "({T})(({U})a << (b & {M}))", "(a >> (b & {M}))",
           "({T})(({U})a >> (b & {M}))", "({T})rt::rotl_{B}(({U})a, ({U})b)", "({T})rt::rotr_{B}(({U})a, ({U})b)"]
    for k, e in enumerate(ops):
        BIN[base + k] = (t, t, e.format(T=CT[t], U=U, B=bits, M=bits - 1))
# comparisons
for base, t in ((0x46, "i32"), (0x51, "i64")):
    U = u(t)
    ops = ["(a == b)", "(a != b)", "(a < b)", "(({U})a < ({U})b)", "(a > b)", "(({U})a > ({U})b)",
           "(a <= b)", "(({U})a <= ({U})b)", "(a >= b)", "(({U})a >= ({U})b)"]
    for k, e in enumerate(ops):
        BIN[base + k] = (t, "i32", "(int32_t)" + e.format(U=U))
UN = {0x45: ("i32", "i32", "(int32_t)(a == 0)"), 0x50: ("i64", "i32", "(int32_t)(a == 0)"),
      0x67: ("i32", "i32", "(int32_t)rt::clz32((uint32_t)a)"), 0x68: ("i32", "i32", "(int32_t)rt::ctz32((uint32_t)a)"),
      0x69: ("i32", "i32", "(int32_t)__builtin_popcount((uint32_t)a)"),
      0x79: ("i64", "i64", "(int64_t)rt::clz64((uint64_t)a)"), 0x7A: ("i64", "i64", "(int64_t)rt::ctz64((uint64_t)a)"),
      0x7B: ("i64", "i64", "(int64_t)__builtin_popcountll((uint64_t)a)"),
      0xA7: ("i64", "i32", "(int32_t)(uint32_t)(uint64_t)a"), 0xAC: ("i32", "i64", "(int64_t)a"),
      0xAD: ("i32", "i64", "(int64_t)(uint64_t)(uint32_t)a"),
      0xC0: ("i32", "i32", "(int32_t)(int8_t)a"), 0xC1: ("i32", "i32", "(int32_t)(int16_t)a"),
      0xC2: ("i64", "i64", "(int64_t)(int8_t)a"), 0xC3: ("i64", "i64", "(int64_t)(int16_t)a"),
      0xC4: ("i64", "i64", "(int64_t)(int32_t)a")}


def decode(m, start, end):
    r = Reader(m.bytes, start, end)
    out = []
    while r.pos < end:
        op = r.byte()
        if op in (0x02, 0x03, 0x04):
            bt = r.byte()
            if bt == 0x40:
                res = []
            elif bt in VT:
                res = [VT[bt]]
            else:  # a type index (multi-value): not in circom's wasm
                raise Refused("a block with a type index (multi-value)")
            out.append((op, res))
        elif op in (0x0C, 0x0D, 0x10, 0x20, 0x21, 0x22, 0x23, 0x24):
            out.append((op, r.u32()))
        elif op == 0x0E:
            n = r.u32()
            out.append((op, ([r.u32() for _ in range(n)], r.u32())))
        elif op == 0x11:
            ti = r.u32()
            r.byte()
            out.append((op, ti))
        elif op == 0x41:
            out.append((op, r.sleb(32)))
        elif op == 0x42:
            out.append((op, r.sleb(64)))
        elif 0x28 <= op <= 0x3E:
            r.u32()
            out.append((op, r.u32()))
        elif op in (0x3F, 0x40):
            r.byte()
            out.append((op, None))
        elif op == 0xFC:
            sub = r.u32()
            if sub == 10:
                r.byte(), r.byte()
            elif sub == 11:
                r.byte()
            else:
                raise Refused("opcode 0xfc %d" % sub)
            out.append((0xFC00 + sub, None))
        elif op in (0x43, 0x44):
            raise Refused("float constants")
        else:
            out.append((op, None))
    return out


class Ctl:
    def __init__(self, kind, label, height, results):
        self.kind, self.label, self.height, self.results = kind, label, height, results
        self.unreachable = False


def fname(m, fi):
    return "f%d" % fi


def translate_function(m, fi, native_map, lines, called=None, code=None, shared=None):
    """Function fi as C++ (appended to lines; its direct callees added to `called`); returns its signature.
    shared: (name, {position: parameter}) for the one body of functions that differ only in some i32.const
    immediates (at those positions of the decoded code): the function is that name, and takes those constants as
    further i32 parameters."""
    params, results = m.func_type(fi)
    locs, start, end = m.codes[fi - m.n_imported_funcs]
    if code is None:
        code = decode(m, start, end)
    vary = shared[1] if shared else {}
    ltypes = params + locs
    stack = []  # types
    maxd = {}
    body = []
    ind = ["  "]
    nlab = [0]

    def var(d, t):
        maxd[t] = max(maxd.get(t, -1), d)
        return "%s%d" % (PFX[t], d)

    def push(t):
        stack.append(t)
        return var(len(stack) - 1, t)

    def pop():
        t = stack.pop()
        return var(len(stack), t), t

    def emit(s):
        body.append(ind[0] + s)

    ctl = [Ctl("func", "Lret", 0, results)]
    dead = 0
    rolls = _rolls(m, code, vary)
    roll_end = skip = roll_skip = -1  # the last position of the rolled period being translated; the region's end
    kexpr = {}  # position -> the C++ expression of a rolled constant (its value in iteration k)

    def br_to(c):  # assignments for a branch to c, then the jump
        s = []
        if c.kind != "loop" and c.results:
            t = c.results[0]
            src = var(len(stack) - 1, t)
            dst = var(c.height, t)
            if src != dst:
                s.append("%s = %s;" % (dst, src))
        if c.kind == "func":
            s.append("return %s;" % var(c.height, c.results[0]) if c.results else "return;")
        else:
            s.append("goto %s%s;" % (c.label, "_top" if c.kind == "loop" else ""))
        return " ".join(s)

    for pos, (op, imm) in enumerate(code):
        if pos < skip:  # the further periods of a rolled region: the loop runs them
            continue
        c = ctl[-1]
        if not dead and pos in rolls:
            period, reps, steps = rolls[pos]
            k = "k%d" % pos
            emit("for (uint32_t %s = 0; %s < %du; %s++) {" % (k, k, reps, k))
            ind[0] += "  "
            for q, (t, base, step) in steps.items():
                kexpr[pos + q] = _kexpr(t, base, step, k)
            roll_end, roll_skip = pos + period - 1, pos + period * reps
        if dead:  # unreachable code: skipped up to the end (or else) of the block it lies in
            if op in (0x02, 0x03, 0x04):
                dead += 1
                continue
            if op == 0x0B:
                dead -= 1
                if dead:
                    continue
            elif op == 0x05 and dead == 1:
                dead = 0
            else:
                continue
        if op == 0x00:
            emit("rt::trap(\"unreachable\");")
            c.unreachable = True
            dead = 1
        elif op == 0x01:
            pass
        elif op in (0x02, 0x03):
            nlab[0] += 1
            cc = Ctl("block" if op == 0x02 else "loop", "L%d" % nlab[0], len(stack), imm)
            ctl.append(cc)
            if op == 0x03:
                emit("%s_top:; rt::tick();" % cc.label)
        elif op == 0x04:
            cond, _ = pop()
            nlab[0] += 1
            cc = Ctl("if", "L%d" % nlab[0], len(stack), imm)
            ctl.append(cc)
            emit("if (%s) {" % cond)
            ind[0] += "  "
        elif op == 0x05:
            # else: the then-arm's value is in place (or the arm was dead)
            del stack[c.height:]
            c.unreachable = False
            ind[0] = ind[0][:-2]
            emit("} else {")
            ind[0] += "  "
            c.kind = "if_else"
        elif op == 0x0B:
            if len(ctl) == 1:
                # function end
                if results and not c.unreachable and dead == 0:
                    emit("return %s;" % var(len(stack) - 1, results[0]))
                break
            ctl.pop()
            del stack[c.height:]
            for t in c.results:
                push(t)
            if c.kind in ("if", "if_else"):
                ind[0] = ind[0][:-2]
                emit("}")
            if c.kind != "loop":
                emit("%s:;" % c.label)
        elif op == 0x0C:
            emit(br_to(ctl[-1 - imm]))
            c.unreachable = True
            dead = 1
        elif op == 0x0D:
            cond, _ = pop()
            emit("if (%s) { %s }" % (cond, br_to(ctl[-1 - imm])))
        elif op == 0x0E:
            idx, _ = pop()
            targets, dflt = imm
            emit("switch ((uint32_t)%s) {" % idx)
            for k, tg in enumerate(targets):
                emit("  case %du: %s" % (k, br_to(ctl[-1 - tg])))
            emit("  default: %s" % br_to(ctl[-1 - dflt]))
            emit("}")
            c.unreachable = True
            dead = 1
        elif op == 0x0F:
            emit(br_to(ctl[0]))
            c.unreachable = True
            dead = 1
        elif op in (0x10, 0x11):
            if op == 0x10:
                pt, rt_ = m.func_type(imm)
            else:
                pt, rt_ = m.types[imm]
                tidx, _ = pop()
            args = [pop()[0] for _ in pt][::-1]
            if op == 0x10:
                callee = native_map.get(imm)
                if callee is None:
                    callee = fname(m, imm)
                    if called is not None:
                        called.add(imm)
                call = "%s(%s)" % (callee, ", ".join(args))
            else:
                sig = "%s(*)(%s)" % (CT[rt_[0]] if rt_ else "void", ", ".join(CT[t] for t in pt))
                call = "((%s)rt::table_fn(%s, %d))(%s)" % (sig, tidx, imm, ", ".join(args))
            if rt_:
                emit("%s = %s;" % (push(rt_[0]), call))
            else:
                emit(call + ";")
        elif op == 0x1A:
            pop()
        elif op == 0x1B:
            cond, _ = pop()
            b, _ = pop()
            a, t = pop()
            emit("%s = %s ? %s : %s;" % (push(t), cond, a, b))
        elif op == 0x20:
            emit("%s = v%d;" % (push(ltypes[imm]), imm))
        elif op == 0x21:
            a, _ = pop()
            emit("v%d = %s;" % (imm, a))
        elif op == 0x22:
            emit("v%d = %s;" % (imm, var(len(stack) - 1, stack[-1])))
        elif op == 0x23:
            emit("%s = g%d;" % (push(m.globals[imm][0]), imm))
        elif op == 0x24:
            a, _ = pop()
            emit("g%d = %s;" % (imm, a))
        elif op in LOADS:
            t, ct, n = LOADS[op]
            a, _ = pop()
            emit("%s = (%s)rt::ld<%s>(MB, (uint64_t)(uint32_t)%s + %du);" % (push(t), CT[t], ct, a, imm))
        elif op in STORES:
            t, ct = STORES[op]
            v, _ = pop()
            a, _ = pop()
            emit("rt::st<%s>(MB, (uint64_t)(uint32_t)%s + %du, (%s)%s);" % (ct, a, imm, ct, v))
        elif op == 0x3F:
            emit("%s = rt::mem_size();" % push("i32"))
        elif op == 0x40:
            a, _ = pop()
            emit("%s = rt::mem_grow(%s);" % (push("i32"), a))
        elif op == 0x41:
            if pos in vary:
                emit("%s = %s;" % (push("i32"), vary[pos]))
            elif pos in kexpr:
                emit("%s = %s;" % (push("i32"), kexpr[pos]))
            else:
                emit("%s = %s;" % (push("i32"), _lit("i32", imm)))
        elif op == 0x42:
            emit("%s = %s;" % (push("i64"), kexpr[pos] if pos in kexpr else _lit("i64", imm)))
        elif op in BIN:
            t, rt_, e = BIN[op]
            b, _ = pop()
            a, _ = pop()
            emit("%s = %s;" % (push(rt_), sub_ab(e, a, b)))
        elif op in UN:
            t, rt_, e = UN[op]
            a, _ = pop()
            emit("%s = %s;" % (push(rt_), sub_ab(e, a, None)))
        elif op == 0xFC0A:
            n, _ = pop()
            s, _ = pop()
            d, _ = pop()
            emit("rt::mem_copy(%s, %s, %s);" % (d, s, n))
        elif op == 0xFC0B:
            n, _ = pop()
            v, _ = pop()
            d, _ = pop()
            emit("rt::mem_fill(%s, %s, %s);" % (d, v, n))
        else:
            raise Refused("opcode 0x%x in function %d (%s)" % (op, fi, m.names.get(fi)))
        if pos == roll_end:
            ind[0] = ind[0][:-2]
            emit("}")
            skip = roll_skip
    # declarations
    args = ["%s v%d" % (CT[t], k) for k, t in enumerate(params)]
    if shared:
        args += ["int32_t %s" % vary[p] for p in sorted(vary)]
    # a huge function at -O1 (GCC): the optimisers' time grows faster than a function's size, and the largest ones
    # are circom's long-hand hints (the RSA verifier's long_div, 7,500 lines) that run a few times a witness
    sig = "%s%s%s %s(%s)" % ("SNARKD_WC_SHARED " if shared else "", "SNARKD_WC_HUGE " if len(body) > HUGE_LINES
                             else "", CT[results[0]] if results else "void", shared[0] if shared else fname(m, fi),
                             ", ".join(args))
    lines.append(sig + " {")
    # the memory's base, once: rt::M does not move (a fixed reservation), but a byte store through it could
    # alias the global in the compiler's eyes, which would reload it after every store
    lines.append("  rt::enter();")
    lines.append("  uint8_t* const MB = rt::M;")
    if len(locs) + sum(d + 1 for d in maxd.values()) > MAX_FRAME_VARS:
        raise Refused("function %d: more than %d locals and stack values" % (fi, MAX_FRAME_VARS))
    for k, t in enumerate(locs):
        lines.append("  %s v%d = 0;" % (CT[t], len(params) + k))
    for t, d in sorted(maxd.items()):
        lines.append("  %s %s;" % (CT[t], ", ".join("%s%d = 0" % (PFX[t], k) for k in range(d + 1))))
    lines.extend(body)
    lines.append("}")
    return sig


# Rolling (round 32): circom unrolls every loop whose bound is known at compile time, so a template's code holds runs
# of one instruction sequence repeated tens to hundreds of times whose i32.const immediates step by a fixed amount
# (the RSA verifier's long_div: 320 copies of one 7-instruction element copy, each at the next offset). Such a run
# becomes one C++ loop over the sequence's translation, each stepping constant computed from the loop's counter. The
# loop does exactly what the unrolled code did, in the same order: the sequence is straight-line code (no branch,
# block or label), so the fuel (charged per wasm loop iteration and per call) and every memory check are the same;
# its stack height is the same at the start of every repetition, so its C++ text (the operand variables) is too.
ROLL_MIN_SAVED = 24  # instructions a roll must save (repetitions beyond the first, times the period)
ROLL_MAX_PERIOD = 64  # instructions; the longest period rolled in the RSA verifier and SHA-256 is 49, and each
# period tried is one pass over the function (512 made the translation 3x slower for nothing more rolled)
ROLL_MIN_REPS = 3


def _stack_delta(m, op, imm):
    """The operand stack's change by one straight-line instruction; None for control flow (a roll's barrier)."""
    if op in (0x20, 0x23, 0x3F, 0x41, 0x42):
        return 1
    if op in (0x21, 0x24, 0x1A) or op in BIN:
        return -1
    if op in (0x01, 0x22, 0x40) or op in UN or op in LOADS:
        return 0
    if op in STORES or op == 0x1B:
        return -2
    if op in (0xFC0A, 0xFC0B):
        return -3
    if op == 0x10:
        pt, rt_ = m.func_type(imm)
        return len(rt_) - len(pt)
    if op == 0x11:
        pt, rt_ = m.types[imm]
        return len(rt_) - len(pt) - 1
    return None


def _kexpr(t, base, step, k):
    if t == "i32":
        return "(int32_t)(%du + %s * %du)" % (base % 2 ** 32, k, step % 2 ** 32)
    return "(int64_t)(%dull + (uint64_t)%s * %dull)" % (base % 2 ** 64, k, step % 2 ** 64)


def _rolls(m, code, vary):
    """{start: (period, repetitions, {offset in the period: (type, first value, step)})}: the runs of one straight-line
    instruction sequence repeated, identical but for i32/i64.const immediates that step by a fixed amount, with no net
    effect on the operand stack; chosen greedily by the instructions they save, not overlapping. A shared body's
    parameter constants (vary) never roll: each is its own parameter."""
    import numpy as np
    n = len(code)
    if n < 2 * ROLL_MIN_REPS:
        return {}
    ids, key, delta = np.empty(n, np.int64), {}, np.zeros(n, np.int64)
    for p, (op, imm) in enumerate(code):
        d = _stack_delta(m, op, imm)
        if d is None or p in vary:
            ids[p] = -1 - p  # a barrier: equal to nothing
            continue
        delta[p] = d
        tok = (op, None) if op in (0x41, 0x42) else (op, imm)
        ids[p] = key.setdefault(tok, len(key))
    found = []
    # (round 36: the runs of each period filtered as arrays, the stack's net change by a prefix sum: the RSA
    # verifier's translation 0.39 -> ~0.2 s, the same rolls)
    csum = np.concatenate(([0], np.cumsum(delta)))
    for period in range(1, min(ROLL_MAX_PERIOD, n // ROLL_MIN_REPS) + 1):
        eq = np.concatenate(([False], ids[:-period] == ids[period:], [False]))
        edges = np.flatnonzero(eq[1:] != eq[:-1])
        a, b = edges[::2], edges[1::2]  # eq[a:b] all true: code[a:b + period] has this period
        reps = (b - a + period) // period
        keep = (reps >= ROLL_MIN_REPS) & ((reps - 1) * period >= ROLL_MIN_SAVED) & (csum[a + period] == csum[a])
        for a_, r_ in zip(a[keep].tolist(), reps[keep].tolist()):
            found.append(((r_ - 1) * period, a_, period, r_))
    found.sort(key=lambda x: (-x[0], x[1], x[2]))
    used = np.zeros(n, bool)
    out = {}
    for _, a, period, reps in found:
        while reps >= ROLL_MIN_REPS:
            if used[a:a + period * reps].any():
                break
            # the constants: each must step by one amount through the repetitions; the run ends where one does not
            steps, good = {}, reps
            for q in range(period):
                op, v0 = code[a + q]
                if op not in (0x41, 0x42):
                    continue
                step = code[a + period + q][1] - v0
                j = 2
                while j < good and code[a + j * period + q][1] - v0 == j * step:
                    j += 1
                good = j
                if step:
                    steps[q] = ("i32" if op == 0x41 else "i64", v0, step)
            if good >= ROLL_MIN_REPS and (good - 1) * period >= ROLL_MIN_SAVED:
                out[a] = (period, good, steps)
                used[a:a + period * good] = True
            a += period * max(good, 1)  # the rest of the run, from where the steps broke
            reps -= max(good, 1)
    return out


def sub_ab(e, a, b):
    # replace the standalone identifiers a and b in a template expression
    import re
    return re.sub(r"\b([ab])\b", lambda mo: a if mo.group(1) == "a" else b, e)


def _safe(text):
    """A name from the module, as a comment may show it (no code can come in through a name)."""
    return "".join(ch if ch.isalnum() or ch in "_.$" else "?" for ch in str(text))[:80]


def translate(wasm_bytes, native=True):
    """(C++ source, Module) of a circom witness module; Refused where it is not one this translator handles. The
    source holds nothing of the module's own text but numbers and checked names."""
    sources, m = translate_units(wasm_bytes, 1, native)
    return sources[0], m


def translate_units(wasm_bytes, units, native=True):
    """([C++ source of each unit], Module): the same program as `translate`'s in up to `units` translation units
    that can be compiled at once (one compiler per core) and linked into one library; the first unit holds the
    module's globals, table, data and exports and the entry. Refused as `translate`."""
    try:
        return _translate(wasm_bytes, native, max(1, int(units)))
    except Refused:
        raise
    except (ValueError, KeyError, IndexError, AssertionError, TypeError, UnicodeDecodeError, RecursionError) as exc:
        raise Refused(f"the module cannot be read ({type(exc).__name__}: {exc})") from None


def _translate(wasm_bytes, native, units):
    m = Module(bytes(wasm_bytes))
    if m.memory is None or any(i[0] != "func" for i in m.imports):
        raise Refused("no memory of its own, or an imported memory, table or global")
    if m.start is not None:
        raise Refused("a start function")
    if m.table is not None and m.table[0] > MAX_TABLE:
        raise Refused("a table of %d elements" % m.table[0])
    for _, mod, nm, ti in m.imports:
        if IMPORTS.get(nm) != tuple(m.types[ti]):
            raise Refused("import %s.%s: not one of circom's" % (_safe(mod), _safe(nm)))
    exported = {}
    for nm, kind, idx in m.exports:
        if kind == 0 and nm in EXPORTS:
            if tuple(m.func_type(idx)) != EXPORTS[nm]:
                raise Refused("export %s: not circom's type" % nm)
            exported[nm] = idx
    missing = sorted(set(EXPORTS) - set(exported))
    if missing:
        raise Refused("not a circom witness module (no export %s)" % ", ".join(missing))
    for t, _, init in m.globals:
        if init[0] not in ("i32", "i64") or t not in ("i32", "i64"):
            raise Refused("a global of type %s or initialised from another global" % t)
    for fi in range(m.n_imported_funcs, m.n_imported_funcs + len(m.codes)):
        params, results = m.func_type(fi)
        if len(results) > 1:
            raise Refused("a function with %d results" % len(results))
    if len(m.funcs) != len(m.codes):
        raise Refused("function and code sections disagree")
    native_map = {}  # function index -> its native implementation (the name and the type are circom's)
    if native:
        for fi, nm in m.names.items():
            if nm in NATIVE and m.n_imported_funcs <= fi < m.n_imported_funcs + len(m.codes) \
                    and tuple(m.func_type(fi)) == tuple(native_type(nm)):
                native_map[fi] = "rt::nat_" + nm
    tsize = m.table[0] if m.table else 0
    nfunc = m.n_imported_funcs + len(m.codes)
    for (kind, off), fis in m.elems:
        if kind != "i32" or off < 0 or off + len(fis) > tsize or any(not 0 <= f < nfunc for f in fis):
            raise Refused("an element segment outside the table")
    for k, ((kind, off), data) in enumerate(m.data):
        if kind != "i32":
            raise Refused("a data segment at a non-constant offset")
    # every function is translated (the translator's checks and refusals see the whole module), but only those the
    # exports and the table reach are emitted: ffwasm's 32-bit-limb field code behind the native functions (Fr_int_*,
    # Fr_F1m_*: ~8,000 of the RSA verifier's 53,000 lines) is never called, and the compiler parsed it all the same
    roots = sorted({exported[nm] for nm in EXPORTS} | {f for _, fis in m.elems for f in fis})
    bodies, sigs, callees = {}, {}, {}
    ni = m.n_imported_funcs
    codes = {fi: decode(m, m.codes[fi - ni][1], m.codes[fi - ni][2]) for fi in range(ni, nfunc)}
    member = {}  # function -> (its group's body, the constants it passes)
    for g, (leader, vary, members) in enumerate(_same_but_constants(m, codes, native_map)):
        sid = nfunc + g
        lines = ["// one body for %s%s" % (", ".join(_safe(m.names.get(f, "")) for f in members[:3]),
                                            ", ..." if len(members) > 3 else "")]
        called = set()
        sigs[sid] = translate_function(m, leader, native_map, lines, called, codes[leader],
                                       ("s%d" % g, {p: "c%d" % k for k, p in enumerate(vary)}))
        bodies[sid], callees[sid] = lines, sorted(f for f in called if f >= ni)
        for f in members:
            member[f] = (sid, [codes[f][p][1] for p in vary])
    for fi in range(ni, nfunc):
        if fi in member:  # a call of the group's body with this function's constants
            sid, consts = member[fi]
            params, results = m.func_type(fi)
            sigs[fi] = "%s %s(%s)" % (CT[results[0]] if results else "void", fname(m, fi),
                                      ", ".join("%s v%d" % (CT[t], k) for k, t in enumerate(params)))
            call = "s%d(%s)" % (sid - nfunc, ", ".join(["v%d" % k for k in range(len(params))] +
                                                         [_lit("i32", v) for v in consts]))
            bodies[fi] = ["// %s" % _safe(m.names.get(fi, "")), sigs[fi] + " {",
                          "  %s%s;" % ("return " if results else "", call), "}"]
            callees[fi] = [sid]
            continue
        lines = ["// %s" % _safe(m.names.get(fi, ""))]
        called = set()
        sigs[fi] = translate_function(m, fi, native_map, lines, called, codes[fi])
        bodies[fi], callees[fi] = lines, sorted(f for f in called if f >= ni)
    reach, todo = set(), [f for f in roots if f >= m.n_imported_funcs]
    while todo:
        f = todo.pop()
        if f not in reach:
            reach.add(f)
            todo += callees[f]
    live = sorted(reach)
    groups = _partition(live, roots, callees, {f: len(bodies[f]) for f in live}, units)
    unit_of = {f: u for u, g in enumerate(groups) for f in g}
    root_set = set(roots)
    callers = {f: set() for f in live}
    for f in live:
        for c in callees[f]:
            callers[c].add(f)
    # a function called only from its own unit (not through the table, not exported) stays static there: the compiler
    # may then inline it whole, clone it or change how it is called, as it did with every function in one unit
    local = {f for f in live if f not in root_set and all(unit_of[c] == unit_of[f] for c in callers[f])}
    one = units == 1
    decl = []  # what every unit sees: the runtime, the globals, the host imports
    for k, (t, mut, init) in enumerate(m.globals):
        decl.append("%s %s g%d%s;" % ("static" if one else "extern", CT[t], k,
                                      " = " + _lit(t, init[1]) if one else ""))
    imports = [i for i in m.imports if i[0] == "func"]
    for k, imp in enumerate(imports):
        pt, rt_ = m.types[imp[3]]
        decl.append("static inline %s f%d(%s) { %srt::host_%s(%s); }" % (
            CT[rt_[0]] if rt_ else "void", k, ", ".join("%s a%d" % (CT[t], j) for j, t in enumerate(pt)),
            "return " if rt_ else "", imp[2], ", ".join("a%d" % j for j in range(len(pt)))))
    head = ["// generated by snarkd.witness.compiled.translate from a circom wasm: do not edit",
            "#include \"witness/compiled_runtime.hpp\"",
            # a body shared by functions that differ in constants only stays one function: not inlined into each
            # caller, nor cloned per constant (GCC's -O3 would, and compile it once per caller again)
            "#if defined(__clang__)", "#define SNARKD_WC_SHARED __attribute__((noinline))", "#else",
            "#define SNARKD_WC_SHARED __attribute__((noinline, noclone))", "#endif",
            # GCC's optimize attribute adds to the command line's options; strict aliasing stays off as there
            # (unless the build sets it: the fast tier compiles every function at its one level, compiled/__init__.py)
            "#ifndef SNARKD_WC_HUGE", "#if defined(__GNUC__) && !defined(__clang__)",
            "#define SNARKD_WC_HUGE __attribute__((optimize(\"O1\", \"no-strict-aliasing\")))", "#else",
            "#define SNARKD_WC_HUGE", "#endif", "#endif", "namespace gen {"] + decl

    def proto(f):
        return ("static " if one or f in local else "") + sigs[f] + ";"

    def definition(f):  # its body, the storage class in front of its signature (after its comment line)
        return [bodies[f][0], ("static " if one or f in local else "") + bodies[f][1]] + bodies[f][2:]

    sources = []
    for u, group in enumerate(groups):
        mine = set(group)
        seen = sorted(mine | {c for f in group for c in callees[f]} | (set(roots) - set(range(m.n_imported_funcs))
                                                                        if u == 0 else set()))
        out = list(head) + [proto(f) for f in seen] + ["}  // namespace gen"]
        if u == 0:
            out += _module_parts(m, exported, live, one)
        out.append("namespace gen {")
        for f in group:
            out += definition(f)
        out.append("}  // namespace gen")
        if u == 0:
            out.append('#include "witness/compiled_entry.hpp"')
        sources.append("\n".join(out) + "\n")
    return sources, m


MERGE_MIN_OPS = 200  # instructions: smaller functions are left as they are (cheap to compile, and may be inlined)
MERGE_MAX_CONSTS = 32  # constants passed to a shared body, at most


def _same_but_constants(m, codes, native_map):
    """[(leader, [positions of the i32.const immediates that differ], [members])] for each group of two or more
    functions of one type and locals whose code is the same but for some i32.const immediates: circom writes a
    function per template instance (SHA-256's 64 K_n_run, 1,029 lines each, differ in two addresses), and each
    was compiled on its own."""
    ni = m.n_imported_funcs
    groups = {}
    for fi, code in codes.items():
        if fi in native_map or len(code) < MERGE_MIN_OPS:
            continue
        shape = tuple((op, None) if op == 0x41 else (op, _frozen(imm)) for op, imm in code)
        groups.setdefault((m.funcs[fi - ni], tuple(m.codes[fi - ni][0]), shape), []).append(fi)
    out = []
    for members in groups.values():
        if len(members) < 2:
            continue
        first = codes[members[0]]
        vary = [p for p, (op, imm) in enumerate(first) if op == 0x41 and any(codes[f][p][1] != imm for f in members)]
        if len(vary) <= MERGE_MAX_CONSTS:
            out.append((members[0], vary, members))
    return sorted(out, key=lambda g: g[0])


def _frozen(imm):  # an immediate as a key: block types and br_table's targets are lists
    if isinstance(imm, (list, tuple)):
        return tuple(_frozen(x) for x in imm)
    return imm


def _lit(t, v):
    if t == "i32":
        return "INT32_MIN" if v == -2 ** 31 else "%d" % v
    return "INT64_MIN" if v == -2 ** 63 else "%dLL" % v


SMALL = 1000  # lines: a function with one caller up to this size stays in its caller's unit


def _partition(live, roots, callees, cost, units):
    """The live functions in `units` groups of about equal cost (lines), largest first onto the lightest unit; a
    small function with one caller goes with it (so the compiler still sees, and may inline, what only one function
    calls; a large one would have been inlined as a whole at most, and keeping it there made one unit of the RSA
    verifier's two hold 28,000 of its 42,000 lines)."""
    if units <= 1:
        return [live]
    parent = {f: f for f in live}

    def top(f):
        while parent[f] != f:
            parent[f] = parent[parent[f]]
            f = parent[f]
        return f

    callers = {f: set() for f in live}
    for f in live:
        for c in callees[f]:
            callers[c].add(f)
    root_set = set(roots)
    for f in live:
        if f not in root_set and len(callers[f]) == 1 and cost[f] <= SMALL:
            (c,) = callers[f]
            parent[top(f)] = top(c)
    clusters = {}
    for f in live:
        clusters.setdefault(top(f), []).append(f)
    load = [0] * units
    groups = [[] for _ in range(units)]
    for members in sorted(clusters.values(), key=lambda g: (-sum(cost[f] for f in g), g[0])):
        u = min(range(units), key=lambda k: (load[k], k))
        groups[u] += members
        load[u] += sum(cost[f] for f in members)
    return [sorted(g) for g in groups if g] or [[]]


def _module_parts(m, exported, live, one):
    """The globals' definitions, the table, the data segments, the memory's size and the exports (the first unit)."""
    out = ["namespace gen {"]
    if not one:
        out += ["%s g%d = %s;" % (CT[t], k, _lit(t, init[1])) for k, (t, _, init) in enumerate(m.globals)]
    # every run starts from the module's own globals (a run that trapped left them anywhere)
    out.append("static void reset_globals() {%s}" % "".join(
        " g%d = %s;" % (k, _lit(t, init[1])) for k, (t, _, init) in enumerate(m.globals)))
    out.append("}  // namespace gen")
    tsize = m.table[0] if m.table else 0
    tab = ["nullptr"] * tsize
    ttypes = ["-1"] * tsize
    for (kind, off), fis in m.elems:
        for j, f in enumerate(fis):
            tab[off + j] = "(void*)&gen::%s" % fname(m, f)
            if f >= m.n_imported_funcs:
                ttypes[off + j] = str(m.funcs[f - m.n_imported_funcs])
    out.append("namespace rt { void* const TABLE[] = {%s}; const int TABLE_TYPE[] = {%s}; const uint32_t TABLE_N = %d; }"
               % (", ".join(tab) or "nullptr", ", ".join(ttypes) or "-1", tsize))
    # data segments, memory, exports
    out.append("namespace rt {")
    segs = []
    for k, ((kind, off), data) in enumerate(m.data):
        # as a string literal (every byte a 3-digit octal escape, so none runs into the next): the compiler reads it
        # as one token, where a list of numbers was one parsed expression each (the RSA verifier's 774 KB of
        # segments: 0.8 s of compiler CPU against 0.06); the array holds the literal's terminating zero too
        out.append("static const unsigned char D%d[%d] = \"%s\";" % (k, len(data) + 1,
                                                                 "".join(_OCT[x] for x in data)))
        segs.append("{%du, D%d, %du}" % (off % 2 ** 32, k, len(data)))
    out.append("const DataSeg DATA[] = {%s};" % (", ".join(segs) or "{0u, nullptr, 0u}"))
    out.append("const uint32_t NDATA = %d;" % len(segs))
    out.append("const uint32_t MEM_PAGES = %d;" % min(m.memory[0], 65537))
    out.append("inline void reset_globals() { gen::reset_globals(); }")
    out.append("}  // namespace rt")
    for nm in sorted(EXPORTS):
        idx = exported[nm]
        pt, rt_ = m.func_type(idx)
        out.append("%s exp_%s(%s) { %sgen::%s(%s); }" % (
            CT[rt_[0]] if rt_ else "void", nm, ", ".join("%s a%d" % (CT[t], j) for j, t in enumerate(pt)),
            "return " if rt_ else "", fname(m, idx), ", ".join("a%d" % j for j in range(len(pt)))))
    return out


_OCT = ["\\%03o" % x for x in range(256)]

if __name__ == "__main__":
    srcs, m = translate_units(open(sys.argv[1], "rb").read(), int(sys.argv[3]) if len(sys.argv) > 3 and
                              sys.argv[3].isdigit() else 1, native="--no-native" not in sys.argv)
    for k, src in enumerate(srcs):  # OUT.cpp, then OUT.1.cpp, ... for the further units
        open(sys.argv[2] if k == 0 else "%s.%d.cpp" % (sys.argv[2].removesuffix(".cpp"), k), "w").write(src)
