// Multithreaded Pippenger MSM with signed (Booth) digits and XYZZ buckets.
// (A batch-affine bucket variant was tried: with this portable __int128 /
// adc field code it was no faster than XYZZ mixed adds, so it was dropped.)
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
      double cost = rounds * ((double)n / k + 1.4 * std::ldexp(1.0, (int)c));
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
  {
    std::vector<std::vector<Pt>> buckets(TT, std::vector<Pt>(nb));
    parallel_tasks(ntasks, TT, [&](size_t task, unsigned tid) {
      unsigned w = (unsigned)(task / k), ch = (unsigned)(task % k);
      size_t b = n * ch / k, e = n * (ch + 1) / k;
      Pt* bk = buckets[tid].data();
      for (size_t j = 0; j < nb; j++) bk[j] = Pt::inf();
      const uint32_t* dg = digits.data() + (size_t)w * n;
      for (size_t i = b; i < e; i++) {
        uint32_t d = dg[i];
        if (i + 4 < e) {  // buckets are hit at random: prefetch a few points ahead
          uint32_t dn = dg[i + 4] & ~NEG;
          if (dn) __builtin_prefetch(&bk[dn - 1], 1);
        }
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
