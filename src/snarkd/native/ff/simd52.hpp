// Eight field elements at once on AVX-512 IFMA (vpmadd52luq / vpmadd52huq):
// limbs of 52 bits, one zmm register per limb position, one lane per element.
// On CPUs that have it (Intel Ice Lake+, AMD Zen 4+) an 8-lane Montgomery product
// costs about a quarter of eight scalar mulx products (measured on Zen 4: 3.7 ns
// against 15.6 ns per product), so the hot loops (MSM bucket additions, NTT
// butterflies) run eight independent operations side by side.
//
// Representation: Fe<Pr> holds L limbs of 52 bits (each lane's limbs < 2^52 when
// "normalized"), value in Montgomery form with R = 2^Pr::RB. RB = 64 * N keeps the
// key's own representation (R = 2^256 / 2^384), so points are loaded from the
// zkey and stored back without any change of domain; the last reduction round is
// then a short one (48 bits for 256, 20 for 384).
//
// Bounds (why there is no final subtraction in mul): out = (a b + m p) / R <
// a b / R + p. Every modulus here has p < R / 5 (BN254: p / 2^256 = 0.19; BLS12-381
// Fq: p / 2^384 = 0.10), so inputs < 2p give an output < 2p. Sums and differences
// are brought back under 2p with csub where they feed a product.
//
// Everything here is compiled for the IFMA target with function attributes and only
// called after the CPUID check (g_use_simd52); the scalar code stays the fallback.
#pragma once
#include <cstddef>
#include <cstdint>

#include "ff/mont.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define SNARKD_SIMD52 1
#include <cpuid.h>
#include <immintrin.h>

#define SNARKD_SIMD52_TARGET __attribute__((target("avx512f,avx512ifma,avx512dq,avx512bw,avx512vl")))
#define SNARKD_SIMD52_INLINE SNARKD_SIMD52_TARGET inline __attribute__((always_inline))

namespace snarkd {

// AVX-512 F/DQ/BW/VL + IFMA, and the OS saves zmm state (XCR0 bits 1, 2, 5, 6, 7).
inline bool detect_simd52() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 0xe6) != 0xe6) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  const unsigned need = (1u << 16) | (1u << 17) | (1u << 21) | (1u << 30) | (1u << 31);  // F DQ IFMA BW VL
  return (b & need) == need;
}
// Not const: [cpu] ifma and tests switch it off (_core.set_ifma), between computations only
// (native/path_gate.hpp): one call sees one setting throughout.
inline bool g_use_simd52 = detect_simd52();

namespace simd52 {

using V = __m512i;
constexpr u64 M52 = (1ULL << 52) - 1;

// Compile-time constants from the 64-bit-limb parameters P (MOD, N).
template <class P, unsigned RB_>
struct Params {
  static constexpr unsigned RB = RB_;
  static constexpr unsigned N = (unsigned)P::N;
  static constexpr unsigned L = (RB + 51) / 52;          // limbs (holds values < 2^(52L) >= 4p)
  static constexpr unsigned LAST = RB - 52 * (L - 1);    // bits of the last reduction round
  static constexpr u64 bits_at(const u64* w, unsigned nw, unsigned pos, unsigned len) {
    u64 v = 0;
    for (unsigned k = 0; k < len; k++) {
      unsigned b = pos + k;
      if (b / 64 < nw && ((w[b / 64] >> (b % 64)) & 1)) v |= 1ULL << k;
    }
    return v;
  }
  struct Limbs { u64 v[L]; };
  // k * p as 52-bit limbs
  static constexpr Limbs kp(unsigned k) {
    u64 w[P::N + 1] = {};
    unsigned __int128 c = 0;
    for (unsigned i = 0; i < P::N; i++) {
      c += (unsigned __int128)P::MOD[i] * k;
      w[i] = (u64)c;
      c >>= 64;
    }
    w[P::N] = (u64)c;
    Limbs r{};
    for (unsigned i = 0; i < L; i++) r.v[i] = bits_at(w, P::N + 1, 52 * i, 52);
    return r;
  }
  // k * p with each limb but the top raised by 2^52 and the next one lowered by 1
  // (same value): x + this - y never goes negative in a limb when y's limbs < 2^52.
  static constexpr Limbs kp_borrow(unsigned k) {
    Limbs r = kp(k);
    for (unsigned i = 0; i + 1 < L; i++) {
      r.v[i] += 1ULL << 52;
      r.v[i + 1] -= 1;
    }
    return r;
  }
  static constexpr u64 pinv52() {  // -p^{-1} mod 2^52
    u64 inv = 1;
    for (int i = 0; i < 7; i++) inv *= 2 - P::MOD[0] * inv;
    return (0 - inv) & M52;
  }
  static constexpr Limbs P1 = kp(1), P2 = kp(2), P4 = kp(4), P32 = kp(32);
  static constexpr Limbs B1 = kp_borrow(1), B2 = kp_borrow(2), B4 = kp_borrow(4), B32 = kp_borrow(32);
  static constexpr u64 PINV = pinv52();
  // Double-width values (Wide): 2L + 1 columns of 52 bits
  struct WLimbs { u64 v[2 * L + 1]; };
  static constexpr WLimbs kpp(unsigned k) {  // k p^2 (k p^2 < R^2 for the k used: 4 p < R)
    u64 w[2 * P::N + 1] = {};
    for (unsigned i = 0; i < P::N; i++) {
      unsigned __int128 c = 0;
      for (unsigned j = 0; j < P::N; j++) {
        c += (unsigned __int128)P::MOD[i] * P::MOD[j] + w[i + j];
        w[i + j] = (u64)c;
        c >>= 64;
      }
      w[i + P::N] = (u64)c;
    }
    unsigned __int128 c = 0;
    for (unsigned i = 0; i <= 2 * P::N; i++) {
      c += (unsigned __int128)w[i] * k;
      w[i] = (u64)c;
      c >>= 64;
    }
    WLimbs r{};
    for (unsigned i = 0; i <= 2 * L; i++) r.v[i] = bits_at(w, 2 * P::N + 1, 52 * i, 52);
    return r;
  }
  static constexpr WLimbs PP4 = kpp(4);
  // 8 p < R (the top word of p below 2^61): a wide value below 8 p^2 reduces to below
  // 8 p^2 / R + p < 2 p. BLS12-381's Fq (p / R = 0.10) has it, BN254's (0.19) not.
  static constexpr bool WIDE8_LT_2P = (P::MOD[P::N - 1] >> 61) == 0 && RB == 64 * P::N;
};

template <class Pr>
struct Fe {
  V l[Pr::L];
};

SNARKD_SIMD52_INLINE V bc(u64 x) { return _mm512_set1_epi64((long long)x); }

// Carry-propagate so every limb is < 2^52 (limbs non-negative, value < 2^(52L)).
template <class Pr>
SNARKD_SIMD52_INLINE void normalize(Fe<Pr>& a) {
  const V m = bc(M52);
#pragma GCC unroll 8
  for (unsigned i = 0; i + 1 < Pr::L; i++) {
    a.l[i + 1] = _mm512_add_epi64(a.l[i + 1], _mm512_srli_epi64(a.l[i], 52));
    a.l[i] = _mm512_and_si512(a.l[i], m);
  }
}

// a * b / R mod p, in [0, 2p) for inputs < 2p (see the bounds above). CIOS order:
// one row of products, then one reduction round; the last round is LAST bits wide.
template <class Pr>
SNARKD_SIMD52_INLINE Fe<Pr> mul(const Fe<Pr>& a, const Fe<Pr>& b) {
  constexpr unsigned L = Pr::L;
  const V zero = _mm512_setzero_si512();
  V t[L + 1];
#pragma GCC unroll 8
  for (unsigned i = 0; i <= L; i++) t[i] = zero;
#pragma GCC unroll 8
  for (unsigned i = 0; i < L; i++) {
    const V bi = b.l[i];
#pragma GCC unroll 8
    for (unsigned j = 0; j < L; j++) {
      t[j] = _mm512_madd52lo_epu64(t[j], a.l[j], bi);
      t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], a.l[j], bi);
    }
    V m = _mm512_madd52lo_epu64(zero, t[0], bc(Pr::PINV));
    if (i + 1 == L && Pr::LAST < 52) m = _mm512_and_si512(m, bc((1ULL << Pr::LAST) - 1));
#pragma GCC unroll 8
    for (unsigned j = 0; j < L; j++) {
      t[j] = _mm512_madd52lo_epu64(t[j], m, bc(Pr::P1.v[j]));
      t[j + 1] = _mm512_madd52hi_epu64(t[j + 1], m, bc(Pr::P1.v[j]));
    }
    if (i + 1 < L || Pr::LAST == 52) {
      // t[0] is now 0 mod 2^52: carry it up and drop the limb
      t[1] = _mm512_add_epi64(t[1], _mm512_srli_epi64(t[0], 52));
#pragma GCC unroll 8
      for (unsigned j = 0; j < L; j++) t[j] = t[j + 1];
      t[L] = zero;
    }
  }
  Fe<Pr> r;
  if constexpr (Pr::LAST == 52) {
#pragma GCC unroll 8
    for (unsigned j = 0; j < L; j++) r.l[j] = t[j];
    normalize(r);
  } else {
    // t (L + 1 limbs) is 0 mod 2^LAST: normalize, then shift everything right by LAST bits.
    const V m = bc(M52);
#pragma GCC unroll 8
    for (unsigned j = 0; j < L; j++) {
      t[j + 1] = _mm512_add_epi64(t[j + 1], _mm512_srli_epi64(t[j], 52));
      t[j] = _mm512_and_si512(t[j], m);
    }
#pragma GCC unroll 8
    for (unsigned j = 0; j < L; j++)
      r.l[j] = _mm512_and_si512(
          _mm512_or_si512(_mm512_srli_epi64(t[j], Pr::LAST), _mm512_slli_epi64(t[j + 1], 52 - Pr::LAST)), m);
  }
  return r;
}

// Lazy reduction (the 8-lane Fq2 products): a Wide holds an unreduced double-width value
// as 2L + 1 columns, column k weighing 2^(52k), each a signed 64-bit sum of 52-bit product
// halves (vpmadd52 adds the low / high 52 bits of a 104-bit product to a 64-bit lane).
// Several products are summed and subtracted column by column and reduced once (redc),
// so a Karatsuba Fq2 product takes two reductions instead of three. Column bounds: one
// product adds at most 2L halves (< 2^52 each) to a column, so a combination of three
// products with signs stays within +-6L 2^52 <= 2^58 (L <= 8: BLS12-381), the reduction
// adds 2L more halves and the carries: far from 2^63. The value itself must be >= 0
// (callers add a multiple of p where a difference could go negative): the columns may
// be negative, so every carry is an arithmetic shift (srai), which for non-negative
// columns is the same as the logical one.
template <class Pr>
struct Wide {
  V t[2 * Pr::L + 1];
};

template <class Pr>
SNARKD_SIMD52_INLINE Wide<Pr> wide_const(const typename Pr::WLimbs& c) {
  Wide<Pr> w;
#pragma GCC unroll 17
  for (unsigned i = 0; i <= 2 * Pr::L; i++) w.t[i] = bc(c.v[i]);
  return w;
}

// w += a b (a, b normalized: limbs < 2^52)
template <class Pr>
SNARKD_SIMD52_INLINE void mul_acc(Wide<Pr>& w, const Fe<Pr>& a, const Fe<Pr>& b) {
#pragma GCC unroll 8
  for (unsigned i = 0; i < Pr::L; i++)
#pragma GCC unroll 8
    for (unsigned j = 0; j < Pr::L; j++) {
      w.t[i + j] = _mm512_madd52lo_epu64(w.t[i + j], a.l[i], b.l[j]);
      w.t[i + j + 1] = _mm512_madd52hi_epu64(w.t[i + j + 1], a.l[i], b.l[j]);
    }
}

template <class Pr>
SNARKD_SIMD52_INLINE Wide<Pr> mul_wide(const Fe<Pr>& a, const Fe<Pr>& b) {
  Wide<Pr> w;
#pragma GCC unroll 17
  for (unsigned i = 0; i <= 2 * Pr::L; i++) w.t[i] = _mm512_setzero_si512();
  mul_acc(w, a, b);
  return w;
}

// x += s y (s = +1 or -1), column by column
template <int S, class Pr>
SNARKD_SIMD52_INLINE void wide_acc(Wide<Pr>& x, const Wide<Pr>& y) {
#pragma GCC unroll 17
  for (unsigned i = 0; i <= 2 * Pr::L; i++)
    x.t[i] = S > 0 ? _mm512_add_epi64(x.t[i], y.t[i]) : _mm512_sub_epi64(x.t[i], y.t[i]);
}

// w += the cross products x_i x_j (i < j) of x, once (sqr_wide doubles them)
template <class Pr>
SNARKD_SIMD52_INLINE void sqr_cross(Wide<Pr>& w, const Fe<Pr>& x) {
#pragma GCC unroll 8
  for (unsigned i = 0; i < Pr::L; i++)
#pragma GCC unroll 8
    for (unsigned j = i + 1; j < Pr::L; j++) {
      w.t[i + j] = _mm512_madd52lo_epu64(w.t[i + j], x.l[i], x.l[j]);
      w.t[i + j + 1] = _mm512_madd52hi_epu64(w.t[i + j + 1], x.l[i], x.l[j]);
    }
}

template <class Pr>
SNARKD_SIMD52_INLINE void sqr_diag(Wide<Pr>& w, const Fe<Pr>& x) {  // w += x_i^2
#pragma GCC unroll 8
  for (unsigned i = 0; i < Pr::L; i++) {
    w.t[2 * i] = _mm512_madd52lo_epu64(w.t[2 * i], x.l[i], x.l[i]);
    w.t[2 * i + 1] = _mm512_madd52hi_epu64(w.t[2 * i + 1], x.l[i], x.l[i]);
  }
}

// a^2 + b^2 + ...: every square's cross products once, the columns doubled, then the
// squares a_i^2 (L(L-1)/2 + L pairs per square instead of L^2: 85 instead of 105 IFMA
// for L = 5). Two squares: columns < 2 L 2^52 <= 2^56 before the doubling.
template <class Pr, class... A>
SNARKD_SIMD52_INLINE Wide<Pr> sqr_wide(const A&... a) {
  Wide<Pr> w;
#pragma GCC unroll 17
  for (unsigned i = 0; i <= 2 * Pr::L; i++) w.t[i] = _mm512_setzero_si512();
  (sqr_cross(w, a), ...);
#pragma GCC unroll 16
  for (unsigned i = 0; i < 2 * Pr::L; i++) w.t[i] = _mm512_slli_epi64(w.t[i], 1);  // no overflow
  (sqr_diag(w, a), ...);
  return w;
}

// w / R mod p for w >= 0 with w / R + p < 2^(52L): below w / R + p, normalized. Round i clears column i
// (m = -w_i / p mod 2^52, the last round LAST bits wide), as in mul.
template <class Pr>
SNARKD_SIMD52_INLINE Fe<Pr> redc(Wide<Pr>& w) {
  constexpr unsigned L = Pr::L;
  const V zero = _mm512_setzero_si512(), m52 = bc(M52);
  V* t = w.t;
#pragma GCC unroll 8
  for (unsigned i = 0; i < L; i++) {
    V m = _mm512_madd52lo_epu64(zero, t[i], bc(Pr::PINV));  // the low 52 bits: right for a negative column too
    if (i + 1 == L && Pr::LAST < 52) m = _mm512_and_si512(m, bc((1ULL << Pr::LAST) - 1));
#pragma GCC unroll 8
    for (unsigned j = 0; j < L; j++) {
      t[i + j] = _mm512_madd52lo_epu64(t[i + j], m, bc(Pr::P1.v[j]));
      t[i + j + 1] = _mm512_madd52hi_epu64(t[i + j + 1], m, bc(Pr::P1.v[j]));
    }
    if (i + 1 < L || Pr::LAST == 52) t[i + 1] = _mm512_add_epi64(t[i + 1], _mm512_srai_epi64(t[i], 52));
  }
  // the value is now in columns L - 1 (LAST < 52: 0 mod 2^LAST there) or L up: normalize
  // them (signed carries), then shift right by LAST bits
  constexpr unsigned B = Pr::LAST == 52 ? L : L - 1;
#pragma GCC unroll 8
  for (unsigned j = B; j < 2 * L; j++) {
    t[j + 1] = _mm512_add_epi64(t[j + 1], _mm512_srai_epi64(t[j], 52));
    t[j] = _mm512_and_si512(t[j], m52);
  }
  Fe<Pr> r;
#pragma GCC unroll 8
  for (unsigned j = 0; j < L; j++) {
    if constexpr (Pr::LAST == 52) r.l[j] = t[L + j];
    else
      r.l[j] = _mm512_and_si512(
          _mm512_or_si512(_mm512_srli_epi64(t[L - 1 + j], Pr::LAST), _mm512_slli_epi64(t[L + j], 52 - Pr::LAST)), m52);
  }
  return r;
}

// a^2 / R mod p; same bounds as mul.
template <class Pr>
SNARKD_SIMD52_INLINE Fe<Pr> sqr(const Fe<Pr>& a) {
  Wide<Pr> w = sqr_wide<Pr>(a);
  return redc(w);
}

// a + b, normalized (no reduction: the caller keeps track of the bound).
template <class Pr>
SNARKD_SIMD52_INLINE Fe<Pr> add(const Fe<Pr>& a, const Fe<Pr>& b) {
  Fe<Pr> r;
#pragma GCC unroll 8
  for (unsigned i = 0; i < Pr::L; i++) r.l[i] = _mm512_add_epi64(a.l[i], b.l[i]);
  normalize(r);
  return r;
}

// a + K p - b, normalized; needs b < K p. K in {1, 2, 4, 32} (32: the lazy NTT's end, where
// 64 p < 2^(52L): ntt/ntt_simd.hpp).
template <unsigned K, class Pr>
SNARKD_SIMD52_INLINE Fe<Pr> sub(const Fe<Pr>& a, const Fe<Pr>& b) {
  static_assert(K == 1 || K == 2 || K == 4 || K == 32, "K");
  constexpr const typename Pr::Limbs& B = K == 1 ? Pr::B1 : K == 2 ? Pr::B2 : K == 4 ? Pr::B4 : Pr::B32;
  Fe<Pr> r;
#pragma GCC unroll 8
  for (unsigned i = 0; i < Pr::L; i++) r.l[i] = _mm512_sub_epi64(_mm512_add_epi64(a.l[i], bc(B.v[i])), b.l[i]);
  normalize(r);
  return r;
}

// a >= K p ? a - K p : a (a normalized). K in {1, 2, 4, 32}.
template <unsigned K, class Pr>
SNARKD_SIMD52_INLINE Fe<Pr> csub(const Fe<Pr>& a) {
  static_assert(K == 1 || K == 2 || K == 4 || K == 32, "K");
  constexpr const typename Pr::Limbs& P = K == 1 ? Pr::P1 : K == 2 ? Pr::P2 : K == 4 ? Pr::P4 : Pr::P32;
  const V m = bc(M52);
  Fe<Pr> s;
  V carry = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (unsigned i = 0; i < Pr::L; i++) {
    V d = _mm512_add_epi64(_mm512_sub_epi64(a.l[i], bc(P.v[i])), carry);
    carry = _mm512_srai_epi64(d, 52);  // 0 or -1
    s.l[i] = i + 1 < Pr::L ? _mm512_and_si512(d, m) : d;
  }
  __mmask8 neg = _mm512_movepi64_mask(s.l[Pr::L - 1]);  // a < K p: keep a
  Fe<Pr> r;
#pragma GCC unroll 8
  for (unsigned i = 0; i < Pr::L; i++) r.l[i] = _mm512_mask_blend_epi64(neg, s.l[i], a.l[i]);
  return r;
}

// [0, 4p) -> [0, p)
template <class Pr>
SNARKD_SIMD52_INLINE Fe<Pr> canon4(const Fe<Pr>& a) {
  return csub<1>(csub<2>(a));
}

template <class Pr>
SNARKD_SIMD52_INLINE __mmask8 is_zero(const Fe<Pr>& a) {
  V acc = a.l[0];
#pragma GCC unroll 8
  for (unsigned i = 1; i < Pr::L; i++) acc = _mm512_or_si512(acc, a.l[i]);
  return _mm512_testn_epi64_mask(acc, acc);
}

// 64-bit words (one vector per word, N of them) <-> 52-bit limbs.
template <class Pr>
SNARKD_SIMD52_INLINE Fe<Pr> from_words(const V* w) {
  Fe<Pr> r;
  const V m = bc(M52);
#pragma GCC unroll 8
  for (unsigned i = 0; i < Pr::L; i++) {
    const unsigned pos = 52 * i, k = pos / 64, s = pos % 64;
    V v = k < Pr::N ? _mm512_srli_epi64(w[k], s) : _mm512_setzero_si512();
    if (s > 12 && k + 1 < Pr::N) v = _mm512_or_si512(v, _mm512_slli_epi64(w[k + 1], 64 - s));
    r.l[i] = _mm512_and_si512(v, m);
  }
  return r;
}

template <class Pr>
SNARKD_SIMD52_INLINE void to_words(const Fe<Pr>& a, V* w) {  // a normalized, < 2^(64N)
#pragma GCC unroll 8
  for (unsigned k = 0; k < Pr::N; k++) {
    const unsigned pos = 64 * k, i = pos / 52, s = pos % 52;
    V v = _mm512_srli_epi64(a.l[i], s);
    if (i + 1 < Pr::L) v = _mm512_or_si512(v, _mm512_slli_epi64(a.l[i + 1], 52 - s));
    if (s + 64 > 104 && i + 2 < Pr::L) v = _mm512_or_si512(v, _mm512_slli_epi64(a.l[i + 2], 104 - s));
    w[k] = v;
  }
}

// Gather one field element per lane: lane k reads N words at base + off[k] bytes.
template <class Pr>
SNARKD_SIMD52_INLINE Fe<Pr> gather(const void* base, V off) {
  V w[Pr::N];
#pragma GCC unroll 8
  for (unsigned k = 0; k < Pr::N; k++) w[k] = _mm512_i64gather_epi64(off, (const long long*)((const char*)base + 8 * k), 1);
  return from_words<Pr>(w);
}

// Scatter: lane k writes its N words to base + off[k] bytes (lanes must not overlap).
template <class Pr>
SNARKD_SIMD52_INLINE void scatter(void* base, V off, const Fe<Pr>& a, __mmask8 lanes = 0xff) {
  V w[Pr::N];
  to_words<Pr>(a, w);
#pragma GCC unroll 8
  for (unsigned k = 0; k < Pr::N; k++)
    _mm512_mask_i64scatter_epi64((long long*)((char*)base + 8 * k), lanes, off, w[k], 1);
}

// 8 x 8 transpose of 64-bit words: r[k] holds row k (element k's 8 words) in,
// word k of all eight elements out.
SNARKD_SIMD52_INLINE void transpose8(V* r) {
  const V i0 = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0), i1 = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  const V j0 = _mm512_set_epi64(11, 10, 9, 8, 3, 2, 1, 0), j1 = _mm512_set_epi64(15, 14, 13, 12, 7, 6, 5, 4);
  V a[8], b[8];
  for (int k = 0; k < 8; k += 2) {  // 2x2 blocks of words
    a[k] = _mm512_unpacklo_epi64(r[k], r[k + 1]);
    a[k + 1] = _mm512_unpackhi_epi64(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4)  // 2x2 blocks of 128-bit pairs
    for (int h = 0; h < 2; h++) {
      b[k + h] = _mm512_permutex2var_epi64(a[k + h], i0, a[k + h + 2]);
      b[k + h + 2] = _mm512_permutex2var_epi64(a[k + h], i1, a[k + h + 2]);
    }
  for (int h = 0; h < 4; h++) {  // 256-bit halves
    r[h] = _mm512_permutex2var_epi64(b[h], j0, b[h + 4]);
    r[h + 4] = _mm512_permutex2var_epi64(b[h], j1, b[h + 4]);
  }
}

// Load W 64-bit words from each of eight addresses; out[w] = word w of every lane.
// W a multiple of 4: 8-word chunks go through transpose8, a 4-word tail through a
// transpose of eight 256-bit rows.
template <unsigned W>
SNARKD_SIMD52_INLINE void load_rows(const uint8_t* const* ptr, V* out) {
  static_assert(W % 4 == 0, "W");
  unsigned w = 0;
  for (; w + 8 <= W; w += 8) {
    V r[8];
    for (int k = 0; k < 8; k++) r[k] = _mm512_loadu_si512(ptr[k] + 8 * w);
    transpose8(r);
    for (int k = 0; k < 8; k++) out[w + k] = r[k];
  }
  if (w < W) {
    V r[8];
    for (int k = 0; k < 8; k++) r[k] = _mm512_maskz_loadu_epi64(0x0f, ptr[k] + 8 * w);  // 4 words, zeros above
    transpose8(r);
    for (int k = 0; k < 4; k++) out[w + k] = r[k];
  }
}

// Inverse of load_rows: store word w of lane k to ptr[k] + 8w, for lanes in `lanes`.
template <unsigned W>
SNARKD_SIMD52_INLINE void store_rows(uint8_t* const* ptr, const V* in, __mmask8 lanes) {
  static_assert(W % 4 == 0, "W");
  unsigned w = 0;
  for (; w + 8 <= W; w += 8) {
    V r[8];
    for (int k = 0; k < 8; k++) r[k] = in[w + k];
    transpose8(r);
    for (int k = 0; k < 8; k++)
      if (lanes >> k & 1) _mm512_storeu_si512(ptr[k] + 8 * w, r[k]);
  }
  if (w < W) {
    V r[8];
    for (int k = 0; k < 4; k++) r[k] = in[w + k];
    for (int k = 4; k < 8; k++) r[k] = _mm512_setzero_si512();
    transpose8(r);
    for (int k = 0; k < 8; k++)
      if (lanes >> k & 1) _mm256_storeu_si256((__m256i*)(ptr[k] + 8 * w), _mm512_castsi512_si256(r[k]));
  }
}

// Contiguous SoA storage for scratch: L limb vectors in a row.
template <class Pr>
SNARKD_SIMD52_INLINE void store(V* dst, const Fe<Pr>& a) {
#pragma GCC unroll 8
  for (unsigned i = 0; i < Pr::L; i++) _mm512_store_si512(dst + i, a.l[i]);
}
template <class Pr>
SNARKD_SIMD52_INLINE Fe<Pr> load(const V* src) {
  Fe<Pr> a;
#pragma GCC unroll 8
  for (unsigned i = 0; i < Pr::L; i++) a.l[i] = _mm512_load_si512(src + i);
  return a;
}

template <class Pr>
SNARKD_SIMD52_INLINE Fe<Pr> broadcast(const u64* words) {
  V w[Pr::N];
#pragma GCC unroll 8
  for (unsigned k = 0; k < Pr::N; k++) w[k] = bc(words[k]);
  return from_words<Pr>(w);
}

}  // namespace simd52
}  // namespace snarkd

#else
namespace snarkd {
inline bool detect_simd52() { return false; }
inline bool g_use_simd52 = false;
}  // namespace snarkd
#endif
