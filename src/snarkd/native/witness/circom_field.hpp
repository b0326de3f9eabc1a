// circom's field operators, exactly as its wasm runtime (ffwasm's Fr_*) computes them, on
// Montgomery elements of the native core. The recorder (record.hpp) computes every concrete value
// with these, and the replay (program.hpp) every value of every later witness: one definition, so
// the two cannot disagree. tests/witness/test_circom_field.py checks each against the wasm's own
// Fr_* functions.
//
// With x the integer in [0, p) (circom's docs, "Basic operators"; ffwasm):
//   + - * / and unary -: the field; x / 0 = 0 (ffwasm's inverse of 0 is 0).
//   \ and %: the integers; by 0 the wasm traps (here: Trap, and the wasm engine reports it).
//   comparisons: on val(x) = x - p when x > (p - 1) / 2, else x ("negative" elements).
//   && || !: on x != 0.
//   & | ^ ~: on the integers, the result masked to bitlen(p) bits and reduced by p once.
//   << >> by k: k is val(k); a negative k shifts the other way; |k| >= bitlen(p) gives 0;
//     left shifts drop bits above 2^256, then mask and reduce as above.
//   toInt (array indices, loop bounds): the low 32 bits of x, or minus those of p - x when x is
//     negative, as a signed 32-bit integer.
#pragma once
#include <cstdint>
#include <cstring>

#include "ff/mont.hpp"

namespace snarkd::witness {

enum : int { TRAP_NONE = 0, TRAP_DIV_ZERO = 1 };

template <class P>
struct CircomField {
  using F = Mont<P>;
  static constexpr size_t N = P::N;
  static_assert(N == 4, "circom's scalar fields here are 4 limbs");

  struct Int {  // a plain little-endian integer of N limbs
    u64 v[N];
  };

  static constexpr unsigned bitlen() {
    unsigned b = 64 * N;
    while (b > 0 && !((P::MOD[(b - 1) / 64] >> ((b - 1) % 64)) & 1)) b--;
    return b;
  }
  static constexpr unsigned BITS = bitlen();

  static F from_u64(u64 x) {  // Montgomery
    F t = F::zero();
    t.v[0] = x;
    return t.to_mont();
  }

  // --- integers ---
  static int cmp(const Int& a, const Int& b) {
    for (size_t i = N; i-- > 0;) {
      if (a.v[i] != b.v[i]) return a.v[i] < b.v[i] ? -1 : 1;
    }
    return 0;
  }
  static constexpr u64 HALF_TOP = P::MOD[N - 1] >> 1;  // (p - 1) / 2's top limb (p is odd: no borrow reaches it)
  static Int half() {  // (p - 1) / 2
    Int h;
    for (size_t i = 0; i < N; i++) h.v[i] = (P::MOD[i] >> 1) | (i + 1 < N ? P::MOD[i + 1] << 63 : 0);
    return h;
  }
  static bool is_negative(const Int& a) {
    // a top limb below (p - 1) / 2's: a below it (the usual integer: Fr_toInt's counters and indices, shifts' amounts)
    if (a.v[N - 1] < HALF_TOP) return false;
    static const Int h = half();
    return cmp(a, h) > 0;
  }
  static Int sub_int(const Int& a, const Int& b) {
    Int r;
    u64 borrow = 0;
    for (size_t i = 0; i < N; i++) {
      u128 d = (u128)a.v[i] - b.v[i] - borrow;
      r.v[i] = (u64)d;
      borrow = (u64)(d >> 64) & 1;
    }
    return r;
  }
  static Int modulus() {
    Int m;
    std::memcpy(m.v, P::MOD, sizeof m.v);
    return m;
  }
  // Mask to bitlen(p) bits, then subtract p once if >= p (ffwasm's adjustBinResult).
  static Int adjust(Int a) {
    const unsigned top = BITS - 64 * (N - 1);
    if (top < 64) a.v[N - 1] &= (u64(1) << top) - 1;
    if (cmp(a, modulus()) >= 0) a = sub_int(a, modulus());
    return a;
  }
  static Int shl_raw(const Int& a, unsigned n) {  // n < bitlen(p) <= 256; bits past 2^256 dropped
    Int r{};
    unsigned w = n / 64, b = n % 64;
    for (size_t i = N; i-- > 0;) {
      if (i < w) continue;
      u64 x = a.v[i - w] << b;
      if (b && i - w >= 1) x |= a.v[i - w - 1] >> (64 - b);
      r.v[i] = x;
    }
    return r;
  }
  static Int shr_raw(const Int& a, unsigned n) {
    Int r{};
    unsigned w = n / 64, b = n % 64;
    for (size_t i = 0; i + w < N; i++) {
      u64 x = a.v[i + w] >> b;
      if (b && i + w + 1 < N) x |= a.v[i + w + 1] << (64 - b);
      r.v[i] = x;
    }
    return r;
  }
  // Long division of plain integers (N limbs): quotient and remainder, b != 0.
  static void divmod(const Int& a, const Int& b, Int& q, Int& rem) {
    if (!(b.v[1] | b.v[2] | b.v[3])) {  // a one-limb divisor (circom's `i % 32`, `x \ 2`...)
      const u64 d = b.v[0];
      u128 r = 0;
      q = Int{};
      for (size_t i = N; i-- > 0;) {
        u128 cur = (r << 64) | a.v[i];
        q.v[i] = u64(cur / d);
        r = cur % d;
      }
      rem = Int{};
      rem.v[0] = u64(r);
      return;
    }
    {  // a power-of-two divisor of more than one limb (bigint code's `x \ (1 << n)`, `x % (1 << n)`): shift, mask
      size_t limb = 0, ones = 0;
      for (size_t i = 0; i < N; i++)
        if (b.v[i]) {
          ones += size_t(__builtin_popcountll(b.v[i]));
          limb = i;
        }
      if (ones == 1) {
        const unsigned k = unsigned(64 * limb) + unsigned(__builtin_ctzll(b.v[limb]));
        q = shr_raw(a, k);
        rem = a;
        for (size_t i = 0; i < N; i++) {
          if (64 * i >= k) rem.v[i] = 0;
          else if (64 * (i + 1) > k) rem.v[i] &= (u64(1) << (k - 64 * i)) - 1;
        }
        return;
      }
    }
    Int r{};
    q = Int{};
    int top = -1;  // the dividend's top bit: above it the remainder stays 0 and the quotient's bits 0
    for (size_t i = N; i-- > 0;)
      if (a.v[i]) {
        top = int(64 * i) + 63 - __builtin_clzll(a.v[i]);
        break;
      }
    for (int bit = top; bit >= 0; bit--) {
      // r = (r << 1) | bit; r < b <= 2^256 - 1 so r << 1 fits in N limbs plus one carry bit
      u64 carry = r.v[N - 1] >> 63;
      r = shl_raw(r, 1);
      r.v[0] |= (a.v[bit / 64] >> (bit % 64)) & 1;
      if (carry || cmp(r, b) >= 0) {
        r = sub_int(r, b);
        q.v[bit / 64] |= u64(1) << (bit % 64);
      }
    }
    rem = r;
  }

  // --- the operators, on plain values ("N": an F holding plain limbs) ---------------------------
  // The replay keeps integer-valued work in plain form (program.hpp); the recorder uses the
  // Montgomery forms below, which convert around these: one definition of each operator.
  static Int as_int(const F& n) {
    Int r;
    std::memcpy(r.v, n.v, sizeof r.v);
    return r;
  }
  static F as_f(const Int& x) {
    F r;
    std::memcpy(r.v, x.v, sizeof r.v);
    return r;
  }
  static F n_bool(bool b) {
    F r = F::zero();
    r.v[0] = b ? 1 : 0;
    return r;
  }
  static bool n_less(const F& a, const F& b) {  // val(a) < val(b)
    // both top limbs below (p - 1) / 2's (a loop counter, a 121-bit limb: nearly every comparison): both values
    // non-negative, their integers' order. Compared limb by limb from the operands: a copy of them into Ints went
    // through 16-byte stores that the top limb's 8-byte load then waited on.
    if (a.v[N - 1] < HALF_TOP && b.v[N - 1] < HALF_TOP) {
      for (size_t i = N; i-- > 1;)
        if (a.v[i] != b.v[i]) return a.v[i] < b.v[i];
      return a.v[0] < b.v[0];
    }
    Int x = as_int(a), y = as_int(b);
    bool nx = is_negative(x), ny = is_negative(y);
    if (nx != ny) return nx;
    return cmp(x, y) < 0;
  }
  // b a power of two 2^k, k < 64 * N (bigint code's `x \ (1 << n)`, `x % (1 << n)`): its k, else -1. divmod's own
  // power-of-two path gives the same quotient and remainder; this one keeps the limbs in registers (divmod's Int
  // results, copied out 16 bytes at a time, waited on their 8-byte stores)
  static int power_of_two(const F& b) {
    int k = -1;
    for (size_t i = 0; i < N; i++)
      if (b.v[i]) {
        if (k >= 0 || (b.v[i] & (b.v[i] - 1))) return -1;
        k = int(64 * i) + __builtin_ctzll(b.v[i]);
      }
    return k;
  }
  static F low_bits(const F& a, unsigned k) {  // a mod 2^k
    F r;
    for (size_t i = 0; i < N; i++) {
      const unsigned lo = unsigned(64 * i);
      r.v[i] = k >= lo + 64 ? a.v[i] : k <= lo ? 0 : a.v[i] & ((u64(1) << (k - lo)) - 1);
    }
    return r;
  }
  static int n_idiv(const F& a, const F& b, F& out) {
    if (const int k = power_of_two(b); k >= 0) {
      out = shr_small(a, unsigned(k));  // (k < 64 * N)
      return TRAP_NONE;
    }
    Int x = as_int(a), y = as_int(b), q, r;
    if (!(y.v[0] | y.v[1] | y.v[2] | y.v[3])) return TRAP_DIV_ZERO;
    divmod(x, y, q, r);
    out = as_f(q);
    return TRAP_NONE;
  }
  static int n_mod(const F& a, const F& b, F& out) {
    if (const int k = power_of_two(b); k >= 0) {
      out = low_bits(a, unsigned(k));
      return TRAP_NONE;
    }
    Int x = as_int(a), y = as_int(b), q, r;
    if (!(y.v[0] | y.v[1] | y.v[2] | y.v[3])) return TRAP_DIV_ZERO;
    divmod(x, y, q, r);
    out = as_f(r);
    return TRAP_NONE;
  }
  static F n_band(const F& a, const F& b) {
    F r;
    for (size_t i = 0; i < N; i++) r.v[i] = a.v[i] & b.v[i];
    // a top limb below p's: r < p and no bit at or above bitlen(p), so adjust would return r as it is (a & b of
    // values below p: always); r built in place, not passed through adjust's Int by value (16-byte copies of
    // limbs just stored one by one: a store-forwarding stall per call)
    if (r.v[N - 1] < P::MOD[N - 1]) return r;
    return as_f(adjust(as_int(r)));
  }
  static F n_bor(const F& a, const F& b) {
    Int r;
    for (size_t i = 0; i < N; i++) r.v[i] = a.v[i] | b.v[i];
    return as_f(adjust(r));
  }
  static F n_bxor(const F& a, const F& b) {
    Int r;
    for (size_t i = 0; i < N; i++) r.v[i] = a.v[i] ^ b.v[i];
    return as_f(adjust(r));
  }
  static F n_bnot(const F& a) {
    Int r;
    for (size_t i = 0; i < N; i++) r.v[i] = ~a.v[i];
    return as_f(adjust(r));
  }
  // The shift amount as circom reads it: (left?, count), count >= BITS meaning "all out".
  static void shift_amount(const F& k, bool left_if_positive, bool& left, unsigned& count) {
    Int x = as_int(k);
    bool negk = is_negative(x);
    if (negk) x = sub_int(modulus(), x);
    left = negk ? !left_if_positive : left_if_positive;
    bool small = !(x.v[1] | x.v[2] | x.v[3]) && x.v[0] < BITS;
    count = small ? unsigned(x.v[0]) : BITS;
  }
  // a shifted by 0 <= n < BITS, right, or left then adjusted (shr_raw; adjust(shl_raw)) with the limbs in registers:
  // the whole-limb part a switch of constant moves, the rest one funnel shift per limb. Built through Ints (and a
  // first version through a local array, which the compiler vectorized) the limbs went to memory in 16-byte stores
  // and came back in loads that straddled them: a store-forwarding stall per shift.
  static void limbs_of(const F& a, u64& x0, u64& x1, u64& x2, u64& x3) {
    x0 = a.v[0], x1 = a.v[1], x2 = a.v[2], x3 = a.v[3];
  }
  static F shr_small(const F& a, unsigned n) {
    u64 x0, x1, x2, x3;
    limbs_of(a, x0, x1, x2, x3);
    switch (n / 64) {  // whole limbs out at the bottom
      case 3: x0 = x3, x1 = x2 = x3 = 0; break;
      case 2: x0 = x2, x1 = x3, x2 = x3 = 0; break;
      case 1: x0 = x1, x1 = x2, x2 = x3, x3 = 0; break;
      default: break;
    }
    const unsigned b = n % 64;
    // (hi << 1) << (63 - b): hi << (64 - b) without the undefined shift by 64 when b is 0
    F r;
    r.v[0] = (x0 >> b) | ((x1 << 1) << (63 - b));
    r.v[1] = (x1 >> b) | ((x2 << 1) << (63 - b));
    r.v[2] = (x2 >> b) | ((x3 << 1) << (63 - b));
    r.v[3] = x3 >> b;
    return r;
  }
  static F shl_small(const F& a, unsigned n) {
    u64 x0, x1, x2, x3;
    limbs_of(a, x0, x1, x2, x3);
    switch (n / 64) {  // whole limbs in at the bottom, those past 2^256 dropped
      case 3: x3 = x0, x0 = x1 = x2 = 0; break;
      case 2: x3 = x1, x2 = x0, x0 = x1 = 0; break;
      case 1: x3 = x2, x2 = x1, x1 = x0, x0 = 0; break;
      default: break;
    }
    const unsigned b = n % 64;
    u64 r0 = x0 << b, r1 = (x1 << b) | ((x0 >> 1) >> (63 - b)), r2 = (x2 << b) | ((x1 >> 1) >> (63 - b)),
        r3 = (x3 << b) | ((x2 >> 1) >> (63 - b));
    constexpr unsigned top = BITS - 64 * (N - 1);  // adjust: mask to bitlen(p), then p subtracted once if >= p
    if (top < 64) r3 &= (u64(1) << top) - 1;
    // r - p and its borrow: r >= p when none
    const u128 d0 = u128(r0) - P::MOD[0];
    const u128 d1 = u128(r1) - P::MOD[1] - (u64(d0 >> 64) & 1);
    const u128 d2 = u128(r2) - P::MOD[2] - (u64(d1 >> 64) & 1);
    const u128 d3 = u128(r3) - P::MOD[3] - (u64(d2 >> 64) & 1);
    F out;
    if (u64(d3 >> 64) & 1) {
      out.v[0] = r0, out.v[1] = r1, out.v[2] = r2, out.v[3] = r3;
    } else {
      out.v[0] = u64(d0), out.v[1] = u64(d1), out.v[2] = u64(d2), out.v[3] = u64(d3);
    }
    return out;
  }
  static F n_shift(const F& a, const F& k, bool left_if_positive) {
    // k a small non-negative integer (nearly every shift: circom's `1 << n`, `x >> n`): shift_amount's answer
    // without its copies
    if (!(k.v[1] | k.v[2] | k.v[3]) && k.v[0] < BITS)
      return left_if_positive ? shl_small(a, unsigned(k.v[0])) : shr_small(a, unsigned(k.v[0]));
    bool left;
    unsigned n;
    shift_amount(k, left_if_positive, left, n);
    if (n >= BITS) return F::zero();
    Int x = as_int(a);
    return as_f(left ? adjust(shl_raw(x, n)) : shr_raw(x, n));
  }
  static F n_shl(const F& a, const F& k) { return n_shift(a, k, true); }
  static F n_shr(const F& a, const F& k) { return n_shift(a, k, false); }
  // (a >> n) & 1 for 0 <= n < BITS: circom's bit extraction in one step
  static F n_bit(const F& a, unsigned n) { return n_bool((a.v[n / 64] >> (n % 64)) & 1); }
  static int32_t n_to_int32(const F& a) {
    Int x = as_int(a);
    if (is_negative(x)) {
      Int m = sub_int(modulus(), x);
      return int32_t(uint32_t(0) - uint32_t(m.v[0]));
    }
    return int32_t(uint32_t(x.v[0]));
  }

  // --- the operators on Montgomery values (the recorder's) -----------------------------------
  static F to_n(const F& a) { return a.from_mont(); }
  static F to_m(const F& n) { return n.to_mont(); }
  static F add(const F& a, const F& b) { return a + b; }
  static F sub(const F& a, const F& b) { return a - b; }
  static F mul(const F& a, const F& b) { return a * b; }
  static F neg(const F& a) { return a.neg(); }
  static F inv(const F& a) { return a.inv(); }  // inv(0) = 0, as ffwasm's
  static F div(const F& a, const F& b) { return a * b.inv(); }
  // a^e from the exponent's top bit (F::pow_limbs walks all 256: bigint code's `2 ** n` has n < 2^8, and 248
  // squarings per call of nothing but ones were a quarter of the RSA verifier's control-flow run)
  static F pow_n(const F& a, const F& e_plain) {
    F r = F::one();
    size_t i = N;
    while (i > 0 && !e_plain.v[i - 1]) i--;
    if (!i) return r;
    int b = 63 - __builtin_clzll(e_plain.v[i - 1]);
    for (; i-- > 0; b = 63)
      for (; b >= 0; b--) {
        r = r.sqr();
        if ((e_plain.v[i] >> b) & 1) r = r * a;
      }
    return r;
  }
  static F pow(const F& a, const F& e) { return pow_n(a, to_n(e)); }
  static int idiv(const F& a, const F& b, F& out) {
    F q;
    int t = n_idiv(to_n(a), to_n(b), q);
    if (!t) out = to_m(q);
    return t;
  }
  static int mod(const F& a, const F& b, F& out) {
    F r;
    int t = n_mod(to_n(a), to_n(b), r);
    if (!t) out = to_m(r);
    return t;
  }
  static F boolean(bool b) { return b ? F::one() : F::zero(); }
  static bool is_true(const F& a) { return !a.is_zero(); }  // either form: 0 is 0
  static F eq(const F& a, const F& b) { return boolean(a == b); }
  static F neq(const F& a, const F& b) { return boolean(a != b); }
  static bool less(const F& a, const F& b) { return n_less(to_n(a), to_n(b)); }
  static F lt(const F& a, const F& b) { return boolean(less(a, b)); }
  static F gt(const F& a, const F& b) { return boolean(less(b, a)); }
  static F leq(const F& a, const F& b) { return boolean(!less(b, a)); }
  static F geq(const F& a, const F& b) { return boolean(!less(a, b)); }
  static F land(const F& a, const F& b) { return boolean(is_true(a) && is_true(b)); }
  static F lor(const F& a, const F& b) { return boolean(is_true(a) || is_true(b)); }
  static F lnot(const F& a) { return boolean(!is_true(a)); }
  static F band(const F& a, const F& b) { return to_m(n_band(to_n(a), to_n(b))); }
  static F bor(const F& a, const F& b) { return to_m(n_bor(to_n(a), to_n(b))); }
  static F bxor(const F& a, const F& b) { return to_m(n_bxor(to_n(a), to_n(b))); }
  static F bnot(const F& a) { return to_m(n_bnot(to_n(a))); }
  static F shl(const F& a, const F& k) { return to_m(n_shl(to_n(a), to_n(k))); }
  static F shr(const F& a, const F& k) { return to_m(n_shr(to_n(a), to_n(k))); }
  static int32_t to_int32(const F& a) { return n_to_int32(to_n(a)); }
};

}  // namespace snarkd::witness
