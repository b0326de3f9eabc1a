"""Generates curves/bn254.hpp and curves/bls12_381.hpp (field parameters, Montgomery
constants, snarkjs roots of unity, curve b). Run with py_ecc installed:
    python3 gen_constants.py
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))


def limbs(x, n): return [(x >> (64*i)) & (2**64-1) for i in range(n)]
def arr(x, n): return "{" + ", ".join("0x%016xULL" % l for l in limbs(x, n)) + "}"
def field(name, p, n):
    R = 2**(64*n)
    inv = (-pow(p, -1, 2**64)) % 2**64
    return f"""struct {name} {{
  static constexpr size_t N = {n};
  static constexpr size_t BITS = {p.bit_length()};
  static constexpr u64 MOD[N] = {arr(p,n)};
  static constexpr u64 R2[N] = {arr(R*R % p, n)};
  static constexpr u64 ONE[N] = {arr(R % p, n)};
  static constexpr u64 INV = 0x{inv:016x}ULL;
}};
"""
def mont(x, p, n): return arr(x * 2**(64*n) % p, n)
out = {}
# BN254
q = 0x30644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd47
r = 0x30644e72e131a029b85045b68181585d2833e84879b9709143e1f593f0000001
def fr_extra(r, n=4):
    s = 0; t = r-1
    while t % 2 == 0: t//=2; s+=1
    w = pow(5, t, r)
    return s, w
def write(curve, q, r, nq, b1, b2, wexp):
    s, w = fr_extra(r)
    assert w == wexp, (hex(w),)
    b2inv = None
    txt = f"""// Generated constants for {curve} (see why: Montgomery R = 2^(64*N)).
#pragma once
#include "ff/mont.hpp"
#include "ff/fp2.hpp"
namespace snarkd {{ namespace {curve} {{
{field('FqP', q, nq)}
{field('FrP', r, 4)}
using Fq = Mont<FqP>;
using Fr = Mont<FrP>;
using Fq2 = Fp2<Fq, -1>;
static constexpr unsigned TWO_ADICITY = {s};
// omega_{{2^s}} = 5^t, Montgomery form (snarkjs/ffjavascript: nqr = 5)
static constexpr u64 ROOT_MONT[4] = {mont(w, r, 4)};
// Fr.shift = nqr^2 = 25 (used by snarkjs when the domain is 2^s)
static constexpr u64 SHIFT_MONT[4] = {mont(25, r, 4)};
static constexpr u64 G1_B[{nq}] = {mont(b1, q, nq)};
static constexpr u64 G2_B0[{nq}] = {mont(b2[0], q, nq)};
static constexpr u64 G2_B1[{nq}] = {mont(b2[1], q, nq)};
}} }}
"""
    open(os.path.join(HERE, f"{curve}.hpp"), "w").write(txt)
# BN254 b2 = 3/(9+u) = 3(9-u)/82
inv82 = pow(82, -1, q)
write("bn254", q, r, 4, 3, (27*inv82 % q, (-3*inv82) % q), 19103219067921713944291392827692070036145651957329286315305642004821462161904)
q2 = 0x1a0111ea397fe69a4b1ba7b6434bacd764774b84f38512bf6730d2a0f6b0f6241eabfffeb153ffffb9feffffffffaaab
r2 = 0x73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000001
write("bls12_381", q2, r2, 6, 4, (4, 4), 0x0212d79e5b416b6f0fd56dc8d168d6c0c4024ff270b3e0941b788f500b912f1f)
# check bn254 b2 matches py_ecc
from py_ecc.optimized_bn128 import b2
print(b2.coeffs, (27*inv82 % q, (-3*inv82) % q))
