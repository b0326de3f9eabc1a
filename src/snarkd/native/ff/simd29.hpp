// Four field elements at once on AVX2 (vpmuludq), for the CPUs without AVX-512 IFMA (AMD Zen 2/3,
// Intel client cores): limbs of 29 bits, one ymm register per limb position, one 64-bit lane per
// element (structure of arrays). Two fields fit this form: BN254's Fq (4 x 64-bit words, 9 limbs)
// and BLS12-381's Fq (6 words, 14 limbs); the limb count is a template parameter (L) throughout.
//
// Why 29 bits, 9 limbs: _mm256_mul_epu32 multiplies the low 32 bits of each lane into 64. With
// 29-bit limbs a result position collects at most 9 products a_i b_j and 9 products m_i p_j,
// 18 * 2^58 < 2^63, so the 171 partial products of one 4-lane Montgomery product accumulate with
// plain vpaddq and no carry handling until the end; 9 * 29 = 261 bits is the smallest count that
// leaves that headroom (bench/avx2_lanes.cpp, bench/cpu-notes.md round 21). BLS12-381 (p < 2^381):
// 14 limbs (406 bits), a position collects 28 products, 28 * 2^58 < 2^63; 406 multiplies for four
// products (cpu-notes round 25).
//
// Montgomery form with R = 2^256, the key's own (as ff/simd52.hpp keeps it): points load from
// the key and the 4x64 buckets with a change of limbs only (load_rows4 / store_rows4). The
// reduction runs per limb, interleaved with the product: eight rounds of 29 bits and a ninth of
// 24 (29 * 8 + 24 = 256), then the limbs are shifted down 24 bits (BLS12-381, R = 2^384: thirteen
// rounds and one of 7 bits). Bounds: out = (ab + mp) / R < ab / R + p; p / R = 0.19 for BN254
// (0.10 for BLS12-381), so inputs below 2p give outputs below 2p, and sums or
// differences that feed a product are kept below 2p (sub_p of canonical values) or brought back
// with csub.
//
// Everything here is compiled for AVX2 with function attributes and only called after the
// CPUID check and the calibration (g_use_simd29, msm side: msm/bucket_simd29.hpp); the scalar
// code stays the fallback.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>

#include "curves/bls12_381.hpp"
#include "curves/bn254.hpp"
#include "ff/mont.hpp"
#include "ff/simd29_rule.hpp"

#if defined(__x86_64__) && defined(__GNUC__)
#define SNARKD_SIMD29 1
#include <cpuid.h>
#include <immintrin.h>

#define SNARKD_SIMD29_TARGET __attribute__((target("avx2,bmi2,adx")))
#define SNARKD_SIMD29_INLINE SNARKD_SIMD29_TARGET inline __attribute__((always_inline))
#ifndef SNARKD_SIMD29_GCC14  // 1: BLS12-381's 14-limb product as GCC compiles mul<P> (measurements only)
#define SNARKD_SIMD29_GCC14 0
#endif

namespace snarkd {
namespace simd29 {

constexpr int RADIX = 29;
constexpr u64 MASK = (1ULL << RADIX) - 1;
using V = __m256i;

// Limbs for W 64-bit words: the fewest 29-bit limbs with a bit of headroom (W = 4: 9, W = 6: 14)
constexpr int limbs_for(size_t W) { return W == 4 ? 9 : 14; }
// Words of an element of L limbs
constexpr int words_of(int L) { return L == 9 ? 4 : 6; }
constexpr int LIMBS = 9;  // BN254's Fq (the default of Fe)

// Whether P fits: 4 or 6 words, and p < R / 5 (outputs below 2p from inputs below 2p; 2p < R for
// the limbs; BN254: p / 2^256 = 0.19, BLS12-381: p / 2^384 = 0.10).
template <class P>
constexpr bool fits() {
  return (P::N == 4 || P::N == 6) && P::MOD[P::N - 1] < 0x3333333333333333ULL;
}

// Compile-time constants of p in 29-bit limbs
template <class P>
struct Params {
  static constexpr int W = (int)P::N;
  static constexpr int L = limbs_for(P::N);
  static constexpr int LAST = 64 * W - RADIX * (L - 1);  // the last reduction round's bits (24; 7)
  struct Limbs { u64 v[L]; };
  // k p (k small, k p < 2^(29 L)) as 29-bit limbs
  static constexpr Limbs kp(unsigned k) {
    u64 w[W + 1] = {};
    unsigned __int128 c = 0;
    for (int i = 0; i < W; i++) {
      c += (unsigned __int128)P::MOD[i] * k;
      w[i] = (u64)c;
      c >>= 64;
    }
    w[W] = (u64)c;
    Limbs r{};
    for (int j = 0; j < L; j++) {
      u64 v = 0;
      for (int b = 0; b < RADIX; b++) {
        const int pos = j * RADIX + b;
        if (pos < 64 * (W + 1) && ((w[pos / 64] >> (pos % 64)) & 1)) v |= 1ULL << b;
      }
      r.v[j] = v;
    }
    return r;
  }
  // k p with limbs 0..L-2 raised by nb 2^29 (borrowed from the next): a - b + k p (nb = 1), or a minus
  // nb normalised values plus k p, never goes negative in a limb below the top
  static constexpr Limbs borrowed_p(unsigned k = 1, unsigned nb = 1) {
    Limbs r = kp(k);
    r.v[0] += (u64)nb << RADIX;
    for (int j = 1; j < L - 1; j++) r.v[j] += (u64)nb * ((1ULL << RADIX) - 1);
    r.v[L - 1] -= nb;
    return r;
  }
  // 2^(29 L) - k p as limbs (the first 2^29 - (kp)_0, then 2^29 - 1 - (kp)_j): a + this carries out of
  // bit 29 L exactly where a >= k p
  static constexpr Limbs complement(unsigned k) {
    Limbs q = kp(k), r{};
    for (int j = 0; j < L; j++) r.v[j] = (1ULL << RADIX) - (j ? 1 : 0) - q.v[j];
    return r;
  }
  static constexpr u64 pinv29() {  // -p^-1 mod 2^29
    u64 inv = 1;
    for (int i = 0; i < 7; i++) inv *= 2 - P::MOD[0] * inv;
    return (0 - inv) & MASK;
  }
  static constexpr Limbs P1 = kp(1), B1 = borrowed_p(), C1 = complement(1), C2 = complement(2);
  static constexpr Limbs B2 = borrowed_p(2), B4 = borrowed_p(4), C4 = complement(4);  // the Fq2 forms (G2)
  // two or three values subtracted in one normalisation (the flushes' x3, y3): 2p, 3p borrowing 2; 5p borrowing 3
  static constexpr Limbs B22 = borrowed_p(2, 2), B32 = borrowed_p(3, 2), B53 = borrowed_p(5, 3);
  static constexpr u64 PINV = pinv29();
};

// Four elements: limb j of each in l[j] (lane k = element k); L limbs
template <int L>
struct FeL {
  V l[L];
};
using Fe = FeL<9>;  // BN254's Fq
template <class P>
using FeOf = FeL<Params<P>::L>;

// The constants in vector form, built once per flush (the products read them from memory).
template <class P>
struct Consts {
  static constexpr int L = Params<P>::L;
  V p[L], bias1[L], c1[L], c2[L], pinv, mask, masklast;
  V bias2[L], bias4[L], c4[L];  // 2p and 4p borrowed, 2^(29 L) - 4p: the Fq2 forms (msm/bucket_simd29.hpp's G2)
  V b22[L], b32[L], b53[L];     // Params' B22, B32, B53
  SNARKD_SIMD29_TARGET Consts() {
    using Pr = Params<P>;
    for (int j = 0; j < L; j++) {
      p[j] = _mm256_set1_epi64x((long long)Pr::P1.v[j]);
      bias1[j] = _mm256_set1_epi64x((long long)Pr::B1.v[j]);
      c1[j] = _mm256_set1_epi64x((long long)Pr::C1.v[j]);
      c2[j] = _mm256_set1_epi64x((long long)Pr::C2.v[j]);
      bias2[j] = _mm256_set1_epi64x((long long)Pr::B2.v[j]);
      bias4[j] = _mm256_set1_epi64x((long long)Pr::B4.v[j]);
      c4[j] = _mm256_set1_epi64x((long long)Pr::C4.v[j]);
      b22[j] = _mm256_set1_epi64x((long long)Pr::B22.v[j]);
      b32[j] = _mm256_set1_epi64x((long long)Pr::B32.v[j]);
      b53[j] = _mm256_set1_epi64x((long long)Pr::B53.v[j]);
    }
    pinv = _mm256_set1_epi64x((long long)Pr::PINV);
    mask = _mm256_set1_epi64x((long long)MASK);
    masklast = _mm256_set1_epi64x((long long)((1ULL << Pr::LAST) - 1));
  }
};

// An empty asm on an accumulator after each addition: GCC otherwise reassociates the integer sums,
// computes a step's 81 limb products first and spills them (195 vmovdqa for 171 vpmuludq); kept in
// order the nine accumulators stay in registers (bench/avx2_lanes.cpp: 10.6 -> 9.0 ns a product).
SNARKD_SIMD29_INLINE void keep(V& v) { asm("" : "+v"(v)); }

// t: L accumulators of T = sum t_j 2^(29 j) with T = 0 mod 2^S; o = T / 2^S, normalised
template <int S, int L>
SNARKD_SIMD29_INLINE void normalize_shift(FeL<L>& o, const V* t, V mask) {
  V n[L + 1];
  V c = t[0];
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) {
    n[j] = _mm256_and_si256(c, mask);
    c = j + 1 < L ? _mm256_add_epi64(t[j + 1], _mm256_srli_epi64(c, RADIX)) : _mm256_srli_epi64(c, RADIX);
  }
  n[L] = c;
#pragma GCC unroll 14
  for (int j = 0; j + 1 < L; j++)
    o.l[j] = _mm256_and_si256(_mm256_add_epi64(_mm256_srli_epi64(n[j], S), _mm256_slli_epi64(n[j + 1], RADIX - S)), mask);
  o.l[L - 1] = _mm256_add_epi64(_mm256_srli_epi64(n[L - 1], S), _mm256_slli_epi64(n[L], RADIX - S));
}

// carries from limb to limb: every limb below 2^29, the top one what remains
template <int L>
SNARKD_SIMD29_INLINE void normalize(FeL<L>& o, const V* t, V mask) {
  V c = t[0];
#pragma GCC unroll 14
  for (int j = 0; j < L - 1; j++) {
    o.l[j] = _mm256_and_si256(c, mask);
    c = _mm256_add_epi64(t[j + 1], _mm256_srli_epi64(c, RADIX));
  }
  o.l[L - 1] = c;
}

}  // namespace simd29
}  // namespace snarkd
#include "ff/simd29_asm.hpp"
namespace snarkd {
namespace simd29 {

// o = a b / R mod p (R = 2^(64 W)), for normalised a, b with a b < p R (both below 2p): o normalised, below 2p
template <class P, int L = Params<P>::L>
SNARKD_SIMD29_INLINE void mul(FeL<L>& o, const FeL<L>& a, const FeL<L>& b, const Consts<P>& k) {
  if constexpr (L == 14 && !SNARKD_SIMD29_GCC14) {  // the same rounds in asm: GCC spills 14 accumulators (ff/gen_simd29_asm.py)
    static_assert(Params<P>::LAST == 7, "the asm block shifts by 7 bits (R = 2^384)");
    mul14(o.l, a.l, b.l, &k);  // normalised and shifted in the block
    return;
  }
  V t[L];
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) t[j] = _mm256_mul_epu32(a.l[0], b.l[j]);
#pragma GCC unroll 14
  for (int i = 0; i < L; i++) {
    if (i > 0) {
#pragma GCC unroll 14
      for (int j = 0; j < L; j++) {
        t[j] = _mm256_add_epi64(t[j], _mm256_mul_epu32(a.l[i], b.l[j]));
        keep(t[j]);
      }
    }
    const bool last = i == L - 1;
    const V m = _mm256_and_si256(_mm256_mul_epu32(t[0], k.pinv), last ? k.masklast : k.mask);  // t0 + m p0 = 0 mod 2^29 (2^LAST)
#pragma GCC unroll 14
    for (int j = 0; j < L; j++) {
      t[j] = _mm256_add_epi64(t[j], _mm256_mul_epu32(m, k.p[j]));
      keep(t[j]);
    }
    if (!last) {
      const V carry = _mm256_srli_epi64(t[0], RADIX);
#pragma GCC unroll 14
      for (int j = 0; j < L - 1; j++) t[j] = t[j + 1];
      t[0] = _mm256_add_epi64(t[0], carry);
      t[L - 1] = _mm256_setzero_si256();
    }
  }
  normalize_shift<Params<P>::LAST>(o, t, k.mask);
}

// a - MUL p where that is >= 0, else a (a normalised, below R): the borrow runs through the
// limbs with a bias (AVX2 has no 64-bit arithmetic shift); the carry out of bit 29 L picks the lanes
template <class P, int MUL, int L = Params<P>::L>
SNARKD_SIMD29_INLINE void csub(FeL<L>& a, const Consts<P>& k) {
  static_assert(MUL == 1 || MUL == 2 || MUL == 4, "csub of p, 2p or 4p");
  const V* q = MUL == 1 ? k.c1 : MUL == 2 ? k.c2 : k.c4;
  V d[L];
  V e = _mm256_add_epi64(a.l[0], q[0]);
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) {
    d[j] = _mm256_and_si256(e, k.mask);
    if (j + 1 < L) e = _mm256_add_epi64(_mm256_add_epi64(a.l[j + 1], q[j + 1]), _mm256_srli_epi64(e, RADIX));
  }
  const V take = _mm256_sub_epi64(_mm256_setzero_si256(), _mm256_srli_epi64(e, RADIX));  // all ones where a >= MUL p
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) a.l[j] = _mm256_blendv_epi8(a.l[j], d[j], take);
}

// o = a - b + p, normalised (a, b normalised, b <= a + p; canonical a, b give o in (0, 2p))
template <class P, int L = Params<P>::L>
SNARKD_SIMD29_INLINE void sub_p(FeL<L>& o, const FeL<L>& a, const FeL<L>& b, const Consts<P>& k) {
  V t[L];
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) t[j] = _mm256_sub_epi64(_mm256_add_epi64(a.l[j], k.bias1[j]), b.l[j]);
  normalize(o, t, k.mask);
}

// o = a - b + K p, normalised (a, b normalised, b <= a + K p; K = 1, 2, 4)
template <class P, int K, int L = Params<P>::L>
SNARKD_SIMD29_INLINE void sub_kp(FeL<L>& o, const FeL<L>& a, const FeL<L>& b, const Consts<P>& k) {
  static_assert(K == 1 || K == 2 || K == 4, "p, 2p or 4p");
  const V* bias = K == 1 ? k.bias1 : K == 2 ? k.bias2 : k.bias4;
  V t[L];
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) t[j] = _mm256_sub_epi64(_mm256_add_epi64(a.l[j], bias[j]), b.l[j]);
  normalize(o, t, k.mask);
}
// Sums and differences of several values in one normalisation (the flushes' x3 = lambda^2 - x1 - x2 and
// y3's last steps): bias is a borrowed multiple of p that borrows at least the count of subtracted values
// (Consts' bias1, bias2: one; b22, b32: two; b53: three), the subtracted values normalised, and the result
// must be >= 0 (the bias covers the subtracted values' bound).
// o = a - b - c + bias
template <int L>
SNARKD_SIMD29_INLINE void sub2_bias(FeL<L>& o, const FeL<L>& a, const FeL<L>& b, const FeL<L>& c, const V* bias, V mask) {
  V t[L];
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) t[j] = _mm256_sub_epi64(_mm256_add_epi64(a.l[j], bias[j]), _mm256_add_epi64(b.l[j], c.l[j]));
  normalize(o, t, mask);
}
// o = a - b - c - d + bias
template <int L>
SNARKD_SIMD29_INLINE void sub3_bias(FeL<L>& o, const FeL<L>& a, const FeL<L>& b, const FeL<L>& c, const FeL<L>& d,
                                    const V* bias, V mask) {
  V t[L];
#pragma GCC unroll 14
  for (int j = 0; j < L; j++)
    t[j] = _mm256_sub_epi64(_mm256_add_epi64(a.l[j], bias[j]), _mm256_add_epi64(_mm256_add_epi64(b.l[j], c.l[j]), d.l[j]));
  normalize(o, t, mask);
}
// o = a + b - c + bias
template <int L>
SNARKD_SIMD29_INLINE void add_sub_bias(FeL<L>& o, const FeL<L>& a, const FeL<L>& b, const FeL<L>& c, const V* bias, V mask) {
  V t[L];
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) t[j] = _mm256_sub_epi64(_mm256_add_epi64(_mm256_add_epi64(a.l[j], b.l[j]), bias[j]), c.l[j]);
  normalize(o, t, mask);
}
// o = a + b - c - d + bias
template <int L>
SNARKD_SIMD29_INLINE void add_sub2_bias(FeL<L>& o, const FeL<L>& a, const FeL<L>& b, const FeL<L>& c, const FeL<L>& d,
                                        const V* bias, V mask) {
  V t[L];
#pragma GCC unroll 14
  for (int j = 0; j < L; j++)
    t[j] = _mm256_sub_epi64(_mm256_add_epi64(_mm256_add_epi64(a.l[j], b.l[j]), bias[j]), _mm256_add_epi64(c.l[j], d.l[j]));
  normalize(o, t, mask);
}
// d = y2 - y1 + p in the lanes of nl's zeros, -y2 - y1 + 2p in its ones (a negated source: y2 as loaded),
// one normalisation (2p borrowing 2 covers both subtractions); at most 2p (2p only where y1 = y2 = 0)
template <class P, int L = Params<P>::L>
SNARKD_SIMD29_INLINE void sub_p_neg(FeL<L>& d, const FeL<L>& y2, const FeL<L>& y1, V nl, const Consts<P>& k) {
  V t[L];
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) {
    const V plus = _mm256_andnot_si256(nl, y2.l[j]);
    const V minus = _mm256_add_epi64(y1.l[j], _mm256_and_si256(nl, y2.l[j]));
    const V bias = _mm256_blendv_epi8(k.bias1[j], k.b22[j], nl);
    t[j] = _mm256_sub_epi64(_mm256_add_epi64(plus, bias), minus);
  }
  normalize(d, t, k.mask);
}
// o = a + b, normalised
template <class P, int L = Params<P>::L>
SNARKD_SIMD29_INLINE void add(FeL<L>& o, const FeL<L>& a, const FeL<L>& b, const Consts<P>& k) {
  V t[L];
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) t[j] = _mm256_add_epi64(a.l[j], b.l[j]);
  normalize(o, t, k.mask);
}
// mul, one out-of-line copy per field (the G2 adder's fifteen products per group would otherwise
// be fifteen inlined copies: cpu-notes round 25, the decoded-instruction cache)
template <class P, int L = Params<P>::L>
SNARKD_SIMD29_TARGET __attribute__((noinline)) void mul_ool(FeL<L>& o, const FeL<L>& a, const FeL<L>& b, const Consts<P>& k) {
  mul<P>(o, a, b, k);
}

// k ? b : a per lane (k all ones or all zeros per 64-bit lane)
template <int L>
SNARKD_SIMD29_INLINE FeL<L> blend(V k, const FeL<L>& a, const FeL<L>& b) {
  FeL<L> r;
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) r.l[j] = _mm256_blendv_epi8(a.l[j], b.l[j], k);
  return r;
}
// o = a, one vector store per limb: GCC turns a plain FeL assignment into `rep movsq` (448 bytes for
// 14 limbs), whose start-up the flush's per-group copies pay every time
template <int L>
SNARKD_SIMD29_INLINE void copy(FeL<L>& o, const FeL<L>& a) {
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) _mm256_store_si256(&o.l[j], _mm256_load_si256(&a.l[j]));
}
// all ones in the lanes where a == b limb for limb
template <int L>
SNARKD_SIMD29_INLINE V equal_lanes(const FeL<L>& a, const FeL<L>& b) {
  V e = _mm256_cmpeq_epi64(a.l[0], b.l[0]);
#pragma GCC unroll 14
  for (int j = 1; j < L; j++) e = _mm256_and_si256(e, _mm256_cmpeq_epi64(a.l[j], b.l[j]));
  return e;
}
// the lanes' mask as 4 bits (bit k = lane k)
SNARKD_SIMD29_INLINE unsigned bits(V k) { return (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(k)); }
// 4 bits to a lane mask
SNARKD_SIMD29_INLINE V lanes(unsigned b) {
  const V sel = _mm256_setr_epi64x(1, 2, 4, 8);
  return _mm256_cmpeq_epi64(_mm256_and_si256(_mm256_set1_epi64x((long long)b), sel), sel);
}
// every lane the same element (words: W x 64-bit, below 2^(64 W); L limbs)
template <int L = LIMBS>
SNARKD_SIMD29_INLINE FeL<L> broadcast(const u64* w) {
  constexpr int W = words_of(L);
  FeL<L> r;
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) {
    const int pos = j * RADIX, q = pos / 64, sh = pos % 64;
    u64 v = q < W ? w[q] >> sh : 0;
    if (sh + RADIX > 64 && q + 1 < W) v |= w[q + 1] << (64 - sh);
    r.l[j] = _mm256_set1_epi64x((long long)(v & MASK));
  }
  return r;
}

// words (one vector per 64-bit word, lane k = element k) -> limb vectors
template <int L>
SNARKD_SIMD29_INLINE void words_to_limbs(FeL<L>& e, const V* w) {
  constexpr int W = words_of(L);
  const V mask = _mm256_set1_epi64x((long long)MASK);
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) {
    const int pos = j * RADIX, q = pos / 64, sh = pos % 64;
    if (q >= W) {
      e.l[j] = _mm256_setzero_si256();
      continue;
    }
    V v = _mm256_srli_epi64(w[q], sh);
    if (sh + RADIX > 64 && q + 1 < W) v = _mm256_or_si256(v, _mm256_slli_epi64(w[q + 1], 64 - sh));
    e.l[j] = _mm256_and_si256(v, mask);
  }
}
// limb vectors (normalised, below 2^(64 W)) -> words
template <int L>
SNARKD_SIMD29_INLINE void limbs_to_words(V* w, const FeL<L>& e) {
  constexpr int W = words_of(L);
#pragma GCC unroll 6
  for (int q = 0; q < W; q++) w[q] = _mm256_setzero_si256();
#pragma GCC unroll 14
  for (int j = 0; j < L; j++) {
    const int pos = j * RADIX, q = pos / 64, sh = pos % 64;
    if (q >= W) continue;
    w[q] = _mm256_or_si256(w[q], _mm256_slli_epi64(e.l[j], sh));
    if (sh + RADIX > 64 && q + 1 < W) w[q + 1] = _mm256_or_si256(w[q + 1], _mm256_srli_epi64(e.l[j], 64 - sh));
  }
}

// Four W x 64-bit elements (rows, any alignment) -> L limb vectors: a 4x4 transpose of words 0..3
// (and for W = 6 a 4x2 one of words 4, 5), then each limb cut from one or two words
template <int L = LIMBS>
SNARKD_SIMD29_INLINE void load_rows4(FeL<L>& e, const void* r0, const void* r1, const void* r2, const void* r3) {
  constexpr int W = words_of(L);
  const V a = _mm256_loadu_si256((const V*)r0), b = _mm256_loadu_si256((const V*)r1);
  const V c = _mm256_loadu_si256((const V*)r2), d = _mm256_loadu_si256((const V*)r3);
  const V ab_lo = _mm256_unpacklo_epi64(a, b), ab_hi = _mm256_unpackhi_epi64(a, b);  // a0 b0 a2 b2 | a1 b1 a3 b3
  const V cd_lo = _mm256_unpacklo_epi64(c, d), cd_hi = _mm256_unpackhi_epi64(c, d);
  V w[W];
  w[0] = _mm256_permute2x128_si256(ab_lo, cd_lo, 0x20);
  w[1] = _mm256_permute2x128_si256(ab_hi, cd_hi, 0x20);
  w[2] = _mm256_permute2x128_si256(ab_lo, cd_lo, 0x31);
  w[3] = _mm256_permute2x128_si256(ab_hi, cd_hi, 0x31);
  if constexpr (W == 6) {
    const V ac = _mm256_setr_m128i(_mm_loadu_si128((const __m128i*)((const u64*)r0 + 4)),
                                   _mm_loadu_si128((const __m128i*)((const u64*)r2 + 4)));  // a4 a5 | c4 c5
    const V bd = _mm256_setr_m128i(_mm_loadu_si128((const __m128i*)((const u64*)r1 + 4)),
                                   _mm_loadu_si128((const __m128i*)((const u64*)r3 + 4)));  // b4 b5 | d4 d5
    w[4] = _mm256_unpacklo_epi64(ac, bd);  // a4 b4 c4 d4
    w[5] = _mm256_unpackhi_epi64(ac, bd);
  }
  words_to_limbs(e, w);
}
// e normalised and below 2^(64 W) -> four W x 64-bit rows
template <int L = LIMBS>
SNARKD_SIMD29_INLINE void store_rows4(const FeL<L>& e, void* r0, void* r1, void* r2, void* r3) {
  constexpr int W = words_of(L);
  V w[W];
  limbs_to_words(w, e);
  const V lo01 = _mm256_unpacklo_epi64(w[0], w[1]), hi01 = _mm256_unpackhi_epi64(w[0], w[1]);  // a0 a1 c0 c1 | b0 b1 d0 d1
  const V lo23 = _mm256_unpacklo_epi64(w[2], w[3]), hi23 = _mm256_unpackhi_epi64(w[2], w[3]);
  _mm256_storeu_si256((V*)r0, _mm256_permute2x128_si256(lo01, lo23, 0x20));
  _mm256_storeu_si256((V*)r1, _mm256_permute2x128_si256(hi01, hi23, 0x20));
  _mm256_storeu_si256((V*)r2, _mm256_permute2x128_si256(lo01, lo23, 0x31));
  _mm256_storeu_si256((V*)r3, _mm256_permute2x128_si256(hi01, hi23, 0x31));
  if constexpr (W == 6) {
    const V ac = _mm256_unpacklo_epi64(w[4], w[5]), bd = _mm256_unpackhi_epi64(w[4], w[5]);  // a4 a5 c4 c5 | b4 b5 d4 d5
    _mm_storeu_si128((__m128i*)((u64*)r0 + 4), _mm256_castsi256_si128(ac));
    _mm_storeu_si128((__m128i*)((u64*)r2 + 4), _mm256_extracti128_si256(ac, 1));
    _mm_storeu_si128((__m128i*)((u64*)r1 + 4), _mm256_castsi256_si128(bd));
    _mm_storeu_si128((__m128i*)((u64*)r3 + 4), _mm256_extracti128_si256(bd, 1));
  }
}

// Testing aid (_core._simd29_mul): o = a b / R mod p for n elements of W words each (n a
// multiple of 4, inputs below 2p), the lane product; outputs canonical with csub
template <class P>
SNARKD_SIMD29_TARGET void mul_rows(u64* o, const u64* a, const u64* b, size_t n) {
  constexpr int W = (int)P::N;
  const Consts<P> k;
  for (size_t i = 0; i + 4 <= n; i += 4) {
    FeOf<P> x, y, r;
    load_rows4(x, a + W * i, a + W * (i + 1), a + W * (i + 2), a + W * (i + 3));
    load_rows4(y, b + W * i, b + W * (i + 1), b + W * (i + 2), b + W * (i + 3));
    mul<P>(r, x, y, k);
    csub<P, 1>(r, k);
    store_rows4(r, o + W * i, o + W * (i + 1), o + W * (i + 2), o + W * (i + 3));
  }
}

// The calibration: ns per product, lane form (4 at a time) and scalar (mul_lazy_to), each the
// best of a few timings of 1024 independent products on the same operands
template <class P>
SNARKD_SIMD29_TARGET __attribute__((noinline)) double lane_product_ns(FeOf<P>* buf, size_t groups, const Consts<P>& k) {
  auto t0 = std::chrono::steady_clock::now();
  for (size_t g = 0; g + 1 < groups; g++) mul<P>(buf[g], buf[g], buf[g + 1], k);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (4.0 * (groups - 1));
}
template <class F>
__attribute__((noinline)) double scalar_product_ns(F* buf, size_t n) {
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i + 1 < n; i++) F::mul_lazy_to(buf[i], buf[i], buf[i + 1]);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (double)(n - 1);
}

}  // namespace simd29

// AVX2 with the OS saving ymm state (XCR0 bits 1, 2), plus BMI2/ADX (the scalar side of the
// same path: the inversion and the equal-x additions).
inline bool detect_simd29() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 27))) return false;  // OSXSAVE
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 0x6) != 0x6) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b & (1u << 5)) && detect_adx();  // AVX2
}

// Whether the 4-lane product beats the scalar one on this CPU by the margin the adder needs.
// The adder's other work (layout changes, csubs, subtractions: ~20 of ~80 ns on Zen 4) does not
// shrink with the lanes, so the lane product must be clearly faster: at 1.25x the adder is still
// ahead (Zen 4: product 1.62x -> adder 1.30x); a CPU with one vector multiply pipe (Zen 2, by the
// published tables) would measure ~1x and keep the scalar path. 3 x 2 timings of 1024 products,
// alternated, best of each: ~0.2 ms, once per process and field, at its first G1 MSM with IFMA off
// (simd29_on, msm/bucket_simd29.hpp; not at load: the IFMA path's start-up does not pay for it).
template <class P>
SNARKD_SIMD29_TARGET inline bool simd29_pays() {
  using namespace simd29;
  using F = Mont<P>;
  constexpr size_t NG = 256;  // 1024 lane products, 1024 scalar ones
  constexpr int W = (int)P::N;
  alignas(32) static FeOf<P> lane_buf[NG];  // called once per field (its default's static)
  static F scalar_buf[4 * NG];
  const Consts<P> k;
  u64 s = 0x9e3779b97f4a7c15ULL;
  const u64 top = (1ULL << (63 - __builtin_clzll(P::MOD[W - 1]))) - 1;  // the top word below p's
  for (size_t i = 0; i < 4 * NG; i++) {
    for (int q = 0; q < W; q++) {
      s ^= s << 13; s ^= s >> 7; s ^= s << 17;
      scalar_buf[i].v[q] = q == W - 1 ? s & top : s;
    }
  }
  for (size_t g = 0; g < NG; g++)
    load_rows4(lane_buf[g], &scalar_buf[4 * g], &scalar_buf[4 * g + 1], &scalar_buf[4 * g + 2], &scalar_buf[4 * g + 3]);
  double lane = 1e30, scalar = 1e30;
  for (int r = 0; r < 3; r++) {
    scalar = std::min(scalar, scalar_product_ns(scalar_buf, 4 * NG));
    lane = std::min(lane, lane_product_ns<P>(lane_buf, NG, k));
  }
  return lane * 1.25 <= scalar;
}

// -1 until first asked, then 0 off, 1 on, per field: BN254's Fq (g_use_simd29) and BLS12-381's
// (g_use_simd29_bls), each the default: on where the CPU has AVX2 + BMI2/ADX and its model's row in
// ff/simd29_rule.hpp says on, or, on a CPU without a row, that field's calibration found its lane product
// faster (Zen 4: 1.57x and 1.50x, cpu-notes round 25). Decided at the first ask
// (simd29_on), not at load: the module's import was ~0.5 ms of CPU dearer for it in every process, the IFMA
// path's included (cpu-notes round 37). Not const: _core._set_simd29 (tests, benchmarks) switches them
// between computations only (native/path_gate.hpp). The AVX-512 IFMA path, when on, has priority
// (msm/batch_adder.hpp).
inline bool simd29_default() {
  static const bool on =
      detect_simd29() && lane_default(simd29_rule(cpu_model(), false, false), [] { return simd29_pays<bn254::FqP>(); });
  return on;
}
inline bool simd29_default_bls() {
  static const bool on =
      detect_simd29() && lane_default(simd29_rule(cpu_model(), true, false), [] { return simd29_pays<bls12_381::FqP>(); });
  return on;
}
inline int g_use_simd29 = -1;
inline int g_use_simd29_bls = -1;

}  // namespace snarkd

#else
namespace snarkd {
inline bool detect_simd29() { return false; }
inline bool simd29_default() { return false; }
inline bool simd29_default_bls() { return false; }
inline int g_use_simd29 = 0;
inline int g_use_simd29_bls = 0;
}  // namespace snarkd
#endif
