// Point coordinates for the 8-lane (AVX-512 IFMA) kernels: one policy per
// coordinate field, Fq (G1) and Fq2 = Fq[u]/(u^2 + 1) (G2), with the operations the
// batch-affine addition needs and the bounds each one guarantees (values < 2p feed
// the products; stored values are canonical, < p).
#pragma once
#include "ff/fp2.hpp"
#include "ff/simd52.hpp"

#if defined(SNARKD_SIMD52)
namespace snarkd {
namespace simd52 {

template <class F>
struct VecCoord;

// Fq: R = 2^(64N), the key's own Montgomery form.
template <class P>
struct VecCoord<Mont<P>> {
  using F = Mont<P>;
  using Pr = Params<P, 64 * P::N>;
  using T = Fe<Pr>;
  static constexpr unsigned WORDS = P::N;  // 64-bit words per coordinate in memory
  static constexpr bool NORM = false;      // the batch inversion runs on dx itself
  using D = VecCoord;                      // the field it runs in

  SNARKD_SIMD52_INLINE static T gather(const void* base, V off) { return simd52::gather<Pr>(base, off); }
  SNARKD_SIMD52_INLINE static void scatter(void* base, V off, const T& a, __mmask8 lanes) {
    simd52::scatter<Pr>(base, off, a, lanes);
  }
  // from / to 64-bit words, one vector per word (WORDS of them)
  SNARKD_SIMD52_INLINE static T from_w(const V* w) { return from_words<Pr>(w); }
  SNARKD_SIMD52_INLINE static void to_w(const T& a, V* w) { to_words<Pr>(a, w); }
  SNARKD_SIMD52_INLINE static T one() { return broadcast<Pr>(P::ONE); }
  SNARKD_SIMD52_INLINE static T mul(const T& a, const T& b) { return simd52::mul(a, b); }
  SNARKD_SIMD52_INLINE static T sqr(const T& a) { return simd52::sqr(a); }
  // a + p - b for a, b < p: in (0, 2p)
  SNARKD_SIMD52_INLINE static T sub_p(const T& a, const T& b) { return simd52::sub<1>(a, b); }
  // -a for canonical a: canonical (0 stays 0)
  SNARKD_SIMD52_INLINE static T neg(const T& a) {
    T z;
    for (unsigned i = 0; i < Pr::L; i++) z.l[i] = _mm512_setzero_si512();
    return csub<1>(simd52::sub<1>(z, a));
  }
  SNARKD_SIMD52_INLINE static T blend(__mmask8 k, const T& a, const T& b) {  // k ? b : a
    T r;
    for (unsigned i = 0; i < Pr::L; i++) r.l[i] = _mm512_mask_blend_epi64(k, a.l[i], b.l[i]);
    return r;
  }
  // lanes where a == p exactly (a difference x2 + p - x1 of canonical values: x1 == x2)
  SNARKD_SIMD52_INLINE static __mmask8 eq_p(const T& a) {
    __mmask8 k = 0xff;
    for (unsigned i = 0; i < Pr::L; i++) k &= _mm512_cmpeq_epi64_mask(a.l[i], bc(Pr::P1.v[i]));
    return k;
  }
  // lambda^2 - x1 - x2 for lambda2 < 2p, x1, x2 < p: canonical
  SNARKD_SIMD52_INLINE static T x3(const T& lam2, const T& x1, const T& x2) {
    return canon4(simd52::sub<2>(lam2, simd52::add(x1, x2)));
  }
  // e + p - y1 for e < 2p, y1 < p: canonical
  SNARKD_SIMD52_INLINE static T y3(const T& e, const T& y1) { return canon4(simd52::sub<1>(e, y1)); }
  // lane values (canonical words) <-> scalar field elements
  SNARKD_SIMD52_INLINE static void extract(const T& a, F* out) {
    V w[P::N];
    to_words<Pr>(canon4(a), w);
    alignas(64) u64 buf[P::N][8];
    for (unsigned k = 0; k < P::N; k++) _mm512_store_si512(buf[k], w[k]);
    for (unsigned lane = 0; lane < 8; lane++)
      for (unsigned k = 0; k < P::N; k++) out[lane].v[k] = buf[k][lane];
  }
  SNARKD_SIMD52_INLINE static T insert(const F* in) {
    alignas(64) u64 buf[P::N][8];
    for (unsigned lane = 0; lane < 8; lane++)
      for (unsigned k = 0; k < P::N; k++) buf[k][lane] = in[lane].v[k];
    V w[P::N];
    for (unsigned k = 0; k < P::N; k++) w[k] = _mm512_load_si512(buf[k]);
    return from_words<Pr>(w);
  }
};

template <class Pr>
struct Fe2 {
  Fe<Pr> c0, c1;
};

// Fq2 with u^2 = -1 (BN254 and BLS12-381).
template <class P>
struct VecCoord<Fp2<Mont<P>, -1>> {
  using F = Fp2<Mont<P>, -1>;
  using B = VecCoord<Mont<P>>;
  using Pr = typename B::Pr;
  using E = Fe<Pr>;
  using T = Fe2<Pr>;
  static constexpr unsigned WORDS = 2 * P::N;
  // The batch inversion runs in Fq on the norms: 1/dx = conj(dx) / N(dx) (see SimdBatchAdd)
  static constexpr bool NORM = true;
  using D = B;

  SNARKD_SIMD52_INLINE static T gather(const void* base, V off) {
    return {B::gather(base, off), B::gather((const char*)base + 8 * P::N, off)};
  }
  SNARKD_SIMD52_INLINE static void scatter(void* base, V off, const T& a, __mmask8 lanes) {
    B::scatter(base, off, a.c0, lanes);
    B::scatter((char*)base + 8 * P::N, off, a.c1, lanes);
  }
  SNARKD_SIMD52_INLINE static T from_w(const V* w) { return {B::from_w(w), B::from_w(w + P::N)}; }
  SNARKD_SIMD52_INLINE static void to_w(const T& a, V* w) {
    B::to_w(a.c0, w);
    B::to_w(a.c1, w + P::N);
  }
  SNARKD_SIMD52_INLINE static T one() {
    E z;
    for (unsigned i = 0; i < Pr::L; i++) z.l[i] = _mm512_setzero_si512();
    return {B::one(), z};
  }
  // Karatsuba with lazy reduction: t0 = a0 b0, t1 = a1 b1 and s = (a0 + a1)(b0 + b1) as
  // unreduced double-width values (simd52::Wide), then c0 = t0 - t1 + 4p^2 and
  // c1 = s - t0 - t1 (= a0 b1 + a1 b0 exactly, so never negative) reduced once each: two
  // reductions instead of three. Inputs < 2p per component (the sums, < 4p < 2^(52L), need
  // no csub: s only enters that exact identity), so both wide values lie in [0, 8p^2);
  // fit8 brings the reduction's result (below 8p^2 / R + p) under 2p.
  SNARKD_SIMD52_INLINE static T mul(const T& a, const T& b) {
    Wide<Pr> t0 = mul_wide(a.c0, b.c0), t1 = mul_wide(a.c1, b.c1);
    Wide<Pr> s = mul_wide(simd52::add(a.c0, a.c1), simd52::add(b.c0, b.c1));
    Wide<Pr> c0 = wide_const<Pr>(Pr::PP4);
    wide_acc<1>(c0, t0);
    wide_acc<-1>(c0, t1);
    wide_acc<-1>(s, t0);
    wide_acc<-1>(s, t1);
    return {fit8(redc(c0)), fit8(redc(s))};
  }
  // A reduced wide value below 8p^2 (so below 8p^2 / R + p) -> below 2p: nothing to do
  // where 8p < R (BLS12-381: p / R = 0.10, below 1.82p); BN254 (p / R = 0.19: below 2.52p)
  // takes one csub.
  SNARKD_SIMD52_INLINE static E fit8(const E& x) {
    if constexpr (Pr::WIDE8_LT_2P) return x;
    else return csub<2>(x);
  }
  // (c0 + c1)(c0 - c1) + 2 c0 c1 u
  SNARKD_SIMD52_INLINE static T sqr(const T& a) {
    E s = csub<2>(simd52::add(a.c0, a.c1));
    E d = csub<2>(simd52::sub<2>(a.c0, a.c1));
    E m = simd52::mul(a.c0, a.c1);
    return {simd52::mul(s, d), csub<2>(simd52::add(m, m))};
  }
  // N(a) = a0^2 + a1^2 (in Fq, nonzero for nonzero a: -1 is not a square): both squares
  // summed unreduced (below 8p^2 for a < 2p) and reduced once; out < 2p
  SNARKD_SIMD52_INLINE static E norm(const T& a) {
    Wide<Pr> w = sqr_wide<Pr>(a.c0, a.c1);
    return fit8(redc(w));
  }
  // a conj(b) = (a0 b0 + a1 b1) + (a1 b0 - a0 b1) u, lazily: c0 = t0 + t1 (< 8p^2) and
  // c1 = (a0 + a1)(b0 + 2p - b1) - t0 + t1 = a1 b0 - a0 b1 + 2p (a0 + a1), which is
  // positive (a0 b1 < 2p a0) and below 4p^2 + 8p^2 = 12p^2 for inputs < 2p; it reduces to
  // below 12p^2 / R + p < 4p (3.27p BN254, 2.22p BLS12-381), one csub<2> -> < 2p. 3
  // products and 2 reductions, the conjugate never formed; inputs < 2p, output < 2p
  SNARKD_SIMD52_INLINE static T mul_conj(const T& a, const T& b) {
    Wide<Pr> t0 = mul_wide(a.c0, b.c0), t1 = mul_wide(a.c1, b.c1);
    Wide<Pr> s = mul_wide(simd52::add(a.c0, a.c1), simd52::sub<2>(b.c0, b.c1));
    wide_acc<-1>(s, t0);
    wide_acc<1>(s, t1);
    wide_acc<1>(t0, t1);
    return {fit8(redc(t0)), csub<2>(redc(s))};
  }
  // a * b for b in Fq: 2 products; inputs < 2p, output < 2p
  SNARKD_SIMD52_INLINE static T mul_base(const T& a, const E& b) { return {simd52::mul(a.c0, b), simd52::mul(a.c1, b)}; }
  SNARKD_SIMD52_INLINE static T sub_p(const T& a, const T& b) { return {B::sub_p(a.c0, b.c0), B::sub_p(a.c1, b.c1)}; }
  SNARKD_SIMD52_INLINE static T neg(const T& a) { return {B::neg(a.c0), B::neg(a.c1)}; }
  SNARKD_SIMD52_INLINE static T blend(__mmask8 k, const T& a, const T& b) {
    return {B::blend(k, a.c0, b.c0), B::blend(k, a.c1, b.c1)};
  }
  SNARKD_SIMD52_INLINE static __mmask8 eq_p(const T& a) { return B::eq_p(a.c0) & B::eq_p(a.c1); }
  SNARKD_SIMD52_INLINE static T x3(const T& lam2, const T& x1, const T& x2) {
    return {B::x3(lam2.c0, x1.c0, x2.c0), B::x3(lam2.c1, x1.c1, x2.c1)};
  }
  SNARKD_SIMD52_INLINE static T y3(const T& e, const T& y1) { return {B::y3(e.c0, y1.c0), B::y3(e.c1, y1.c1)}; }
  SNARKD_SIMD52_INLINE static void extract(const T& a, F* out) {
    Mont<P> c0[8], c1[8];
    B::extract(a.c0, c0);
    B::extract(a.c1, c1);
    for (unsigned i = 0; i < 8; i++) out[i] = {c0[i], c1[i]};
  }
  SNARKD_SIMD52_INLINE static T insert(const F* in) {
    Mont<P> c0[8], c1[8];
    for (unsigned i = 0; i < 8; i++) { c0[i] = in[i].c0; c1[i] = in[i].c1; }
    return {B::insert(c0), B::insert(c1)};
  }
};

}  // namespace simd52
}  // namespace snarkd
#endif
