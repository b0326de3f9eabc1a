// The batch-affine adder of msm/buckets.hpp eight at a time on AVX-512 IFMA (see
// ff/simd52.hpp); Buckets, SortedBuckets and the reductions there run on it.
//
// SimdBatchAdd: queued additions dst += +-src (affine, all-zero = infinity) run
// together. A forward pass loads the dst and src of eight queued additions per
// step (eight rows, transposed to one vector per word) and multiplies the x
// differences into eight running products; one scalar inversion (divsteps,
// ff/inverse.hpp) inverts the eight lane products; a backward pass recovers
// each 1/dx, computes lambda, x3, y3 and stores the new dst (about 6 lane products
// per addition). For Fq2 coordinates (G2) the running products are of the norms
// N(dx) = dx0^2 + dx1^2 in Fq, as in ScalarBatchAdd: 1/dx = conj(dx) / N(dx), the
// forward pass forms (y2 - y1) conj(dx) and the backward one scales it by 1/N into
// lambda (15 base products per addition instead of 17, the stored prefixes in Fq).
// Every load happens before any store, so a dst may be another
// queued addition's src. Infinity on either side is a lane select; equal x
// (doubling or P + (-P)) is left to the caller, exact and scalar.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "ec/point.hpp"
#include "msm/buckets.hpp"
#include "msm/glv_split.hpp"
#include "msm/simd_coords.hpp"

#if defined(SNARKD_SIMD52)
namespace snarkd {

// Scratch array with 64-byte alignment whatever the compiler assumes for the
// element type (std::vector does not align __m512i aggregates outside AVX-512 code).
template <class T>
struct Aligned64 {
  T* p = nullptr;
  size_t n = 0;
  Aligned64() = default;
  Aligned64(const Aligned64&) = delete;
  Aligned64& operator=(const Aligned64&) = delete;
  Aligned64(Aligned64&& o) noexcept : p(o.p), n(o.n) { o.p = nullptr; o.n = 0; }
  ~Aligned64() { ::operator delete(p, std::align_val_t(64)); }
  void resize(size_t k) {
    if (k <= n) return;
    ::operator delete(p, std::align_val_t(64));
    p = static_cast<T*>(::operator new(k * sizeof(T), std::align_val_t(64)));
    n = k;
  }
  T& operator[](size_t i) { return p[i]; }
  const T& operator[](size_t i) const { return p[i]; }
};

template <class Cfg>
struct SimdBatchAdd : AddQueue<Cfg> {
  using Q = AddQueue<Cfg>;
  using Q::qd, Q::qs, Q::qn, Q::equal, Q::B, Q::m;
  using F = typename Cfg::F;
  using VC = simd52::VecCoord<F>;
  using T = typename VC::T;
  using V = simd52::V;
  using Aff = Affine<Cfg>;
  static constexpr size_t PS = sizeof(Aff);
  static constexpr unsigned W = VC::WORDS;  // 64-bit words per coordinate
  static constexpr bool NORM = VC::NORM;
  using VD = typename VC::D;  // the running products' field: F, or Fq for G2
  using TD = typename VD::T;
  using FD = typename VD::F;

  Aligned64<T> sx1, sy1, sx2, sy2, snum;  // snum: (y2 - y1) conj(dx), NORM only
  Aligned64<TD> sden, spre;               // what is inverted (dx or N(dx)), the product before it
  std::vector<__mmask8> sdinf, ssinf, sdeg;

  void reserve(size_t B_) {  // whole groups of eight
    if (!this->reserve_queue(std::max<size_t>(8, B_ & ~(size_t)7))) return;
    size_t G = B / 8;
    sx1.resize(G); sy1.resize(G); sx2.resize(G); sy2.resize(G); sden.resize(G); spre.resize(G);
    if constexpr (NORM) snum.resize(G);
    sdinf.resize(G); ssinf.resize(G); sdeg.resize(G);
  }

  SNARKD_SIMD52_INLINE static __mmask8 all_zero(const V* w) {
    V acc = w[0];
    for (unsigned k = 1; k < 2 * W; k++) acc = _mm512_or_si512(acc, w[k]);
    return _mm512_testn_epi64_mask(acc, acc);
  }

  // Runs the queue; additions with equal x are appended to `equal` (dst untouched).
  SNARKD_SIMD52_TARGET void flush() {
    if (m == 0) return;
    const size_t G = (m + 7) / 8;
    const T one = VC::one();
    TD acc = VD::one();
    for (size_t g = 0; g < G; g++) {
      const size_t base = 8 * g;
      const unsigned cnt = (unsigned)std::min<size_t>(8, m - base);
      const __mmask8 valid = (__mmask8)((1u << cnt) - 1);
      const uint8_t* pd[8];
      const uint8_t* ps[8];
      __mmask8 neg = 0;
      for (unsigned k = 0; k < 8; k++) {
        size_t e = base + (k < cnt ? k : 0);
        pd[k] = qd[e];
        ps[k] = qs[e];
        neg |= (__mmask8)(qn[e] << k);
      }
      // the next group's dst and src, every cache line (see ScalarBatchAdd::prefetch_point)
      for (size_t e = base + 8; e < std::min(m, base + 16); e++) {
        for (size_t o = 0; o < 2 * W * 8; o += 64) {
          __builtin_prefetch(qd[e] + o);
          __builtin_prefetch(qs[e] + o);
        }
        __builtin_prefetch(qd[e] + 2 * W * 8 - 1);
        __builtin_prefetch(qs[e] + 2 * W * 8 - 1);
      }
      V wd[2 * W], ws[2 * W];
      simd52::load_rows<2 * W>(pd, wd);
      simd52::load_rows<2 * W>(ps, ws);
      const __mmask8 dinf = all_zero(wd), sinf = all_zero(ws);
      T x1 = VC::from_w(wd), y1 = VC::from_w(wd + W);
      T x2 = VC::from_w(ws), y2 = VC::from_w(ws + W);
      y2 = VC::blend(neg, y2, VC::neg(y2));
      T dx = VC::sub_p(x2, x1);
      const __mmask8 deg = VC::eq_p(dx) & valid & (__mmask8)~dinf & (__mmask8)~sinf;
      dx = VC::blend((__mmask8)(deg | dinf | sinf | (__mmask8)~valid), dx, one);
      sx1[g] = x1; sy1[g] = y1; sx2[g] = x2; sy2[g] = y2; spre[g] = acc;
      sdinf[g] = dinf & valid; ssinf[g] = sinf & valid; sdeg[g] = deg;
      if constexpr (NORM) {
        // dx is one in the lanes above, so their N is one too; the Fq2 product here does not
        // wait for the inversion and fills the running product's serial latency
        sden[g] = VC::norm(dx);
        snum[g] = VC::mul_conj(VC::sub_p(y2, y1), dx);
      } else {
        sden[g] = dx;
      }
      acc = VD::mul(acc, sden[g]);
    }
    // invert the eight lane products with one scalar inversion
    FD lane[8], pre[8];
    VD::extract(acc, lane);
    FD a = FD::one();
    for (int i = 0; i < 8; i++) { pre[i] = a; a = a * lane[i]; }
    FD ai = a.inv();
    for (int i = 8; i-- > 0;) {
      FD t = ai * pre[i];
      ai = ai * lane[i];
      lane[i] = t;
    }
    TD inv = VD::insert(lane);
    size_t g = G;
    // G1: K = 2 groups at a time, product by product (their lambda, x3, y3 chains are independent). One
    // group's chain is ~5 products deep and ~1,300 vector instructions long, more than the reorder
    // window holds, so run one at a time the groups hardly overlap: 2 took the flush from 42.0 to 40.1 ns
    // an addition on Zen 4, 3 and 4 read 40.3-40.5 (bench/simd52_flush.cpp, cpu-notes round 29). G2's
    // groups (twice the registers) stay one at a time.
    if constexpr (!NORM) {
      constexpr size_t K = 2;
      while (g % K) {
        g--;
        TD t = VD::mul(inv, spre[g]);
        inv = VD::mul(inv, sden[g]);
        store_group(g, lambda(g, t));
      }
      while (g >= K) {
        size_t gi[K];
        T t[K], l[K], x[K], e[K];
        for (size_t k = 0; k < K; k++) {
          gi[k] = g - 1 - k;
          t[k] = VD::mul(inv, spre[gi[k]]);
          inv = VD::mul(inv, sden[gi[k]]);
        }
        g -= K;
        for (size_t k = 0; k < K; k++) l[k] = lambda(gi[k], t[k]);
        for (size_t k = 0; k < K; k++) x[k] = VC::sqr(l[k]);
        for (size_t k = 0; k < K; k++) x[k] = VC::x3(x[k], sx1[gi[k]], sx2[gi[k]]);
        for (size_t k = 0; k < K; k++) e[k] = VC::mul(l[k], VC::sub_p(sx1[gi[k]], x[k]));
        for (size_t k = 0; k < K; k++) store_point(gi[k], x[k], VC::y3(e[k], sy1[gi[k]]));
      }
    }
    while (g-- > 0) {
      TD t = VD::mul(inv, spre[g]);
      inv = VD::mul(inv, sden[g]);
      store_group(g, lambda(g, t));
    }
    m = 0;
  }

  // lambda of group g from t = 1 / (its dx or N(dx))
  SNARKD_SIMD52_INLINE T lambda(size_t g, const TD& t) const {
    if constexpr (NORM) return VC::mul_base(snum[g], t);
    else return VC::mul(VC::sub_p(sy2[g], sy1[g]), t);
  }
  // x3, y3 of group g from its lambda, stored
  SNARKD_SIMD52_INLINE void store_group(size_t g, const T& lam) {
    const T x3 = VC::x3(VC::sqr(lam), sx1[g], sx2[g]);
    store_point(g, x3, VC::y3(VC::mul(lam, VC::sub_p(sx1[g], x3)), sy1[g]));
  }
  SNARKD_SIMD52_INLINE void store_point(size_t g, T x3, T y3) {
    const unsigned cnt = (unsigned)std::min<size_t>(8, m - 8 * g);
    const __mmask8 valid = (__mmask8)((1u << cnt) - 1);
    x3 = VC::blend(sdinf[g], x3, sx2[g]);  // dst was infinity: dst = src
    y3 = VC::blend(sdinf[g], y3, sy2[g]);
    V w[2 * W];
    VC::to_w(x3, w);
    VC::to_w(y3, w + W);
    uint8_t* pd[8];
    for (unsigned k = 0; k < 8; k++) pd[k] = qd[8 * g + (k < cnt ? k : 0)];
    simd52::store_rows<2 * W>(pd, w, (__mmask8)(valid & ~sdeg[g] & ~ssinf[g]));
    if (sdeg[g]) {
      F px[8], py[8], qx[8], qy[8];
      VC::extract(sx1[g], px); VC::extract(sy1[g], py); VC::extract(sx2[g], qx); VC::extract(sy2[g], qy);
      for (unsigned k = 0; k < 8; k++)
        if (sdeg[g] >> k & 1) equal.push_back({qd[8 * g + k], Aff{px[k], py[k]}, Aff{qx[k], qy[k]}});
    }
  }
};

}  // namespace snarkd
#endif
