// The batch-affine adder of msm/buckets.hpp four at a time on AVX2 (ff/simd29.hpp), for the CPUs
// without AVX-512 IFMA. G1 on BN254 (Fq in 9 limbs of 29 bits) and on BLS12-381 (14 limbs) run on
// the lanes, each where its own calibration at load said so (g_use_simd29, g_use_simd29_bls); G2
// (both curves) gets ScalarBatchAdd itself through Simd29BatchAdd's fallback, so the MSM and
// witness_msm templates take it for every job.
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
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "curves/bls12_381.hpp"
#include "curves/bn254.hpp"
#include "ec/point.hpp"
#include "ff/simd29.hpp"
#include "msm/bucket_simd.hpp"
#include "msm/buckets.hpp"

namespace snarkd {

// Whether Cfg's additions can run on the 4-lane adder: a curve over BN254's or BLS12-381's Fq (G1)
template <class Cfg>
constexpr bool simd29_curve() {
#if defined(SNARKD_SIMD29)
  return std::is_same<typename Cfg::F, bn254::Fq>::value || std::is_same<typename Cfg::F, bls12_381::Fq>::value;
#else
  return false;
#endif
}
// Whether they do now: that field's switch (its calibration at load, or _core._set_simd29)
template <class Cfg>
inline bool simd29_on() {
  if constexpr (!simd29_curve<Cfg>()) return false;
  else if constexpr (std::is_same<typename Cfg::F, bn254::Fq>::value) return g_use_simd29;
  else return g_use_simd29_bls;
}

// The lane adder itself (defined for the G1 curves above only)
template <class Cfg>
struct Simd29LaneAdd;
// The adder the MSM templates take (a template of one parameter, as msm/witness_msm.hpp's BA):
// the lanes where they fit, the scalar adder elsewhere
template <class Cfg>
using Simd29BatchAdd = std::conditional_t<simd29_curve<Cfg>(), Simd29LaneAdd<Cfg>, ScalarBatchAdd<Cfg>>;

#if defined(SNARKD_SIMD29)
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

  Aligned64<Fe> sx1, sy1, sx2, sy2, sden, spre;  // per group of four: loaded points, dx, running product before it
  std::vector<uint8_t> sdinf, ssinf, sdeg;       // lane bits: dst infinity, src infinity, equal x

  void reserve(size_t B_) {  // whole groups of four
    if (!this->reserve_queue(std::max<size_t>(4, B_ & ~(size_t)3))) return;
    const size_t G = B / 4;
    sx1.resize(G); sy1.resize(G); sx2.resize(G); sy2.resize(G); sden.resize(G); spre.resize(G);
    sdinf.resize(G); ssinf.resize(G); sdeg.resize(G);
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
      if (neg) {  // p - y (a source at infinity keeps its lane unused)
        Fe ny;
        Fe z;
#pragma GCC unroll 14
        for (int j = 0; j < L; j++) z.l[j] = zero;
        sub_p<P>(ny, z, y2, k);
        y2 = blend(lanes(neg), y2, ny);
      }
      Fe dx;
      sub_p<P>(dx, x2, x1, k);  // x2 - x1 + p: exactly p where x1 == x2 (both canonical)
      const unsigned deg = bits(equal_lanes(x1, x2)) & valid & ~dinf & ~sinf;
      dx = blend(lanes(deg | dinf | sinf | (~valid & 15u)), dx, one);
      sdinf[g] = (uint8_t)dinf;
      ssinf[g] = (uint8_t)sinf;
      sdeg[g] = (uint8_t)deg;
      spre[g] = acc;
      sden[g] = dx;
      mul<P>(acc, acc, dx, k);
    }
    // invert the four lane products with one scalar inversion (canonical first, as inv() needs)
    csub<P, 1>(acc, k);
    F lane[4], pre[4];
    store_rows4(acc, &lane[0], &lane[1], &lane[2], &lane[3]);
    F a = F::one();
    for (int i = 0; i < 4; i++) {
      pre[i] = a;
      a = a * lane[i];
    }
    F ai = a.inv();
    for (int i = 4; i-- > 0;) {
      F t = ai * pre[i];
      ai = ai * lane[i];
      lane[i] = t;
    }
    Fe inv;
    load_rows4(inv, &lane[0], &lane[1], &lane[2], &lane[3]);
    for (size_t g = G; g-- > 0;) {
      const unsigned cnt = (unsigned)std::min<size_t>(4, m - 4 * g);
      const unsigned store = ((1u << cnt) - 1) & ~(unsigned)sdeg[g] & ~(unsigned)ssinf[g];
      const Fe& x1 = sx1[g];
      const Fe& y1 = sy1[g];
      const Fe& x2 = sx2[g];
      const Fe& y2 = sy2[g];
      Fe t, lam, x3, y3;
      mul<P>(t, inv, spre[g], k);    // 1/dx of this group's lanes
      mul<P>(inv, inv, sden[g], k);  // 1 / (the running product before this group)
      sub_p<P>(lam, y2, y1, k);
      mul<P>(lam, lam, t, k);
      mul<P>(x3, lam, lam, k);  // the square as a product: faster than the squaring here (cpu-notes round 21)
      sub_p<P>(x3, x3, x1, k);
      sub_p<P>(x3, x3, x2, k);  // lambda^2 - x1 - x2 + 2p, below 4p
      csub<P, 2>(x3, k);
      csub<P, 1>(x3, k);
      sub_p<P>(y3, x1, x3, k);
      mul<P>(y3, lam, y3, k);
      sub_p<P>(y3, y3, y1, k);  // below 3p
      csub<P, 2>(y3, k);
      csub<P, 1>(y3, k);
      if (sdinf[g]) {  // dst was infinity: dst = src
        const V d = lanes(sdinf[g]);
        x3 = blend(d, x3, x2);
        y3 = blend(d, y3, y2);
      }
      alignas(32) u64 rows[4][2 * W];
      store_rows4(x3, rows[0], rows[1], rows[2], rows[3]);
      store_rows4(y3, rows[0] + W, rows[1] + W, rows[2] + W, rows[3] + W);
      for (unsigned l = 0; l < 4; l++)
        if (store >> l & 1) std::memcpy(qd[4 * g + l], rows[l], sizeof(Aff));
      if (sdeg[g]) {
        alignas(32) u64 p1[4][2 * W], p2[4][2 * W];
        store_rows4(x1, p1[0], p1[1], p1[2], p1[3]);
        store_rows4(y1, p1[0] + W, p1[1] + W, p1[2] + W, p1[3] + W);
        store_rows4(x2, p2[0], p2[1], p2[2], p2[3]);
        store_rows4(y2, p2[0] + W, p2[1] + W, p2[2] + W, p2[3] + W);
        for (unsigned l = 0; l < 4; l++)
          if (sdeg[g] >> l & 1) equal.push_back({qd[4 * g + l], Aff::load(p1[l]), Aff::load(p2[l])});
      }
    }
    m = 0;
  }
};
#endif

}  // namespace snarkd
