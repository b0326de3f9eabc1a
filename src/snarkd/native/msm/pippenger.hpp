// Multithreaded Pippenger MSM with signed (Booth) digits and XYZZ buckets.
// Scalars: plain little-endian Fr integers (4 limbs); values >= r are reduced
// mod r (by repeated subtraction), which is exact for points of order r.
// Bases equal to the all-zero point (infinity) are skipped.
// Work split: (window x point-chunk) tasks scheduled dynamically over threads;
// each task owns its bucket array and reduces it with a running sum.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>
#include "ec/point.hpp"
#include "parallel.hpp"

namespace snarkd {

struct MsmPlan { unsigned c, nw, k; };
constexpr uint32_t NEG = 0x80000000u;  // digit sign bit; low bits = |digit|
constexpr size_t BATCH_AFFINE_MIN_N = 2048;

// Affine buckets updated in batches with one shared inversion (Montgomery's
// trick): an affine add then costs ~6 multiplications instead of 10 for an
// XYZZ mixed add. A batch never touches a bucket twice; colliding additions
// wait in a queue for a later batch. x1 == x2 (doubling or P + (-P)) is
// handled inside the batch too.
template <class Cfg>
struct BatchAffineBuckets {
  using F = typename Cfg::F;
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  struct Op { uint32_t bucket, idx; };  // idx: point index | NEG
  std::vector<Aff> bk;
  std::vector<uint8_t> used;
  std::vector<uint32_t> tag;
  std::vector<Op> batch, queue, keep;
  std::vector<F> den, pre;
  std::vector<uint8_t> kind;
  size_t nb = 0, K = 0;
  uint32_t stamp = 0;

  void init(size_t nbuckets) {
    nb = nbuckets;
    K = std::min<size_t>(256, std::max<size_t>(32, nb / 8));
    bk.resize(nb);
    used.resize(nb);
    tag.assign(nb, 0);
    batch.resize(K);
    den.resize(K);
    pre.resize(K);
    kind.resize(K);
  }

  static inline Aff load_signed(const uint8_t* bases, uint32_t idx) {
    Aff p = Aff::load(bases + (size_t)(idx & ~NEG) * sizeof(Aff));
    if (idx & NEG) p.y = p.y.neg();
    return p;
  }

  enum : uint8_t { K_SET, K_ADD, K_DBL, K_CLEAR };

  void execute(const uint8_t* bases, size_t cnt) {
    F acc = F::one();
    size_t m = 0;  // entries that need an inversion
    for (size_t i = 0; i < cnt; i++) {
      const Op& o = batch[i];
      Aff q = load_signed(bases, o.idx);
      if (!used[o.bucket]) { kind[i] = K_SET; continue; }
      const Aff& p = bk[o.bucket];
      F d = q.x - p.x;
      if (d.is_zero()) {
        if (q.y == p.y && !p.y.is_zero()) { kind[i] = K_DBL; d = p.y.dbl(); }
        else { kind[i] = K_CLEAR; continue; }
      } else {
        kind[i] = K_ADD;
      }
      pre[i] = acc;
      den[i] = d;
      acc = acc * d;
      m++;
    }
    F inv = m ? acc.inv() : F::one();
    for (size_t i = cnt; i-- > 0;) {
      const Op& o = batch[i];
      Aff& p = bk[o.bucket];
      switch (kind[i]) {
        case K_SET: p = load_signed(bases, o.idx); used[o.bucket] = 1; break;
        case K_CLEAR: used[o.bucket] = 0; break;
        default: {
          F di = inv * pre[i];
          inv = inv * den[i];
          Aff q = load_signed(bases, o.idx);
          F lam;
          if (kind[i] == K_ADD) {
            lam = (q.y - p.y) * di;
          } else {
            F x2 = p.x.sqr();
            lam = (x2.dbl() + x2) * di;
          }
          F x3 = lam.sqr() - p.x - q.x;
          p.y = lam * (p.x - x3) - p.y;
          p.x = x3;
        }
      }
    }
  }

  // Move queued ops into the (empty) batch where their bucket is free.
  size_t refill() {
    stamp++;
    size_t cnt = 0;
    keep.clear();
    for (const Op& o : queue) {
      if (cnt < K && tag[o.bucket] != stamp) { tag[o.bucket] = stamp; batch[cnt++] = o; }
      else keep.push_back(o);
    }
    queue.swap(keep);
    return cnt;
  }

  Pt run(const uint8_t* bases, const uint32_t* dg, size_t b, size_t e) {
    std::fill(used.begin(), used.end(), 0);
    queue.clear();
    size_t cnt = refill();
    for (size_t i = b; i < e; i++) {
      uint32_t d = dg[i];
      if (!d) continue;
      uint32_t bucket = (d & ~NEG) - 1;
      Op o{bucket, (uint32_t)i | (d & NEG)};
      if (tag[bucket] == stamp) { queue.push_back(o); continue; }
      tag[bucket] = stamp;
      batch[cnt++] = o;
      if (cnt == K) { execute(bases, cnt); cnt = refill(); }
    }
    while (cnt) { execute(bases, cnt); cnt = refill(); }
    // running-sum reduction in XYZZ (mixed adds from the affine buckets)
    Pt run = Pt::inf(), sum = Pt::inf();
    for (size_t j = nb; j-- > 0;) {
      if (used[j]) run.add_affine(bk[j]);
      sum.add(run);
    }
    return sum;
  }
};

inline MsmPlan msm_plan(size_t n, unsigned T, unsigned bits) {
  MsmPlan best{1, bits + 1, 1};
  double best_cost = 1e300;
  for (unsigned c = 2; c <= 20; c++) {
    unsigned nw = bits / c + 1;
    for (unsigned k = 1; k <= 8; k++) {
      if (k > 1 && (size_t)k * 64 > n) break;
      double tasks = (double)nw * k;
      double rounds = std::ceil(tasks / T);
      // bucket reduction: 2 general adds (~1.4 mixed adds) per bucket
      double red = n >= BATCH_AFFINE_MIN_N ? 1.9 : 1.4;  // reduction vs accumulation cost
      double cost = rounds * ((double)n / k + red * std::ldexp(1.0, (int)c));
      if (cost < best_cost) { best_cost = cost; best = {c, nw, k}; }
    }
  }
  return best;
}

template <class Cfg, class Fr>
Affine<Cfg> msm(const uint8_t* bases, const uint8_t* scalars, size_t n, unsigned T) {
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  if (n == 0) return Aff::inf();
  const unsigned sbits = (unsigned)Fr::BITS;
  MsmPlan plan = msm_plan(n, T, sbits);
  const unsigned c = plan.c, nw = plan.nw, k = plan.k;
  const size_t nb = (size_t)1 << (c - 1);
  std::vector<uint32_t> digits((size_t)nw * n);

  // 1) digits (window-major so each task streams its window)
  parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
    uint8_t zero[sizeof(Aff)];
    std::memset(zero, 0, sizeof(zero));
    for (size_t i = b; i < e; i++) {
      if (std::memcmp(bases + i * sizeof(Aff), zero, sizeof(Aff)) == 0) {
        for (unsigned w = 0; w < nw; w++) digits[(size_t)w * n + i] = 0;
        continue;
      }
      u64 s[Fr::N];
      std::memcpy(s, scalars + i * 32, 32);
      Fr::reduce_raw(s);
      u64 carry = 0;
      const u64 mask = ((u64)1 << c) - 1;
      for (unsigned w = 0; w < nw; w++) {
        size_t pos = (size_t)w * c, limb = pos / 64, sh = pos % 64;
        u64 v = 0;
        if (limb < Fr::N) {
          v = s[limb] >> sh;
          if (sh + c > 64 && limb + 1 < Fr::N) v |= s[limb + 1] << (64 - sh);
        }
        v = (v & mask) + carry;
        uint32_t d;
        if (v > ((u64)1 << (c - 1))) {
          uint32_t a = (uint32_t)(((u64)1 << c) - v);  // v == 2^c gives digit 0, carry 1
          d = a ? (a | NEG) : 0;
          carry = 1;
        } else {
          d = (uint32_t)v;
          carry = 0;
        }
        digits[(size_t)w * n + i] = d;
      }
    }
  }, 256);

  // 2) bucket accumulation per (window, chunk)
  const size_t ntasks = (size_t)nw * k;
  unsigned TT = (unsigned)std::min<size_t>(T, ntasks);
  std::vector<Pt> partial(ntasks, Pt::inf());
  if (n >= BATCH_AFFINE_MIN_N && nb >= 64 && n < ((size_t)1 << 31)) {
    std::vector<BatchAffineBuckets<Cfg>> ws(TT);
    for (auto& x : ws) x.init(nb);
    parallel_tasks(ntasks, TT, [&](size_t task, unsigned tid) {
      unsigned w = (unsigned)(task / k), ch = (unsigned)(task % k);
      size_t b = n * ch / k, e = n * (ch + 1) / k;
      partial[task] = ws[tid].run(bases, digits.data() + (size_t)w * n, b, e);
    });
  } else {
    std::vector<std::vector<Pt>> buckets(TT, std::vector<Pt>(nb));
    parallel_tasks(ntasks, TT, [&](size_t task, unsigned tid) {
      unsigned w = (unsigned)(task / k), ch = (unsigned)(task % k);
      size_t b = n * ch / k, e = n * (ch + 1) / k;
      Pt* bk = buckets[tid].data();
      for (size_t j = 0; j < nb; j++) bk[j] = Pt::inf();
      const uint32_t* dg = digits.data() + (size_t)w * n;
      for (size_t i = b; i < e; i++) {
        uint32_t d = dg[i];
        if (!d) continue;
        Aff p = Aff::load(bases + i * sizeof(Aff));
        if (d & NEG) { p.y = p.y.neg(); d &= ~NEG; }
        bk[d - 1].add_affine(p);
      }
      Pt run = Pt::inf(), sum = Pt::inf();
      for (size_t j = nb; j-- > 0;) {
        run.add(bk[j]);
        sum.add(run);
      }
      partial[task] = sum;
    });
  }

  // 3) combine windows (Horner from the top window)
  Pt acc = Pt::inf();
  for (unsigned w = nw; w-- > 0;) {
    for (unsigned i = 0; i < c; i++) acc.dbl();
    for (unsigned ch = 0; ch < k; ch++) acc.add(partial[(size_t)w * k + ch]);
  }
  return acc.to_affine();
}

}  // namespace snarkd
