// A 4-lane AVX2 Montgomery product for BN254 (Fq; Fr for the NTT butterfly) measured against the
// project's scalar 4x64 mulx/adcx/adox product (ff/mont.hpp), one core, for the CPUs without
// AVX-512 IFMA (issue 39; bench/cpu-notes.md round 21, the lead's CPU round 24).
//
// Lane form: radix 2^29, 9 limbs in the 64-bit lanes of a vector, limb j of four (AVX2) or eight
// (AVX-512F) elements in one register (structure of arrays). _mm256_mul_epu32 gives a 29 x 29 -> 58
// bit product; a result position collects at most 9 products a_i b_j and 9 products m_i p_j, below
// 18 * 2^58 < 2^63, so the products accumulate with no carry handling until the end. Montgomery
// reduction per limb (R = 2^261), interleaved with the product (operand scanning): 81 + 9 + 81 = 171
// 32-bit multiplies for four products. R/p is about 168, so the product needs no final subtraction:
// inputs below 2^260 give outputs below 2^259 + p, and inputs a, b with ab < pR (e.g. both below
// 12p) outputs below 2p. Subtraction adds a multiple of p (kept in a borrowed form whose limbs are
// all >= 2^29), reduce() brings a value below 2^260 under 3p with one small multiple of p estimated
// from the top bits. Conversion to and from this form is off the hot path (done once here).
// A second form, R = 2^256 (mul256: eight 29-bit rounds and one of 24 bits), keeps the key's own
// Montgomery form as ff/simd52.hpp does, at the price of csubs (R/p = 5.3); load_rows4 / store_rows4
// change four 4x64 rows to limb vectors and back. The figures: bench/results/cpu24-avx2-lanes.json.
//
// Build (AVX2 + BMI2 + ADX only: the Zen 2/3 instruction set; TREE = a snarkd checkout):
//   g++ -O3 -std=c++17 -mavx2 -mbmi2 -madx -I TREE/src/snarkd/native bench/avx2_lanes.cpp -o /tmp/avx2_lanes
// The 8-lane AVX-512F form (no IFMA: Skylake/Cascade Lake servers) is built in with -mavx512f added:
//   g++ -O3 -std=c++17 -mavx2 -mbmi2 -madx -mavx512f -I TREE/src/snarkd/native bench/avx2_lanes.cpp -o /tmp/avx512f_lanes
// (its AVX2 figures are then not the AVX2 target's: the compiler may use 32 registers and EVEX forms).
// Run: taskset -c 1 /tmp/avx2_lanes [rounds]     (figures, medians over alternated rounds)
//      /tmp/avx2_lanes --selftest                (raw lane values for tests/bench/test_avx2_lanes.py)
#include <immintrin.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <string>
#include <vector>
#include "curves/bn254.hpp"

using namespace snarkd;
using u64 = uint64_t;
using u128 = unsigned __int128;

namespace lanes {
constexpr int LIMBS = 9;
constexpr int RADIX = 29;
constexpr u64 MASK = (1ULL << RADIX) - 1;
constexpr u64 MASK24 = (1ULL << 24) - 1;  // the R = 2^256 form's last reduction round
constexpr int R_BITS = LIMBS * RADIX;  // 261

// --- plain integers of up to 5 words (below 2^320), for constants and conversion only ---
struct Big { u64 w[5] = {0, 0, 0, 0, 0}; };
inline Big big_from4(const u64* v) { Big b; for (int i = 0; i < 4; i++) b.w[i] = v[i]; return b; }
inline bool big_ge(const Big& a, const Big& b) {
  for (int i = 4; i >= 0; i--) { if (a.w[i] != b.w[i]) return a.w[i] > b.w[i]; }
  return true;
}
inline Big big_add(const Big& a, const Big& b) {
  Big r; u128 c = 0;
  for (int i = 0; i < 5; i++) { c += (u128)a.w[i] + b.w[i]; r.w[i] = (u64)c; c >>= 64; }
  return r;
}
inline Big big_sub(const Big& a, const Big& b) {
  Big r; u64 borrow = 0;
  for (int i = 0; i < 5; i++) { u128 d = (u128)a.w[i] - b.w[i] - borrow; r.w[i] = (u64)d; borrow = (u64)(d >> 64) & 1; }
  return r;
}
inline Big big_mul_small(const Big& a, u64 k) {
  Big r; u128 c = 0;
  for (int i = 0; i < 5; i++) { c += (u128)a.w[i] * k; r.w[i] = (u64)c; c >>= 64; }
  return r;
}
inline void big_to_limbs(const Big& b, u64* l) {
  for (int j = 0; j < LIMBS; j++) {
    int pos = j * RADIX, w = pos / 64, s = pos % 64;
    u128 two = (u128)b.w[w] | (w + 1 < 5 ? (u128)b.w[w + 1] << 64 : 0);
    l[j] = (u64)(two >> s) & MASK;
  }
}
// limbs may be unnormalised (any u64): the sum of l_j 2^(29 j), below 2^320
inline Big big_from_limbs(const u64* l) {
  Big r;
  for (int j = 0; j < LIMBS; j++) {
    Big t; int pos = j * RADIX, w = pos / 64, s = pos % 64;
    u128 v = (u128)l[j] << s;
    t.w[w] = (u64)v;
    if (w + 1 < 5) t.w[w + 1] = (u64)(v >> 64);
    r = big_add(r, t);
  }
  return r;
}
inline std::string big_hex(const Big& b) {
  char buf[96]; std::snprintf(buf, sizeof buf, "%016llx%016llx%016llx%016llx%016llx", (unsigned long long)b.w[4], (unsigned long long)b.w[3],
                              (unsigned long long)b.w[2], (unsigned long long)b.w[1], (unsigned long long)b.w[0]);
  const char* s = buf; while (*s == '0' && s[1]) s++;
  return s;
}

// --- the vector primitives: the same kernels for 4 lanes (AVX2) and 8 (AVX-512F) ---
struct Avx2 {
  using V = __m256i;
  static constexpr int WIDTH = 4;
  static inline V mul(V a, V b) { return _mm256_mul_epu32(a, b); }
  static inline V add(V a, V b) { return _mm256_add_epi64(a, b); }
  static inline V sub(V a, V b) { return _mm256_sub_epi64(a, b); }
  static inline V band(V a, V b) { return _mm256_and_si256(a, b); }
  template <int S> static inline V shr(V a) { return _mm256_srli_epi64(a, S); }
  template <int S> static inline V shl(V a) { return _mm256_slli_epi64(a, S); }
  static inline V blend(V take, V a, V b) { return _mm256_blendv_epi8(a, b, take); }  // b where take
  static inline V set1(u64 x) { return _mm256_set1_epi64x((long long)x); }
  static inline V zero() { return _mm256_setzero_si256(); }
  static inline void lanes_out(V a, u64* o) { _mm256_storeu_si256((V*)o, a); }
  static inline V lanes_in(const u64* o) { return _mm256_loadu_si256((const V*)o); }
  static const char* name() { return "avx2x4"; }
};
#if defined(__AVX512F__)
struct Avx512F {
  using V = __m512i;
  static constexpr int WIDTH = 8;
  static inline V mul(V a, V b) { return _mm512_mul_epu32(a, b); }
  static inline V add(V a, V b) { return _mm512_add_epi64(a, b); }
  static inline V sub(V a, V b) { return _mm512_sub_epi64(a, b); }
  static inline V band(V a, V b) { return _mm512_and_si512(a, b); }
  template <int S> static inline V shr(V a) { return _mm512_srli_epi64(a, S); }
  template <int S> static inline V shl(V a) { return _mm512_slli_epi64(a, S); }
  static inline V blend(V take, V a, V b) { return _mm512_mask_blend_epi64(_mm512_test_epi64_mask(take, take), a, b); }
  static inline V set1(u64 x) { return _mm512_set1_epi64((long long)x); }
  static inline V zero() { return _mm512_setzero_si512(); }
  static inline void lanes_out(V a, u64* o) { _mm512_storeu_si512(o, a); }
  static inline V lanes_in(const u64* o) { return _mm512_loadu_si512(o); }
  static const char* name() { return "avx512fx8"; }
};
#endif

// one field's constants in plain and broadcast form
struct FieldInts {
  Big p;
  u64 p_limbs[LIMBS];
  u64 pinv;          // -p^-1 mod 2^29
  u64 bias8[LIMBS];  // 8p with limbs 0..7 raised by 2^29 (borrowed from the next): a - b + 8p for b <= 7p
  u64 bias4[LIMBS];  // 4p likewise, for b <= 3p
  u64 q_mul;         // floor(2^(253+24) / p): reduce()'s quotient estimate
};
inline void borrowed(const Big& v, u64* out) {
  big_to_limbs(v, out);
  out[0] += 1ULL << RADIX;
  for (int j = 1; j < LIMBS - 1; j++) out[j] += (1ULL << RADIX) - 1;
  out[LIMBS - 1] -= 1;
}
inline FieldInts make_field(const u64* mod4) {
  FieldInts f;
  f.p = big_from4(mod4);
  big_to_limbs(f.p, f.p_limbs);
  u64 inv = mod4[0];  // Newton: inv = p^-1 mod 2^64
  for (int i = 0; i < 6; i++) inv *= 2 - mod4[0] * inv;
  f.pinv = (0 - inv) & MASK;
  borrowed(big_mul_small(f.p, 8), f.bias8);
  borrowed(big_mul_small(f.p, 4), f.bias4);
  // 2^277 / p by long division on the top words (p > 2^253, so the quotient is below 2^24)
  Big num; num.w[4] = 1ULL << (277 - 256);
  u64 q = 0;
  for (int bit = 24; bit >= 0; bit--) {
    Big t = big_mul_small(f.p, 1ULL << bit);
    Big trial = big_add(big_mul_small(f.p, q), t);
    if (big_ge(num, trial)) q |= 1ULL << bit;
  }
  f.q_mul = q;
  return f;
}

template <class VO>
struct Consts {
  using V = typename VO::V;
  V p[LIMBS], bias8[LIMBS], bias4[LIMBS], bias1[LIMBS], csub1[LIMBS], csub2[LIMBS], pinv, mask, mask24, q_mul;
  explicit Consts(const FieldInts& f) {
    u64 b1[LIMBS], p2[LIMBS];
    borrowed(f.p, b1);
    big_to_limbs(big_mul_small(f.p, 2), p2);
    for (int j = 0; j < LIMBS; j++) {
      p[j] = VO::set1(f.p_limbs[j]); bias8[j] = VO::set1(f.bias8[j]); bias4[j] = VO::set1(f.bias4[j]); bias1[j] = VO::set1(b1[j]);
      csub1[j] = VO::set1((1ULL << RADIX) - (j ? 1 : 0) - f.p_limbs[j]);
      csub2[j] = VO::set1((1ULL << RADIX) - (j ? 1 : 0) - p2[j]);
    }
    pinv = VO::set1(f.pinv); mask = VO::set1(MASK); mask24 = VO::set1(MASK24); q_mul = VO::set1(f.q_mul);
  }
};

template <class VO>
struct Elem { typename VO::V l[LIMBS]; };  // VO::WIDTH field elements, limb j of each in l[j]

// An empty asm on an accumulator after each of its additions: GCC otherwise reassociates the
// integer sums, computes all 81 limb products of a step first and spills them to the stack (195
// vmovdqa for 171 vpmuludq in the AVX2 product; the stores were the limit). In order, the nine
// accumulators stay in registers: 35 moves, 10.6 -> 9.2 ns a product.
template <class V>
static inline __attribute__((always_inline)) void keep(V& v) { asm("" : "+v"(v)); }

// carries from limb to limb: every limb below 2^29, the top one what remains
template <class VO>
static inline __attribute__((always_inline)) void normalize(Elem<VO>& o, const typename VO::V* t, typename VO::V mask) {
  auto c = t[0];
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS - 1; j++) {
    o.l[j] = VO::band(c, mask);
    c = VO::add(t[j + 1], VO::template shr<RADIX>(c));
  }
  o.l[LIMBS - 1] = c;
}

// o = a b / 2^261 (mod p), for normalised a, b below 2^260; o normalised, below 2^259 + p
template <class VO>
static inline __attribute__((always_inline)) void mul(Elem<VO>& o, const Elem<VO>& a, const Elem<VO>& b, const Consts<VO>& k) {
  using V = typename VO::V;
  V t[LIMBS];
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) t[j] = VO::mul(a.l[0], b.l[j]);
#pragma GCC unroll 9
  for (int i = 0; i < LIMBS; i++) {
    if (i > 0) {
#pragma GCC unroll 9
      for (int j = 0; j < LIMBS; j++) { t[j] = VO::add(t[j], VO::mul(a.l[i], b.l[j])); keep(t[j]); }
    }
    V m = VO::band(VO::mul(t[0], k.pinv), k.mask);  // t0 + m p0 = 0 mod 2^29
#pragma GCC unroll 9
    for (int j = 0; j < LIMBS; j++) { t[j] = VO::add(t[j], VO::mul(m, k.p[j])); keep(t[j]); }
    V carry = VO::template shr<RADIX>(t[0]);
#pragma GCC unroll 9
    for (int j = 0; j < LIMBS - 1; j++) t[j] = t[j + 1];
    t[0] = VO::add(t[0], carry);
    t[LIMBS - 1] = VO::zero();
  }
  normalize<VO>(o, t, k.mask);
}

// ---- the form an integration would use: R = 2^256, the key's own Montgomery form (as ff/simd52.hpp
// keeps it), so points load and store with a change of limbs only. Eight 29-bit reduction rounds
// and a ninth of 24 bits (29 * 8 + 24 = 256), then the limbs shifted down by 24 bits. R/p is 5.3
// instead of 168: inputs below 2p give outputs below 2p (4p^2/R < 0.8p), and sums that feed a
// product come back under 2p with csub, as in simd52.
// t: 9 accumulators of T = sum t_j 2^(29 j), T = 0 mod 2^24; o = T / 2^24 normalised
template <class VO>
static inline __attribute__((always_inline)) void normalize_shift24(Elem<VO>& o, const typename VO::V* t, typename VO::V mask) {
  using V = typename VO::V;
  V n[LIMBS + 1];
  V c = t[0];
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) {
    n[j] = VO::band(c, mask);
    c = j + 1 < LIMBS ? VO::add(t[j + 1], VO::template shr<RADIX>(c)) : VO::template shr<RADIX>(c);
  }
  n[LIMBS] = c;
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++)
    o.l[j] = VO::band(VO::add(VO::template shr<24>(n[j]), VO::template shl<RADIX - 24>(n[j + 1])), mask);
  o.l[LIMBS - 1] = VO::add(VO::template shr<24>(n[LIMBS - 1]), VO::template shl<RADIX - 24>(n[LIMBS]));  // the top limb keeps what is left
}
// o = a b / 2^256 mod p, for a b < p 2^256 (both below 2p): o below 2p
template <class VO>
static inline __attribute__((always_inline)) void mul256(Elem<VO>& o, const Elem<VO>& a, const Elem<VO>& b, const Consts<VO>& k) {
  using V = typename VO::V;
  V t[LIMBS];
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) t[j] = VO::mul(a.l[0], b.l[j]);
#pragma GCC unroll 9
  for (int i = 0; i < LIMBS; i++) {
    if (i > 0) {
#pragma GCC unroll 9
      for (int j = 0; j < LIMBS; j++) { t[j] = VO::add(t[j], VO::mul(a.l[i], b.l[j])); keep(t[j]); }
    }
    const bool last = i == LIMBS - 1;
    V m = VO::band(VO::mul(t[0], k.pinv), last ? k.mask24 : k.mask);
#pragma GCC unroll 9
    for (int j = 0; j < LIMBS; j++) { t[j] = VO::add(t[j], VO::mul(m, k.p[j])); keep(t[j]); }
    if (!last) {
      V carry = VO::template shr<RADIX>(t[0]);
#pragma GCC unroll 9
      for (int j = 0; j < LIMBS - 1; j++) t[j] = t[j + 1];
      t[0] = VO::add(t[0], carry);
      t[LIMBS - 1] = VO::zero();
    }
  }
  normalize_shift24<VO>(o, t, k.mask);
}
template <class VO>
static inline __attribute__((always_inline)) void sqr256(Elem<VO>& o, const Elem<VO>& a, const Consts<VO>& k) {
  using V = typename VO::V;
  V a2[LIMBS], t[2 * LIMBS];
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) a2[j] = VO::add(a.l[j], a.l[j]);
#pragma GCC unroll 18
  for (int s = 0; s < 2 * LIMBS; s++) t[s] = VO::zero();
#pragma GCC unroll 9
  for (int i = 0; i < LIMBS; i++) {
    t[2 * i] = VO::add(t[2 * i], VO::mul(a.l[i], a.l[i]));
#pragma GCC unroll 9
    for (int j = i + 1; j < LIMBS; j++) t[i + j] = VO::add(t[i + j], VO::mul(a.l[i], a2[j]));
  }
#pragma GCC unroll 9
  for (int i = 0; i < LIMBS; i++) {
    V m = VO::band(VO::mul(t[i], k.pinv), i == LIMBS - 1 ? k.mask24 : k.mask);
#pragma GCC unroll 9
    for (int j = 0; j < LIMBS; j++) t[i + j] = VO::add(t[i + j], VO::mul(m, k.p[j]));
    if (i < LIMBS - 1) t[i + 1] = VO::add(t[i + 1], VO::template shr<RADIX>(t[i]));
  }
  normalize_shift24<VO>(o, t + LIMBS - 1, k.mask);
}
// a - MUL p if that is >= 0, else a (a normalised): the borrow runs through the limbs with a bias,
// (AVX2 has no 64-bit arithmetic shift), the sign of the last limb picks the lanes
template <class VO, int MUL>
static inline __attribute__((always_inline)) void csub(Elem<VO>& a, const Consts<VO>& k) {
  using V = typename VO::V;
  const V* q = MUL == 1 ? k.csub1 : k.csub2;  // 2^29 - (MUL p)_0, then 2^29 - 1 - (MUL p)_j
  V d[LIMBS];
  V e = VO::add(a.l[0], q[0]);
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) {
    d[j] = VO::band(e, k.mask);
    if (j + 1 < LIMBS) e = VO::add(VO::add(a.l[j + 1], q[j + 1]), VO::template shr<RADIX>(e));
  }
  const V take = VO::sub(VO::zero(), VO::template shr<RADIX>(e));  // all ones where a >= MUL p
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) a.l[j] = VO::blend(take, a.l[j], d[j]);
}
// a - b + p, normalised (a, b canonical: below 2p)
template <class VO>
static inline __attribute__((always_inline)) void sub_p(Elem<VO>& o, const Elem<VO>& a, const Elem<VO>& b, const Consts<VO>& k) {
  typename VO::V t[LIMBS];
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) t[j] = VO::sub(VO::add(a.l[j], k.bias1[j]), b.l[j]);
  normalize<VO>(o, t, k.mask);
}

// The change of layout an adder or NTT would make per point (bucket_simd.hpp's load_rows /
// store_rows for the 8-lane IFMA path): four 4x64-bit elements (rows) -> 9 limb vectors, and back.
// A 4x4 transpose of the words, then each 29-bit limb cut from one or two words.
static inline __attribute__((always_inline)) void load_rows4(Elem<Avx2>& e, const u64* r0, const u64* r1, const u64* r2, const u64* r3) {
  __m256i a = _mm256_loadu_si256((const __m256i*)r0), b = _mm256_loadu_si256((const __m256i*)r1);
  __m256i c = _mm256_loadu_si256((const __m256i*)r2), d = _mm256_loadu_si256((const __m256i*)r3);
  __m256i ab_lo = _mm256_unpacklo_epi64(a, b), ab_hi = _mm256_unpackhi_epi64(a, b);  // a0 b0 a2 b2 | a1 b1 a3 b3
  __m256i cd_lo = _mm256_unpacklo_epi64(c, d), cd_hi = _mm256_unpackhi_epi64(c, d);
  __m256i w[4];
  w[0] = _mm256_permute2x128_si256(ab_lo, cd_lo, 0x20);
  w[1] = _mm256_permute2x128_si256(ab_hi, cd_hi, 0x20);
  w[2] = _mm256_permute2x128_si256(ab_lo, cd_lo, 0x31);
  w[3] = _mm256_permute2x128_si256(ab_hi, cd_hi, 0x31);
  const __m256i mask = _mm256_set1_epi64x((long long)MASK);
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) {
    const int pos = j * RADIX, k = pos / 64, sh = pos % 64;
    __m256i v = _mm256_srli_epi64(w[k < 4 ? k : 3], sh);
    if (sh + RADIX > 64 && k + 1 < 4) v = _mm256_or_si256(v, _mm256_slli_epi64(w[k + 1], 64 - sh));
    e.l[j] = k < 4 ? _mm256_and_si256(v, mask) : _mm256_setzero_si256();
  }
}
// e normalised and below 2^256
static inline __attribute__((always_inline)) void store_rows4(const Elem<Avx2>& e, u64* r0, u64* r1, u64* r2, u64* r3) {
  __m256i w[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) {
    const int pos = j * RADIX, k = pos / 64, sh = pos % 64;
    if (k < 4) w[k] = _mm256_or_si256(w[k], _mm256_slli_epi64(e.l[j], sh));
    if (sh + RADIX > 64 && k + 1 < 4) w[k + 1] = _mm256_or_si256(w[k + 1], _mm256_srli_epi64(e.l[j], 64 - sh));
  }
  __m256i lo01 = _mm256_unpacklo_epi64(w[0], w[1]), hi01 = _mm256_unpackhi_epi64(w[0], w[1]);  // a0 a1 c0 c1 | b0 b1 d0 d1
  __m256i lo23 = _mm256_unpacklo_epi64(w[2], w[3]), hi23 = _mm256_unpackhi_epi64(w[2], w[3]);
  _mm256_storeu_si256((__m256i*)r0, _mm256_permute2x128_si256(lo01, lo23, 0x20));
  _mm256_storeu_si256((__m256i*)r1, _mm256_permute2x128_si256(hi01, hi23, 0x20));
  _mm256_storeu_si256((__m256i*)r2, _mm256_permute2x128_si256(lo01, lo23, 0x31));
  _mm256_storeu_si256((__m256i*)r3, _mm256_permute2x128_si256(hi01, hi23, 0x31));
}

// K independent products written side by side: one lane product is ~420 instructions on a chain of
// nine dependent reductions (m_i needs t_i after m_(i-1) p_1 and the carry: ~10 cycles each), which
// fills the out-of-order window, so consecutive products barely overlap; interleaved in the source
// they do (the 16 ymm registers do not hold two accumulators: the compiler spills to L1).
template <class VO, int K>
static inline __attribute__((always_inline)) void mul_k(Elem<VO>* const (&o)[K], const Elem<VO>* const (&a)[K], const Elem<VO>* const (&b)[K],
                                                        const Consts<VO>& k) {
  using V = typename VO::V;
  V t[K][LIMBS];
#pragma GCC unroll 4
  for (int c = 0; c < K; c++)
#pragma GCC unroll 9
    for (int j = 0; j < LIMBS; j++) t[c][j] = VO::mul(a[c]->l[0], b[c]->l[j]);
#pragma GCC unroll 9
  for (int i = 0; i < LIMBS; i++) {
#pragma GCC unroll 4
    for (int c = 0; c < K; c++) {
      if (i > 0) {
#pragma GCC unroll 9
        for (int j = 0; j < LIMBS; j++) { t[c][j] = VO::add(t[c][j], VO::mul(a[c]->l[i], b[c]->l[j])); keep(t[c][j]); }
      }
      V m = VO::band(VO::mul(t[c][0], k.pinv), k.mask);
#pragma GCC unroll 9
      for (int j = 0; j < LIMBS; j++) { t[c][j] = VO::add(t[c][j], VO::mul(m, k.p[j])); keep(t[c][j]); }
      V carry = VO::template shr<RADIX>(t[c][0]);
#pragma GCC unroll 9
      for (int j = 0; j < LIMBS - 1; j++) t[c][j] = t[c][j + 1];
      t[c][0] = VO::add(t[c][0], carry);
      t[c][LIMBS - 1] = VO::zero();
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < K; c++) normalize<VO>(*o[c], t[c], k.mask);
}
template <class VO>
static inline __attribute__((always_inline)) void mul2(Elem<VO>& o0, const Elem<VO>& a0, const Elem<VO>& b0, Elem<VO>& o1, const Elem<VO>& a1,
                                                       const Elem<VO>& b1, const Consts<VO>& k) {
  Elem<VO> r0, r1;  // through locals: o0 may be a1 or b1
  Elem<VO>* const o[2] = {&r0, &r1};
  const Elem<VO>* const x[2] = {&a0, &a1};
  const Elem<VO>* const y[2] = {&b0, &b1};
  mul_k<VO, 2>(o, x, y, k);
  o0 = r0;
  o1 = r1;
}
template <class VO, int K>
static inline __attribute__((always_inline)) void sqr_k(Elem<VO>* const (&o)[K], const Elem<VO>* const (&a)[K], const Consts<VO>& k) {
  using V = typename VO::V;
  V a2[K][LIMBS], t[K][2 * LIMBS];
#pragma GCC unroll 4
  for (int c = 0; c < K; c++) {
#pragma GCC unroll 9
    for (int j = 0; j < LIMBS; j++) a2[c][j] = VO::add(a[c]->l[j], a[c]->l[j]);
#pragma GCC unroll 18
    for (int s = 0; s < 2 * LIMBS; s++) t[c][s] = VO::zero();
  }
#pragma GCC unroll 9
  for (int i = 0; i < LIMBS; i++)
#pragma GCC unroll 4
    for (int c = 0; c < K; c++) {
      t[c][2 * i] = VO::add(t[c][2 * i], VO::mul(a[c]->l[i], a[c]->l[i])); keep(t[c][2 * i]);
#pragma GCC unroll 9
      for (int j = i + 1; j < LIMBS; j++) { t[c][i + j] = VO::add(t[c][i + j], VO::mul(a[c]->l[i], a2[c][j])); keep(t[c][i + j]); }
    }
#pragma GCC unroll 9
  for (int i = 0; i < LIMBS; i++)
#pragma GCC unroll 4
    for (int c = 0; c < K; c++) {
      V m = VO::band(VO::mul(t[c][i], k.pinv), k.mask);
#pragma GCC unroll 9
      for (int j = 0; j < LIMBS; j++) { t[c][i + j] = VO::add(t[c][i + j], VO::mul(m, k.p[j])); keep(t[c][i + j]); }
      t[c][i + 1] = VO::add(t[c][i + 1], VO::template shr<RADIX>(t[c][i]));
    }
#pragma GCC unroll 4
  for (int c = 0; c < K; c++) normalize<VO>(*o[c], t[c] + LIMBS, k.mask);
}
template <class VO>
static inline __attribute__((always_inline)) void sqr2(Elem<VO>& o0, const Elem<VO>& a0, Elem<VO>& o1, const Elem<VO>& a1, const Consts<VO>& k) {
  Elem<VO> r0, r1;
  Elem<VO>* const o[2] = {&r0, &r1};
  const Elem<VO>* const x[2] = {&a0, &a1};
  sqr_k<VO, 2>(o, x, k);
  o0 = r0;
  o1 = r1;
}

// o = a^2 / 2^261: 45 limb products (cross terms against 2a) then the 90 of the reduction
template <class VO>
static inline __attribute__((always_inline)) void sqr(Elem<VO>& o, const Elem<VO>& a, const Consts<VO>& k) {
  using V = typename VO::V;
  V a2[LIMBS], t[2 * LIMBS];
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) a2[j] = VO::add(a.l[j], a.l[j]);  // below 2^30: 9 products of 2^59 per position
#pragma GCC unroll 18
  for (int s = 0; s < 2 * LIMBS; s++) t[s] = VO::zero();
#pragma GCC unroll 9
  for (int i = 0; i < LIMBS; i++) {
    t[2 * i] = VO::add(t[2 * i], VO::mul(a.l[i], a.l[i]));
#pragma GCC unroll 9
    for (int j = i + 1; j < LIMBS; j++) t[i + j] = VO::add(t[i + j], VO::mul(a.l[i], a2[j]));
  }
#pragma GCC unroll 9
  for (int i = 0; i < LIMBS; i++) {
    V m = VO::band(VO::mul(t[i], k.pinv), k.mask);
#pragma GCC unroll 9
    for (int j = 0; j < LIMBS; j++) t[i + j] = VO::add(t[i + j], VO::mul(m, k.p[j]));
    t[i + 1] = VO::add(t[i + 1], VO::template shr<RADIX>(t[i]));
  }
  normalize<VO>(o, t + LIMBS, k.mask);
}

// o = a + b (no reduction: the bound is the sum's)
template <class VO>
static inline __attribute__((always_inline)) void add(Elem<VO>& o, const Elem<VO>& a, const Elem<VO>& b, const Consts<VO>& k) {
  typename VO::V t[LIMBS];
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) t[j] = VO::add(a.l[j], b.l[j]);
  normalize<VO>(o, t, k.mask);
}
// o = a - b + 8p for b <= 7p (BIAS8) or a - b + 4p for b <= 3p
template <class VO, bool BIAS8 = true>
static inline __attribute__((always_inline)) void sub(Elem<VO>& o, const Elem<VO>& a, const Elem<VO>& b, const Consts<VO>& k) {
  typename VO::V t[LIMBS];
  const auto* bias = BIAS8 ? k.bias8 : k.bias4;
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) t[j] = VO::sub(VO::add(a.l[j], bias[j]), b.l[j]);
  normalize<VO>(o, t, k.mask);
}
// o = a - b + 8p without the carries, for a value that only feeds a product against a normalised
// operand: limbs below 2^29 + 2^30, so a result position collects 9 products below 2^59.6 and 9 of
// the reduction below 2^58, still under 2^64 (the product reads the low 32 bits of a limb)
template <class VO>
static inline __attribute__((always_inline)) void sub_unnormalized(Elem<VO>& o, const Elem<VO>& a, const Elem<VO>& b, const Consts<VO>& k) {
#pragma GCC unroll 9
  for (int j = 0; j < LIMBS; j++) o.l[j] = VO::sub(VO::add(a.l[j], k.bias8[j]), b.l[j]);
}
// a below 2^260 -> the same class below 3p: q = floor(h 2^253 / p) (h = a >> 253, below 2^7) is at
// most floor(a / p) and at least a / p - 1.67, so a - q p is in [0, 2.67p). The limbs of a - q p are
// kept non-negative by 2^37 added to limbs 0..7 and 2^8 taken from the next (an exact zero).
template <class VO>
static inline __attribute__((always_inline)) void reduce(Elem<VO>& a, const Consts<VO>& k) {
  using V = typename VO::V;
  V h = VO::template shr<253 - 8 * RADIX>(a.l[LIMBS - 1]);
  V q = VO::template shr<24>(VO::mul(h, k.q_mul));
  const V hi = VO::set1(1ULL << 37), lo = VO::set1((1ULL << 37) - (1ULL << 8));
  V t[LIMBS];
  t[0] = VO::sub(VO::add(a.l[0], hi), VO::mul(q, k.p[0]));
#pragma GCC unroll 9
  for (int j = 1; j < LIMBS - 1; j++) t[j] = VO::sub(VO::add(a.l[j], lo), VO::mul(q, k.p[j]));
  t[LIMBS - 1] = VO::sub(VO::sub(a.l[LIMBS - 1], VO::set1(1ULL << 8)), VO::mul(q, k.p[LIMBS - 1]));
  normalize<VO>(a, t, k.mask);
}

// conversion (off the hot path): the lane form of a is a 2^261 mod p, the scalar Mont form a 2^256
template <class VO>
inline void put_raw(Elem<VO>& e, int lane, const Big& v) {
  u64 l[LIMBS]; big_to_limbs(v, l);
  for (int j = 0; j < LIMBS; j++) { alignas(64) u64 w[8]; VO::lanes_out(e.l[j], w); w[lane] = l[j]; e.l[j] = VO::lanes_in(w); }
}
template <class VO>
inline Big get_raw(const Elem<VO>& e, int lane) {
  u64 l[LIMBS];
  for (int j = 0; j < LIMBS; j++) { alignas(64) u64 w[8]; VO::lanes_out(e.l[j], w); l[j] = w[lane]; }
  return big_from_limbs(l);
}
inline Big mod_p(Big v, const FieldInts& f) { while (big_ge(v, f.p)) v = big_sub(v, f.p); return v; }
template <class F>
inline Big scalar_to_lane_int(const F& x, const FieldInts& f) {  // x 2^256 -> x 2^261: five doublings mod p
  Big v = big_from4(x.v);
  for (int i = 0; i < R_BITS - 256; i++) v = mod_p(big_add(v, v), f);
  return v;
}
template <class F>
inline F lane_int_to_scalar(Big v, const FieldInts& f) {  // five halvings mod p
  v = mod_p(v, f);
  for (int i = 0; i < R_BITS - 256; i++) {
    if (v.w[0] & 1) v = big_add(v, f.p);
    for (int w = 0; w < 4; w++) v.w[w] = (v.w[w] >> 1) | (v.w[w + 1] << 63);
    v.w[4] >>= 1;
  }
  return F::from_limbs(v.w);
}
}  // namespace lanes

using namespace lanes;
using Fq = bn254::Fq;
using Fr = bn254::Fr;

static double cpu_ns() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static std::mt19937_64 rng(20261205);
template <class F>
static F random_scalar() {  // canonical
  for (;;) {
    u64 l[4] = {rng(), rng(), rng(), rng() & 0x3fffffffffffffffULL};
    if (F::lt_mod(l)) return F::from_limbs(l);
  }
}

// ------------------------------- the measured kernels -------------------------------
// (a) throughput: o[i] = a[i] b[i] over arrays; (b) a dependent chain x <- x c
template <class F>
static void scalar_products(F* o, const F* a, const F* b, size_t n) { for (size_t i = 0; i < n; i++) F::mul_to(o[i], a[i], b[i]); }
template <class F>
static void scalar_products_lazy(F* o, const F* a, const F* b, size_t n) { for (size_t i = 0; i < n; i++) F::mul_lazy_to(o[i], a[i], b[i]); }
template <class F>
static void scalar_chain(F& x, const F& c, size_t n) { for (size_t i = 0; i < n; i++) F::mul_lazy_to(x, x, c); }
template <class VO>
static __attribute__((noinline)) void lane_products(Elem<VO>* o, const Elem<VO>* a, const Elem<VO>* b, size_t n, const Consts<VO>& k) {
  for (size_t i = 0; i < n; i++) mul<VO>(o[i], a[i], b[i], k);
}
template <class VO, int K>
static __attribute__((noinline)) void lane_products_k(Elem<VO>* o, const Elem<VO>* a, const Elem<VO>* b, size_t n, const Consts<VO>& k) {
  for (size_t i = 0; i + K <= n; i += K) {
    Elem<VO>* out[K];
    const Elem<VO>* x[K];
    const Elem<VO>* y[K];
    for (int c = 0; c < K; c++) { out[c] = &o[i + c]; x[c] = &a[i + c]; y[c] = &b[i + c]; }
    Elem<VO>* const (&oo)[K] = out;
    const Elem<VO>* const (&xx)[K] = x;
    const Elem<VO>* const (&yy)[K] = y;
    mul_k<VO, K>(oo, xx, yy, k);
  }
}
template <class VO>
static __attribute__((noinline)) void lane_squares2(Elem<VO>* o, const Elem<VO>* a, size_t n, const Consts<VO>& k) {
  for (size_t i = 0; i + 2 <= n; i += 2) sqr2<VO>(o[i], a[i], o[i + 1], a[i + 1], k);
}
template <class VO>
static __attribute__((noinline)) void lane_chain(Elem<VO>& x, const Elem<VO>& c, size_t n, const Consts<VO>& k) {
  for (size_t i = 0; i < n; i++) mul<VO>(x, x, c, k);
}
template <class VO>
static __attribute__((noinline)) void lane_squares(Elem<VO>* o, const Elem<VO>* a, size_t n, const Consts<VO>& k) {
  for (size_t i = 0; i < n; i++) sqr<VO>(o[i], a[i], k);
}
template <class F>
static __attribute__((noinline)) void scalar_squares(F* o, const F* a, size_t n) { for (size_t i = 0; i < n; i++) F::sqr_to(o[i], a[i]); }

// (c) the batch-affine adder's field work for n additions (x1,y1) + (x2,y2), as msm/buckets.hpp's
// ScalarBatchAdd does it: forward x differences and running products (two chains), backward in
// groups of two: 1/dx from the chain, lambda, x3 = lambda^2 - x1 - x2, y3 = lambda (x1 - x3) - y1.
// 5 products and a square per addition; the one inversion per chain is left out on both sides
// (replaced by the chain's product itself: it is amortised over the batch).
struct ScalarAdder {
  using E = Fq;
  static inline void sub(E& o, const E& a, const E& b) { Fq::sub_to(o, a, b); }
  static inline void sub_lazy(E& o, const E& a, const E& b) { Fq::sub_to(o, a, b); }
  static inline void mul_lazy(E& o, const E& a, const E& b) { Fq::mul_lazy_to(o, a, b); }
  static inline void mul(E& o, const E& a, const E& b) { Fq::mul_to(o, a, b); }
  static inline void sqr(E& o, const E& a) { Fq::sqr_to(o, a); }
  static inline void out(E&) {}
  static inline void mul_lazy2(E& o0, const E& a0, const E& b0, E& o1, const E& a1, const E& b1) { mul_lazy(o0, a0, b0); mul_lazy(o1, a1, b1); }
  static inline void mul2(E& o0, const E& a0, const E& b0, E& o1, const E& a1, const E& b1) { mul(o0, a0, b0); mul(o1, a1, b1); }
  static inline void sqr2(E& o0, const E& a0, E& o1, const E& a1) { sqr(o0, a0); sqr(o1, a1); }
};
template <class VO, bool PAIRED, bool LAZY_SUB = false>
struct LaneAdder {
  using E = Elem<VO>;
  static inline const Consts<VO>* k;
  static inline __attribute__((always_inline)) void sub(E& o, const E& a, const E& b) { lanes::sub<VO>(o, a, b, *k); }
  static inline __attribute__((always_inline)) void sub_lazy(E& o, const E& a, const E& b) {
    if (LAZY_SUB) lanes::sub_unnormalized<VO>(o, a, b, *k); else lanes::sub<VO>(o, a, b, *k);
  }
  static inline __attribute__((always_inline)) void mul_lazy(E& o, const E& a, const E& b) { lanes::mul<VO>(o, a, b, *k); }
  static inline __attribute__((always_inline)) void mul(E& o, const E& a, const E& b) { lanes::mul<VO>(o, a, b, *k); }
  static inline __attribute__((always_inline)) void sqr(E& o, const E& a) { lanes::sqr<VO>(o, a, *k); }
  static inline __attribute__((always_inline)) void out(E& a) { lanes::reduce<VO>(a, *k); }  // stored points below 3p
  static inline __attribute__((always_inline)) void mul_lazy2(E& o0, const E& a0, const E& b0, E& o1, const E& a1, const E& b1) {
    if (PAIRED) lanes::mul2<VO>(o0, a0, b0, o1, a1, b1, *k); else { mul(o0, a0, b0); mul(o1, a1, b1); }
  }
  static inline __attribute__((always_inline)) void mul2(E& o0, const E& a0, const E& b0, E& o1, const E& a1, const E& b1) { mul_lazy2(o0, a0, b0, o1, a1, b1); }
  static inline __attribute__((always_inline)) void sqr2(E& o0, const E& a0, E& o1, const E& a1) {
    if (PAIRED) lanes::sqr2<VO>(o0, a0, o1, a1, *k); else { sqr(o0, a0); sqr(o1, a1); }
  }
};
template <class O>
static __attribute__((noinline)) void batch_affine(size_t n, const typename O::E* x1, const typename O::E* y1, const typename O::E* x2,
                                                   const typename O::E* y2, typename O::E* x3, typename O::E* y3, typename O::E* dx,
                                                   typename O::E* pre, const typename O::E& start) {
  using E = typename O::E;
  E acc[2] = {start, start};
  for (size_t q = 0; q + 2 <= n; q += 2) {  // the two chains side by side
    O::sub_lazy(dx[q], x2[q], x1[q]);  // dx only feeds products (against acc, inv)
    O::sub_lazy(dx[q + 1], x2[q + 1], x1[q + 1]);
    pre[q] = acc[0];
    pre[q + 1] = acc[1];
    O::mul_lazy2(acc[0], acc[0], dx[q], acc[1], acc[1], dx[q + 1]);
  }
  E inv[2] = {acc[0], acc[1]};  // stands for the two inversions
  for (size_t j = n; j >= 2; j -= 2) {
    E t[2], l[2], x[2], y[2];
    const size_t q0 = j - 1, q1 = j - 2;
    O::mul_lazy2(t[0], inv[q0 & 1], pre[q0], t[1], inv[q1 & 1], pre[q1]);
    O::mul_lazy2(inv[q0 & 1], inv[q0 & 1], dx[q0], inv[q1 & 1], inv[q1 & 1], dx[q1]);
    for (int g = 0; g < 2; g++) { size_t q = j - 1 - g; O::sub_lazy(l[g], y2[q], y1[q]); }
    O::mul_lazy2(l[0], l[0], t[0], l[1], l[1], t[1]);
    O::sqr2(x[0], l[0], x[1], l[1]);
    for (int g = 0; g < 2; g++) { size_t q = j - 1 - g; O::sub(x[g], x[g], x1[q]); O::sub(x[g], x[g], x2[q]); O::out(x[g]); }
    for (int g = 0; g < 2; g++) { size_t q = j - 1 - g; O::sub_lazy(y[g], x1[q], x[g]); }
    O::mul2(y[0], l[0], y[0], y[1], l[1], y[1]);
    for (int g = 0; g < 2; g++) {
      size_t q = j - 1 - g;
      O::sub(y[g], y[g], y1[q]);
      O::out(y[g]);
      x3[q] = x[g];
      y3[q] = y[g];
    }
  }
}

// (c) in the R = 2^256 form, canonical points in and out (what bucket_simd.hpp's IFMA adder does):
// differences a - b + p below 2p feed the products directly; x3 = lambda^2 + 2p - x1 - x2 and
// y3 = lambda (x1 - x3) + p - y1 come back below p with two csubs each
template <class VO>
static __attribute__((noinline)) void batch_affine256(size_t n, const Elem<VO>* x1, const Elem<VO>* y1, const Elem<VO>* x2, const Elem<VO>* y2,
                                                      Elem<VO>* x3, Elem<VO>* y3, Elem<VO>* dx, Elem<VO>* pre, const Elem<VO>& start,
                                                      const Consts<VO>& k) {
  using E = Elem<VO>;
  E acc[2] = {start, start};
  for (size_t q = 0; q + 2 <= n; q += 2) {
    for (int c = 0; c < 2; c++) {
      sub_p<VO>(dx[q + c], x2[q + c], x1[q + c], k);
      pre[q + c] = acc[c];
      mul256<VO>(acc[c], acc[c], dx[q + c], k);
    }
  }
  E inv[2] = {acc[0], acc[1]};  // stands for the inversion, as in batch_affine
  for (size_t j = n; j >= 2; j -= 2) {
    for (int g = 0; g < 2; g++) {
      const size_t q = j - 1 - g;
      E t, l, x, y;
      mul256<VO>(t, inv[q & 1], pre[q], k);
      mul256<VO>(inv[q & 1], inv[q & 1], dx[q], k);
      sub_p<VO>(l, y2[q], y1[q], k);
      mul256<VO>(l, l, t, k);
      mul256<VO>(x, l, l, k);  // the square as a product: 79.5 against 80.5-81.5 ns an addition with sqr256
      sub_p<VO>(x, x, x1[q], k);
      sub_p<VO>(x, x, x2[q], k);
      csub<VO, 2>(x, k);
      csub<VO, 1>(x, k);
      sub_p<VO>(y, x1[q], x, k);
      mul256<VO>(y, l, y, k);
      sub_p<VO>(y, y, y1[q], k);
      csub<VO, 2>(y, k);
      csub<VO, 1>(y, k);
      x3[q] = x;
      y3[q] = y;
    }
  }
}
// (d) in the R = 2^256 form: the scalar dit_lazy's bounds (x below 4p brought below 2p with one
// csub, then x + t and x - t + 2p below 4p)
template <class VO>
static __attribute__((noinline)) void lane_butterflies256(Elem<VO>* x, Elem<VO>* y, const Elem<VO>* w, size_t n, const Consts<VO>& k) {
  for (size_t i = 0; i < n; i++) {
    Elem<VO> t, s, d, xi = x[i];
    mul256<VO>(t, y[i], w[i], k);
    csub<VO, 2>(xi, k);
    add<VO>(s, xi, t, k);
    typename VO::V u[LIMBS];
    for (int j = 0; j < LIMBS; j++) u[j] = VO::sub(VO::add(xi.l[j], VO::add(k.bias1[j], k.p[j])), t.l[j]);  // + 2p, t below 2p
    normalize<VO>(d, u, k.mask);
    x[i] = s;
    y[i] = d;
  }
}

// (d) one NTT stage's butterflies (x, y) <- (x + w y, x - w y), Fr: the scalar NTT's lazy form
// (ntt/ntt.hpp: mul_lazy_to, then dit_lazy keeps both below 4p) against the lanes' (t = w y below 2p,
// x + t and x - t + 4p: a value grows by at most 4p a stage, which a 2^28 transform's 28 stages keep
// below 2^260 from inputs below 3p only with one reduce() part way; the variant with reduce() on both
// outputs of every butterfly is measured too, as the pessimistic bound)
static __attribute__((noinline)) void scalar_butterflies(Fr* x, Fr* y, const Fr* w, size_t n) {
  for (size_t i = 0; i < n; i++) {
    Fr t;
    Fr::mul_lazy_to(t, y[i], w[i]);
    Fr::dit_lazy(x[i], y[i], t);
  }
}
template <class VO, bool REDUCE>
static __attribute__((noinline)) void lane_butterflies2(Elem<VO>* x, Elem<VO>* y, const Elem<VO>* w, size_t n, const Consts<VO>& k) {
  for (size_t i = 0; i + 2 <= n; i += 2) {
    Elem<VO> t[2], s, d;
    mul2<VO>(t[0], y[i], w[i], t[1], y[i + 1], w[i + 1], k);
    for (int c = 0; c < 2; c++) {
      add<VO>(s, x[i + c], t[c], k);
      sub<VO, false>(d, x[i + c], t[c], k);
      if constexpr (REDUCE) { reduce<VO>(s, k); reduce<VO>(d, k); }
      x[i + c] = s;
      y[i + c] = d;
    }
  }
}
template <class VO, bool REDUCE>
static __attribute__((noinline)) void lane_butterflies(Elem<VO>* x, Elem<VO>* y, const Elem<VO>* w, size_t n, const Consts<VO>& k) {
  for (size_t i = 0; i < n; i++) {
    Elem<VO> t, s, d;
    mul<VO>(t, y[i], w[i], k);
    add<VO>(s, x[i], t, k);
    sub<VO, false>(d, x[i], t, k);
    if constexpr (REDUCE) { reduce<VO>(s, k); reduce<VO>(d, k); }
    x[i] = s;
    y[i] = d;
  }
}

// ------------------------------------ self-test ------------------------------------
// Raw lane integers (the value of the limbs, not reduced) printed for the pytest, which checks them
// with Python integers; here each lane product is also compared with the scalar Mont product.
template <class VO>
static int selftest(const FieldInts& fq, const Consts<VO>& kq, bool print) {
  const int W = VO::WIDTH;
  std::vector<Big> ops;
  Big one; one.w[0] = 1;
  Big p = fq.p, pm1 = big_sub(p, one);
  Big two254; two254.w[3] = 1ULL << 62;
  Big two260m1; two260m1.w[4] = (1ULL << 4) - 1; for (int i = 0; i < 4; i++) two260m1.w[i] = ~0ULL;
  Big p12m1 = big_sub(big_mul_small(p, 12), one);
  ops.push_back(Big()); ops.push_back(one); ops.push_back(pm1); ops.push_back(p); ops.push_back(big_sub(big_mul_small(p, 2), one));
  ops.push_back(big_sub(two254, one)); ops.push_back(two254); ops.push_back(p12m1); ops.push_back(two260m1);
  while (ops.size() % W) ops.push_back(one);
  size_t edge = ops.size();
  for (int i = 0; i < 40 * W; i++) {  // random below p, 2p, 12p and 2^260
    Big r; for (int w = 0; w < 4; w++) r.w[w] = rng();
    int kind = i % 4;
    if (kind == 0) r = mod_p(Big{{r.w[0], r.w[1], r.w[2], r.w[3] & 0x3fffffffffffffffULL, 0}}, fq);
    if (kind == 1) { r.w[3] &= 0x7fffffffffffffffULL; while (big_ge(r, big_mul_small(p, 2))) r = big_sub(r, p); }
    if (kind == 2) { r.w[4] = rng() & 3; while (big_ge(r, big_mul_small(p, 12))) r = big_sub(r, big_mul_small(p, 4)); }
    if (kind == 3) r.w[4] = rng() & 15;
    ops.push_back(r);
  }
  int bad = 0;
  auto check_scalar = [&](const char* what, const Big& x, const Big& y, const Big& z) {
    // z = x y / 2^261 (mod p) in the lane form is the scalar a b for x = a 2^261, y = b 2^261
    Fq a = lane_int_to_scalar<Fq>(x, fq), b = lane_int_to_scalar<Fq>(y, fq), c = lane_int_to_scalar<Fq>(z, fq), e;
    Fq::mul_to(e, a, b);
    if (!(e == c)) { bad++; std::printf("MISMATCH %s %s %s\n", what, big_hex(x).c_str(), big_hex(y).c_str()); }
  };
  size_t n = ops.size();
  for (size_t rot = 0; rot < 3; rot++) {  // each operand against three others: edges against edges too
    for (size_t base = 0; base < n; base += W) {
      Elem<VO> a, b, c, s, d, r;
      for (int j = 0; j < LIMBS; j++) { a.l[j] = b.l[j] = VO::zero(); }
      for (int lane = 0; lane < W; lane++) {
        put_raw<VO>(a, lane, ops[base + lane]);
        put_raw<VO>(b, lane, ops[(base + lane + 1 + rot * 7 + (base < edge ? rot : 0)) % n]);
      }
      mul<VO>(c, a, b, kq);
      sqr<VO>(s, a, kq);
      for (int lane = 0; lane < W; lane++) {
        Big x = get_raw<VO>(a, lane), y = get_raw<VO>(b, lane), z = get_raw<VO>(c, lane), zz = get_raw<VO>(s, lane);
        check_scalar("mul", x, y, z);
        check_scalar("sqr", x, x, zz);
        if (print) std::printf("mul %s %s %s\nsqr %s %s\n", big_hex(x).c_str(), big_hex(y).c_str(), big_hex(z).c_str(), big_hex(x).c_str(),
                               big_hex(zz).c_str());
      }
      // sub (bias 8p) needs b <= 7p, reduce needs a < 2^260: operands below 7p for the sub
      Elem<VO> sa = c;  // a product of the above: below 2^259 + p
      reduce<VO>(sa, kq);       // below 3p
      sub<VO>(d, a, sa, kq);
      r = a;
      reduce<VO>(r, kq);
      // an unnormalised difference into a product: (a - sa + 8p) b / 2^261, for a, b below 12p
      Elem<VO> a12 = a, b12 = b, ud, um;
      reduce<VO>(a12, kq);  // below 3p
      reduce<VO>(b12, kq);
      sub_unnormalized<VO>(ud, a12, sa, kq);
      mul<VO>(um, ud, b12, kq);
      for (int lane = 0; lane < W; lane++) {
        Big x = get_raw<VO>(a12, lane), y = get_raw<VO>(sa, lane), w = get_raw<VO>(b12, lane), z = get_raw<VO>(um, lane);
        Big diff = mod_p(big_sub(big_add(x, big_mul_small(p, 8)), y), fq);
        check_scalar("lsub", diff, w, z);
        if (print) std::printf("lsub %s %s %s %s\n", big_hex(x).c_str(), big_hex(y).c_str(), big_hex(w).c_str(), big_hex(z).c_str());
      }
      for (int lane = 0; lane < W; lane++) {
        Big x = get_raw<VO>(a, lane), y = get_raw<VO>(sa, lane), z = get_raw<VO>(d, lane), rr = get_raw<VO>(r, lane);
        if (!big_ge(big_mul_small(p, 3), rr) || !big_ge(big_sub(big_mul_small(p, 3), one), rr)) { bad++; std::printf("REDUCE-BOUND %s\n", big_hex(x).c_str()); }
        if (!big_ge(big_sub(big_mul_small(p, 3), one), y)) { bad++; std::printf("REDUCE-BOUND %s\n", big_hex(get_raw<VO>(c, lane)).c_str()); }
        if (print) std::printf("red %s %s\nsub %s %s %s\n", big_hex(x).c_str(), big_hex(rr).c_str(), big_hex(x).c_str(), big_hex(y).c_str(),
                               big_hex(z).c_str());
      }
    }
  }
  // the R = 2^256 form: operands below 2p, the products against the scalar ADX product of the same
  // words (the same Montgomery form), csub<2> then csub<1> of a sum below 4p canonical
  std::vector<Big> ops2 = {Big(), one, pm1, p, big_sub(big_mul_small(p, 2), one), big_sub(two254, one)};
  while (ops2.size() % W) ops2.push_back(one);
  for (int i = 0; i < 40 * W; i++) {
    Big r; for (int w = 0; w < 4; w++) r.w[w] = rng();
    r.w[3] &= 0x7fffffffffffffffULL;
    while (big_ge(r, big_mul_small(p, 2))) r = big_sub(r, p);
    ops2.push_back(r);
  }
  size_t n2 = ops2.size();
  for (size_t rot = 0; rot < 3; rot++)
    for (size_t base = 0; base < n2; base += W) {
      Elem<VO> a, b, c, s, sum;
      for (int j = 0; j < LIMBS; j++) a.l[j] = b.l[j] = VO::zero();
      for (int lane = 0; lane < W; lane++) {
        put_raw<VO>(a, lane, ops2[base + lane]);
        put_raw<VO>(b, lane, ops2[(base + lane + 1 + rot * 5) % n2]);
      }
      mul256<VO>(c, a, b, kq);
      sqr256<VO>(s, a, kq);
      add<VO>(sum, a, b, kq);
      Elem<VO> canon = sum;
      csub<VO, 2>(canon, kq);
      csub<VO, 1>(canon, kq);
      for (int lane = 0; lane < W; lane++) {
        Big x = get_raw<VO>(a, lane), y = get_raw<VO>(b, lane), z = get_raw<VO>(c, lane), zz = get_raw<VO>(s, lane);
        Big sm = get_raw<VO>(sum, lane), cn = get_raw<VO>(canon, lane);
        Fq fx = Fq::from_limbs(x.w), fy = Fq::from_limbs(y.w), e, e2;
        Fq::mul_to(e, fx, fy);
        Fq::mul_to(e2, fx, fx);
        Big zr = mod_p(z, fq), zzr = mod_p(zz, fq);
        if (std::memcmp(zr.w, e.v, 32) != 0 || zr.w[4] || big_ge(z, big_mul_small(p, 2))) { bad++; std::printf("MISMATCH m256 %s %s\n", big_hex(x).c_str(), big_hex(y).c_str()); }
        if (std::memcmp(zzr.w, e2.v, 32) != 0 || big_ge(zz, big_mul_small(p, 2))) { bad++; std::printf("MISMATCH s256 %s\n", big_hex(x).c_str()); }
        Big smr = mod_p(sm, fq);
        if (big_ge(cn, p) || !big_ge(cn, smr) || !big_ge(smr, cn)) { bad++; std::printf("MISMATCH canon %s\n", big_hex(sm).c_str()); }
        if (print) std::printf("m256 %s %s %s\ns256 %s %s\ncanon %s %s\n", big_hex(x).c_str(), big_hex(y).c_str(), big_hex(z).c_str(),
                               big_hex(x).c_str(), big_hex(zz).c_str(), big_hex(sm).c_str(), big_hex(cn).c_str());
      }
    }
  return bad;
}

// ------------------------------------ measurement ------------------------------------
static double median(std::vector<double> v) { std::sort(v.begin(), v.end()); size_t m = v.size() / 2; return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2; }

template <class VO>
struct LaneBench {
  using E = Elem<VO>;
  static constexpr int W = VO::WIDTH;
  const Consts<VO>& kq;
  const Consts<VO>& kr;
  const FieldInts& fq;
  const FieldInts& fr;
  size_t n;  // field elements per array
  std::vector<E> a, b, o, x1, y1, x2, y2, x3, y3, dx, pre, bx, by, bw;
  E c;
  LaneBench(const Consts<VO>& kq_, const Consts<VO>& kr_, const FieldInts& fq_, const FieldInts& fr_, const std::vector<Fq>& fa,
            const std::vector<Fq>& fb, const std::vector<Fr>& ra, const std::vector<Fr>& rb, const std::vector<Fr>& rw, size_t n_)
      : kq(kq_), kr(kr_), fq(fq_), fr(fr_), n(n_) {
    size_t m = n / W;
    for (auto* v : {&a, &b, &o, &x1, &y1, &x2, &y2, &x3, &y3, &dx, &pre, &bx, &by, &bw}) v->resize(m);
    for (size_t i = 0; i < n; i++) {
      put_raw<VO>(a[i / W], i % W, scalar_to_lane_int(fa[i], fq));
      put_raw<VO>(b[i / W], i % W, scalar_to_lane_int(fb[i], fq));
      put_raw<VO>(x1[i / W], i % W, scalar_to_lane_int(fa[i], fq));
      put_raw<VO>(x2[i / W], i % W, scalar_to_lane_int(fb[i], fq));
      put_raw<VO>(y1[i / W], i % W, scalar_to_lane_int(fb[(i + 1) % n], fq));
      put_raw<VO>(y2[i / W], i % W, scalar_to_lane_int(fa[(i + 1) % n], fq));
      put_raw<VO>(bx[i / W], i % W, scalar_to_lane_int(ra[i], fr));
      put_raw<VO>(by[i / W], i % W, scalar_to_lane_int(rb[i], fr));
      put_raw<VO>(bw[i / W], i % W, scalar_to_lane_int(rw[i], fr));
    }
    c = a[0];
  }
};

// the lane kernels timed once (one round), per VO: ns per field product / addition / butterfly
template <class VO, class Rec>
static u64 time_lanes(LaneBench<VO>& L, Rec&& rec) {
  using E = Elem<VO>;
  constexpr int W = VO::WIDTH;
  const int reps = 128;
  const size_t m = L.n / W;
  const std::string tag = VO::name();
  double t0 = cpu_ns();
  for (int r = 0; r < reps; r++) lane_products<VO>(L.o.data(), L.a.data(), L.b.data(), m, L.kq);
  double t1 = cpu_ns();
  for (int r = 0; r < reps; r++) lane_squares<VO>(L.o.data(), L.a.data(), m, L.kq);
  double t2 = cpu_ns();
  for (int r = 0; r < reps; r++) lane_products_k<VO, 2>(L.o.data(), L.a.data(), L.b.data(), m, L.kq);
  double t2a = cpu_ns();
  for (int r = 0; r < reps; r++) lane_products_k<VO, 3>(L.o.data(), L.a.data(), L.b.data(), m - m % 3, L.kq);
  double t2b = cpu_ns();
  for (int r = 0; r < reps; r++) lane_squares2<VO>(L.o.data(), L.a.data(), m, L.kq);
  double t2c = cpu_ns();
  E x = L.a[3];
  lane_chain<VO>(x, L.b[5], reps * m, L.kq);
  double t3 = cpu_ns();
  LaneAdder<VO, false>::k = &L.kq;
  LaneAdder<VO, true>::k = &L.kq;
  for (int r = 0; r < reps; r++)
    batch_affine<LaneAdder<VO, false>>(m, L.x1.data(), L.y1.data(), L.x2.data(), L.y2.data(), L.x3.data(), L.y3.data(), L.dx.data(), L.pre.data(), L.c);
  double t4 = cpu_ns();
  for (int r = 0; r < reps; r++)
    batch_affine<LaneAdder<VO, true>>(m, L.x1.data(), L.y1.data(), L.x2.data(), L.y2.data(), L.x3.data(), L.y3.data(), L.dx.data(), L.pre.data(), L.c);
  double t4b = cpu_ns();
  LaneAdder<VO, false, true>::k = &L.kq;
  for (int r = 0; r < reps; r++)
    batch_affine<LaneAdder<VO, false, true>>(m, L.x1.data(), L.y1.data(), L.x2.data(), L.y2.data(), L.x3.data(), L.y3.data(), L.dx.data(), L.pre.data(), L.c);
  double t4c = cpu_ns();
  std::vector<E> bx(m), by(m);
  auto reload = [&]() { std::copy(L.bx.begin(), L.bx.end(), bx.begin()); std::copy(L.by.begin(), L.by.end(), by.begin()); };
  for (int r = 0; r < reps; r++) { reload(); lane_butterflies<VO, false>(bx.data(), by.data(), L.bw.data(), m, L.kr); }
  double t5 = cpu_ns();
  (void)t4c;
  for (int r = 0; r < reps; r++) { reload(); lane_butterflies2<VO, false>(bx.data(), by.data(), L.bw.data(), m, L.kr); }
  double t5b = cpu_ns();
  for (int r = 0; r < reps; r++) { reload(); lane_butterflies2<VO, true>(bx.data(), by.data(), L.bw.data(), m, L.kr); }
  double t6 = cpu_ns();
  for (int r = 0; r < reps; r++) reload();
  double t7 = cpu_ns();
  // the R = 2^256 forms (LaneBench's values are below p: valid inputs for them too)
  double v0 = cpu_ns();
  for (int r = 0; r < reps; r++) for (size_t i = 0; i < m; i++) mul256<VO>(L.o[i], L.a[i], L.b[i], L.kq);
  double v1 = cpu_ns();
  for (int r = 0; r < reps; r++) for (size_t i = 0; i < m; i++) sqr256<VO>(L.o[i], L.a[i], L.kq);
  double v2 = cpu_ns();
  for (int r = 0; r < reps; r++) for (size_t i = 0; i < m; i++) { E e = L.a[i]; csub<VO, 1>(e, L.kq); L.o[i] = e; }
  double v3 = cpu_ns();
  for (int r = 0; r < reps; r++)
    batch_affine256<VO>(m, L.x1.data(), L.y1.data(), L.x2.data(), L.y2.data(), L.x3.data(), L.y3.data(), L.dx.data(), L.pre.data(), L.c, L.kq);
  double v4 = cpu_ns();
  for (int r = 0; r < reps; r++) { reload(); lane_butterflies256<VO>(bx.data(), by.data(), L.bw.data(), m, L.kr); }
  double v5 = cpu_ns();
  double per = reps * (double)L.n;
  rec("a_throughput_mul " + tag + " R=2^256 form (< 2p), ns per product", (v1 - v0) / per);
  rec("a_throughput_sqr " + tag + " R=2^256 form, ns per square", (v2 - v1) / per);
  rec("x_csub " + tag + " (one conditional subtraction, with a copy), ns per element", (v3 - v2) / per);
  rec("c_batch_affine " + tag + " R=2^256 form, canonical points in and out (4 csubs), ns per addition", (v4 - v3) / per);
  rec("d_butterfly " + tag + " R=2^256 form (dit_lazy's bounds: 1 csub), ns per butterfly", ((v5 - v4) - (t7 - t6)) / per);
  rec("a_throughput_mul " + tag + " one at a time (< 2p), ns per product", (t1 - t0) / per);
  rec("a_throughput_mul " + tag + " two interleaved, ns per product", (t2a - t2) / per);
  rec("a_throughput_mul " + tag + " three interleaved, ns per product", (t2b - t2a) / (reps * (double)(m - m % 3) * W));
  rec("a_throughput_sqr " + tag + " one at a time, ns per square", (t2 - t1) / per);
  rec("a_throughput_sqr " + tag + " two interleaved, ns per square", (t2c - t2b) / per);
  rec("b_chain_latency " + tag + ", ns per step (" + std::to_string(W) + " products)", (t3 - t2c) / (reps * (double)m));
  rec("b_chain_latency " + tag + ", ns per product", (t3 - t2c) / per);
  rec("c_batch_affine " + tag + " one product at a time (x3, y3 reduced below 3p), ns per addition", (t4 - t3) / per);
  rec("c_batch_affine " + tag + " two chains' products interleaved, ns per addition", (t4b - t4) / per);
  rec("c_batch_affine " + tag + " one at a time, subtractions that feed a product left unnormalised, ns per addition", (t4c - t4b) / per);
  rec("d_butterfly " + tag + " one at a time (mul + add + sub), ns per butterfly", ((t5 - t4c) - (t7 - t6)) / per);
  rec("d_butterfly " + tag + " two interleaved (mul + add + sub), ns per butterfly", ((t5b - t5) - (t7 - t6)) / per);
  rec("d_butterfly " + tag + " two interleaved + reduce() of both outputs, ns per butterfly", ((t6 - t5b) - (t7 - t6)) / per);
  alignas(64) u64 w[8];
  VO::lanes_out(x.l[0], w);
  u64 h = w[0];
  VO::lanes_out(L.x3[1].l[2], w);
  VO::lanes_out(by[2].l[3], w + 4 - 4);
  return h ^ w[0];
}

int main(int argc, char** argv) {
  const FieldInts fq = make_field(bn254::FqP::MOD), fr = make_field(bn254::FrP::MOD);
  const Consts<Avx2> kq4(fq), kr4(fr);
#if defined(__AVX512F__)
  const Consts<Avx512F> kq8(fq), kr8(fr);
#endif
  bool print = argc > 1 && std::strcmp(argv[1], "--selftest") == 0;
  if (print) std::printf("p %s\n", big_hex(fq.p).c_str());
  int bad = selftest<Avx2>(fq, kq4, print);
#if defined(__AVX512F__)
  bad += selftest<Avx512F>(fq, kq8, false);
#endif
  std::printf("selftest %s (%d mismatches; scalar ADX path %s)\n", bad ? "FAILED" : "ok", bad, g_use_adx ? "on" : "off");
  if (print || bad) return bad ? 1 : 0;
  int rounds = argc > 1 ? std::atoi(argv[1]) : 9;

  const size_t n = 1024;  // elements per array: 32 KiB of Fq, in L1/L2 as a flush's batch is
  std::vector<Fq> fa(n), fb(n), fo(n), fx3(n), fy3(n), fdx(n), fpre(n), fy1(n), fy2(n);
  std::vector<Fr> ra(n), rb(n), rw(n), rx(n), ry(n);
  for (size_t i = 0; i < n; i++) { fa[i] = random_scalar<Fq>(); fb[i] = random_scalar<Fq>(); ra[i] = random_scalar<Fr>(); rb[i] = random_scalar<Fr>(); rw[i] = random_scalar<Fr>(); }
  for (size_t i = 0; i < n; i++) { fy1[i] = fb[(i + 1) % n]; fy2[i] = fa[(i + 1) % n]; }
  LaneBench<Avx2> L4(kq4, kr4, fq, fr, fa, fb, ra, rb, rw, n);
#if defined(__AVX512F__)
  LaneBench<Avx512F> L8(kq8, kr8, fq, fr, fa, fb, ra, rb, rw, n);
#endif
  // the lane batch-affine results equal the scalar ones (one untimed run each)
  {
    batch_affine<ScalarAdder>(n, fa.data(), fy1.data(), fb.data(), fy2.data(), fx3.data(), fy3.data(), fdx.data(), fpre.data(), Fq::one());
    LaneAdder<Avx2, false>::k = &kq4;
    LaneAdder<Avx2, true>::k = &kq4;
    Elem<Avx2> start{}; for (int lane = 0; lane < 4; lane++) put_raw<Avx2>(start, lane, scalar_to_lane_int(Fq::one(), fq));
    // the lanes run four batches of n/4 (lane l holds additions l, l+4, ...), so the chains differ
    // from the scalar's: compare the additions' results with the chain's inverses stood in alike
    // by checking x3 = lambda^2 - x1 - x2 with lambda recomputed from the lane's own t
    // the paired adder's results equal the one-at-a-time adder's bit for bit
    batch_affine<LaneAdder<Avx2, false>>(n / 4, L4.x1.data(), L4.y1.data(), L4.x2.data(), L4.y2.data(), L4.x3.data(), L4.y3.data(), L4.dx.data(),
                                         L4.pre.data(), start);
    std::vector<Elem<Avx2>> px3 = L4.x3, py3 = L4.y3;
    LaneAdder<Avx2, false, true>::k = &kq4;
    batch_affine<LaneAdder<Avx2, false, true>>(n / 4, L4.x1.data(), L4.y1.data(), L4.x2.data(), L4.y2.data(), L4.x3.data(), L4.y3.data(), L4.dx.data(),
                                               L4.pre.data(), start);
    std::vector<Elem<Avx2>> lx3 = L4.x3, ly3 = L4.y3;
    batch_affine<LaneAdder<Avx2, true>>(n / 4, L4.x1.data(), L4.y1.data(), L4.x2.data(), L4.y2.data(), L4.x3.data(), L4.y3.data(), L4.dx.data(),
                                        L4.pre.data(), start);
    int pair_diff = 0;
    for (size_t i = 0; i < n; i++)  // unnormalised limbs change no value: the same results mod p
      if (!(lane_int_to_scalar<Fq>(get_raw<Avx2>(lx3[i / 4], i % 4), fq) == lane_int_to_scalar<Fq>(get_raw<Avx2>(px3[i / 4], i % 4), fq)) ||
          !(lane_int_to_scalar<Fq>(get_raw<Avx2>(ly3[i / 4], i % 4), fq) == lane_int_to_scalar<Fq>(get_raw<Avx2>(py3[i / 4], i % 4), fq)))
        pair_diff++;
    for (size_t i = 0; i < n; i++)
      if (!big_ge(get_raw<Avx2>(px3[i / 4], i % 4), get_raw<Avx2>(L4.x3[i / 4], i % 4)) || !big_ge(get_raw<Avx2>(L4.x3[i / 4], i % 4), get_raw<Avx2>(px3[i / 4], i % 4)) ||
          !big_ge(get_raw<Avx2>(py3[i / 4], i % 4), get_raw<Avx2>(L4.y3[i / 4], i % 4)) || !big_ge(get_raw<Avx2>(L4.y3[i / 4], i % 4), get_raw<Avx2>(py3[i / 4], i % 4)))
        pair_diff++;
    // the interleaved products equal the single ones
    std::vector<Elem<Avx2>> o1(n / 4), o2(n / 4), o3(n / 4);
    lane_products<Avx2>(o1.data(), L4.a.data(), L4.b.data(), n / 4, kq4);
    lane_products_k<Avx2, 2>(o2.data(), L4.a.data(), L4.b.data(), n / 4, kq4);
    lane_products_k<Avx2, 3>(o3.data(), L4.a.data(), L4.b.data(), n / 4 - (n / 4) % 3, kq4);
    for (size_t i = 0; i < n; i++) {
      Big r1 = get_raw<Avx2>(o1[i / 4], i % 4), r2 = get_raw<Avx2>(o2[i / 4], i % 4), r3 = get_raw<Avx2>(o3[i / 4], i % 4);
      if (!big_ge(r1, r2) || !big_ge(r2, r1)) pair_diff++;
      if (i / 4 < n / 4 - (n / 4) % 3 && (!big_ge(r1, r3) || !big_ge(r3, r1))) pair_diff++;
    }
    lane_squares<Avx2>(o1.data(), L4.a.data(), n / 4, kq4);
    lane_squares2<Avx2>(o2.data(), L4.a.data(), n / 4, kq4);
    for (size_t i = 0; i < n; i++) {
      Big r1 = get_raw<Avx2>(o1[i / 4], i % 4), r2 = get_raw<Avx2>(o2[i / 4], i % 4);
      if (!big_ge(r1, r2) || !big_ge(r2, r1)) pair_diff++;
    }
    // the change of layout: rows -> limbs equals put_raw, limbs -> rows gives the rows back
    for (size_t i = 0; i + 4 <= n; i += 4) {
      Elem<Avx2> e, ref{};
      load_rows4(e, fa[i].v, fa[i + 1].v, fa[i + 2].v, fa[i + 3].v);
      for (int lane = 0; lane < 4; lane++) put_raw<Avx2>(ref, lane, big_from4(fa[i + lane].v));
      for (int lane = 0; lane < 4; lane++) {
        Big x = get_raw<Avx2>(e, lane), y = get_raw<Avx2>(ref, lane);
        if (!big_ge(x, y) || !big_ge(y, x)) pair_diff++;
      }
      u64 back[4][4];
      store_rows4(e, back[0], back[1], back[2], back[3]);
      for (int lane = 0; lane < 4; lane++) if (std::memcmp(back[lane], fa[i + lane].v, 32)) pair_diff++;
    }
    std::printf("kernel check: interleaved products, squares and adder equal the single ones, rows round trip: %s (%d differ)\n", pair_diff ? "NO" : "yes", pair_diff);
    if (pair_diff) return 1;
    int mism = 0;
    for (size_t i = 0; i < n; i++) {
      // y3 + y1 = lambda (x1 - x3) and x3 + x1 + x2 = lambda^2: lambda = (y3 + y1) / (x1 - x3), so
      // check (x3 + x1 + x2)(x1 - x3)^2 = (y3 + y1)^2 in the scalar field
      Fq X1 = fa[i], X2 = fb[i], Y1 = fy1[i];
      Fq X3 = lane_int_to_scalar<Fq>(get_raw<Avx2>(L4.x3[i / 4], i % 4), fq), Y3 = lane_int_to_scalar<Fq>(get_raw<Avx2>(L4.y3[i / 4], i % 4), fq);
      Fq s = Fq::add(Fq::add(X3, X1), X2), d = Fq::sub(X1, X3), e = Fq::add(Y3, Y1), lhs, rhs;
      Fq::mul_to(lhs, s, Fq::mul(d, d));
      Fq::mul_to(rhs, e, e);
      if (!(lhs == rhs)) mism++;
      if (!big_ge(big_sub(big_mul_small(fq.p, 3), Big{{1, 0, 0, 0, 0}}), get_raw<Avx2>(L4.x3[i / 4], i % 4))) mism++;
    }
    // the scalar batch satisfies the same relation (a check of the check)
    int smism = 0;
    for (size_t i = 0; i < n; i++) {
      Fq s = Fq::add(Fq::add(fx3[i], fa[i]), fb[i]), d = Fq::sub(fa[i], fx3[i]), e = Fq::add(fy3[i], fy1[i]), lhs, rhs;
      Fq::mul_to(lhs, s, Fq::mul(d, d)); Fq::mul_to(rhs, e, e);
      if (!(lhs == rhs)) smism++;
    }
    // butterflies: lanes against scalar, values compared mod p
    std::vector<Fr> sx = ra, sy = rb;
    scalar_butterflies(sx.data(), sy.data(), rw.data(), n);
    auto lx = L4.bx, ly = L4.by, lx2 = L4.bx, ly2 = L4.by;
    lane_butterflies<Avx2, false>(lx.data(), ly.data(), L4.bw.data(), n / 4, kr4);
    lane_butterflies2<Avx2, true>(lx2.data(), ly2.data(), L4.bw.data(), n / 4, kr4);
    for (size_t i = 0; i < n; i++) {  // the reduced ones: the same values mod p, below 3p
      Big a1 = mod_p(get_raw<Avx2>(lx[i / 4], i % 4), fr), a2 = get_raw<Avx2>(lx2[i / 4], i % 4);
      Big b1 = mod_p(get_raw<Avx2>(ly[i / 4], i % 4), fr), b2 = get_raw<Avx2>(ly2[i / 4], i % 4);
      if (big_ge(a2, big_mul_small(fr.p, 3)) || big_ge(b2, big_mul_small(fr.p, 3))) mism++;
      a2 = mod_p(a2, fr); b2 = mod_p(b2, fr);
      if (!big_ge(a1, a2) || !big_ge(a2, a1) || !big_ge(b1, b2) || !big_ge(b2, b1)) mism++;
    }
    for (size_t i = 0; i < n; i++) {
      Fr X = lane_int_to_scalar<Fr>(get_raw<Avx2>(lx[i / 4], i % 4), fr), Y = lane_int_to_scalar<Fr>(get_raw<Avx2>(ly[i / 4], i % 4), fr);
      Fr SX = sx[i], SY = sy[i];
      Fr::red2p(SX); Fr::canonical_to(SX); Fr::red2p(SY); Fr::canonical_to(SY);  // both in [0, 4p)
      if (!(X == SX) || !(Y == SY)) mism++;
    }
    // the R = 2^256 forms on the scalar words themselves (no change of domain): the adder's outputs
    // canonical and on the curve relation, the butterflies equal to the scalar ones mod p
    {
      std::vector<Elem<Avx2>> a1(n / 4), b1(n / 4), a2(n / 4), b2(n / 4), o3(n / 4), o4(n / 4), d(n / 4), pr(n / 4);
      for (size_t i = 0; i < n; i++) {
        put_raw<Avx2>(a1[i / 4], i % 4, big_from4(fa[i].v)); put_raw<Avx2>(b1[i / 4], i % 4, big_from4(fy1[i].v));
        put_raw<Avx2>(a2[i / 4], i % 4, big_from4(fb[i].v)); put_raw<Avx2>(b2[i / 4], i % 4, big_from4(fy2[i].v));
      }
      Elem<Avx2> st{}; for (int lane = 0; lane < 4; lane++) put_raw<Avx2>(st, lane, big_from4(Fq::one().v));
      batch_affine256<Avx2>(n / 4, a1.data(), b1.data(), a2.data(), b2.data(), o3.data(), o4.data(), d.data(), pr.data(), st, kq4);
      for (size_t i = 0; i < n; i++) {
        Big bx = get_raw<Avx2>(o3[i / 4], i % 4), by = get_raw<Avx2>(o4[i / 4], i % 4);
        if (big_ge(bx, fq.p) || big_ge(by, fq.p)) { mism++; continue; }
        Fq X3 = Fq::from_limbs(bx.w), Y3 = Fq::from_limbs(by.w);
        Fq s2 = Fq::add(Fq::add(X3, fa[i]), fb[i]), dd = Fq::sub(fa[i], X3), e = Fq::add(Y3, fy1[i]), lhs, rhs;
        Fq::mul_to(lhs, s2, Fq::mul(dd, dd)); Fq::mul_to(rhs, e, e);
        if (!(lhs == rhs)) mism++;
      }
      std::vector<Elem<Avx2>> x256(n / 4), y256(n / 4), w256(n / 4);
      for (size_t i = 0; i < n; i++) {
        put_raw<Avx2>(x256[i / 4], i % 4, big_from4(ra[i].v)); put_raw<Avx2>(y256[i / 4], i % 4, big_from4(rb[i].v));
        put_raw<Avx2>(w256[i / 4], i % 4, big_from4(rw[i].v));
      }
      lane_butterflies256<Avx2>(x256.data(), y256.data(), w256.data(), n / 4, kr4);
      for (size_t i = 0; i < n; i++) {
        Big bx = get_raw<Avx2>(x256[i / 4], i % 4), by = get_raw<Avx2>(y256[i / 4], i % 4);
        Fr SX = sx[i], SY = sy[i];
        Fr::red2p(SX); Fr::canonical_to(SX); Fr::red2p(SY); Fr::canonical_to(SY);
        Big mx = mod_p(bx, fr), my = mod_p(by, fr);
        if (big_ge(bx, big_mul_small(fr.p, 4)) || big_ge(by, big_mul_small(fr.p, 4)) || std::memcmp(mx.w, SX.v, 32) || std::memcmp(my.w, SY.v, 32)) mism++;
      }
    }
    std::printf("kernel check: batch-affine relation lanes %d / scalar %d failures, butterflies %s (both lane forms)\n", mism, smism, mism ? "MISMATCH" : "equal");
    if (mism || smism) return 1;
  }

  const int reps = 128;  // passes over the arrays per timing
  std::vector<std::pair<std::string, std::vector<double>>> res;
  auto rec = [&](const std::string& k, double v) {
    for (auto& r : res) if (r.first == k) { r.second.push_back(v); return; }
    res.push_back({k, {v}});
  };
  Fq sink = Fq::zero();
  u64 lsink = 0;
  auto time_scalar = [&]() {
    double t0 = cpu_ns();
    for (int r = 0; r < reps; r++) scalar_products(fo.data(), fa.data(), fb.data(), n);
    double t1 = cpu_ns();
    for (int r = 0; r < reps; r++) scalar_products_lazy(fo.data(), fa.data(), fb.data(), n);
    double t2 = cpu_ns();
    for (int r = 0; r < reps; r++) scalar_squares(fo.data(), fa.data(), n);
    double t3 = cpu_ns();
    Fq x = fa[3];
    scalar_chain(x, fb[5], reps * n);
    double t4 = cpu_ns();
    for (int r = 0; r < reps; r++)
      batch_affine<ScalarAdder>(n, fa.data(), fy1.data(), fb.data(), fy2.data(), fx3.data(), fy3.data(), fdx.data(), fpre.data(), Fq::one());
    double t5 = cpu_ns();
    for (int r = 0; r < reps; r++) { std::copy(ra.begin(), ra.end(), rx.begin()); std::copy(rb.begin(), rb.end(), ry.begin()); scalar_butterflies(rx.data(), ry.data(), rw.data(), n); }
    double t6 = cpu_ns();
    for (int r = 0; r < reps; r++) { std::copy(ra.begin(), ra.end(), rx.begin()); std::copy(rb.begin(), rb.end(), ry.begin()); }
    double t7 = cpu_ns();
    double per = reps * (double)n;
    rec("a_throughput_mul scalar (mul_to, canonical)", (t1 - t0) / per);
    rec("a_throughput_mul scalar (mul_lazy_to, < 2p)", (t2 - t1) / per);
    rec("a_throughput_sqr scalar (sqr_to)", (t3 - t2) / per);
    rec("b_chain_latency scalar (mul_lazy_to), ns per product", (t4 - t3) / per);
    rec("c_batch_affine scalar, ns per addition", (t5 - t4) / per);
    rec("d_butterfly scalar (mul_lazy_to + dit_lazy), ns per butterfly", ((t6 - t5) - (t7 - t6)) / per);
    // rows -> lane limbs -> rows (load_rows4 + store_rows4) over the array, ns per element
    double t8 = cpu_ns();
    for (int r = 0; r < reps; r++)
      for (size_t i = 0; i + 4 <= n; i += 4) {
        Elem<Avx2> e;
        load_rows4(e, fa[i].v, fa[i + 1].v, fa[i + 2].v, fa[i + 3].v);
        asm volatile("" : : "m"(e));
        store_rows4(e, fo[i].v, fo[i + 1].v, fo[i + 2].v, fo[i + 3].v);
      }
    double t9 = cpu_ns();
    rec("x_layout avx2x4: load_rows4 + store_rows4 (4x64 rows <-> 9 x 29 limbs), ns per element", (t9 - t8) / per);
    sink = Fq::add(Fq::add(sink, x), fx3[7]);
  };
  auto time_scalar_wrap = [&]() { time_scalar(); };
  auto rec_fn = [&](const std::string& k, double v) { rec(k, v); };
  for (int round = 0; round < rounds; round++) {
    // alternate the order: scalar first in even rounds, the lanes first in odd ones
    if (round % 2 == 0) time_scalar_wrap();
    lsink ^= time_lanes<Avx2>(L4, rec_fn);
#if defined(__AVX512F__)
    lsink ^= time_lanes<Avx512F>(L8, rec_fn);
#endif
    if (round % 2 == 1) time_scalar_wrap();
  }
  std::printf("{\"rounds\": %d, \"elements_per_array\": %zu, \"passes_per_timing\": %d, \"unit\": \"ns, process CPU time, median over rounds\",\n \"medians\": {\n", rounds, n, reps);
  for (size_t i = 0; i < res.size(); i++) {
    auto& r = res[i];
    auto mm = std::minmax_element(r.second.begin(), r.second.end());
    std::printf("  \"%s\": {\"median\": %.2f, \"min\": %.2f, \"max\": %.2f}%s\n", r.first.c_str(), median(r.second), *mm.first, *mm.second,
                i + 1 < res.size() ? "," : "");
  }
  std::printf(" },\n \"sink\": \"%llx\"}\n", (unsigned long long)((sink.v[0] ^ lsink) & 0xff));
  return 0;
}
