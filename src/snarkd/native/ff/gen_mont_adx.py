"""Generates ff/mont_adx.hpp: N-limb CIOS Montgomery multiplication with
mulx + adcx/adox (two independent carry chains), for N = 4 and 6.
Run: python3 gen_mont_adx.py > mont_adx.hpp
The modulus is read through a memory operand with displacement ("8+%[p]"; a
function-local copy, so it is addressed rip-relative even with -fPIC),
so the asm needs only N+1 accumulators + 2 temporaries + 2 pointers (fits -O0)."""


def gen(N):
    R = [f"%[r{k}]" for k in range(N + 1)]
    L = []
    for i in range(N):
        t = [R[(i + j) % (N + 1)] for j in range(N)]
        A = R[(i + N) % (N + 1)]
        L.append("xorl %%eax, %%eax")
        L.append(f"movq {8*i}(%[b]), %%rdx")
        for j in range(N):
            L.append(f"mulxq {8*j}(%[a]), %[lo], %[hi]")
            L.append(f"adoxq %[lo], {t[j]}")
            L.append(f"adcxq %[hi], {t[j+1] if j < N - 1 else A}")
        L.append(f"adoxq %%rax, {A}")
        L.append(f"movq {t[0]}, %%rdx")
        L.append("imulq %[inv], %%rdx")
        L.append("xorl %%eax, %%eax")
        for j in range(N):
            L.append(f"mulxq {8*j}+%[p], %[lo], %[hi]")
            L.append(f"adcxq %[lo], {t[j]}")
            L.append(f"adoxq %[hi], {t[j+1] if j < N - 1 else A}")
        L.append(f"adcxq %%rax, {A}")
    fin = [(N + j) % (N + 1) for j in range(N)]
    body = "\n".join(f'      "{l}\\n\\t"' for l in L)
    regs = ", ".join(f"r{k} = 0" for k in range(N + 1))
    outs = ", ".join(f'[r{k}] "+&r"(r{k})' for k in range(N + 1))
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
    R = [f"%[r{k}]" for k in range(N + 1)]
    L = []
    for i in range(N):
        t = [R[(i + j) % (N + 1)] for j in range(N)]
        A = R[(i + N) % (N + 1)]
        L.append("xorl %%eax, %%eax")
        L.append(f"movq {8*i}(%[b]), %%rdx")
        for j in range(N):
            L.append(f"mulxq {8*j}(%[a]), %[lo], %[hi]")
            L.append(f"adoxq %[lo], {t[j]}")
            L.append(f"adcxq %[hi], {t[j+1] if j < N - 1 else A}")
        L.append(f"adoxq %%rax, {A}")
        L.append(f"movq {t[0]}, {8*i}(%[o])")
        if i < N - 1:
            L.append(f"xorq {t[0]}, {t[0]}")
    for j in range(N):
        L.append(f"movq {R[(N + j) % (N + 1)]}, {8*(N + j)}(%[o])")
    body = "\n".join(f'      "{l}\\n\\t"' for l in L)
    regs = ", ".join(f"r{k} = 0" for k in range(N + 1))
    outs = ", ".join(f'[r{k}] "+&r"(r{k})' for k in range(N + 1))
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
    R = [f"%[r{k}]" for k in range(N + 1)]
    L = []
    for i in range(N):
        t = [R[(i + j) % (N + 1)] for j in range(N)]
        A = R[(i + N) % (N + 1)]
        L.append(f"movq {t[0]}, %%rdx")
        L.append("imulq %[inv], %%rdx")
        L.append("xorl %%eax, %%eax")
        for j in range(N):
            L.append(f"mulxq {8*j}+%[p], %[lo], %[hi]")
            L.append(f"adcxq %[lo], {t[j]}")
            L.append(f"adoxq %[hi], {t[j+1] if j < N - 1 else A}")
        L.append(f"adcxq %%rax, {A}")
        L.append(f"addq %[c], {A}")
        L.append("xorl %k[c], %k[c]")
        L.append(f"addq {8*(i + N)}(%[t]), {A}")
        L.append("adcq $0, %[c]")
    body = "\n".join(f'      "{l}\\n\\t"' for l in L)
    fin = [(N + j) % (N + 1) for j in range(N)]
    stores = " ".join(f"out[{j}] = r{fin[j]};" for j in range(N))
    outs = ", ".join(f'[r{k}] "+&r"(r{k})' for k in range(N + 1))
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


print("""// Generated by ff/gen_mont_adx.py -- do not edit. CIOS Montgomery multiplication
// with mulx + adcx/adox (two independent carry chains); needs BMI2 + ADX, so it is
// only called after a CPUID check (see mont.hpp).
#pragma once
#include <cstdint>

namespace snarkd {
namespace adx {""" + gen(4) + gen(6) + gen_wide(4) + gen_redc(4) + gen_wide(6) + gen_redc(6) + """}  // namespace adx
}  // namespace snarkd""")
