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


def product_row(N, i, t, A):
    """t += a * b[i]: low words on the OF chain (adox), high words on the CF chain (adcx)."""
    L = ["xorl %%eax, %%eax", f"movq {8*i}(%[b]), %%rdx"]
    for j in range(N):
        L.append(f"mulxq {8*j}(%[a]), %[lo], %[hi]")
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


def acc_outputs(N):
    return ", ".join(f'[r{k}] "+&r"(r{k})' for k in range(N + 1))


def gen(N):
    L = []
    for i in range(N):
        t, A = row_regs(N, i)
        L += product_row(N, i, t, A) + reduce_row(N, t, A)
    fin = [(N + j) % (N + 1) for j in range(N)]
    body = asm_body(L)
    regs = ", ".join(f"r{k} = 0" for k in range(N + 1))
    outs = acc_outputs(N)
    stores = " ".join(f"out[{j}] = r{fin[j]};" for j in range(N))
    return f"""
// out = a*b/R mod p in [0, 2p) (the caller does the final subtraction).
template <const uint64_t* P, const uint64_t* INV>
static inline __attribute__((always_inline)) void mont_mul{N}(uint64_t* out, const uint64_t* a, const uint64_t* b) {{
  static constexpr uint64_t kP[{N}] = {{{", ".join(f"P[{j}]" for j in range(N))}}};
  static constexpr uint64_t kInv = *INV;
  uint64_t {regs}, lo, hi;
  asm(
{body}
      : {outs}, [lo] "=&r"(lo), [hi] "=&r"(hi)
      : [a] "r"(a), [b] "r"(b), [p] "m"(kP), [inv] "m"(kInv),
        "m"(*(const uint64_t(*)[{N}])a), "m"(*(const uint64_t(*)[{N}])b)
      : "rax", "rdx", "cc");
  {stores}
}}
"""


def gen_wide(N):
    """out[0..2N-1] = a*b (schoolbook, no reduction)."""
    L = []
    for i in range(N):
        t, A = row_regs(N, i)
        L += product_row(N, i, t, A)
        L.append(f"movq {t[0]}, {8*i}(%[o])")
        if i < N - 1:
            L.append(f"xorq {t[0]}, {t[0]}")
    for j in range(N):
        L.append(f"movq %[r{(N + j) % (N + 1)}], {8*(N + j)}(%[o])")
    body = asm_body(L)
    regs = ", ".join(f"r{k} = 0" for k in range(N + 1))
    outs = acc_outputs(N)
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
namespace adx {""" + gen(4) + gen(6) + gen_wide(4) + gen_redc(4) + gen_wide(6) + gen_redc(6)
      + gen_final_sub(4) + gen_add(4) + gen_sub(4) + gen_final_sub(6) + gen_add(6) + gen_sub(6) + """}  // namespace adx
}  // namespace snarkd""")
