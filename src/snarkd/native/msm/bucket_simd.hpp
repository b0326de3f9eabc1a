// Pippenger buckets filled and reduced with batch-affine additions, eight at a
// time on AVX-512 IFMA (see ff/simd52.hpp).
//
// BatchAdd: queued additions dst += +-src (affine, all-zero = infinity) run
// together. A forward pass loads the dst and src of eight queued additions per
// step (eight rows, transposed to one vector per word) and multiplies the x
// differences into eight running products; one scalar inversion (divsteps,
// ff/inverse.hpp) inverts the eight lane products; a backward pass recovers
// each 1/dx, computes lambda, x3, y3 and stores the new dst (about 6 lane products
// per addition). Every load happens before any store, so a dst may be another
// queued addition's src. Infinity on either side is a lane select; equal x
// (doubling or P + (-P)) is left to the caller, exact and scalar.
//
// SimdBuckets: one bucket array per task (window x point chunk). A bucket already
// waiting in the queue takes further points in its XYZZ fallback. The reduction
// sum_j (j+1) B_j runs as C independent running sums (one per block of buckets)
// advanced together, two queued additions per chain and step, then combined.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "ec/point.hpp"
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
struct BatchAdd {
  using F = typename Cfg::F;
  using VC = simd52::VecCoord<F>;
  using T = typename VC::T;
  using V = simd52::V;
  using Aff = Affine<Cfg>;
  static constexpr size_t PS = sizeof(Aff);
  static constexpr unsigned W = VC::WORDS;  // 64-bit words per coordinate

  struct Equal { uint8_t* dst; Aff p, q; };  // an addition left to the caller: dst = p + q, p.x == q.x

  std::vector<uint8_t*> qd;
  std::vector<const uint8_t*> qs;
  std::vector<uint8_t> qn;
  Aligned64<T> sx1, sy1, sx2, sy2, sdx, spre;
  std::vector<__mmask8> sdinf, ssinf, sdeg;
  std::vector<Equal> equal;
  size_t B = 8, m = 0;

  void reserve(size_t B_) {
    B = std::max<size_t>(8, B_ & ~(size_t)7);
    m = 0;
    if (qd.size() < B) {
      qd.resize(B); qs.resize(B); qn.resize(B);
      size_t G = B / 8;
      sx1.resize(G); sy1.resize(G); sx2.resize(G); sy2.resize(G); sdx.resize(G); spre.resize(G);
      sdinf.resize(G); ssinf.resize(G); sdeg.resize(G);
    }
  }
  bool full() const { return m == B; }
  // queue dst += (neg ? -src : src); the caller flushes when full()
  inline void push(uint8_t* dst, const uint8_t* src, bool neg) {
    qd[m] = dst;
    qs[m] = src;
    qn[m] = neg;
    m++;
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
    T acc = one;
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
      sx1[g] = x1; sy1[g] = y1; sx2[g] = x2; sy2[g] = y2; sdx[g] = dx; spre[g] = acc;
      sdinf[g] = dinf & valid; ssinf[g] = sinf & valid; sdeg[g] = deg;
      acc = VC::mul(acc, dx);
    }
    // invert the eight lane products with one scalar inversion
    F lane[8], pre[8];
    VC::extract(acc, lane);
    F a = F::one();
    for (int i = 0; i < 8; i++) { pre[i] = a; a = a * lane[i]; }
    F ai = a.inv();
    for (int i = 8; i-- > 0;) {
      F t = ai * pre[i];
      ai = ai * lane[i];
      lane[i] = t;
    }
    T inv = VC::insert(lane);
    for (size_t g = G; g-- > 0;) {
      const unsigned cnt = (unsigned)std::min<size_t>(8, m - 8 * g);
      const __mmask8 valid = (__mmask8)((1u << cnt) - 1);
      T t = VC::mul(inv, spre[g]);
      inv = VC::mul(inv, sdx[g]);
      const T& x1 = sx1[g];
      const T& y1 = sy1[g];
      T lam = VC::mul(VC::sub_p(sy2[g], y1), t);
      T x3 = VC::x3(VC::sqr(lam), x1, sx2[g]);
      T y3 = VC::y3(VC::mul(lam, VC::sub_p(x1, x3)), y1);
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
        VC::extract(x1, px); VC::extract(y1, py); VC::extract(sx2[g], qx); VC::extract(sy2[g], qy);
        for (unsigned k = 0; k < 8; k++)
          if (sdeg[g] >> k & 1) equal.push_back({qd[8 * g + k], Aff{px[k], py[k]}, Aff{qx[k], qy[k]}});
      }
    }
    m = 0;
  }
};

template <class Cfg>
inline void settle_equal(BatchAdd<Cfg>& b);
template <class Cfg>
XYZZ<Cfg> reduce_buckets(BatchAdd<Cfg>& ba, const Affine<Cfg>* ab, size_t nb);

template <class Cfg>
struct SimdBuckets {
  using F = typename Cfg::F;
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  static constexpr size_t PS = sizeof(Aff);
  static constexpr uint32_t NEGF = 0x80000000u;  // point index flag: add -P

  std::vector<Aff> ab;          // affine bucket values (canonical; all-zero = empty)
  std::vector<uint8_t> st;      // 0 empty, 1 set, 2 set + queued
  std::vector<uint8_t> xu;      // fallback XYZZ bucket in use
  std::vector<Pt> xb;           // fallback XYZZ buckets
  std::vector<uint32_t> qj;     // queued bucket indices
  std::vector<uint32_t> dj, dp; // deferred additions (bucket was queued): retried after the next flush
  std::vector<uint32_t> rj, rp; // retry scratch
  BatchAdd<Cfg> ba;
  MsmPoints<Cfg> pts;
  size_t nb = 0;

  void reset(size_t nb_, size_t B_, const MsmPoints<Cfg>& pts_) {
    nb = nb_;
    pts = pts_;
    if (ab.size() < nb) { ab.resize(nb); xb.resize(nb); }
    st.assign(nb, 0);
    xu.assign(nb, 0);
    ba.reserve(B_);
    qj.clear();
    qj.reserve(ba.B);
    dj.clear();
    dp.clear();
  }
  inline void prefetch(size_t j) const {
    __builtin_prefetch(&ab[j], 1);
    __builtin_prefetch(&st[j], 1);
  }
  inline Aff load_point(uint32_t pi) const {
    Aff p = Aff::load(pts.at(pi & ~NEGF));
    if (pi & NEGF) p.y = p.y.neg();
    return p;
  }
  inline void fallback(size_t j, const Aff& p) {
    if (!xu[j]) { xb[j] = Pt::inf(); xu[j] = 1; }
    xb[j].add_affine_checked(p);  // bases may be infinity (all zero)
  }
  // bucket j += point pi (pi: index into bases, NEGF for the negation)
  inline void add(size_t j, uint32_t pi) {
    insert(j, pi);
    if (ba.full()) flush();
  }
  // A bucket already queued: defer the point to the next batch (cheap), or when
  // many are deferred already (points crowding into few buckets, e.g. small
  // scalars), add it to the bucket's XYZZ fallback.
  inline void insert(size_t j, uint32_t pi) {
    uint8_t s = st[j];
    if (s == 0) { ab[j] = load_point(pi); st[j] = 1; return; }
    if (s == 2) {
      if (dj.size() < ba.B / 2) { dj.push_back((uint32_t)j); dp.push_back(pi); }
      else fallback(j, load_point(pi));
      return;
    }
    st[j] = 2;
    qj.push_back((uint32_t)j);
    ba.push((uint8_t*)&ab[j], pts.at(pi & ~NEGF), (pi & NEGF) != 0);
  }
  void flush() {
    ba.flush();
    for (uint32_t j : qj) st[j] = 1;
    qj.clear();
    // equal x: the bucket keeps its value, the point goes to the fallback
    for (auto& e : ba.equal) fallback((size_t)((e.dst - (uint8_t*)ab.data()) / PS), e.q);
    ba.equal.clear();
    // retry the deferred ones: at most B/2 of them, so they fit in the empty queue
    rj.swap(dj);
    rp.swap(dp);
    dj.clear();
    dp.clear();
    for (size_t k = 0; k < rj.size(); k++) insert(rj[k], rp[k]);
  }

  // sum_j (j+1) * bucket_j
  Pt reduce() {
    do flush(); while (ba.m || !dj.empty());
    // fold the XYZZ fallbacks into the affine buckets (one batch normalisation)
    std::vector<uint32_t> fj;
    for (size_t j = 0; j < nb; j++) {
      if (!st[j]) std::memset((void*)&ab[j], 0, PS);  // empty = infinity = all zero
      if (xu[j] && !xb[j].is_inf()) fj.push_back((uint32_t)j);
    }
    if (!fj.empty()) {
      std::vector<F> z(fj.size()), scr(fj.size());
      for (size_t k = 0; k < fj.size(); k++) z[k] = xb[fj[k]].ZZZ;
      batch_inverse(z.data(), z.size(), scr.data());
      std::vector<Aff> fa(fj.size());
      for (size_t k = 0; k < fj.size(); k++) {
        const Pt& p = xb[fj[k]];
        F zi = p.ZZ * z[k];  // Z^-1
        fa[k] = {p.X * zi.sqr(), p.Y * z[k]};
        ba.push((uint8_t*)&ab[fj[k]], (const uint8_t*)&fa[k], false);
        if (ba.full()) { ba.flush(); settle_equal(ba); }
      }
      ba.flush();
      settle_equal(ba);
    }
    return reduce_buckets<Cfg>(ba, ab.data(), nb);
  }
};

// dst = dst + src for the additions BatchAdd left over (equal x), exact
template <class Cfg>
inline void settle_equal(BatchAdd<Cfg>& b) {
  for (auto& e : b.equal) {
    XYZZ<Cfg> r = XYZZ<Cfg>::from_affine(e.p);
    r.add_affine(e.q);
    r.to_affine().store(e.dst);
  }
  b.equal.clear();
}

// sum_j (j+1) B_j over affine buckets (all-zero = empty): C chains over blocks of L
// buckets advanced together, acc_c = sum_s s B_{cL+s}, run_c = sum_s B_{cL+s}; two
// queued additions per chain and step share the batch's inversion.
template <class Cfg>
XYZZ<Cfg> reduce_buckets(BatchAdd<Cfg>& ba, const Affine<Cfg>* ab, size_t nb) {
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  size_t C = std::min<size_t>(64, std::max<size_t>(1, ba.B / 2));
  while (C > 1 && nb % C) C /= 2;
  const size_t L = nb / C;
  std::vector<Aff> run(C, Aff::inf()), acc(C, Aff::inf());
  for (size_t s = L; s-- > 0;) {
    for (size_t c = 0; c < C; c++) {
      ba.push((uint8_t*)&acc[c], (const uint8_t*)&run[c], false);  // acc += run (before this step)
      ba.push((uint8_t*)&run[c], (const uint8_t*)&ab[c * L + s], false);
      if (ba.full()) { ba.flush(); settle_equal(ba); }
    }
    ba.flush();
    settle_equal(ba);
  }
  // sum_j (j+1) B_j = sum_c acc_c + sum_c run_c + L sum_c c run_c
  Pt a = Pt::inf(), wrun = Pt::inf(), wsum = Pt::inf();
  for (size_t c = C; c-- > 0;) {
    a.add_affine_checked(acc[c]);
    a.add_affine_checked(run[c]);
    if (c > 0) {
      wrun.add_affine_checked(run[c]);
      wsum.add(wrun);
    }
  }
  for (size_t l = L; l > 1; l /= 2) wsum.dbl();
  a.add(wsum);
  return a;
}

// One window's buckets from its points grouped by bucket: a counting sort of
// (bucket, point) pairs, then each bucket's points summed pairwise in rounds
// (round r adds element k + 2^r of every run into element k). No two additions
// of a round share a destination, so batches are as large as the round: no
// queue, no conflicts, no fallback, whatever the digits (crowded top window,
// small scalars). Sum of run lengths minus the number of runs = additions.
template <class Cfg>
struct SortedBuckets {
  using F = typename Cfg::F;
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  static constexpr size_t PS = sizeof(Aff);
  static constexpr uint32_t NEGF = 0x80000000u;

  std::vector<uint32_t> cnt, dg, order;  // bucket offsets, digits, point indices | NEGF sorted by bucket
  std::vector<Aff> ab, scr;             // bucket sums; partial sums (one per pair of round 0)
  BatchAdd<Cfg> ba;

  // digit(k): |d| | NEGF (0: none) for k < n; index(k): the point of entry k
  template <class Digit, class Index>
  Pt run(size_t nb, size_t n, const MsmPoints<Cfg>& pts, size_t B, Digit digit, Index index) {
    ba.reserve(B);
    cnt.assign(nb + 1, 0);
    dg.resize(n);
    for (size_t k = 0; k < n; k++) {
      uint32_t d = digit(k);
      dg[k] = d;
      if (d) cnt[d & ~NEGF]++;  // bucket |d| - 1 counted at |d|
    }
    for (size_t j = 0; j < nb; j++) cnt[j + 1] += cnt[j];
    order.resize(cnt[nb]);
    {
      std::vector<uint32_t> pos(cnt.begin(), cnt.end() - 1);
      for (size_t k = 0; k < n; k++) {
        uint32_t d = dg[k];
        if (d) order[pos[(d & ~NEGF) - 1]++] = (uint32_t)index(k) | (d & NEGF);
      }
    }
    // round 0: runs of points -> scr (pairs added; a lone last point copied)
    ab.assign(nb, Aff::inf());
    std::vector<uint32_t> sbase(nb + 1);
    size_t m = 0;
    for (size_t j = 0; j < nb; j++) {
      sbase[j] = (uint32_t)m;
      m += (cnt[j + 1] - cnt[j] + 1) / 2;
    }
    sbase[nb] = (uint32_t)m;
    scr.resize(m);
    auto point = [&](uint32_t pi) {
      Aff p = Aff::load(pts.at(pi & ~NEGF));
      if (pi & NEGF) p.y = p.y.neg();
      return p;
    };
    for (size_t j = 0; j < nb; j++) {
      size_t s = cnt[j], e = cnt[j + 1], t = sbase[j];
      for (; s + 1 < e; s += 2, t++) {
        scr[t] = point(order[s]);
        ba.push((uint8_t*)&scr[t], pts.at(order[s + 1] & ~NEGF), (order[s + 1] & NEGF) != 0);
        if (ba.full()) { ba.flush(); settle_equal(ba); }
      }
      if (s < e) scr[t] = point(order[s]);
    }
    ba.flush();
    settle_equal(ba);
    // rounds 1, 2, ...: within each run of scr, element k += element k + stride
    size_t longest = 0;
    for (size_t j = 0; j < nb; j++) longest = std::max<size_t>(longest, sbase[j + 1] - sbase[j]);
    for (size_t stride = 1; stride < longest; stride *= 2) {
      for (size_t j = 0; j < nb; j++) {
        size_t b = sbase[j], len = sbase[j + 1] - b;
        for (size_t k = 0; k + stride < len; k += 2 * stride) {
          ba.push((uint8_t*)&scr[b + k], (const uint8_t*)&scr[b + k + stride], false);
          if (ba.full()) { ba.flush(); settle_equal(ba); }
        }
      }
      ba.flush();
      settle_equal(ba);
    }
    for (size_t j = 0; j < nb; j++)
      if (sbase[j + 1] > sbase[j]) ab[j] = scr[sbase[j]];
    return reduce_buckets<Cfg>(ba, ab.data(), nb);
  }
};

// One window of one chunk of n scalars: digit(q) = |d| | NEGF (0: nothing to add), index(q) = the
// point of scalar q in pts. A crowded window (fewer than nb / 8 buckets: the top one; or `crowded`: a
// narrower top window of GLV halves, whose magnitudes sit below their bound, so queued buckets keep
// colliding) is summed by bucket sort instead of queueing; otherwise each digit goes to its bucket,
// the next one's bucket prefetched.
template <class Cfg, class Digit, class Index>
XYZZ<Cfg> window_sum(SimdBuckets<Cfg>& bk, SortedBuckets<Cfg>& sb, size_t nbw, size_t nb, size_t B,
                     const MsmPoints<Cfg>& pts, size_t n, Digit digit, Index index, bool crowded = false) {
  constexpr uint32_t NEGF = SimdBuckets<Cfg>::NEGF;
  if (crowded || nbw < nb / 8) return sb.run(nbw, n, pts, 1024, digit, index);
  bk.reset(nb, B, pts);
  uint32_t dn = n ? digit(0) : 0;
  for (size_t q = 0; q < n; q++) {
    const uint32_t d = dn;
    dn = q + 1 < n ? digit(q + 1) : 0;
    if (dn & ~NEGF) bk.prefetch((dn & ~NEGF) - 1);
    if (!d) continue;
    bk.add((d & ~NEGF) - 1, (uint32_t)index(q) | (d & NEGF));
  }
  return bk.reduce();
}

// Sum of points (all with coefficient 1: the witness's ones), A accumulators
// advanced together so each batch of A additions shares one inversion, then
// folded pairwise. idx[k] - start indexes bases.
template <class Cfg>
XYZZ<Cfg> sum_points_simd(BatchAdd<Cfg>& ba, const uint8_t* bases, const uint32_t* idx, size_t count, size_t start) {
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  if (count == 0) return Pt::inf();
  const size_t A = std::min<size_t>(ba.B, std::max<size_t>(8, count / 2 & ~(size_t)7));
  std::vector<Aff> acc(A, Aff::inf());
  auto settle = [&]() {
    for (auto& e : ba.equal) {
      Pt r = Pt::from_affine(e.p);
      r.add_affine(e.q);
      r.to_affine().store(e.dst);
    }
    ba.equal.clear();
  };
  for (size_t k = 0; k < count; k++) {  // one flush per A pushes: each accumulator once per batch
    ba.push((uint8_t*)&acc[k % A], bases + (size_t)(idx[k] - start) * sizeof(Aff), false);
    if ((k + 1) % A == 0) { ba.flush(); settle(); }
  }
  ba.flush();
  settle();
  for (size_t s = 1; s < A; s *= 2) {
    for (size_t k = 0; k + s < A; k += 2 * s) {
      ba.push((uint8_t*)&acc[k], (const uint8_t*)&acc[k + s], false);
      if (ba.full()) { ba.flush(); settle(); }
    }
    ba.flush();
    settle();
  }
  return Pt::from_affine(acc[0]);
}

}  // namespace snarkd
#endif
