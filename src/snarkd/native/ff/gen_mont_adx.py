"""Generates ff/mont_adx.hpp: N-limb CIOS Montgomery multiplication with
mulx + adcx/adox (two independent carry chains), for N = 4 and 6.
Run: python3 gen_mont_adx.py > mont_adx.hpp
The modulus is read through a memory operand with displacement ("8+%[p]"; a
function-local copy, so it is addressed rip-relative even with -fPIC),
so the asm needs only N+1 accumulators + 2 temporaries + 2 pointers (fits -O0)."""


def row_regs(N, i):
    """Accumulator registers for row i: t[0..N-1] rotate through N+1 registers, A is the carry-out limb."""
    R = [f"%[r{k}]" for k in range(N + 1)]
    return [R[(i + j) % (N + 1)] for j in range(N)], R[(i + N) % (N + 1)]


def product_row(N, i, t, A, fresh=False, a="a", b="b", a_off=0):
    """t += a * b[i]: low words on the OF chain (adox), high words on the CF chain (adcx).
    fresh (row 0 of a plain product, t = 0): each mulx writes its high word straight into
    the next accumulator and one add/adc chain folds the low words in, N + 1 additions and
    no xor instead of 2N + 1 (mul_wide4 11% faster over independent products on Zen 3,
    bench/cpu-notes.md round 9; CIOS's row 0 measured no faster in this form, so it keeps
    the general one)."""
    if fresh:
        L = [f"movq {8*i}(%[{b}]), %%rdx", f"mulxq 0(%[{a}]), {t[0]}, {t[1]}"]
        for j in range(1, N):
            L.append(f"mulxq {8*j}(%[{a}]), %[lo], {t[j+1] if j < N - 1 else A}")
            L.append(f"{'addq' if j == 1 else 'adcq'} %[lo], {t[j]}")
        L.append(f"adcq $0, {A}")
        return L
    L = ["xorl %%eax, %%eax", f"movq {8*i}(%[{b}]), %%rdx"]
    for j in range(N):
        L.append(f"mulxq {a_off + 8*j}(%[{a}]), %[lo], %[hi]")
        L.append(f"adoxq %[lo], {t[j]}")
        L.append(f"adcxq %[hi], {t[j+1] if j < N - 1 else A}")
    L.append(f"adoxq %%rax, {A}")
    return L


def reduce_row(N, t, A):
    """t += m * p with m = t[0] * (-1/p) mod 2^64, so that t[0] becomes 0."""
    L = [f"movq {t[0]}, %%rdx", "imulq %[inv], %%rdx", "xorl %%eax, %%eax"]
    for j in range(N):
        L.append(f"mulxq {8*j}+%[p], %[lo], %[hi]")
        L.append(f"adcxq %[lo], {t[j]}")
        L.append(f"adoxq %[hi], {t[j+1] if j < N - 1 else A}")
    L.append(f"adcxq %%rax, {A}")
    return L


def asm_body(L):
    return "\n".join(f'      "{l}\\n\\t"' for l in L)


def acc_outputs(N, mode="+&r"):
    """The accumulators as asm outputs ("=&r" where the first row writes them all)."""
    return ", ".join(f'[r{k}] "{mode}"(r{k})' for k in range(N + 1))


def _cios_rows(N, pairs):
    """The asm body, accumulator declarations, outputs and stores of a CIOS over the sum of the
    products of `pairs` ((a, b) operand names, or (a, b, a_off): a's words a_off bytes on): each
    word i adds every pair's row into one accumulator, then one reduction row."""
    L = []
    for i in range(N):
        t, A = row_regs(N, i)
        for a, b, *off in pairs:
            L += product_row(N, i, t, A, a=a, b=b, a_off=off[0] if off else 0)
        L += reduce_row(N, t, A)
    fin = [(N + j) % (N + 1) for j in range(N)]
    regs = ", ".join(f"r{k} = 0" for k in range(N + 1))
    stores = " ".join(f"out[{j}] = r{fin[j]};" for j in range(N))
    return asm_body(L), regs, acc_outputs(N), stores


def _cios(N, pairs, name, doc):
    """CIOS over the sum of the products of `pairs` (see _cios_rows), one pointer per distinct
    operand name; an operand read at an offset is declared to the asm as that many words longer."""
    body, regs, outs, stores = _cios_rows(N, pairs)
    names = list(dict.fromkeys(x for a, b, *_ in pairs for x in (a, b)))
    words = {x: N for x in names}
    for a, _, *off in pairs:
        if off:
            words[a] = max(words[a], N + off[0] // 8)
    sig = ", ".join(f"const uint64_t* {x}" for x in names)
    ins = ", ".join(f'[{x}] "r"({x})' for x in names)
    ms = ", ".join(f'"m"(*(const uint64_t(*)[{words[x]}]){x})' for x in names)
    return f"""
{doc}
template <const uint64_t* P, const uint64_t* INV>
static inline __attribute__((always_inline)) void {name}{N}(uint64_t* out, {sig}) {{
  static constexpr uint64_t kP[{N}] = {{{", ".join(f"P[{j}]" for j in range(N))}}};
  static constexpr uint64_t kInv = *INV;
  uint64_t {regs}, lo, hi;
  asm(
{body}
      : {outs}, [lo] "=&r"(lo), [hi] "=&r"(hi)
      : {ins}, [p] "m"(kP), [inv] "m"(kInv),
        {ms}
      : "rax", "rdx", "cc");
  {stores}
}}
"""


def gen(N):
    return _cios(N, [("a", "b")], "mont_mul", "// out = a*b/R mod p in [0, 2p) (the caller does the final subtraction).")


def gen_mul_sum(N):
    """out = (a*b + c*d)/R mod p in [0, 2p): both products' rows into one CIOS accumulator, one
    reduction row per word of b and d. With a, c < p and b, d <= 2p the sum is below 4p^2 < pR
    (4p < R), so the result is below 2p, and each row's accumulator (t + a b_i + c d_i + m p,
    shifted) stays below 3p + 1 < R. For Fp2's products (u^2 = -1) in registers: a Karatsuba form
    keeps three 2N-word products and their differences on the stack (cpu-notes round 13)."""
    return _cios(N, [("a", "b"), ("c", "d")], "mont_mul_sum",
                 "// out = (a*b + c*d)/R mod p in [0, 2p) for a, c < p and b, d <= 2p with 4p < R (the caller does\n"
                 "// the final subtraction). Takes 13 registers: optimised builds only.")


def gen_fp2_sum6():
    """out = (a0*b + a1*d)/R mod p in [0, 2p), a = (a0, a1) one 12-word Fp2 value: BLS12-381's Fq2
    components as sums of two products in registers (mont_mul_sum4's form on 6 limbs). The two
    halves of a through one pointer and a displacement leave 7 accumulators + lo, hi, rax, rdx and
    3 pointers: 14 registers, where four pointers (mont_mul_sum6) would take all 15."""
    N = 6
    return _cios(N, [("a", "b"), ("a", "d", 8 * N)], "mont_fp2_sum",
                 "// out = (a[0..5]*b + a[6..11]*d)/R mod p in [0, 2p) for a's halves < p and b, d <= 2p with 4p < R\n"
                 "// (the caller does the final subtraction): a sum of products is below 4p^2 < pR, each row's\n"
                 "// accumulator below 3p + 1. Takes 14 registers: optimised builds only.")


def gen_wide(N):
    """out[0..2N-1] = a*b (schoolbook, no reduction)."""
    L = []
    for i in range(N):
        t, A = row_regs(N, i)
        L += product_row(N, i, t, A, fresh=i == 0)
        L.append(f"movq {t[0]}, {8*i}(%[o])")
        if i < N - 1:
            L.append(f"xorq {t[0]}, {t[0]}")
    for j in range(N):
        L.append(f"movq %[r{(N + j) % (N + 1)}], {8*(N + j)}(%[o])")
    body = asm_body(L)
    regs = ", ".join(f"r{k}" for k in range(N + 1))
    outs = acc_outputs(N, "=&r")
    return f"""
// out[0..{2*N-1}] = a*b as a plain {128*N}-bit product (no reduction).
static inline __attribute__((always_inline)) void mul_wide{N}(uint64_t* out, const uint64_t* a, const uint64_t* b) {{
  uint64_t {regs}, lo, hi;
  asm(
{body}
      : {outs}, [lo] "=&r"(lo), [hi] "=&r"(hi),
        "=m"(*(uint64_t(*)[{2*N}])out)
      : [a] "r"(a), [b] "r"(b), [o] "r"(out), "m"(*(const uint64_t(*)[{N}])a), "m"(*(const uint64_t(*)[{N}])b)
      : "rax", "rdx", "cc");
}}
"""


def gen_redc(N):
    """out = t/R mod p in [0, 2p) for t < p*R (t: 2N limbs)."""
    L = []
    for i in range(N):
        t, A = row_regs(N, i)
        L += reduce_row(N, t, A)
        L.append(f"addq %[c], {A}")
        L.append("xorl %k[c], %k[c]")
        L.append(f"addq {8*(i + N)}(%[t]), {A}")
        L.append("adcq $0, %[c]")
    body = asm_body(L)
    fin = [(N + j) % (N + 1) for j in range(N)]
    stores = " ".join(f"out[{j}] = r{fin[j]};" for j in range(N))
    outs = acc_outputs(N)
    return f"""
// out = t/R mod p in [0, 2p) for a {128*N}-bit t < p*R (the caller does the final subtraction).
template <const uint64_t* P, const uint64_t* INV>
static inline __attribute__((always_inline)) void redc{N}(uint64_t* out, const uint64_t* t) {{
  static constexpr uint64_t kP[{N}] = {{{", ".join(f"P[{j}]" for j in range(N))}}};
  static constexpr uint64_t kInv = *INV;
  uint64_t {", ".join(f"r{k} = t[{k}]" for k in range(N))}, r{N} = 0, c = 0, lo, hi;
  asm(
{body}
      : {outs}, [c] "+&r"(c), [lo] "=&r"(lo), [hi] "=&r"(hi)
      : [t] "r"(t), [p] "m"(kP), [inv] "m"(kInv), "m"(*(const uint64_t(*)[{2*N}])t)
      : "rax", "rdx", "cc");
  {stores}
}}
"""


def _sqr4_lines():
    """w0..w7 = a^2 (4 limbs): the six cross products a_i a_j (i < j) summed, doubled, and the
    four squares a_i^2 added -- 10 mulx instead of a product's 16. One add/adc carry chain per
    step (mulx leaves the flags alone, so the squares' products sit inside the last chain). No
    word overflows: the cross sum is below (2^64 - 1)^2 (X + X^2 + 2X^3 + X^4 + X^5) < X^7
    (X = 2^64), so w1..w6 hold it and its doubling's carry goes to w7; a^2 < X^8 takes the
    squares' carries."""
    a = lambda i: f"{8*i}(%[a])"
    return [
        # row 0: a0 * (a1, a2, a3) -> w1..w4
        f"movq {a(0)}, %%rdx",
        f"mulxq {a(1)}, %[w1], %[w2]",
        f"mulxq {a(2)}, %[lo], %[w3]",
        "addq %[lo], %[w2]",
        f"mulxq {a(3)}, %[lo], %[w4]",
        "adcq %[lo], %[w3]",
        "adcq $0, %[w4]",
        # row 1: a1 * (a2, a3) -> w3..w5
        f"movq {a(1)}, %%rdx",
        f"mulxq {a(2)}, %[lo], %[hi]",
        "addq %[lo], %[w3]",
        "adcq %[hi], %[w4]",
        f"mulxq {a(3)}, %[lo], %[w5]",
        "adcq $0, %[w5]",
        "addq %[lo], %[w4]",
        "adcq $0, %[w5]",
        # row 2: a2 * a3 -> w5..w6
        f"movq {a(2)}, %%rdx",
        f"mulxq {a(3)}, %[lo], %[w6]",
        "addq %[lo], %[w5]",
        "adcq $0, %[w6]",
        # double (the carry out of w6 into w7, zeroed first: xor clears CF before the chain)
        "xorl %k[w7], %k[w7]",
        "addq %[w1], %[w1]",
        "adcq %[w2], %[w2]",
        "adcq %[w3], %[w3]",
        "adcq %[w4], %[w4]",
        "adcq %[w5], %[w5]",
        "adcq %[w6], %[w6]",
        "adcq $0, %[w7]",
        # the squares a_i^2 at word 2i
        f"movq {a(0)}, %%rdx",
        "mulxq %%rdx, %[w0], %[hi]",
        "addq %[hi], %[w1]",
        f"movq {a(1)}, %%rdx",
        "mulxq %%rdx, %[lo], %[hi]",
        "adcq %[lo], %[w2]",
        "adcq %[hi], %[w3]",
        f"movq {a(2)}, %%rdx",
        "mulxq %%rdx, %[lo], %[hi]",
        "adcq %[lo], %[w4]",
        "adcq %[hi], %[w5]",
        f"movq {a(3)}, %%rdx",
        "mulxq %%rdx, %[lo], %[hi]",
        "adcq %[lo], %[w6]",
        "adcq %[hi], %[w7]",
    ]


def gen_mont_sqr4():
    """out = a^2/R in [0, 2p) for a < 2p, in one asm block: the squaring (_sqr4_lines), then the
    low half L = w0..w3 reduced alone, u = (L + m p)/R with m = -L/p mod R (four reduce rows,
    u < p + 1), and the high half added: a^2/R = H + u with H = floor(a^2/R) < 4p^2/R < p, so
    the sum is below 2p (no final subtraction here, as mont_mul4). The reduce rows' fifth
    accumulator is the pointer register, free (and zeroed) once a is read."""
    L = _sqr4_lines()
    L.append("xorl %k[a], %k[a]")
    R = ["%[w0]", "%[w1]", "%[w2]", "%[w3]", "%[a]"]
    for i in range(4):
        t = [R[(i + j) % 5] for j in range(4)]
        A = R[(i + 4) % 5]
        L += reduce_row(4, t, A)
    u = [R[(4 + j) % 5] for j in range(4)]  # %[a], w0, w1, w2
    L += [f"{'addq' if j == 0 else 'adcq'} {u[j]}, %[w{4 + j}]" for j in range(4)]
    body = asm_body(L)
    outs = ", ".join(f'[w{k}] "=&r"(w{k})' for k in range(8))
    return f"""
// out = a^2/R mod p in [0, 2p) for a < 2p (the caller does the final subtraction): 10 mulx
// for the square, 16 for the reduction of its low half, the high half added at the end.
// Takes 13 registers: optimised builds only.
template <const uint64_t* P, const uint64_t* INV>
static inline __attribute__((always_inline)) void mont_sqr4(uint64_t* out, const uint64_t* a) {{
  static constexpr uint64_t kP[4] = {{P[0], P[1], P[2], P[3]}};
  static constexpr uint64_t kInv = *INV;
  uint64_t {", ".join(f"w{k}" for k in range(8))}, lo, hi;
  const uint64_t* ap = a;
  asm(
{body}
      : {outs}, [lo] "=&r"(lo), [hi] "=&r"(hi), [a] "+&r"(ap)
      : [p] "m"(kP), [inv] "m"(kInv), "m"(*(const uint64_t(*)[4])a)
      : "rax", "rdx", "cc");
  out[0] = w4; out[1] = w5; out[2] = w6; out[3] = w7;
}}
"""

def gen_sqr_wide6():
    """out[0..11] = a^2 (6 limbs), no reduction: 21 mulx (15 cross products, doubled, + 6 squares)
    instead of a product's 36. Two passes in one asm block. The cross products a_i a_j (i < j) go
    row by row as in mul_wide6 (word p in register r[p % 7], word i final and stored after row i;
    row 0 fresh), so the rows need the same 13 registers. Then one pass from word 0 up doubles
    each word on the CF chain (adcx w, w) and adds the squares' words on the OF chain (adox):
    words 0-4 reloaded from out (8-byte stores just made: forwarded), 5-10 still in registers,
    11 zero. No carry leaves word 11: a^2 < 2^768."""
    N = 6
    R = [f"%[r{k}]" for k in range(N + 1)]
    reg = lambda p: R[p % (N + 1)]
    kreg = lambda p: f"%k[r{p % (N + 1)}]"  # its low 32 bits (xorl zeroes all 64)
    a = lambda i: f"{8*i}(%[a])"
    L = [f"movq {a(0)}, %%rdx", f"mulxq {a(1)}, {reg(1)}, {reg(2)}"]
    for j in range(2, N):
        L.append(f"mulxq {a(j)}, %[lo], {reg(j + 1)}")
        L.append(f"{'addq' if j == 2 else 'adcq'} %[lo], {reg(j)}")
    L.append(f"adcq $0, {reg(N)}")
    L += ["movq $0, 0(%[o])", f"xorl {kreg(0)}, {kreg(0)}"]
    for i in range(1, N - 1):
        L += ["xorl %%eax, %%eax", f"movq {a(i)}, %%rdx"]
        for j in range(i + 1, N):
            L.append(f"mulxq {a(j)}, %[lo], %[hi]")
            L.append(f"adoxq %[lo], {reg(i + j)}")
            L.append(f"adcxq %[hi], {reg(i + j + 1)}")
        L.append(f"adoxq %%rax, {reg(i + N)}")
        L.append(f"movq {reg(i)}, {8*i}(%[o])")
        if i < N - 2:
            L.append(f"xorl {kreg(i)}, {kreg(i)}")
    # words 0..N-2 are in out, N-1..2N-2 in registers; reg(N-2) is free for the reloads
    tmp = reg(N - 2)
    L.append("xorl %%eax, %%eax")
    for p in range(2 * N):
        i = p // 2
        if p % 2 == 0:
            L += [f"movq {a(i)}, %%rdx", "mulxq %%rdx, %[lo], %[hi]"]
        if p <= N - 2:
            w = tmp
            L.append(f"movq {8*p}(%[o]), {w}")
        elif p == 2 * N - 1:
            w = tmp
            L.append(f"movq $0, {w}")
        else:
            w = reg(p)
        L.append(f"adcxq {w}, {w}")
        L.append(f"adoxq {'%[lo]' if p % 2 == 0 else '%[hi]'}, {w}")
        L.append(f"movq {w}, {8*p}(%[o])")
    body = asm_body(L)
    regs = ", ".join(f"r{k}" for k in range(N + 1))
    outs = acc_outputs(N, "=&r")
    return f"""
// out[0..11] = a^2 as a plain 768-bit product (no reduction): 21 mulx (15 cross products,
// doubled, + 6 squares) instead of 36. Takes 13 registers: optimised builds only.
static inline __attribute__((always_inline)) void sqr_wide6(uint64_t* out, const uint64_t* a) {{
  uint64_t {regs}, lo, hi;
  asm(
{body}
      : {outs}, [lo] "=&r"(lo), [hi] "=&r"(hi),
        "=m"(*(uint64_t(*)[12])out)
      : [a] "r"(a), [o] "r"(out), "m"(*(const uint64_t(*)[6])a)
      : "rax", "rdx", "cc");
}}
"""


def _subtract_p_unless_borrow(N):
    """t -= p when t >= p, branch-free: subtract into copies s, keep them when nothing borrowed."""
    L = []
    for j in range(N):
        L.append(f"movq %[t{j}], %[s{j}]")
        L.append(f"{'subq' if j == 0 else 'sbbq'} {8*j}+%[p], %[s{j}]")
    for j in range(N):
        L.append(f"cmovncq %[s{j}], %[t{j}]")
    return L


def gen_final_sub(N):
    return _vector_op(N, "final_sub", "t in [0, 2p) -> t mod p", _subtract_p_unless_borrow(N), with_b=False)


def gen_add(N):
    """out = a + b mod p for a, b < p (no overflow: p < 2^(64N - 2))."""
    L = [f"movq {8*j}(%[a]), %[t{j}]" for j in range(N)]
    L += [f"{'addq' if j == 0 else 'adcq'} {8*j}(%[b]), %[t{j}]" for j in range(N)]
    return _binary_op(N, "add", "out = a + b mod p (a, b < p)", L + _subtract_p_unless_borrow(N))


def gen_sub(N):
    """out = a - b mod p: on a borrow add p back (p or 0 chosen by cmov; mov leaves the flags)."""
    L = [f"movq {8*j}(%[a]), %[t{j}]" for j in range(N)]
    L += [f"{'subq' if j == 0 else 'sbbq'} {8*j}(%[b]), %[t{j}]" for j in range(N)]
    for j in range(N):
        L.append(f"movq $0, %[s{j}]")
        L.append(f"cmovcq {8*j}+%[p], %[s{j}]")
    for j in range(N):
        L.append(f"{'addq' if j == 0 else 'adcq'} %[s{j}], %[t{j}]")
    return _binary_op(N, "sub", "out = a - b mod p (a, b < p)", L)


def _two_p(N):
    """2p's limbs, formed at compile time from P (the lazy NTT ops keep values in [0, 2p) or [0, 4p))."""
    return ", ".join(f"P[0] << 1" if j == 0 else f"(P[{j}] << 1) | (P[{j-1}] >> 63)" for j in range(N))


def gen_lazy_ntt(N):
    """Harvey's lazy butterflies (needs 4p < 2^(64N)): no reduction to [0, p) inside the transform.
    Their constant %[p] is 2p, so _subtract_p_unless_borrow subtracts 2p here.
    red2p: t in [0, 4p) -> [0, 2p). dit_lazy: x in [0, 4p), t = w y in [0, 2p) ->
    x = x' + t, y = x' + 2p - t (x' = red2p(x); both in [0, 4p)). dif_lazy: x, y in [0, 2p) ->
    x = red2p(x + y), y = x + 2p - y in [0, 4p) (the caller multiplies it by the twiddle)."""
    T = [f"%[t{j}]" for j in range(N)]
    S = [f"%[s{j}]" for j in range(N)]
    chain = lambda op0, op, src, dst: [f"{op0 if j == 0 else op} {src(j)}, {dst[j]}" for j in range(N)]
    ts = ", ".join(f'[t{j}] "=&r"(t{j})' for j in range(N))
    tio = ", ".join(f'[t{j}] "+r"(t[{j}])' for j in range(N))
    ss = ", ".join(f'[s{j}] "=&r"(s{j})' for j in range(N))
    decl_t = ", ".join(f"t{j}" for j in range(N))
    decl_s = ", ".join(f"s{j}" for j in range(N))
    k2p = f"static constexpr uint64_t kP[{N}] = {{{_two_p(N)}}};  // 2p"
    mem = lambda v, io="": f'"{io}m"(*(uint64_t(*)[{N}]){v})'
    red = asm_body(_subtract_p_unless_borrow(N))
    dit = asm_body([f"movq {8*j}(%[x]), {T[j]}" for j in range(N)] + _subtract_p_unless_borrow(N)
                   + [f"movq {T[j]}, {S[j]}" for j in range(N)] + chain("addq", "adcq", lambda j: f"{8*j}+%[p]", S)
                   + chain("subq", "sbbq", lambda j: f"{8*j}(%[w])", S) + chain("addq", "adcq", lambda j: f"{8*j}(%[w])", T))
    # both DIFs end alike: the difference stored over y, the sum in T reduced below 2p
    dif_end = [f"movq {S[j]}, {8*j}(%[y])" for j in range(N)] + _subtract_p_unless_borrow(N)
    dif = asm_body([f"movq {8*j}(%[x]), {T[j]}" for j in range(N)] + [f"movq {T[j]}, {S[j]}" for j in range(N)]
                   + chain("addq", "adcq", lambda j: f"{8*j}(%[y])", T) + chain("addq", "adcq", lambda j: f"{8*j}+%[p]", S)
                   + chain("subq", "sbbq", lambda j: f"{8*j}(%[y])", S) + dif_end)
    dif_rev = asm_body([f"movq {8*j}(%[x]), {T[j]}" for j in range(N)] + [f"movq {8*j}(%[y]), {S[j]}" for j in range(N)]
                       + chain("addq", "adcq", lambda j: f"{8*j}+%[p]", S) + chain("subq", "sbbq", lambda j: T[j], S)
                       + chain("addq", "adcq", lambda j: f"{8*j}(%[y])", T) + dif_end)
    dif_fn = lambda name, body: f"""template <const uint64_t* P>
static inline __attribute__((always_inline)) void {name}{N}(uint64_t* x, uint64_t* y) {{
  {k2p}
  uint64_t {decl_t}, {decl_s};
  asm(
{body}
      : {ts}, {ss}, {mem("y", "+")}
      : [p] "m"(kP), [x] "r"(x), [y] "r"(y), {mem("x")}
      : "cc");
  {store_x}
}}"""
    store_x = " ".join(f"x[{j}] = t{j};" for j in range(N))
    store_y = " ".join(f"y[{j}] = s{j};" for j in range(N))
    return f"""
// Lazy NTT butterflies (Harvey), for 4p < 2^{64*N}: values stay in [0, 2p) or [0, 4p) between
// stages, so no product's final subtraction and no modular correction of the sums; the
// transform reduces once at its end. Plain x86-64. t in [0, 4p) -> [0, 2p):
template <const uint64_t* P>
static inline __attribute__((always_inline)) void red2p{N}(uint64_t* t) {{
  {k2p}
  uint64_t {decl_s};
  asm(
{red}
      : {tio}, {ss}
      : [p] "m"(kP)
      : "cc");
}}

// DIT: x in [0, 4p), w (= twiddle * y, a lazy product) in [0, 2p); x' = red2p(x):
// x <- x' + w, y <- x' + 2p - w, both in [0, 4p). w may be y (read before y is written).
template <const uint64_t* P>
static inline __attribute__((always_inline)) void dit_lazy{N}(uint64_t* x, uint64_t* y, const uint64_t* w) {{
  {k2p}
  uint64_t {decl_t}, {decl_s};
  asm(
{dit}
      : {ts}, {ss}
      : [p] "m"(kP), [x] "r"(x), [w] "r"(w), {mem("x")}, {mem("w")}
      : "cc");
  {store_x} {store_y}
}}

// DIF: x, y in [0, 2p): x <- red2p(x + y) in [0, 2p), y <- x + 2p - y in [0, 4p) (for the
// caller's lazy product by the twiddle).
{dif_fn("dif_lazy", dif)}

// dif_lazy{N} with the difference the other way round: x <- red2p(x + y) in [0, 2p), y <- y + 2p - x in [0, 4p)
// (the inverse DIF on the forward twiddles: w^-j = -w^(m - j) of stage m, so (x - y) w^-j = (y - x) w^(m - j)).
{dif_fn("dif_lazy_rev", dif_rev)}
"""


def _binary_op(N, name, doc, L):
    """a and b are read inside the asm, word by word: a copy of the operand struct made by the
    compiler would read it with 16-byte loads, which cannot be forwarded from the 8-byte stores
    that wrote it a few instructions earlier (a store-forwarding stall of ~15 cycles per load)."""
    body = asm_body(L)
    ts = ", ".join(f'[t{j}] "=&r"(t{j})' for j in range(N))
    ss = ", ".join(f'[s{j}] "=&r"(s{j})' for j in range(N))
    stores = " ".join(f"out[{j}] = t{j};" for j in range(N))
    return f"""
// {doc}. Plain x86-64 (no BMI2/ADX needed); a and b are read word by word inside.
template <const uint64_t* P>
static inline __attribute__((always_inline)) void {name}{N}(uint64_t* out, const uint64_t* a, const uint64_t* b) {{
  static constexpr uint64_t kP[{N}] = {{{", ".join(f"P[{j}]" for j in range(N))}}};
  uint64_t {", ".join(f"t{j}" for j in range(N))}, {", ".join(f"s{j}" for j in range(N))};
  asm(
{body}
      : {ts}, {ss}
      : [p] "m"(kP), [a] "r"(a), [b] "r"(b), "m"(*(const uint64_t(*)[{N}])a), "m"(*(const uint64_t(*)[{N}])b)
      : "cc");
  {stores}
}}
"""


def _vector_op(N, name, doc, L, with_b):
    body = asm_body(L)
    ts = ", ".join(f'[t{j}] "+r"(t[{j}])' for j in range(N))
    ss = ", ".join(f'[s{j}] "=&r"(s{j})' for j in range(N))
    # b through a pointer: with N = 6, twelve registers are taken already
    bs = f', [b] "r"(b), "m"(*(const uint64_t(*)[{N}])b)' if with_b else ""
    sig = "uint64_t* t, const uint64_t* b" if with_b else "uint64_t* t"
    return f"""
// {doc}. Plain x86-64 (no BMI2/ADX needed).
template <const uint64_t* P>
static inline __attribute__((always_inline)) void {name}{N}({sig}) {{
  static constexpr uint64_t kP[{N}] = {{{", ".join(f"P[{j}]" for j in range(N))}}};
  uint64_t {", ".join(f"s{j}" for j in range(N))};
  asm(
{body}
      : {ts}, {ss}
      : [p] "m"(kP){bs}
      : "cc");
}}
"""


print("""// Generated by ff/gen_mont_adx.py -- do not edit. CIOS Montgomery multiplication
// with mulx + adcx/adox (two independent carry chains; needs BMI2 + ADX, so it is
// only called after a CPUID check, see mont.hpp), and branch-free modular add, sub
// and final subtraction (cmov; plain x86-64).
#pragma once
#include <cstdint>

namespace snarkd {
namespace adx {""" + gen(4) + gen(6) + gen_mul_sum(4) + gen_wide(4) + gen_mont_sqr4() + gen_redc(4) + gen_wide(6) + gen_fp2_sum6() + gen_sqr_wide6() + gen_redc(6)
      + gen_final_sub(4) + gen_add(4) + gen_sub(4) + gen_lazy_ntt(4) + gen_final_sub(6) + gen_add(6) + gen_sub(6) + """}  // namespace adx
}  // namespace snarkd""")
