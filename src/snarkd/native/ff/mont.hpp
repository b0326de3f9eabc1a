// Montgomery prime field, N x 64-bit limbs, templated over the parameters P:
//   P::N, P::BITS, P::MOD[N], P::R2[N] (R^2 mod p), P::ONE[N] (R mod p),
//   P::INV (-p^{-1} mod 2^64).   R = 2^(64N).
// Why "no-carry" CIOS: every modulus we use has its top limb < 2^63 - 1, so the
// extra carry word of textbook CIOS is never needed (gnark's observation), and
// a + b never overflows N limbs.
#pragma once
#include <cstdint>
#include <cstddef>
#include <cstring>
#include "ff/inverse.hpp"
#if defined(__x86_64__)
#include <cpuid.h>
// GCC 12's AVX-512 shift intrinsics pass _mm512_undefined_epi32() through, which
// -Wmaybe-uninitialized reports at every use (GCC bug 105593, fixed in 13): the
// header is included with those warnings off (they refer to its own lines).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#include "ff/mont_adx.hpp"
#endif

namespace snarkd {
using u64 = uint64_t;
using u128 = unsigned __int128;

#if defined(__x86_64__)
// Runtime dispatch (portable build): 4-limb multiplication uses mulx/adcx/adox
// asm when the CPU has BMI2 + ADX. Not const so tests can force the C path; changed only
// through native/path_gate.hpp's switch, between computations (read here per product).
inline bool detect_adx() {
  unsigned a, b, c, d;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b & (1u << 8)) && (b & (1u << 19));  // BMI2, ADX
}
inline bool g_use_adx = detect_adx();
#else
inline bool g_use_adx = false;
inline bool detect_adx() { return false; }
#endif

template <class P>
struct Mont {
  using Params = P;
  static constexpr size_t N = P::N;
  static constexpr size_t BITS = P::BITS;
  static_assert(P::MOD[N - 1] < 0x7fffffffffffffffULL, "no-carry CIOS needs a spare top bit");
  u64 v[N];
  // the dedicated 4- and 6-limb squarings (sqr_to, sqr_lazy_to): x86-64 with ADX (checked at
  // run time), optimised builds (their asm takes 12-13 registers); a^2 < pR for a < 2p needs
  // 4p < R
#if defined(__x86_64__) && defined(__OPTIMIZE__)
  static constexpr bool HAS_SQR4 = N == 4 && P::MOD[N - 1] < (1ULL << 62);
  static constexpr bool HAS_SQR6 = N == 6 && P::MOD[N - 1] < (1ULL << 62);
#else
  static constexpr bool HAS_SQR4 = false;
  static constexpr bool HAS_SQR6 = false;
#endif

  static inline Mont zero() { Mont r; for (size_t i = 0; i < N; i++) r.v[i] = 0; return r; }
  static inline Mont one() { Mont r; for (size_t i = 0; i < N; i++) r.v[i] = P::ONE[i]; return r; }
  static inline Mont from_limbs(const u64* l) { Mont r; for (size_t i = 0; i < N; i++) r.v[i] = l[i]; return r; }
  static inline Mont modulus() { return from_limbs(P::MOD); }

  // Unaligned load/store of raw little-endian limbs (data may come from an mmap).
  static inline Mont load(const void* p) { Mont r; std::memcpy(r.v, p, sizeof(r.v)); return r; }
  inline void store(void* p) const { std::memcpy(p, v, sizeof(v)); }
  // The same, word by word through general registers: for a value just computed (its
  // words written by 8-byte stores a few instructions earlier), which a plain copy would
  // read back with 16-byte loads that cannot be forwarded from those stores (a ~15-cycle
  // stall each; the empty asm keeps the compiler from merging the words into vectors).
  inline __attribute__((always_inline)) void store_words(void* p) const {
    uint8_t* d = static_cast<uint8_t*>(p);
#pragma GCC unroll 8
    for (size_t i = 0; i < N; i++) {
      u64 w = v[i];
      asm("" : "+r"(w));
      std::memcpy(d + 8 * i, &w, 8);
    }
  }

  inline bool is_zero() const {
    u64 acc = 0;
    for (size_t i = 0; i < N; i++) acc |= v[i];
    return acc == 0;
  }
  inline bool operator==(const Mont& o) const {
    u64 acc = 0;
    for (size_t i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
    return acc == 0;
  }
  inline bool operator!=(const Mont& o) const { return !(*this == o); }

  // raw integer compare against the modulus
  static inline bool lt_mod(const u64* a) {
    for (size_t i = N; i-- > 0;) {
      if (a[i] < P::MOD[i]) return true;
      if (a[i] > P::MOD[i]) return false;
    }
    return false;
  }
  inline bool is_canonical() const { return lt_mod(v); }

  // subtract p while >= p (plain integers < 2^(64N); used for scalars/witness reduction)
  static inline void reduce_raw(u64* a) {
    while (!lt_mod(a)) {
      u64 borrow = 0;
#pragma GCC unroll 8
      for (size_t i = 0; i < N; i++) {
        u128 d = (u128)a[i] - P::MOD[i] - borrow;
        a[i] = (u64)d;
        borrow = (u64)(d >> 64) & 1;
      }
    }
  }

  // t -= p if t >= p (branch-free: a data-dependent branch here mispredicts half the time)
  static inline __attribute__((always_inline)) void final_sub(u64* t) {
#if defined(__x86_64__)
    if constexpr (N == 4) { adx::final_sub4<P::MOD>(t); return; }
    if constexpr (N == 6) { adx::final_sub6<P::MOD>(t); return; }
#endif
    u64 s[N];
    u64 borrow = 0;
#pragma GCC unroll 8
    for (size_t i = 0; i < N; i++) {
      u128 d = (u128)t[i] - P::MOD[i] - borrow;
      s[i] = (u64)d;
      borrow = (u64)(d >> 64) & 1;
    }
    u64 mask = (u64)0 - borrow;  // all ones if t < p (keep t)
#pragma GCC unroll 8
    for (size_t i = 0; i < N; i++) t[i] = (t[i] & mask) | (s[i] & ~mask);
  }

  // Inlined where it is used: the asm path is short, and a call costs a register
  // save/restore and a round trip through memory per multiplication.
  // o = a * b in place (o may be a or b): the hot loops use the _to forms so that a result
  // goes straight to where it is kept, not through a temporary copied with 16-byte moves.
  static inline __attribute__((always_inline)) void mul_to(Mont& o, const Mont& a, const Mont& b) {
#if defined(__x86_64__)
    if constexpr (N == 4) {
      if (__builtin_expect(g_use_adx, 1)) {
        adx::mont_mul4<P::MOD, &P::INV>(o.v, a.v, b.v);
        final_sub(o.v);
        return;
      }
    }
#if defined(__OPTIMIZE__)  // at -O0 the frame pointer leaves too few registers
    if constexpr (N == 6) {
      if (__builtin_expect(g_use_adx, 1)) {
        adx::mont_mul6<P::MOD, &P::INV>(o.v, a.v, b.v);
        final_sub(o.v);
        return;
      }
    }
#endif
#endif
    o = mul_portable(a, b);
  }
  static inline __attribute__((always_inline)) Mont mul(const Mont& a, const Mont& b) {
    Mont r;
    mul_to(r, a, b);
    return r;
  }
  // o = a * b in [0, 2p), the final subtraction left out, for a, b < 2p: for values that only
  // feed further products (the batch-affine adder's running products, 1/dx and lambda). With
  // 4p < R the Montgomery result of such inputs is below (4p^2 + pR) / R < 2p, and the CIOS
  // accumulator stays below a + p < R. Not canonical: compare, test or store only after
  // canonical_to.
  static inline __attribute__((always_inline)) void mul_lazy_to(Mont& o, const Mont& a, const Mont& b) {
    static_assert(P::MOD[N - 1] < (1ULL << 62), "lazy products need 4p < R");
#if defined(__x86_64__)
    if constexpr (N == 4) {
      if (__builtin_expect(g_use_adx, 1)) {
        adx::mont_mul4<P::MOD, &P::INV>(o.v, a.v, b.v);
        return;
      }
    }
#if defined(__OPTIMIZE__)
    if constexpr (N == 6) {
      if (__builtin_expect(g_use_adx, 1)) {
        adx::mont_mul6<P::MOD, &P::INV>(o.v, a.v, b.v);
        return;
      }
    }
#endif
#endif
    mul_to(o, a, b);  // canonical, so below 2p too
  }
  // a value below 2p (mul_lazy_to's) brought to [0, p)
  static inline __attribute__((always_inline)) void canonical_to(Mont& o) { final_sub(o.v); }
  // o = a^2: on 4 limbs with ADX a dedicated squaring (adx::mont_sqr4: 10 mulx for the
  // square instead of 16, then a Montgomery reduction), bit-identical to mul_to(o, a, a)
  // (both give the canonical a^2/R mod p). sqr_lazy_to leaves it in [0, 2p) for a < 2p, as
  // mul_lazy_to does: a^2 < 4p^2 < pR (4p < R), so redc4's bound holds.
  // On 6 limbs (BLS12-381) the square (adx::sqr_wide6: 21 mulx instead of 36) and its
  // reduction (redc6) are two asm blocks through a stack array: one block would need more
  // registers than x86-64 has left beside rdx and the pointers.
  static inline __attribute__((always_inline)) void sqr_to(Mont& o, const Mont& a) {
    if constexpr (HAS_SQR4 || HAS_SQR6) {
      if (__builtin_expect(g_use_adx, 1)) {
        sqr_redc(o, a);
        final_sub(o.v);
        return;
      }
    }
    mul_to(o, a, a);
  }
  static inline __attribute__((always_inline)) void sqr_lazy_to(Mont& o, const Mont& a) {
    if constexpr (HAS_SQR4 || HAS_SQR6) {
      if (__builtin_expect(g_use_adx, 1)) {
        sqr_redc(o, a);
        return;
      }
    }
    mul_lazy_to(o, a, a);
  }
  // a^2 / R in [0, 2p) for a < 2p (HAS_SQR4 or HAS_SQR6, and ADX only)
  static inline __attribute__((always_inline)) void sqr_redc(Mont& o, const Mont& a) {
#if defined(__x86_64__) && defined(__OPTIMIZE__)
    if constexpr (HAS_SQR4) {
      adx::mont_sqr4<P::MOD, &P::INV>(o.v, a.v);
      return;
    }
    if constexpr (HAS_SQR6) {
      u64 t[12];
      adx::sqr_wide6(t, a.v);
      adx::redc6<P::MOD, &P::INV>(o.v, t);
      return;
    }
#endif
    (void)o; (void)a;
  }

  // CPUs without BMI2/ADX (and other architectures): kept out of line so the
  // inlined fast path stays small.
  static __attribute__((noinline)) Mont mul_portable(const Mont& a, const Mont& b) {
    Mont r;
#if defined(__x86_64__)
    mul_x86(r.v, a.v, b.v);
#else
    mul_generic(r.v, a.v, b.v);
#endif
    final_sub(r.v);
    return r;
  }

  // Portable no-carry CIOS on unsigned __int128.
  static inline void mul_generic(u64* t, const u64* a, const u64* b) {
    for (size_t i = 0; i < N; i++) t[i] = 0;
#pragma GCC unroll 8
    for (size_t i = 0; i < N; i++) {
      u128 p = (u128)a[0] * b[i] + t[0];
      u64 A = (u64)(p >> 64);
      u64 t0 = (u64)p;
      u64 m = t0 * P::INV;
      u128 q = (u128)m * P::MOD[0] + t0;
      u64 C = (u64)(q >> 64);
#pragma GCC unroll 8
      for (size_t j = 1; j < N; j++) {
        p = (u128)a[j] * b[i] + t[j] + A;
        A = (u64)(p >> 64);
        u64 tj = (u64)p;
        q = (u128)m * P::MOD[j] + tj + C;
        C = (u64)(q >> 64);
        t[j - 1] = (u64)q;
      }
      t[N - 1] = C + A;
    }
  }

#if defined(__x86_64__)
  // Same CIOS, but the row products are split into lo/hi words and summed
  // with two adc chains (_addcarry_u64): ~25% faster than the u128 form with
  // gcc 12 (no inline asm, no BMI2/ADX needed).
  static inline void mul_x86(u64* t, const u64* a, const u64* b) {
    using ull = unsigned long long;
    for (size_t i = 0; i < N; i++) t[i] = 0;
#pragma GCC unroll 8
    for (size_t i = 0; i < N; i++) {
      u64 lo[N], hi[N];
#pragma GCC unroll 8
      for (size_t j = 0; j < N; j++) { u128 p = (u128)a[j] * b[i]; lo[j] = (u64)p; hi[j] = (u64)(p >> 64); }
      unsigned char c = _addcarry_u64(0, t[0], lo[0], (ull*)&t[0]);
#pragma GCC unroll 8
      for (size_t j = 1; j < N; j++) c = _addcarry_u64(c, t[j], lo[j], (ull*)&t[j]);
      u64 A = c;
      c = _addcarry_u64(0, t[1], hi[0], (ull*)&t[1]);
#pragma GCC unroll 8
      for (size_t j = 2; j < N; j++) c = _addcarry_u64(c, t[j], hi[j - 1], (ull*)&t[j]);
      _addcarry_u64(c, A, hi[N - 1], (ull*)&A);
      u64 m = t[0] * P::INV;
#pragma GCC unroll 8
      for (size_t j = 0; j < N; j++) { u128 p = (u128)m * P::MOD[j]; lo[j] = (u64)p; hi[j] = (u64)(p >> 64); }
      c = _addcarry_u64(0, t[0], lo[0], (ull*)&t[0]);
#pragma GCC unroll 8
      for (size_t j = 1; j < N; j++) c = _addcarry_u64(c, t[j], lo[j], (ull*)&t[j]);
      _addcarry_u64(c, A, 0, (ull*)&A);
      c = _addcarry_u64(0, t[1], hi[0], (ull*)&t[0]);
#pragma GCC unroll 8
      for (size_t j = 2; j < N; j++) c = _addcarry_u64(c, t[j], hi[j - 1], (ull*)&t[j - 1]);
      _addcarry_u64(c, A, hi[N - 1], (ull*)&t[N - 1]);
    }
  }
#endif

  // o = a + b, o = a - b in place (o may be a or b). On x86-64 the asm reads a and b word
  // by word: `Mont r = a` would let the compiler copy a with 16-byte loads, which stall when
  // a was just written by 8-byte stores (store forwarding; see store_words).
  static inline __attribute__((always_inline)) void add_to(Mont& o, const Mont& a, const Mont& b) {
#if defined(__x86_64__)
    if constexpr (N == 4) { adx::add4<P::MOD>(o.v, a.v, b.v); return; }
#if defined(__OPTIMIZE__)  // at -O0 the frame pointer leaves too few registers for 6 limbs
    if constexpr (N == 6) { adx::add6<P::MOD>(o.v, a.v, b.v); return; }
#endif
#endif
    o = add(a, b);
  }
  static inline __attribute__((always_inline)) void sub_to(Mont& o, const Mont& a, const Mont& b) {
#if defined(__x86_64__)
    if constexpr (N == 4) { adx::sub4<P::MOD>(o.v, a.v, b.v); return; }
#if defined(__OPTIMIZE__)  // at -O0 the frame pointer leaves too few registers for 6 limbs
    if constexpr (N == 6) { adx::sub6<P::MOD>(o.v, a.v, b.v); return; }
#endif
#endif
    o = sub(a, b);
  }
  static inline __attribute__((always_inline)) Mont add(const Mont& a, const Mont& b) {
    Mont r;
#if defined(__x86_64__)
    if constexpr (N == 4) { adx::add4<P::MOD>(r.v, a.v, b.v); return r; }
#if defined(__OPTIMIZE__)  // at -O0 the frame pointer leaves too few registers for 6 limbs
    if constexpr (N == 6) { adx::add6<P::MOD>(r.v, a.v, b.v); return r; }
#endif
#endif
    u64 c = 0;
#pragma GCC unroll 8
    for (size_t i = 0; i < N; i++) {
      u128 s = (u128)a.v[i] + b.v[i] + c;
      r.v[i] = (u64)s;
      c = (u64)(s >> 64);
    }
    final_sub(r.v);
    return r;
  }

  // a + b without the final subtraction: result < 2p, only valid as an input to
  // mul (CIOS no-carry output (ab + mp)/R < 2p needs 4p < R: LAZY_OK).
  static constexpr bool LAZY_OK = P::MOD[N - 1] < (1ULL << 62);
  static inline __attribute__((always_inline)) Mont add_nr(const Mont& a, const Mont& b) {
    if constexpr (!LAZY_OK) {
      return add(a, b);
    } else {
      Mont r;
#if defined(__x86_64__)
      using ull = unsigned long long;
      unsigned char c = 0;
#pragma GCC unroll 8
      for (size_t i = 0; i < N; i++) c = _addcarry_u64(c, a.v[i], b.v[i], (ull*)&r.v[i]);
#else
      u64 c = 0;
#pragma GCC unroll 8
      for (size_t i = 0; i < N; i++) {
        u128 s = (u128)a.v[i] + b.v[i] + c;
        r.v[i] = (u64)s;
        c = (u64)(s >> 64);
      }
#endif
      return r;
    }
  }

  // Lazy NTT butterflies (ntt/ntt.hpp; adx::red2p4, dit_lazy4, dif_lazy4, plain x86-64):
  // 4 limbs with 4p < R, so sums below 4p fit and lazy products take inputs below 4p
  // (the CIOS accumulator stays below a + p < 5p < R, the result below 4p^2/R + p < 2p).
#if defined(__x86_64__)
  static constexpr bool NTT_LAZY = N == 4 && LAZY_OK && P::MOD[N - 1] < 0x3333333333333333ULL;  // 5p < R
#else
  static constexpr bool NTT_LAZY = false;
#endif
  // t in [0, 4p) -> [0, 2p)
  static inline __attribute__((always_inline)) void red2p(Mont& t) {
    static_assert(NTT_LAZY, "lazy NTT ops: 4 limbs, 5p < R, x86-64");
#if defined(__x86_64__)
    adx::red2p4<P::MOD>(t.v);
#endif
  }
  // x in [0, 4p), w in [0, 2p): (x, y) <- (x + w, x - w) in [0, 4p) (x first brought below 2p)
  static inline __attribute__((always_inline)) void dit_lazy(Mont& x, Mont& y, const Mont& w) {
    static_assert(NTT_LAZY, "lazy NTT ops: 4 limbs, 5p < R, x86-64");
#if defined(__x86_64__)
    adx::dit_lazy4<P::MOD>(x.v, y.v, w.v);
#endif
  }
  // x, y in [0, 2p): (x, y) <- (x + y in [0, 2p), x - y in [0, 4p))
  static inline __attribute__((always_inline)) void dif_lazy(Mont& x, Mont& y) {
    static_assert(NTT_LAZY, "lazy NTT ops: 4 limbs, 5p < R, x86-64");
#if defined(__x86_64__)
    adx::dif_lazy4<P::MOD>(x.v, y.v);
#endif
  }
  // x, y in [0, 2p): (x, y) <- (x + y in [0, 2p), y - x in [0, 4p))
  static inline __attribute__((always_inline)) void dif_lazy_rev(Mont& x, Mont& y) {
    static_assert(NTT_LAZY, "lazy NTT ops: 4 limbs, 5p < R, x86-64");
#if defined(__x86_64__)
    adx::dif_lazy_rev4<P::MOD>(x.v, y.v);
#endif
  }

  struct Words { u64 v[N]; };
  static constexpr Words twice_modulus() {  // 2p, which fits N words (a spare top bit)
    Words t{};
    for (size_t i = 0; i < N; i++) t.v[i] = (P::MOD[i] << 1) | (i ? P::MOD[i - 1] >> 63 : 0);
    return t;
  }

  // (a0 + a1 u)(b0 + b1 u) with u^2 = -1 (CONJ: times b0 - b1 u) for canonical inputs, on 4
  // limbs with ADX: each component one sum of two products in registers (adx::mont_mul_sum4),
  // c0 = a0 b0 + a1 (2p - b1) (CONJ: a0 b0 + a1 b1, c1 = a1 b0 + a0 (2p - b1)). 4 more mulx than
  // fp2_mul_lazy's Karatsuba, but none of its three 8-word products, their differences and
  // reductions go through the stack: the G2 MSM's flush 10% fewer instructions, the G2 MSM
  // 2-4% faster on one core (cpu-notes round 13). Same canonical values. Returns false (nothing written) where
  // there is no such path (N not 4 or 6, no ADX, unoptimised builds). On 6 limbs (BLS12-381) the
  // same sums through adx::mont_fp2_sum6 (cpu-notes round 22).
  template <bool CONJ>
  static inline __attribute__((always_inline)) bool fp2_mul_sums(Mont& c0, Mont& c1, const Mont& a0, const Mont& a1, const Mont& b0,
                                                                 const Mont& b1) {
#if defined(__x86_64__) && defined(__OPTIMIZE__)
    if constexpr ((N == 4 || N == 6) && LAZY_OK) {
      if (!__builtin_expect(g_use_adx, 1)) return false;
      // 6 limbs (adx::mont_fp2_sum6) read a0 and a1 through one pointer, which needs them
      // adjacent, as Fp2's c0, c1 are (a constant test once inlined)
      if constexpr (N == 6)
        if (&a1.v[0] != &a0.v[N]) return false;
      using ull = unsigned long long;
      static constexpr Words TWO_P = twice_modulus();
      u64 nb1[N], r0[N], r1[N];
      unsigned char bw = 0;
#pragma GCC unroll 6
      for (size_t i = 0; i < N; i++) bw = _subborrow_u64(bw, TWO_P.v[i], b1.v[i], (ull*)&nb1[i]);
      // into locals first: c0 or c1 may alias any operand (Fp2's o = a or b)
      if constexpr (N == 4) {
        if constexpr (CONJ) {
          adx::mont_mul_sum4<P::MOD, &P::INV>(r0, a0.v, b0.v, a1.v, b1.v);
          adx::mont_mul_sum4<P::MOD, &P::INV>(r1, a1.v, b0.v, a0.v, nb1);
        } else {
          adx::mont_mul_sum4<P::MOD, &P::INV>(r0, a0.v, b0.v, a1.v, nb1);
          adx::mont_mul_sum4<P::MOD, &P::INV>(r1, a0.v, b1.v, a1.v, b0.v);
        }
      } else if constexpr (CONJ) {
        adx::mont_fp2_sum6<P::MOD, &P::INV>(r0, a0.v, b0.v, b1.v);  // a0 b0 + a1 b1
        adx::mont_fp2_sum6<P::MOD, &P::INV>(r1, a0.v, nb1, b0.v);   // a0 (2p - b1) + a1 b0
      } else {
        adx::mont_fp2_sum6<P::MOD, &P::INV>(r0, a0.v, b0.v, nb1);   // a0 b0 + a1 (2p - b1)
        adx::mont_fp2_sum6<P::MOD, &P::INV>(r1, a0.v, b1.v, b0.v);  // a0 b1 + a1 b0
      }
      final_sub(r0);
      final_sub(r1);
#pragma GCC unroll 6
      for (size_t i = 0; i < N; i++) { c0.v[i] = r0[i]; c1.v[i] = r1[i]; }
      return true;
    }
#endif
    (void)c0; (void)c1; (void)a0; (void)a1; (void)b0; (void)b1;
    return false;
  }

  // (a0 + a1 u)(b0 + b1 u) with u^2 = -1, lazy reduction: three plain 512-bit
  // products (Karatsuba) and one Montgomery reduction per output component. Used on 6
  // limbs (4: fp2_mul_sums). Returns false (nothing written) where no such path exists.
  static inline __attribute__((always_inline)) bool fp2_mul_lazy(Mont& c0, Mont& c1, const Mont& a0, const Mont& a1, const Mont& b0,
                                  const Mont& b1) {
#if defined(__x86_64__) && defined(__OPTIMIZE__)
    if constexpr ((N == 4 || N == 6) && LAZY_OK) {
      if (!__builtin_expect(g_use_adx, 1)) return false;
      using ull = unsigned long long;
      constexpr size_t W = 2 * N;
      u64 t0[W], t1[W], t2[W];
      // the sums straight into word arrays (a Mont returned by value is copied with
      // 16-byte moves, which stall on the 8-byte stores just made: see store_words)
      u64 sa[N], sb[N];
      {
        unsigned char ca = 0, cb = 0;
#pragma GCC unroll 6
        for (size_t i = 0; i < N; i++) {
          ca = _addcarry_u64(ca, a0.v[i], a1.v[i], (ull*)&sa[i]);
          cb = _addcarry_u64(cb, b0.v[i], b1.v[i], (ull*)&sb[i]);
        }
      }
      if constexpr (N == 4) {
        adx::mul_wide4(t0, a0.v, b0.v);
        adx::mul_wide4(t1, a1.v, b1.v);
        adx::mul_wide4(t2, sa, sb);  // < 4p^2
      } else {
        adx::mul_wide6(t0, a0.v, b0.v);
        adx::mul_wide6(t1, a1.v, b1.v);
        adx::mul_wide6(t2, sa, sb);
      }
      // t2 - t0 - t1 = a0 b1 + a1 b0 < 2p^2 < pR
      unsigned char bw = 0;
#pragma GCC unroll 12
      for (size_t i = 0; i < W; i++) bw = _subborrow_u64(bw, t2[i], t0[i], (ull*)&t2[i]);
      bw = 0;
#pragma GCC unroll 12
      for (size_t i = 0; i < W; i++) bw = _subborrow_u64(bw, t2[i], t1[i], (ull*)&t2[i]);
      // t0 - t1 in (-p^2, p^2); add p*R when negative -> [0, pR)
      bw = 0;
#pragma GCC unroll 12
      for (size_t i = 0; i < W; i++) bw = _subborrow_u64(bw, t0[i], t1[i], (ull*)&t0[i]);
      u64 mask = (u64)0 - (u64)bw;
      unsigned char c = 0;
#pragma GCC unroll 6
      for (size_t i = 0; i < N; i++) c = _addcarry_u64(c, t0[N + i], P::MOD[i] & mask, (ull*)&t0[N + i]);
      if constexpr (N == 4) {
        adx::redc4<P::MOD, &P::INV>(c0.v, t0);
        adx::redc4<P::MOD, &P::INV>(c1.v, t2);
      } else {
        adx::redc6<P::MOD, &P::INV>(c0.v, t0);
        adx::redc6<P::MOD, &P::INV>(c1.v, t2);
      }
      final_sub(c0.v);
      final_sub(c1.v);
      return true;
    }
#endif
    (void)c0; (void)c1; (void)a0; (void)a1; (void)b0; (void)b1;
    return false;
  }

  // a^2 + b^2 with one Montgomery reduction (the norm of a0 + a1 u when u^2 = -1): on 4 limbs
  // one sum of products in registers (as fp2_mul_sums; 48 mulx against the two squarings' 36
  // and their reduction, but no 8-word values through the stack), on 6 two plain squares
  // summed (< 2p^2 < pR), then reduced.
  static inline __attribute__((always_inline)) void sqr_sum_to(Mont& o, const Mont& a, const Mont& b) {
#if defined(__x86_64__) && defined(__OPTIMIZE__)
    if constexpr (N == 4 && LAZY_OK) {
      if (__builtin_expect(g_use_adx, 1)) {  // one sum of products in registers (fp2_mul_sums)
        u64 r[N];
        adx::mont_mul_sum4<P::MOD, &P::INV>(r, a.v, a.v, b.v, b.v);
        final_sub(r);
#pragma GCC unroll 4
        for (size_t i = 0; i < N; i++) o.v[i] = r[i];
        return;
      }
    }
    if constexpr (N == 6 && LAZY_OK) {
      if (__builtin_expect(g_use_adx, 1)) {
        using ull = unsigned long long;
        constexpr size_t W = 2 * N;
        u64 t0[W], t1[W];
        adx::sqr_wide6(t0, a.v);
        adx::sqr_wide6(t1, b.v);
        unsigned char c = 0;
#pragma GCC unroll 12
        for (size_t i = 0; i < W; i++) c = _addcarry_u64(c, t0[i], t1[i], (ull*)&t0[i]);
        adx::redc6<P::MOD, &P::INV>(o.v, t0);
        final_sub(o.v);
        return;
      }
    }
#endif
    o = add(mul(a, a), mul(b, b));
  }
  static inline __attribute__((always_inline)) Mont sqr_sum(const Mont& a, const Mont& b) {
    Mont r;
    sqr_sum_to(r, a, b);
    return r;
  }

  static inline __attribute__((always_inline)) Mont sub(const Mont& a, const Mont& b) {
    Mont r;
#if defined(__x86_64__)
    if constexpr (N == 4) { adx::sub4<P::MOD>(r.v, a.v, b.v); return r; }
#if defined(__OPTIMIZE__)  // at -O0 the frame pointer leaves too few registers for 6 limbs
    if constexpr (N == 6) { adx::sub6<P::MOD>(r.v, a.v, b.v); return r; }
#endif
#endif
    u64 borrow = 0;
#pragma GCC unroll 8
    for (size_t i = 0; i < N; i++) {
      u128 d = (u128)a.v[i] - b.v[i] - borrow;
      r.v[i] = (u64)d;
      borrow = (u64)(d >> 64) & 1;
    }
    u64 mask = (u64)0 - borrow;
    u64 c = 0;
#pragma GCC unroll 8
    for (size_t i = 0; i < N; i++) {
      u128 s = (u128)r.v[i] + (P::MOD[i] & mask) + c;
      r.v[i] = (u64)s;
      c = (u64)(s >> 64);
    }
    return r;
  }

  inline __attribute__((always_inline)) Mont neg() const { return sub(zero(), *this); }  // 0 - 0 borrows nothing: stays 0
  inline __attribute__((always_inline)) Mont dbl() const { return add(*this, *this); }
  inline __attribute__((always_inline)) Mont sqr() const { Mont r; sqr_to(r, *this); return r; }

  friend inline __attribute__((always_inline)) Mont operator*(const Mont& a, const Mont& b) { return mul(a, b); }
  friend inline __attribute__((always_inline)) Mont operator+(const Mont& a, const Mont& b) { return add(a, b); }
  friend inline __attribute__((always_inline)) Mont operator-(const Mont& a, const Mont& b) { return sub(a, b); }
  inline __attribute__((always_inline)) Mont& operator*=(const Mont& b) { return *this = mul(*this, b); }
  inline __attribute__((always_inline)) Mont& operator+=(const Mont& b) { return *this = add(*this, b); }
  inline __attribute__((always_inline)) Mont& operator-=(const Mont& b) { return *this = sub(*this, b); }
  inline __attribute__((always_inline)) Mont operator-() const { return neg(); }

  inline Mont to_mont() const { return mul(*this, from_limbs(P::R2)); }
  inline Mont from_mont() const {
    Mont o = zero();
    o.v[0] = 1;
    return mul(*this, o);
  }
  // o = a.from_mont(): on 4 limbs with ADX a bare Montgomery reduction of a (adx::redc4, 16 mulx) where the product
  // by 1 runs a whole one (32); the same canonical value (the QAP step's H values, groth16/qap.hpp's scalar branch)
  static inline __attribute__((always_inline)) void from_mont_to(Mont& o, const Mont& a) {
#if defined(__x86_64__) && defined(__OPTIMIZE__)
    if constexpr (N == 4 && LAZY_OK) {
      if (__builtin_expect(g_use_adx, 1)) {
        const u64 t[8] = {a.v[0], a.v[1], a.v[2], a.v[3], 0, 0, 0, 0};  // a < p: a < pR, redc4's bound
        adx::redc4<P::MOD, &P::INV>(o.v, t);
        final_sub(o.v);
        return;
      }
    }
#endif
    o = a.from_mont();
  }

  // exponent given as plain little-endian limbs (any length)
  inline Mont pow_limbs(const u64* e, size_t ne) const {
    Mont r = one();
    for (size_t i = ne; i-- > 0;)
      for (int b = 63; b >= 0; b--) {
        r = r.sqr();
        if ((e[i] >> b) & 1) r = r * *this;
      }
    return r;
  }
  inline Mont pow(u64 e) const { return pow_limbs(&e, 1); }

  // Inverse (Montgomery in and out); inv(0) = 0. Divsteps on the plain integer
  // aR give (aR)^-1 = a^-1 R^-1; one product with R^3 makes it a^-1 R.
  inline Mont inv() const {
    static const Mont r3 = from_limbs(P::R2) * from_limbs(P::R2);
    Mont t;
    DivstepInverse<P>::invert(v, t.v);
    return t * r3;
  }

  // Fermat inversion a^(p-2) (the reference for tests).
  inline Mont inv_fermat() const {
    u64 e[N];
    for (size_t i = 0; i < N; i++) e[i] = P::MOD[i];
    // p is odd and > 2, so subtracting 2 only touches limb 0 with possible borrow
    u128 d = (u128)e[0] - 2;
    e[0] = (u64)d;
    for (size_t i = 1; (d >> 64) && i < N; i++) { d = (u128)e[i] - 1; e[i] = (u64)d; }
    return pow_limbs(e, N);
  }
};

// In-place batch inversion (Montgomery's trick); zeros stay zero.
template <class F>
inline void batch_inverse(F* a, size_t n, F* scratch) {
  F acc = F::one();
  for (size_t i = 0; i < n; i++) {
    scratch[i] = acc;
    if (!a[i].is_zero()) acc = acc * a[i];
  }
  F inv = acc.inv();
  for (size_t i = n; i-- > 0;) {
    if (a[i].is_zero()) continue;
    F t = inv * scratch[i];
    inv = inv * a[i];
    a[i] = t;
  }
}

}  // namespace snarkd
