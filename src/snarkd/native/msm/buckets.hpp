// Pippenger buckets filled and reduced with batch-affine additions, on either adder:
//
//   ScalarBatchAdd (here): one addition at a time on the scalar field (4- or 6-limb
//     mulx/adcx/adox products, ff/mont_adx.hpp), every CPU;
//   SimdBatchAdd (msm/bucket_simd.hpp): eight at a time on AVX-512 IFMA.
//
// An adder queues additions dst += +-src (affine, all-zero = infinity) and runs them
// together on flush(): a forward pass loads every dst and src and multiplies the x
// differences into running products, one inversion (divsteps, ff/inverse.hpp) inverts
// the product, and a backward pass recovers each 1/dx, computes lambda, x3, y3 and
// stores the new dst (5M + 1S per addition and a share of the inversion; on Fp2 the
// forward pass also forms (y2 - y1) conj(dx), so the backward one scales it by
// 1/norm(dx) into lambda). Every load
// happens before any store, so a dst may be another queued addition's src. Infinity on
// either side is taken care of; equal x (doubling or P + (-P)) is left to the caller
// (`equal`, settled exactly by settle_equal). Interface: reserve(B), push(dst, src,
// neg), full(), flush(), B, m, equal.
//
// Buckets: one bucket array per task (window x point chunk). A bucket already queued
// defers further points to the next batch (or, when many are deferred already, takes
// them in its XYZZ fallback). The reduction sum_j (j+1) B_j runs as C independent
// running sums (one per block of buckets) advanced together, two queued additions per
// chain and step, then combined. SortedBuckets: a window whose points crowd into few
// buckets, summed by a counting sort and pairwise rounds (no queue conflicts).
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "ec/point.hpp"
#include "ff/fp2.hpp"
#include "msm/glv_split.hpp"

namespace snarkd {

// The queue both adders share: additions dst += (neg ? -src : src), at most B of them.
template <class Cfg>
struct AddQueue {
  using Curve = Cfg;
  using Aff = Affine<Cfg>;
  struct Equal { uint8_t* dst; Aff p, q; };  // an addition left to the caller: dst = p + q, p.x == q.x

  std::vector<uint8_t*> qd;
  std::vector<const uint8_t*> qs;
  std::vector<uint8_t> qn;
  std::vector<Equal> equal;
  size_t B = 1, m = 0;

  // room for B_ additions; true when the queue grew (the adder's own arrays grow with it)
  bool reserve_queue(size_t B_) {
    B = B_;
    m = 0;
    if (qd.size() >= B) return false;
    qd.resize(B); qs.resize(B); qn.resize(B);
    return true;
  }
  bool full() const { return m == B; }
  // queue dst += (neg ? -src : src); the caller flushes when full()
  inline void push(uint8_t* dst, const uint8_t* src, bool neg) {
    qd[m] = dst;
    qs[m] = src;
    qn[m] = neg;
    m++;
  }
};

// The field the adder's batch inversion runs in: F, or for F = Fp2 its base field (the
// x differences' norms are inverted, 1/d = conj(d) / norm(d): 7 base products per
// element instead of the 9 of three Fp2 products).
template <class F, bool = IsFp2<F>::value>
struct InvField { using type = F; };
template <class F>
struct InvField<F, true> { using type = typename F::Base; };

template <class Cfg>
struct ScalarBatchAdd : AddQueue<Cfg> {
  using Q = AddQueue<Cfg>;
  using Q::qd, Q::qs, Q::qn, Q::equal, Q::B, Q::m;
  using F = typename Cfg::F;
  using FI = typename InvField<F>::type;
  using Aff = Affine<Cfg>;
  static constexpr bool NORM = IsFp2<F>::value;

  std::vector<Aff> p1, p2;    // the loaded dst and src (src negated where asked)
  std::vector<F> dx;          // x differences (Fp2: (y2 - y1) conj(dx), lambda times norm(dx))
  std::vector<FI> nx, pre;    // what is inverted (dx, or its norm), and the running product before it
  std::vector<uint8_t> kind;  // 0 add, 1 dst infinity (dst = src), 2 src infinity (dst kept), 3 equal x

  void reserve(size_t B_) {
    if (!this->reserve_queue(std::max<size_t>(1, B_))) return;
    p1.resize(B); p2.resize(B); dx.resize(B); pre.resize(B); kind.resize(B);
    if constexpr (NORM) nx.resize(B);
  }

  // Backward, G plain additions at a time: each addition is a chain of dependent products
  // (1/dx, lambda, lambda^2, y3) and one addition's instructions fill the out-of-order
  // window, so G chains written side by side keep the multiplier busy where one would wait
  // on each product's latency. Measured per addition (one core of the 2-core Xeon VM,
  // bench/cpu-notes.md): G1 125 -> 116 ns at G = 2 (G = 3, 4: 115), G2 281 -> 268 ns.
  static constexpr size_t GROUP = 2;
  template <size_t G>
  inline bool plain_run(size_t j) const {
    uint8_t any = 0;
#pragma GCC unroll 8
    for (size_t g = 0; g < G; g++) any |= kind[j + g];
    return any == 0;
  }
  // the plain additions of slots j + G - 1 down to j (the backward order), each slot's chain
  // of inverses (invs[slot & 1]) advanced past it
  template <size_t G>
  inline __attribute__((always_inline)) void add_group(size_t j, FI* invs) {
    F t[G], l[G], x[G], y[G];
#pragma GCC unroll 8
    for (size_t g = 0; g < G; g++) {
      const size_t q = j + G - 1 - g;
      if constexpr (NORM) {  // lambda = (y2 - y1) conj(dx) (the forward pass's) / norm(dx)
        FI n;
        FI& inv = invs[q & 1];
        FI::mul_lazy_to(n, inv, pre[q]);
        FI::mul_lazy_to(inv, inv, nx[q]);
        FI::mul_to(l[g].c0, dx[q].c0, n);
        FI::mul_to(l[g].c1, dx[q].c1, n);
      } else {
        FI& inv = invs[q & 1];
        F::mul_lazy_to(t[g], inv, pre[q]);
        F::mul_lazy_to(inv, inv, dx[q]);
      }
    }
    if constexpr (!NORM) {
#pragma GCC unroll 8
      for (size_t g = 0; g < G; g++) { const size_t q = j + G - 1 - g; F::sub_to(l[g], p2[q].y, p1[q].y); }
#pragma GCC unroll 8
      for (size_t g = 0; g < G; g++) F::mul_lazy_to(l[g], l[g], t[g]);  // lambda only feeds the two products below
    }
#pragma GCC unroll 8
    for (size_t g = 0; g < G; g++) F::sqr_to(x[g], l[g]);
#pragma GCC unroll 8
    for (size_t g = 0; g < G; g++) { const size_t q = j + G - 1 - g; F::sub_to(x[g], x[g], p1[q].x); F::sub_to(x[g], x[g], p2[q].x); }
#pragma GCC unroll 8
    for (size_t g = 0; g < G; g++) { const size_t q = j + G - 1 - g; F::sub_to(y[g], p1[q].x, x[g]); }
#pragma GCC unroll 8
    for (size_t g = 0; g < G; g++) F::mul_to(y[g], l[g], y[g]);
#pragma GCC unroll 8
    for (size_t g = 0; g < G; g++) {
      const size_t q = j + G - 1 - g;
      F::sub_to(y[g], y[g], p1[q].y);
      x[g].store_words(qd[q]);
      y[g].store_words(qd[q] + sizeof(F));
    }
  }

  // The forward pass prefetches the dst (a bucket) and the src (a base, read from the key's
  // mapping, or another bucket) PF additions ahead, every cache line of each (points need not
  // be 64-byte aligned in the key). PF = 2 and the dst alone left the loads of the src as the
  // hottest instructions of the flush (`perf annotate`, round 6).
  static constexpr size_t PF = 8;
  static inline __attribute__((always_inline)) void prefetch_point(const uint8_t* p) {
#pragma GCC unroll 4
    for (size_t o = 0; o < sizeof(Aff); o += 64) __builtin_prefetch(p + o);
    __builtin_prefetch(p + sizeof(Aff) - 1);
  }

  // Runs the queue; additions with equal x are appended to `equal` (dst untouched).
  // Every result is written in place (the _to forms, store_words): a value copied right
  // after it was computed is read back with 16-byte loads that stall on the 8-byte stores
  // just made (store forwarding), which cost this loop a third of its time.
  //
  // Two running products, over the even and the odd slots: one product chain is serial (each
  // product waits ~70 cycles on the last), and beside G1's little other work per addition the
  // forward pass ran at its latency; two chains keep two products in flight there, and in the
  // backward pass the G slots of a group no longer wait on each other's inverse. One inversion
  // still serves both (of their product, then 1/a = b/(ab)): 3 more products per flush.
  // G1 MSM 0.97-1.00 in process (code placement moves it as much), G2 even (its forward pass
  // already has an Fp2 product beside the chain); four chains no better than two (cpu-notes
  // round 9).
  // Aligned to 64 bytes: BLS12-381's G2 flush with its Fq2 products as sums (adx::mont_fp2_sum6)
  // ran 3% faster than the Karatsuba form where the function began on a 64-byte boundary and
  // no faster where it began 16 bytes past one (same instructions; the module's placement),
  // so its speed was left to where the linker happened to put it (cpu-notes round 22).
  __attribute__((aligned(64))) void flush() {
    if (m == 0) return;
    FI accs[2] = {FI::one(), FI::one()};
    for (size_t i = 0; i < m; i++) {
      FI& acc = accs[i & 1];
      if (i + PF < m) {
        prefetch_point(qd[i + PF]);
        prefetch_point(qs[i + PF]);
      }
      Aff& a = p1[i];
      Aff& b = p2[i];
      a = Aff::load(qd[i]);
      b = Aff::load(qs[i]);
      {  // b.y = -b.y where asked, without a branch: the signs are random, so a branch here
         // mispredicted every other addition (0 - 0 stays 0: infinity stays all-zero)
        F ny;
        F::sub_to(ny, F::zero(), b.y);
        const uint64_t mask = (uint64_t)0 - qn[i];
        uint64_t* yw = reinterpret_cast<uint64_t*>(&b.y);
        const uint64_t* nw = reinterpret_cast<const uint64_t*>(&ny);
#pragma GCC unroll 12
        for (size_t w = 0; w < sizeof(F) / 8; w++) {
          uint64_t v = yw[w] ^ ((yw[w] ^ nw[w]) & mask);
          asm("" : "+r"(v));  // word by word through general registers (see Mont::store_words)
          yw[w] = v;
        }
      }
      uint8_t k = 0;
      if (b.is_inf()) k = 2;
      else if (a.is_inf()) k = 1;
      else {
        F& d = dx[i];
        F::sub_to(d, b.x, a.x);
        if (d.is_zero()) k = 3;
        else {
          acc.store_words(&pre[i]);
          if constexpr (NORM) {
            d.norm_to(nx[i]);
            FI::mul_lazy_to(acc, acc, nx[i]);
            // (y2 - y1) conj(dx) here, not (y2 - y1)(conj(dx) / norm) in the backward pass:
            // the same products (3 for the Fp2 one, 2 base ones by 1/norm), but this Fp2
            // product does not wait for the inversion, and beside the running product's
            // serial chain it fills that chain's latency (G2 MSM -3%, cpu-notes round 9)
            F l;
            F::sub_to(l, b.y, a.y);
            F::mul_conj_to(d, l, d);  // one negation fewer than conj(dx) then the product
          } else {
            FI::mul_lazy_to(acc, acc, d);
          }
        }
      }
      kind[i] = k;
    }
    // the running products are below 2p (mul_lazy_to): their full product is canonical, as the
    // inversion needs
    FI prod, invs[2];
    FI::mul_to(prod, accs[0], accs[1]);
    const FI inv = prod.inv();
    FI::mul_lazy_to(invs[0], inv, accs[1]);
    FI::mul_lazy_to(invs[1], inv, accs[0]);
    size_t i = m;
    while (i > 0) {
      if (i >= GROUP && plain_run<GROUP>(i - GROUP)) {
        add_group<GROUP>(i - GROUP, invs);
        i -= GROUP;
        continue;
      }
      i--;
      const uint8_t k = kind[i];
      if (k == 0) add_group<1>(i, invs);
      else if (k == 1) p2[i].store(qd[i]);
      else if (k == 3) equal.push_back({qd[i], p1[i], p2[i]});
    }
    m = 0;
  }
};

template <class BA>
inline void settle_equal(BA& b);
template <class BA>
XYZZ<typename BA::Curve> reduce_buckets(BA& ba, const Affine<typename BA::Curve>* ab, size_t nb);

template <class Cfg, class BA>
struct Buckets {
  using F = typename Cfg::F;
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  static constexpr size_t PS = sizeof(Aff);
  static constexpr uint32_t NEGF = 0x80000000u;  // point index flag: add -P

  std::vector<Aff> ab;          // affine bucket values (canonical; all-zero = empty)
  std::vector<uint8_t> st;      // 0 empty, 1 set, 2 set + queued
  std::vector<uint8_t> xu;      // fallback XYZZ bucket in use
  // fallback XYZZ buckets: default-initialised, so that only the pages of buckets that
  // take a fallback are touched (a value-initialised vector wrote all of them: 0.5 MiB per
  // thread for G1 at c = 13, 1 MiB for G2, counted in a one-shot proof's peak RSS)
  std::unique_ptr<Pt[]> xb;
  size_t nxb = 0;
  std::vector<uint32_t> qj;     // queued bucket indices: qj[0 .. nq) (sized B once; written by index, where
                                // push_back was an out-of-line call per point, ~1% of a SHA-256 proof)
  size_t nq = 0;
  std::vector<uint32_t> dj, dp; // deferred additions (bucket was queued): retried after the next flush
  std::vector<uint32_t> rj, rp; // retry scratch
  BA ba;
  MsmPoints<Cfg> pts;
  size_t nb = 0;

  void reset(size_t nb_, size_t B_, const MsmPoints<Cfg>& pts_) {
    nb = nb_;
    pts = pts_;
    if (ab.size() < nb) ab.resize(nb);
    if (nxb < nb) {
      xb.reset(new Pt[nb]);
      nxb = nb;
    }
    st.assign(nb, 0);
    xu.assign(nb, 0);
    ba.reserve(B_);
    if (qj.size() < ba.B) qj.resize(ba.B);
    nq = 0;
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
    qj[nq++] = (uint32_t)j;
    ba.push((uint8_t*)&ab[j], pts.at(pi & ~NEGF), (pi & NEGF) != 0);
  }
  void flush() {
    ba.flush();
    for (size_t k = 0; k < nq; k++) st[qj[k]] = 1;
    nq = 0;
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
    return reduce_buckets(ba, ab.data(), nb);
  }
};

// dst = dst + src for the additions an adder left over (equal x), exact
template <class BA>
inline void settle_equal(BA& b) {
  using Cfg = typename BA::Curve;
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
template <class BA>
XYZZ<typename BA::Curve> reduce_buckets(BA& ba, const Affine<typename BA::Curve>* ab, size_t nb) {
  using Cfg = typename BA::Curve;
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
// The points go through in chunks of CH (at least 16 per bucket), each chunk's bucket
// sums added into the window's: the pair sums of a whole window of 2^16 G2 points were
// 4 MiB held at once, the step that set a chain 2^16 proof's peak RSS (bench/cpu-notes.md
// round 8), for at most one addition per bucket and chunk more (n / 16 at worst).
template <class Cfg, class BA>
struct SortedBuckets {
  using F = typename Cfg::F;
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  static constexpr size_t PS = sizeof(Aff);
  static constexpr uint32_t NEGF = 0x80000000u;
  static constexpr size_t CHUNK = 1 << 13;

  std::vector<uint32_t> cnt, dg, order, sbase;  // bucket offsets, digits, point indices | NEGF sorted by bucket
  std::vector<Aff> ab, scr;                     // bucket sums; partial sums (one per pair of round 0)
  BA ba;

  // digit(k): |d| | NEGF (0: none) for k < n; index(k): the point of entry k
  template <class Digit, class Index>
  Pt run(size_t nb, size_t n, const MsmPoints<Cfg>& pts, size_t B, Digit digit, Index index) {
    ba.reserve(B);
    ab.assign(nb, Aff::inf());
    const size_t CH = std::max<size_t>(CHUNK, 16 * nb);
    for (size_t k0 = 0; k0 < n; k0 += CH) run_chunk(nb, k0, std::min(n, k0 + CH), pts, digit, index);
    return reduce_buckets(ba, ab.data(), nb);
  }

  // entries [k0, k1): each bucket's points summed, the sums added into ab
  template <class Digit, class Index>
  void run_chunk(size_t nb, size_t k0, size_t k1, const MsmPoints<Cfg>& pts, Digit digit, Index index) {
    const size_t n = k1 - k0;
    cnt.assign(nb + 1, 0);
    dg.resize(n);
    for (size_t k = 0; k < n; k++) {
      uint32_t d = digit(k0 + k);
      dg[k] = d;
      if (d) cnt[d & ~NEGF]++;  // bucket |d| - 1 counted at |d|
    }
    for (size_t j = 0; j < nb; j++) cnt[j + 1] += cnt[j];
    order.resize(cnt[nb]);
    {
      std::vector<uint32_t> pos(cnt.begin(), cnt.end() - 1);
      for (size_t k = 0; k < n; k++) {
        uint32_t d = dg[k];
        if (d) order[pos[(d & ~NEGF) - 1]++] = (uint32_t)index(k0 + k) | (d & NEGF);
      }
    }
    // round 0: runs of points -> scr (pairs added; a lone last point copied)
    sbase.resize(nb + 1);
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
    // the chunk's bucket sums into the window's (an empty bucket takes the sum as it is)
    for (size_t j = 0; j < nb; j++) {
      if (sbase[j + 1] == sbase[j]) continue;
      ba.push((uint8_t*)&ab[j], (const uint8_t*)&scr[sbase[j]], false);
      if (ba.full()) { ba.flush(); settle_equal(ba); }
    }
    ba.flush();
    settle_equal(ba);
  }
};

// One window of one chunk of n scalars: digit(q) = |d| | NEGF (0: nothing to add), index(q) = the
// point of scalar q in pts. A crowded window (fewer than nb / 8 buckets: the top one; or `crowded`: a
// narrower top window of GLV halves, whose magnitudes sit below their bound, so queued buckets keep
// colliding) is summed by bucket sort instead of queueing; otherwise each digit goes to its bucket,
// the next one's bucket prefetched.
template <class Cfg, class BA, class Digit, class Index>
XYZZ<Cfg> window_sum(Buckets<Cfg, BA>& bk, SortedBuckets<Cfg, BA>& sb, size_t nbw, size_t nb, size_t B,
                     const MsmPoints<Cfg>& pts, size_t n, Digit digit, Index index, bool crowded = false) {
  constexpr uint32_t NEGF = Buckets<Cfg, BA>::NEGF;
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
template <class BA>
XYZZ<typename BA::Curve> sum_points(BA& ba, const uint8_t* bases, const uint32_t* idx, size_t count, size_t start) {
  using Cfg = typename BA::Curve;
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  if (count == 0) return Pt::inf();
  const size_t A = std::min<size_t>(ba.B, std::max<size_t>(8, count / 2 & ~(size_t)7));
  std::vector<Aff> acc(A, Aff::inf());
  auto settle = [&]() { settle_equal(ba); };
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
