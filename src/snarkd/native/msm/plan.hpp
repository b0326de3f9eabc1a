// Pippenger plans: the window layout (widths, offsets, bucket counts) and the cost models
// that pick it (msm/pippenger.hpp and msm/witness_msm.hpp run them).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>

#include "ff/simd52.hpp"

namespace snarkd {

// Windows 0 .. wide - 1 are c + 1 bits, the rest c (wide = 0: one width, msm_plan's); window w
// starts at bit pos(w). The top window's digit is its value plus the carry into it, unsigned:
// nothing carries out of it, so it may hold up to c bits (a plain plan's top window holds
// fewer than c, and its value is then at most 2^(c-1): signed or not, the same digit).
// k: point chunks per window (tasks = nw k).
struct MsmPlan {
  unsigned c, nw, k, wide = 0;
  unsigned pos(unsigned w) const { return w * c + std::min(w, wide); }
  unsigned width(unsigned w) const { return c + (w < wide ? 1 : 0); }
};

// Knob (tests/benchmarks flip it: _core._set_msm_window): the window width, 0 = msm_plan's
inline unsigned& msm_force_c() { static unsigned c = 0; return c; }
// Mixed widths (msm_plan_mixed), both paths: 0 never, 1 where they count fewer
// additions (default), 2 wherever drop_top_window fits (tests: _core._set_msm_mixed)
inline int& msm_mixed_mode() { static int m = 1; return m; }

// Buckets window w can reach (digit magnitudes 1 .. this): 2^(width - 1) below the top; the
// top window of scalars of `bits` bits holds only the t bits left over (7 for 254-bit scalars
// at c = 13), at most 2^t with its carry, so its points crowd into a few buckets (see SortedBuckets).
inline size_t window_buckets(const MsmPlan& p, unsigned w, unsigned bits) {
  if (w + 1 < p.nw) return (size_t)1 << (p.width(w) - 1);
  const unsigned top = bits > p.pos(w) ? bits - p.pos(w) : 0;
  return std::min((size_t)1 << top, (size_t)1 << p.c);
}
// The bucket array window w is run with: a crowded top window keeps the width's count, so
// that window_sum sees it is crowded and sorts instead
inline size_t window_array(const MsmPlan& p, unsigned w, unsigned bits) {
  return std::max(window_buckets(p, w, bits), (size_t)1 << (p.width(w) - 1));
}

inline MsmPlan msm_plan(size_t n, unsigned T, unsigned bits, double* cost_out = nullptr, unsigned cmax = 20) {
  MsmPlan best{1, bits + 1, 1};
  double best_cost = 1e300;
  for (unsigned c = 2; c <= cmax; c++) {
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
  if (cost_out) *cost_out = best_cost;
  return best;
}

// One window fewer than the plain plan at width c: the t = bits mod c bits that its top window
// held (7 of 254 at c = 13, yet n additions) go one each to the lowest t windows, now c + 1 bits,
// and the new top window is full (c bits, unsigned). 254 bits at c = 13: 7 windows of 14 bits and
// 12 of 13, 19 where one width needs 20. False where no such layout fits the 16-bit digit table
// (c + 1 <= 16: the top window's value reaches 2^c) or the batch-affine buckets (c >= 7).
inline bool drop_top_window(MsmPlan& p, unsigned bits) {
  const unsigned nw = bits / p.c, wide = bits - nw * p.c;
  if (p.c < 7 || p.c + 1 > 16 || nw < 2 || wide + 1 > nw) return false;
  p = {p.c, nw, p.k, wide};
  return true;
}

// Additions of a plan, msm_plan's unit: n per window, 2.8 per bucket in each (window x chunk)
// reduction (msm_plan's 1.4 2^c at 2^(c-1) buckets), the top window at its true bucket count.
// Callgrind puts a batch-affine reduction bucket nearer 2.0 window additions: the count errs on
// the side of one width.
inline double plan_count(const MsmPlan& p, size_t n, unsigned bits) {
  double s = 0;
  for (unsigned w = 0; w < p.nw; w++) s += (double)n + 2.8 * p.k * (double)window_buckets(p, w, bits);
  return s;
}

// Mixed widths for an MSM of n scalars of `bits` bits on either path (not for endomorphism
// halves: their magnitudes sit below `bits`, so a full top window's buckets would crowd), given
// msm_plan's `plain`: its top window dropped (drop_top_window) where plan_count says at least 1%
// fewer additions and the tasks take no more rounds over T threads (no longer wall time):
// BN254 2^12, 2^14, 2^15, 2^17 at T = 1, 2 and 2^18 at T = 2. Measured (bench/cpu-notes.md round
// 15, one thread): G1 2^17 -3.3% instructions, -4% time; G2 2^14 -1.6%, -2.3%. Moving the width
// instead (c = 12 with 13-bit windows at 2^16, -1.1% by this count) counted nothing. The IFMA path
// (8-lane adders) takes the same layouts since round 20: G1 2^17 CPU 0.945 (one thread), 0.953 (two).
inline MsmPlan msm_plan_mixed(size_t n, unsigned T, unsigned bits, MsmPlan plain) {
  const int mode = msm_mixed_mode();
  MsmPlan m = plain;
  if (mode == 0 || !drop_top_window(m, bits)) return plain;
  if (mode == 2) return m;
  const bool fewer = plan_count(m, n, bits) < 0.99 * plan_count(plain, n, bits);
  const bool no_longer = std::ceil((double)m.nw * m.k / T) <= std::ceil((double)plain.nw * plain.k / T);
  return fewer && no_longer ? m : plain;
}

// The plan an MSM of n scalars of `bits` bits runs: msm_plan's (or the forced window), then
// mixed widths where they pay, except for endomorphism halves (split)
inline MsmPlan msm_plan_run(size_t n, unsigned T, unsigned bits, bool split, unsigned cmax = 20) {
  MsmPlan plan = msm_plan(std::max<size_t>(n, 1), T, bits, nullptr, cmax);
  if (msm_force_c() >= 2) plan = {msm_force_c(), bits / msm_force_c() + 1, 1};
  if (!split && plan.c >= 7) plan = msm_plan_mixed(std::max<size_t>(n, 1), T, bits, plan);
  return plan;
}

}  // namespace snarkd
