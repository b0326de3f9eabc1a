// The batch-affine adder of msm/buckets.hpp four at a time on AVX2 (ff/simd29.hpp), for the CPUs
// without AVX-512 IFMA. G1 on BN254 (Fq in 9 limbs of 29 bits) and on BLS12-381 (14 limbs) run on
// the lanes, each where its own calibration (at first use) said so (g_use_simd29, g_use_simd29_bls); G2
// of both curves (Fq2 as pairs of lane elements) in Simd29G2Add below, where its own calibration (of
// the G2 flush, at first use) said so (g_use_simd29_g2, g_use_simd29_g2_bls), ScalarBatchAdd's flush
// otherwise; Simd29BatchAdd picks the adder for the MSM and witness_msm templates.
//
// Simd29LaneAdd: SimdBatchAdd's structure (msm/bucket_simd.hpp) with four lanes. A forward
// pass loads the dst and src of four queued additions per step (four rows, transposed to one
// vector per 29-bit limb) and multiplies the x differences into four running products (one per
// lane); one scalar inversion inverts the four lane products; a backward pass recovers each 1/dx,
// computes lambda, x3, y3 (6 lane products per four additions) and stores the new dst. Every
// load happens before any store, so a dst may be another queued addition's src. Infinity on
// either side is a lane select; equal x (doubling or P + (-P)) is left to the caller (`equal`,
// exact and scalar), as both other adders do. Points are canonical (below p) in and out.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "curves/bls12_381.hpp"
#include "curves/bn254.hpp"
#include "curves/groups.hpp"
#include "ec/point.hpp"
#include "ff/simd29.hpp"
#include "msm/bucket_simd.hpp"
#include "msm/buckets.hpp"

namespace snarkd {

// Whether Cfg's additions can run on the 4-lane adder: a curve over BN254's or BLS12-381's Fq (G1)
template <class Cfg>
constexpr bool simd29_g1() {
#if defined(SNARKD_SIMD29)
  return std::is_same<typename Cfg::F, bn254::Fq>::value || std::is_same<typename Cfg::F, bls12_381::Fq>::value;
#else
  return false;
#endif
}
// ... or over their Fq2 (G2; u^2 = -1 on both)
template <class Cfg>
constexpr bool simd29_g2() {
#if defined(SNARKD_SIMD29)
  return std::is_same<typename Cfg::F, bn254::Fq2>::value || std::is_same<typename Cfg::F, bls12_381::Fq2>::value;
#else
  return false;
#endif
}
template <class Cfg>
constexpr bool simd29_curve() { return simd29_g1<Cfg>() || simd29_g2<Cfg>(); }

#if defined(SNARKD_SIMD29)
// G2's switches, one per curve: -1 until first asked, then the default: on where the CPU has AVX2 +
// BMI2/ADX and its model's row in ff/simd29_rule.hpp says on, or, on a CPU without a row, a calibration
// of the G2 flush itself (simd29_g2_pays, below) found the lanes faster. The calibration runs at the first G2 flush that could take the lanes (IFMA off), not at load, so the
// IFMA path's start-up is unchanged. 0 / 1: _core._set_simd29 (tests, benchmarks).
inline bool simd29_g2_default();
inline bool simd29_g2_default_bls();
inline int g_use_simd29_g2 = -1;
inline int g_use_simd29_g2_bls = -1;
#else
inline bool simd29_g2_default() { return false; }
inline bool simd29_g2_default_bls() { return false; }
inline int g_use_simd29_g2 = 0;
inline int g_use_simd29_g2_bls = 0;
#endif

// Whether they do now: that field's switch (its calibration at first use, or _core._set_simd29)
template <class Cfg>
inline bool simd29_on() {
  if constexpr (!simd29_curve<Cfg>()) return false;
#if defined(SNARKD_SIMD29)
  else if constexpr (std::is_same<typename Cfg::F, bn254::Fq>::value) return lane_switch(g_use_simd29, simd29_default);
  else if constexpr (std::is_same<typename Cfg::F, bls12_381::Fq>::value) return lane_switch(g_use_simd29_bls, simd29_default_bls);
  else if constexpr (std::is_same<typename Cfg::F, bn254::Fq2>::value) return lane_switch(g_use_simd29_g2, simd29_g2_default);
  else return lane_switch(g_use_simd29_g2_bls, simd29_g2_default_bls);
#else
  else return false;
#endif
}

// The lane adders themselves (defined for the curves above only)
template <class Cfg>
struct Simd29LaneAdd;
template <class Cfg>
struct Simd29G2Add;
// The adder the MSM templates take (a template of one parameter, as msm/witness_msm.hpp's BA):
// the lanes where they fit, the scalar adder elsewhere. The G2 one checks G2's own switch at each
// flush (witness_msm's jobs take G1's choice of template for G2 too) and runs ScalarBatchAdd's
// flush where it is off.
template <class Cfg>
using Simd29BatchAdd = std::conditional_t<simd29_g1<Cfg>(), Simd29LaneAdd<Cfg>,
                                          std::conditional_t<simd29_g2<Cfg>(), Simd29G2Add<Cfg>, ScalarBatchAdd<Cfg>>>;

#if defined(SNARKD_SIMD29)
// The lanes' one inversion, shared by both adders (G1: the coordinates' field; G2: the running
// products of the norms, in the base field): inv = 1 / acc per lane. Canonical first (inv() needs
// it), the four lanes stored as scalar elements, one scalar inversion through prefix products,
// and the four inverses back on the lanes. acc by value and the inverse returned: with acc by
// reference GCC kept BN254's running product out of registers in the forward loop (flush 90 -> 96 ns
// an addition; cpu-notes round 28).
template <class FS, class P = typename FS::Params, int L = simd29::Params<P>::L>
SNARKD_SIMD29_INLINE simd29::FeL<L> invert_lanes(simd29::FeL<L> acc, const simd29::Consts<P>& k) {
  simd29::csub<P, 1>(acc, k);
  FS lane[4], pre[4];
  simd29::store_rows4<L>(acc, &lane[0], &lane[1], &lane[2], &lane[3]);
  FS a = FS::one();
  for (int i = 0; i < 4; i++) {
    pre[i] = a;
    a = a * lane[i];
  }
  FS ai = a.inv();
  for (int i = 4; i-- > 0;) {
    FS t = ai * pre[i];
    ai = ai * lane[i];
    lane[i] = t;
  }
  simd29::FeL<L> inv;
  simd29::load_rows4<L>(inv, &lane[0], &lane[1], &lane[2], &lane[3]);
  return inv;
}

template <class Cfg>
struct Simd29LaneAdd : AddQueue<Cfg> {
  using Q = AddQueue<Cfg>;
  using Q::qd, Q::qs, Q::qn, Q::equal, Q::B, Q::m;
  using F = typename Cfg::F;
  using P = typename F::Params;
  using Fe = simd29::FeOf<P>;
  using V = simd29::V;
  using Aff = Affine<Cfg>;
  static constexpr int L = simd29::Params<P>::L;
  static constexpr size_t W = P::N, YOFF = 8 * P::N;  // words of a coordinate; y's byte offset
  static_assert(sizeof(Aff) == 2 * YOFF, "x then y, W words each");

  Aligned64<Fe> sx1, sy1, sx2, sy2, sden, spre;  // per group of four: loaded points (y2 as loaded), dx, running product before it
  std::vector<uint8_t> sdinf, ssinf, sdeg, sneg;  // lane bits: dst infinity, src infinity, equal x, negated source

  void reserve(size_t B_) {  // whole groups of four
    if (!this->reserve_queue(std::max<size_t>(4, B_ & ~(size_t)3))) return;
    const size_t G = B / 4;
    sx1.resize(G); sy1.resize(G); sx2.resize(G); sy2.resize(G); sden.resize(G); spre.resize(G);
    sdinf.resize(G); ssinf.resize(G); sdeg.resize(G); sneg.resize(G);
  }

  // ys = y2 with the sources' signs (neg: lane bits), where a dst at infinity takes it or an equal-x
  // addition goes to `equal`
  SNARKD_SIMD29_INLINE static void signed_y2(Fe& ys, const Fe& y2, unsigned neg, const simd29::Consts<P>& k) {
    using namespace simd29;
    simd29::copy(ys, y2);
    if (!neg) return;
    Fe ny, z;
#pragma GCC unroll 14
    for (int j = 0; j < L; j++) z.l[j] = _mm256_setzero_si256();
    sub_p<P>(ny, z, y2, k);
    ys = blend(lanes(neg), y2, ny);
  }

  // Runs the queue; additions with equal x are appended to `equal` (dst untouched).
  SNARKD_SIMD29_TARGET void flush() {
    using namespace simd29;
    if (m == 0) return;
    const Consts<P> k;
    const size_t G = (m + 3) / 4;
    const Fe one = broadcast<L>(P::ONE);
    const V zero = _mm256_setzero_si256();
    Fe acc = one;
    for (size_t g = 0; g < G; g++) {
      const size_t base = 4 * g;
      const unsigned cnt = (unsigned)std::min<size_t>(4, m - base);
      const unsigned valid = (1u << cnt) - 1;
      const uint8_t* pd[4];
      const uint8_t* ps[4];
      unsigned neg = 0;
      for (unsigned l = 0; l < 4; l++) {
        const size_t e = base + (l < cnt ? l : 0);  // lanes past the end repeat the first (their results are not stored)
        pd[l] = qd[e];
        ps[l] = qs[e];
        neg |= (unsigned)(qn[e] & 1) << l;
      }
      // the next group's dst and src (ScalarBatchAdd::prefetch_point: points need not be aligned)
      for (size_t e = base + 4; e < std::min(m, base + 8); e++) {
        __builtin_prefetch(qd[e]);
        __builtin_prefetch(qd[e] + sizeof(Aff) - 1);
        __builtin_prefetch(qs[e]);
        __builtin_prefetch(qs[e] + sizeof(Aff) - 1);
      }
      Fe& x1 = sx1[g];
      Fe& y1 = sy1[g];
      Fe& x2 = sx2[g];
      Fe& y2 = sy2[g];
      load_rows4(x1, pd[0], pd[1], pd[2], pd[3]);
      load_rows4(y1, pd[0] + YOFF, pd[1] + YOFF, pd[2] + YOFF, pd[3] + YOFF);
      load_rows4(x2, ps[0], ps[1], ps[2], ps[3]);
      load_rows4(y2, ps[0] + YOFF, ps[1] + YOFF, ps[2] + YOFF, ps[3] + YOFF);
      V od = _mm256_or_si256(x1.l[0], y1.l[0]), os = _mm256_or_si256(x2.l[0], y2.l[0]);
#pragma GCC unroll 14
      for (int j = 1; j < L; j++) {
        od = _mm256_or_si256(od, _mm256_or_si256(x1.l[j], y1.l[j]));
        os = _mm256_or_si256(os, _mm256_or_si256(x2.l[j], y2.l[j]));
      }
      const unsigned dinf = bits(_mm256_cmpeq_epi64(od, zero)) & valid;
      const unsigned sinf = bits(_mm256_cmpeq_epi64(os, zero)) & valid;
      Fe dx;
      sub_p<P>(dx, x2, x1, k);  // x2 - x1 + p: exactly p where x1 == x2 (both canonical)
      const unsigned deg = bits(equal_lanes(x1, x2)) & valid & ~dinf & ~sinf;
      dx = blend(lanes(deg | dinf | sinf | (~valid & 15u)), dx, one);
      sdinf[g] = (uint8_t)dinf;
      ssinf[g] = (uint8_t)sinf;
      sdeg[g] = (uint8_t)deg;
      sneg[g] = (uint8_t)neg;  // -y2 folds into lambda's difference (sub_p_neg); y2 itself negated only where stored
      copy(spre[g], acc);
      copy(sden[g], dx);
      mul<P>(acc, acc, dx, k);
    }
    Fe inv = invert_lanes<F>(acc, k);
    for (size_t g = G; g-- > 0;) {
      const unsigned cnt = (unsigned)std::min<size_t>(4, m - 4 * g);
      const unsigned store = ((1u << cnt) - 1) & ~(unsigned)sdeg[g] & ~(unsigned)ssinf[g];
      const Fe& x1 = sx1[g];
      const Fe& y1 = sy1[g];
      const Fe& x2 = sx2[g];
      const Fe& y2 = sy2[g];
      Fe t, lam, sq, x3, y3;
      mul<P>(t, inv, spre[g], k);    // 1/dx of this group's lanes
      mul<P>(inv, inv, sden[g], k);  // 1 / (the running product before this group)
      if (sneg[g]) sub_p_neg<P>(lam, y2, y1, lanes(sneg[g]), k);
      else sub_p<P>(lam, y2, y1, k);
      mul<P>(lam, lam, t, k);
      mul<P>(sq, lam, lam, k);  // the square as a product: faster than the squaring here (cpu-notes round 21)
      sub2_bias(x3, sq, x1, x2, k.b22, k.mask);  // lambda^2 - x1 - x2 + 2p in one normalisation, below 4p
      csub<P, 2>(x3, k);
      csub<P, 1>(x3, k);
      sub_p<P>(y3, x1, x3, k);
      mul<P>(y3, lam, y3, k);
      sub_p<P>(y3, y3, y1, k);  // below 3p
      csub<P, 2>(y3, k);
      csub<P, 1>(y3, k);
      if (sdinf[g]) {  // dst was infinity: dst = src
        const V d = lanes(sdinf[g]);
        Fe ys;
        signed_y2(ys, y2, sneg[g], k);
        x3 = blend(d, x3, x2);
        y3 = blend(d, y3, ys);
      }
      if (store == 15) {  // all four: straight into the buckets
        uint8_t* const* o = &qd[4 * g];
        store_rows4(x3, o[0], o[1], o[2], o[3]);
        store_rows4(y3, o[0] + YOFF, o[1] + YOFF, o[2] + YOFF, o[3] + YOFF);
      } else {
        alignas(32) u64 rows[4][2 * W];
        store_rows4(x3, rows[0], rows[1], rows[2], rows[3]);
        store_rows4(y3, rows[0] + W, rows[1] + W, rows[2] + W, rows[3] + W);
        for (unsigned l = 0; l < 4; l++)
          if (store >> l & 1) std::memcpy(qd[4 * g + l], rows[l], sizeof(Aff));
      }
      if (sdeg[g]) {
        alignas(32) u64 p1[4][2 * W], p2[4][2 * W];
        Fe ys;
        signed_y2(ys, y2, sneg[g], k);
        store_rows4(x1, p1[0], p1[1], p1[2], p1[3]);
        store_rows4(y1, p1[0] + W, p1[1] + W, p1[2] + W, p1[3] + W);
        store_rows4(x2, p2[0], p2[1], p2[2], p2[3]);
        store_rows4(ys, p2[0] + W, p2[1] + W, p2[2] + W, p2[3] + W);
        for (unsigned l = 0; l < 4; l++)
          if (sdeg[g] >> l & 1) equal.push_back({qd[4 * g + l], Aff::load(p1[l]), Aff::load(p2[l])});
      }
    }
    m = 0;
  }
};

#ifndef SNARKD_SIMD29_G2_LAZY  // 1: BLS12-381's Karatsuba sums left below 4p (red_sum)
#define SNARKD_SIMD29_G2_LAZY 1
#endif
#ifndef SNARKD_SIMD29_G2_SUMS  // 1: BLS12-381's Fq2 products in the sums form (mul14_sum2); 0: Karatsuba (measurements)
#define SNARKD_SIMD29_G2_SUMS 1
#endif
#ifndef SNARKD_SIMD29_G2_INLINE
#define SNARKD_SIMD29_G2_INLINE 0
#endif
// G2 (Fq2 coordinates, u^2 = -1) four at a time: ScalarBatchAdd's queue and, where G2's switch is
// off, its flush; else the lanes. Each Fq2 coordinate is two lane elements (c0, c1). The running
// products are of the norms N(dx) = dx0^2 + dx1^2 in Fq, as in ScalarBatchAdd and SimdBatchAdd's
// NORM branch: 1/dx = conj(dx) / N(dx), the forward pass forms (y2 - y1) conj(dx), the backward one
// scales it by 1/N into lambda. BLS12-381's Fq2 products in the sums form (SUMS: a0 b0 + a1 b1 and the
// like as one lane product with one reduction, ff/simd29_asm.hpp's mul14_sum2; N(dx) likewise), BN254's
// as Karatsuba (3 lane products and sums; a 9-limb sums product, which its positions would hold, is not
// written); every value
// that feeds a product is kept at most 2p (csub), so a b <= 4p^2 < pR on both curves, except sums
// whose one partner is below 2p, left below 4p on BLS12-381 (red_sum: 8p^2 < pR there), and the sums
// form's a0 b0 + a1 b1 (each at most 2p: 8p^2 < pR). Per group of four additions BN254 takes 15 lane
// products, BLS12-381 7 and 5 sums-form ones (1.5 products' multiplies each), each product through one
// out-of-line copy (mul_ool, mul14, mul14_sum2). Where a
// product's result meets sums or differences before the next product (Karatsuba's outputs, x3, y3),
// they are one biased sum with one normalisation (ff/simd29.hpp's sub2_bias etc.; round 28), and a
// negated source's -y2 folds into dy (ff/simd29.hpp's sub_p_neg) rather than being formed first.
template <class Cfg>
struct Simd29G2Add : ScalarBatchAdd<Cfg> {
  using S = ScalarBatchAdd<Cfg>;
  using Q = AddQueue<Cfg>;
  using Q::qd, Q::qs, Q::qn, Q::equal, Q::B, Q::m;
  using F = typename Cfg::F;
  using FI = typename F::Base;
  using P = typename FI::Params;
  using Fe = simd29::FeOf<P>;
  struct Fe2 { Fe c0, c1; };
  using V = simd29::V;
  using Aff = Affine<Cfg>;
  static constexpr int L = simd29::Params<P>::L;
  static constexpr size_t W = P::N, CO = 8 * P::N;  // words of a base element; its byte size
  static_assert(sizeof(Aff) == 4 * CO, "x.c0 x.c1 y.c0 y.c1, W words each");

  Aligned64<Fe2> sx1, sy1, sx2, sy2, snum;  // per group of four: loaded points, (y2 - y1) conj(dx)
  Aligned64<Fe> sden, spre;                  // N(dx), the running product before it
  std::vector<uint8_t> sdinf, ssinf, sdeg, sneg;  // lane bits; sneg: negated sources (sy2 holds y as loaded)

  void reserve(size_t B_) {
    S::reserve(B_);
    const size_t G = (B + 3) / 4;
    if (sden.n >= G) return;
    sx1.resize(G); sy1.resize(G); sx2.resize(G); sy2.resize(G); snum.resize(G); sden.resize(G); spre.resize(G);
    sdinf.resize(G); ssinf.resize(G); sdeg.resize(G); sneg.resize(G);
  }

  // the lane product: inlined or one out-of-line copy (SNARKD_SIMD29_G2_INLINE: bit 0 BN254, bit 1 BLS12-381)
  static constexpr bool INL = (SNARKD_SIMD29_G2_INLINE >> (L == 9 ? 0 : 1)) & 1;
  SNARKD_SIMD29_INLINE static void pmul(Fe& o, const Fe& a, const Fe& b, const simd29::Consts<P>& k) {
    if constexpr (INL) simd29::mul<P>(o, a, b, k);
    else simd29::mul_ool<P>(o, a, b, k);
  }
  // Fq2 products on the lanes, inputs' components below 2p, outputs' below 2p
  SNARKD_SIMD29_INLINE static void red2(Fe& a, const simd29::Consts<P>& k) { simd29::csub<P, 2>(a, k); }
  // a sum of two such components into one product with a partner below 2p: BLS12-381 (R > 9.8p) takes it
  // below 4p (a b < 8p^2, the product below 8p^2 / R + p < 2p); BN254 (R = 5.3p) reduces it
  static constexpr bool LAZY_SUM = L == 14 && SNARKD_SIMD29_G2_LAZY;
  static constexpr bool SUMS = L == 14 && SNARKD_SIMD29_G2_SUMS;
  SNARKD_SIMD29_INLINE static void red_sum(Fe& a, const simd29::Consts<P>& k) {
    if constexpr (!LAZY_SUM) simd29::csub<P, 2>(a, k);
  }
  // o = a b (the Fq2 product on its own: bench/simd29_g2_flush.cpp's product timing and check; the
  // flush writes its products out with their neighbours' sums and differences folded in)
  SNARKD_SIMD29_INLINE static void mul2(Fe2& o, const Fe2& a, const Fe2& b, const simd29::Consts<P>& k) {
    using namespace simd29;
    if constexpr (SUMS) {  // c0 = a0 b0 + a1 (2p - b1), c1 = a0 b1 + a1 b0, each one reduction
      Fe z, nb1;
#pragma GCC unroll 14
      for (int j = 0; j < L; j++) z.l[j] = _mm256_setzero_si256();
      sub_kp<P, 2>(nb1, z, b.c1, k);
      mul14_sum2(o.c0.l, a.c0.l, b.c0.l, a.c1.l, nb1.l, &k);
      mul14_sum2(o.c1.l, a.c0.l, b.c1.l, a.c1.l, b.c0.l, &k);
      return;
    }
    Fe v0, v1, sa, sb, w, s;
    pmul(v0, a.c0, b.c0, k);
    pmul(v1, a.c1, b.c1, k);
    add<P>(sa, a.c0, a.c1, k); red_sum(sa, k);
    add<P>(sb, b.c0, b.c1, k); red2(sb, k);
    pmul(w, sa, sb, k);
    add<P>(s, v0, v1, k);                     // < 4p
    sub_kp<P, 4>(o.c1, w, s, k);              // a0 b1 + a1 b0 + 4p, < 6p
    csub<P, 4>(o.c1, k); red2(o.c1, k);
    sub_kp<P, 2>(o.c0, v0, v1, k); red2(o.c0, k);  // a0 b0 - a1 b1 + 2p, < 4p
  }
  // the four lanes of an Fq2 coordinate at byte offset off of each row
  SNARKD_SIMD29_INLINE static void load2(Fe2& e, const uint8_t* const* r, size_t off) {
    simd29::load_rows4<L>(e.c0, r[0] + off, r[1] + off, r[2] + off, r[3] + off);
    simd29::load_rows4<L>(e.c1, r[0] + off + CO, r[1] + off + CO, r[2] + off + CO, r[3] + off + CO);
  }
  SNARKD_SIMD29_INLINE static void store2(const Fe2& e, u64 (*rows)[4 * W], size_t w) {
    simd29::store_rows4<L>(e.c0, rows[0] + w, rows[1] + w, rows[2] + w, rows[3] + w);
    simd29::store_rows4<L>(e.c1, rows[0] + w + W, rows[1] + w + W, rows[2] + w + W, rows[3] + w + W);
  }
  // a canonical (below p) from below 4p
  SNARKD_SIMD29_INLINE static void canon4(Fe& a, const simd29::Consts<P>& k) {
    simd29::csub<P, 2>(a, k);
    simd29::csub<P, 1>(a, k);
  }
  // ... from below 8p
  SNARKD_SIMD29_INLINE static void canon8(Fe& a, const simd29::Consts<P>& k) {
    simd29::csub<P, 4>(a, k);
    canon4(a, k);
  }
  // y = p - y (canonical: a component may be 0) in nl's lanes
  SNARKD_SIMD29_INLINE static void negate_lanes(Fe2& y, V nl, const Fe& z, const simd29::Consts<P>& k) {
    using namespace simd29;
    Fe n0, n1;
    sub_p<P>(n0, z, y.c0, k);
    csub<P, 1>(n0, k);
    sub_p<P>(n1, z, y.c1, k);
    csub<P, 1>(n1, k);
    y.c0 = blend(nl, y.c0, n0);
    y.c1 = blend(nl, y.c1, n1);
  }
  // o = a conj(b) for the forward pass (a: dy, components at most 2p; b: dx below 2p): Karatsuba with
  // c1 = w + v1 - v0 + 2p in one normalisation (below 6p) and c0 = v0 + v1; outputs below 2p, or below
  // 4p where red_sum leaves sums (BLS12-381: their one partner, 1/N(dx), is below 2p)
  SNARKD_SIMD29_INLINE static void mul2_conj_fwd(Fe2& o, const Fe2& a, const Fe2& b, const simd29::Consts<P>& k) {
    using namespace simd29;
    Fe v0, v1, sa, sb, w;
    pmul(v0, a.c0, b.c0, k);
    pmul(v1, a.c1, b.c1, k);
    add<P>(sa, a.c0, a.c1, k); red_sum(sa, k);
    sub_kp<P, 2>(sb, b.c0, b.c1, k); red2(sb, k);
    pmul(w, sa, sb, k);  // v0 - v1 + (a1 b0 - a0 b1)
    add_sub_bias(o.c1, w, v1, v0, k.bias2, k.mask);
    csub<P, 4>(o.c1, k); red_sum(o.c1, k);
    add<P>(o.c0, v0, v1, k); red_sum(o.c0, k);
  }

  void flush() {
    if (m == 0) return;
    if (!simd29_on<Cfg>()) {
      S::flush();
      return;
    }
    lane_flush();
  }

  // Runs the queue on the lanes; additions with equal x are appended to `equal` (dst untouched).
  SNARKD_SIMD29_TARGET __attribute__((aligned(64))) void lane_flush() {
    using namespace simd29;
    const Consts<P> k;
    const size_t G = (m + 3) / 4;
    const Fe one = broadcast<L>(P::ONE);
    const V zero = _mm256_setzero_si256();
    Fe z;
#pragma GCC unroll 14
    for (int j = 0; j < L; j++) z.l[j] = zero;
    Fe acc = one;
    for (size_t g = 0; g < G; g++) {
      const size_t base = 4 * g;
      const unsigned cnt = (unsigned)std::min<size_t>(4, m - base);
      const unsigned valid = (1u << cnt) - 1;
      const uint8_t* pd[4];
      const uint8_t* ps[4];
      unsigned neg = 0;
      for (unsigned l = 0; l < 4; l++) {
        const size_t e = base + (l < cnt ? l : 0);  // lanes past the end repeat the first (not stored)
        pd[l] = qd[e];
        ps[l] = qs[e];
        neg |= (unsigned)(qn[e] & 1) << l;
      }
      for (size_t e = base + 4; e < std::min(m, base + 8); e++) {
        for (size_t o = 0; o < sizeof(Aff); o += 64) {
          __builtin_prefetch(qd[e] + o);
          __builtin_prefetch(qs[e] + o);
        }
        __builtin_prefetch(qd[e] + sizeof(Aff) - 1);
        __builtin_prefetch(qs[e] + sizeof(Aff) - 1);
      }
      Fe2& x1 = sx1[g];
      Fe2& y1 = sy1[g];
      Fe2& x2 = sx2[g];
      Fe2& y2 = sy2[g];
      load2(x1, pd, 0);
      load2(y1, pd, 2 * CO);
      load2(x2, ps, 0);
      load2(y2, ps, 2 * CO);
      V od = _mm256_or_si256(_mm256_or_si256(x1.c0.l[0], x1.c1.l[0]), _mm256_or_si256(y1.c0.l[0], y1.c1.l[0]));
      V os = _mm256_or_si256(_mm256_or_si256(x2.c0.l[0], x2.c1.l[0]), _mm256_or_si256(y2.c0.l[0], y2.c1.l[0]));
#pragma GCC unroll 14
      for (int j = 1; j < L; j++) {
        od = _mm256_or_si256(od, _mm256_or_si256(_mm256_or_si256(x1.c0.l[j], x1.c1.l[j]), _mm256_or_si256(y1.c0.l[j], y1.c1.l[j])));
        os = _mm256_or_si256(os, _mm256_or_si256(_mm256_or_si256(x2.c0.l[j], x2.c1.l[j]), _mm256_or_si256(y2.c0.l[j], y2.c1.l[j])));
      }
      const unsigned dinf = bits(_mm256_cmpeq_epi64(od, zero)) & valid;
      const unsigned sinf = bits(_mm256_cmpeq_epi64(os, zero)) & valid;
      Fe2 dx, dy;
      sub_p<P>(dx.c0, x2.c0, x1.c0, k);
      sub_p<P>(dx.c1, x2.c1, x1.c1, k);
      const unsigned deg = bits(_mm256_and_si256(equal_lanes(x1.c0, x2.c0), equal_lanes(x1.c1, x2.c1))) & valid & ~dinf & ~sinf;
      const V sp = lanes(deg | dinf | sinf | (~valid & 15u));
      dx.c0 = blend(sp, dx.c0, one);
      dx.c1 = blend(sp, dx.c1, z);
      sdinf[g] = (uint8_t)dinf;
      ssinf[g] = (uint8_t)sinf;
      sdeg[g] = (uint8_t)deg;
      if constexpr (SUMS) {  // N(dx) = dx0^2 + dx1^2 in one reduction, below 2p
        mul14_sum2(sden[g].l, dx.c0.l, dx.c0.l, dx.c1.l, dx.c1.l, &k);
      } else {
        Fe n0, n1;
        pmul(n0, dx.c0, dx.c0, k);
        pmul(n1, dx.c1, dx.c1, k);
        add<P>(sden[g], n0, n1, k);
        red_sum(sden[g], k);  // its partners (the running product, 1 / it) below 2p
      }
      sneg[g] = (uint8_t)neg;
      if (neg) {  // negated sources: y2 stays as loaded (sy2), dy = -y2 - y1 + 2p in those lanes (below or at 2p)
        const V nl = lanes(neg);
        sub_p_neg<P>(dy.c0, y2.c0, y1.c0, nl, k);
        sub_p_neg<P>(dy.c1, y2.c1, y1.c1, nl, k);
      } else {
        sub_p<P>(dy.c0, y2.c0, y1.c0, k);
        sub_p<P>(dy.c1, y2.c1, y1.c1, k);
      }
      if constexpr (SUMS) {  // c0 = dy0 dx0 + dy1 dx1, c1 = dy1 dx0 + dy0 (2p - dx1), each one reduction
        Fe ndx1;
        sub_kp<P, 2>(ndx1, z, dx.c1, k);  // 2p - dx1, at most 2p
        mul14_sum2(snum[g].c0.l, dy.c0.l, dx.c0.l, dy.c1.l, dx.c1.l, &k);
        mul14_sum2(snum[g].c1.l, dy.c1.l, dx.c0.l, dy.c0.l, ndx1.l, &k);
      } else {
        mul2_conj_fwd(snum[g], dy, dx, k);
      }
      copy(spre[g], acc);
      pmul(acc, acc, sden[g], k);
    }
    Fe inv = invert_lanes<FI>(acc, k);
    for (size_t g = G; g-- > 0;) {
      const unsigned cnt = (unsigned)std::min<size_t>(4, m - 4 * g);
      const unsigned store = ((1u << cnt) - 1) & ~(unsigned)sdeg[g] & ~(unsigned)ssinf[g];
      const Fe2& x1 = sx1[g];
      const Fe2& y1 = sy1[g];
      const Fe2& x2 = sx2[g];
      const Fe2& y2 = sy2[g];
      Fe t, ls, ld, lp, sq0;
      Fe2 lam, x3, e, y3;
      pmul(t, inv, spre[g], k);    // 1/N(dx) of this group's lanes
      pmul(inv, inv, sden[g], k);  // 1 / (the running product before this group)
      pmul(lam.c0, snum[g].c0, t, k);
      pmul(lam.c1, snum[g].c1, t, k);
      // lambda^2 = (l0 + l1)(l0 - l1) + 2 l0 l1 u; x3 = lambda^2 - x1 - x2 in one normalisation per
      // component: c0 below 4p (2p bias), c1 = 2 l0 l1 - x1 - x2 + 2p below 6p, then canonical
      add<P>(ls, lam.c0, lam.c1, k); red_sum(ls, k);  // also y3's Karatsuba sum
      sub_kp<P, 2>(ld, lam.c0, lam.c1, k); red2(ld, k);
      pmul(lp, lam.c0, lam.c1, k);
      pmul(sq0, ls, ld, k);
      sub2_bias(x3.c0, sq0, x1.c0, x2.c0, k.b22, k.mask);
      canon4(x3.c0, k);
      add_sub2_bias(x3.c1, lp, lp, x1.c1, x2.c1, k.b22, k.mask);
      canon8(x3.c1, k);
      sub_p<P>(e.c0, x1.c0, x3.c0, k);
      sub_p<P>(e.c1, x1.c1, x3.c1, k);
      // y3 = lambda e - y1 (Karatsuba) with y1's subtraction in the one normalisation per component:
      // c0 = v0 - v1 - y1 + 3p below 5p, c1 = w - v0 - v1 - y1 + 5p below 7p, then canonical
      if constexpr (SUMS) {  // c0 = l0 e0 + l1 (2p - e1), c1 = l0 e1 + l1 e0, each one reduction, below 2p
        Fe2 f;
        mul2(f, lam, e, k);  // the sums-form product
        sub_p<P>(y3.c0, f.c0, y1.c0, k);  // below 3p
        canon4(y3.c0, k);
        sub_p<P>(y3.c1, f.c1, y1.c1, k);
        canon4(y3.c1, k);
      } else {
        Fe v0, v1, es, w;
        pmul(v0, lam.c0, e.c0, k);
        pmul(v1, lam.c1, e.c1, k);
        add<P>(es, e.c0, e.c1, k); red2(es, k);
        pmul(w, ls, es, k);
        sub2_bias(y3.c0, v0, v1, y1.c0, k.b32, k.mask);
        canon8(y3.c0, k);
        sub3_bias(y3.c1, w, v0, v1, y1.c1, k.b53, k.mask);
        canon8(y3.c1, k);
      }
      if (sdinf[g]) {  // dst was infinity: dst = src (negated where the source was)
        const V d = lanes(sdinf[g]);
        Fe2 ys = y2;
        if (sdinf[g] & sneg[g]) negate_lanes(ys, lanes(sneg[g]), z, k);
        x3.c0 = blend(d, x3.c0, x2.c0);
        x3.c1 = blend(d, x3.c1, x2.c1);
        y3.c0 = blend(d, y3.c0, ys.c0);
        y3.c1 = blend(d, y3.c1, ys.c1);
      }
      alignas(32) u64 rows[4][4 * W];
      store2(x3, rows, 0);
      store2(y3, rows, 2 * W);
      for (unsigned l = 0; l < 4; l++)
        if (store >> l & 1) std::memcpy(qd[4 * g + l], rows[l], sizeof(Aff));
      if (sdeg[g]) {
        alignas(32) u64 p1[4][4 * W], p2[4][4 * W];
        Fe2 ys = y2;
        if (sdeg[g] & sneg[g]) negate_lanes(ys, lanes(sneg[g]), z, k);
        store2(x1, p1, 0);
        store2(y1, p1, 2 * W);
        store2(x2, p2, 0);
        store2(ys, p2, 2 * W);
        for (unsigned l = 0; l < 4; l++)
          if (sdeg[g] >> l & 1) equal.push_back({qd[4 * g + l], Aff::load(p1[l]), Aff::load(p2[l])});
      }
    }
    m = 0;
  }
};

// G2's calibration: one flush of 256 additions (msm_batch's size at 11-bit windows) over random
// canonical coordinates (the adders never look at the curve equation), lanes against ScalarBatchAdd,
// three alternated timings each after a warm-up, best of each; on where the lanes take at most 0.95
// of the scalar time. A calibration of the flush itself, not of the product: round 25 found the
// product ratio a poor predictor of the adder's. ~0.6 ms (BN254) and ~1.1 ms (BLS12-381) once per
// process and curve, at its first G2 flush with IFMA off (a thread-safe static; Zen 4, one core).
template <class Cfg>
SNARKD_SIMD29_TARGET inline bool simd29_g2_pays() {
  using Aff = Affine<Cfg>;
  using FI = typename Cfg::F::Base;
  constexpr int W = (int)FI::N;
  constexpr size_t NB = 256;
  const u64 top = (1ULL << (63 - __builtin_clzll(FI::Params::MOD[W - 1]))) - 1;
  std::vector<Aff> d0(NB), src(NB), d(NB);
  u64 s = 0x853c49e6748fea9bULL;
  for (auto* v : {&d0, &src})
    for (auto& p : *v)
      for (FI* c : {&p.x.c0, &p.x.c1, &p.y.c0, &p.y.c1})
        for (int q = 0; q < W; q++) {
          s ^= s << 13; s ^= s >> 7; s ^= s << 17;
          c->v[q] = q == W - 1 ? s & top : s;
        }
  Simd29G2Add<Cfg> ba;
  ba.reserve(NB);
  auto time = [&](bool lanes) {
    d = d0;
    for (size_t i = 0; i < NB; i++) ba.push((uint8_t*)&d[i], (const uint8_t*)&src[i], i % 3 == 0);
    auto t0 = std::chrono::steady_clock::now();
    if (lanes) ba.lane_flush();
    else static_cast<ScalarBatchAdd<Cfg>&>(ba).flush();
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(t1 - t0).count();
  };
  time(true);
  time(false);
  double tl = 1e30, ts = 1e30;
  for (int r = 0; r < 3; r++) {
    ts = std::min(ts, time(false));
    tl = std::min(tl, time(true));
  }
  return tl <= 0.95 * ts;
}
inline bool simd29_g2_default() {
  static const bool on =
      detect_simd29() && lane_default(simd29_rule(cpu_model(), false, true), [] { return simd29_g2_pays<bn254::G2Cfg>(); });
  return on;
}
inline bool simd29_g2_default_bls() {
  static const bool on =
      detect_simd29() && lane_default(simd29_rule(cpu_model(), true, true), [] { return simd29_g2_pays<bls12_381::G2Cfg>(); });
  return on;
}
#endif

}  // namespace snarkd
