// Multithreaded Pippenger MSM with signed (Booth) digits. Buckets are batch-affine
// (msm/buckets.hpp: a batch of pending additions shares one inversion, ~5M+1S a point
// against the XYZZ mixed add's 8M+2S, and the bucket reduction runs the same way), eight
// at a time on AVX-512 IFMA and one at a time elsewhere; on the scalar path XYZZ buckets
// alone below 64 buckets (too few additions per batch to share an inversion).
// Scalars: plain little-endian Fr integers (4 limbs); values >= r are reduced
// mod r (by repeated subtraction), which is exact for points of order r.
// Bases equal to the all-zero point (infinity) are skipped.
// G1 and G2 (both curves) split each scalar with an endomorphism when the cost model
// says it pays (ec/glv.hpp, glv_pays below): 2n points, half the windows.
// Work split: (window x point-chunk) tasks scheduled dynamically over threads;
// each task owns its bucket array and reduces it (msm/buckets.hpp's reduce_buckets).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <atomic>
#include <memory>
#include <vector>
#include "big_buffer.hpp"
#include "ec/point.hpp"
#include "msm/batch_adder.hpp"
#include "msm/glv_split.hpp"
#include "msm/plan.hpp"
#include "parallel.hpp"

namespace snarkd {

// Pending additions a batch-affine bucket array holds at most before it inverts them together
constexpr size_t MSM_BATCH_SIZE = 512;
// The batch a plan's bucket arrays invert together: a quarter of a c-bit window's buckets, 64 to MSM_BATCH_SIZE,
// or to twice that on the 8-lane IFMA adder, whose additions are cheap enough next to the flush's one inversion
// (divsteps, 2.8% of a one-thread SHA-256 proof's CPU) that halving the inversions of c >= 13 windows pays:
// G1 2^17 in process 0.99 (cpu-notes round 26; the scalar adder measured no change at 1024, round 11)
inline size_t msm_batch(const MsmPlan& p) {
  size_t cap = MSM_BATCH_SIZE;
#if defined(SNARKD_SIMD52)
  if (g_use_simd52) cap = 2 * MSM_BATCH_SIZE;
#endif
  return std::min<size_t>(std::max<size_t>(((size_t)1 << (p.c - 1)) / 4, 64), cap);
}
// Endomorphism split (GLV) on G1: 0 never, 1 where glv_pays (default), 2 always (tests)
inline int& msm_glv_mode() { static int m = 1; return m; }
// The same for G2 (GLS: the Frobenius-based psi, ec/glv.hpp)
inline int& msm_gls_mode() { static int m = 1; return m; }

constexpr uint32_t NEG = 0x80000000u;  // digit sign bit; low bits = |digit|

// Signed (Booth) recoding of a reduced scalar (nl limbs) into nw digits of c bits
// in [-2^(c-1), 2^(c-1)]: out[w * stride] = |digit| | NEG if negative.
inline void signed_digits(const u64* s, size_t nl, unsigned c, unsigned nw, uint32_t* out, size_t stride) {
  u64 carry = 0;
  const u64 mask = ((u64)1 << c) - 1;
  for (unsigned w = 0; w < nw; w++) {
    size_t pos = (size_t)w * c, limb = pos / 64, sh = pos % 64;
    u64 v = 0;
    if (limb < nl) {
      v = s[limb] >> sh;
      if (sh + c > 64 && limb + 1 < nl) v |= s[limb + 1] << (64 - sh);
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
    out[(size_t)w * stride] = d;
  }
}
// Signed window digits of the (reduced) scalars. For windows of <= 16 bits a window-major table of
// 16-bit digits (|d| in bits 0-14, bit 15 the sign; +2^15, which only 16-bit windows and an
// unsigned 15-bit top one reach, as 0x8000: a negative digit is never 0; nw * 2 bytes per scalar: 2.6 MB for 2^16 scalars
// at c = 13, 32 MB for 2^20 at c = 16), recoded once: each (window x chunk) task streams
// its row, and the witness MSMs A, B1, C (and B2 without the G2 split) read the same
// table, where the digits recomputed per window from the scalar and its carries cost
// each MSM a recoding (the recoder was 4.2% of a one-thread chain 2^16 proof without
// IFMA, bench/cpu-notes.md round 7). Wider windows: one word of carry bits per scalar
// (bit w: the carry into window w), the digit recomputed on the fly. Scalar k is
// sc + 32 * idx[k] (idx null: k). Needs nw <= 64 (c >= 4 for 256-bit scalars). Windows as
// the plan lays them out (MsmPlan: one width or mixed; the top window's digit unsigned).
template <class Fr>
struct Recoder {
  MsmPlan plan{};
  size_t n = 0;
  const uint8_t* sc = nullptr;
  const uint32_t* idx = nullptr;
  std::vector<uint8_t> own;  // reduced copy, only when some scalar was >= r
  std::vector<u64> carries;
  // c <= 16: digit of scalar k in window w at tab[w * n + k]. Left uninitialised here so that its pages are
  // first touched by the threads that fill it: a zeroed vector (2.6 MB at 2^16, 5 MB at 2^17) was faulted in
  // and cleared by the calling thread alone, ~1 ms of each proof MSM while the other core waited (round 17)
  BigArray<uint16_t> tab;  // big_buffer.hpp: huge pages where advised
  const uint8_t* neg = nullptr;  // per scalar: 1 = negated (GLV halves): digits flipped
  static constexpr unsigned TABLE_MAX_C = 16;

  void build(const uint8_t* scalars, const uint32_t* index, size_t n_, const MsmPlan& p, unsigned T) {
    plan = p; n = n_; sc = scalars; idx = index;
    std::atomic<bool> noncanon{false};
    parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
      for (size_t k = b; k < e; k++)
        if (!Fr::lt_mod((const u64*)scalar(k))) { noncanon = true; return; }
    }, 4096);
    if (noncanon) {  // keep a reduced copy (scalars >= r are taken mod r)
      own.resize(n * 32);
      for (size_t k = 0; k < n; k++) {
        u64 s[Fr::N];
        std::memcpy(s, scalar(k), 32);
        Fr::reduce_raw(s);
        std::memcpy(own.data() + 32 * k, s, 32);
      }
      sc = own.data();
      idx = nullptr;
    }
    if (plan.width(0) <= TABLE_MAX_C) {  // the widest window: the bottom one
      carries.clear();
      tab.reset((size_t)plan.nw * n);
      // blocks of 64 scalars, window by window: each row's 128 bytes written together (a
      // scalar at a time wrote nw rows 2 bytes each, and the build cost more than it saved).
      // The block's scalars are first copied limb-major (s[l][j]), so that a window's values
      // are read from contiguous words, and every digit is formed without a branch: the sign
      // of a window value is random, and the branch the compiler made of it mispredicted every
      // other digit (3.9% of a one-thread SHA-256 proof's CPU in this loop, cpu-notes round 26)
      parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
        constexpr size_t BLK = 64;
        u64 carry[BLK];
        u64 s[Fr::N + 1][BLK];  // limb-major copy, one zero limb above the top
        for (size_t k0 = b; k0 < e; k0 += BLK) {
          const size_t kn = std::min(BLK, e - k0);
          for (size_t j = 0; j < kn; j++) {
            const u64* sp = (const u64*)scalar(k0 + j);
            for (unsigned l = 0; l < Fr::N; l++) s[l][j] = sp[l];
            s[Fr::N][j] = 0;
            carry[j] = 0;
          }
          for (unsigned w = 0; w < plan.nw; w++) {
            uint16_t* row = tab.get() + (size_t)w * n + k0;
            const unsigned cw = plan.width(w);
            const size_t pos = plan.pos(w), limb = std::min<size_t>(pos / 64, Fr::N), sh = pos % 64;
            const u64 mask = ((u64)1 << cw) - 1, half = top_half(w), full = (u64)1 << cw;
            const u64* lo = s[limb];
            const u64* hi = s[std::min<size_t>(limb + 1, Fr::N)];
            // the bits above the window's first limb (none where it does not cross, or past the top)
            const unsigned hs = sh ? (unsigned)(64 - sh) : 0;
            const u64 hmask = sh && sh + cw > 64 ? ~(u64)0 : 0;
            for (size_t j = 0; j < kn; j++) {
              const u64 v = (((lo[j] >> sh) | ((hi[j] << hs) & hmask)) & mask) + carry[j];
              const u64 c = v > half;                       // negative digit, carry up
              const u64 nm = full - v;                      // its magnitude; v == 2^c: digit 0
              const u64 nd = (nm | 0x8000u) & ((u64)0 - (u64)(nm != 0));
              carry[j] = c;
              row[j] = (uint16_t)(v ^ ((v ^ nd) & ((u64)0 - c)));
            }
          }
        }
      }, 1024);
      std::vector<uint8_t>().swap(own);  // the table is all the windows read from here on
      return;
    }
    tab.reset();
    carries.assign(n, 0);
    parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
      for (size_t k = b; k < e; k++) {
        u64 bits = 0, carry = 0;
        const u64* s = (const u64*)scalar(k);
        for (unsigned w = 0; w < plan.nw; w++) {
          if (carry) bits |= 1ULL << w;
          u64 v = window(s, w) + carry;
          carry = v > top_half(w);
        }
        carries[k] = bits;
      }
    }, 1024);
  }
  inline const uint8_t* scalar(size_t k) const { return sc + 32 * (size_t)(idx ? idx[k] : k); }
  // window values above this are negative digits with a carry up; none in the top window
  inline u64 top_half(unsigned w) const { return w + 1 < plan.nw ? (u64)1 << (plan.width(w) - 1) : ~(u64)0; }
  inline u64 window(const u64* s, unsigned w) const {
    const unsigned cw = plan.width(w);
    size_t pos = plan.pos(w), limb = pos / 64, sh = pos % 64;
    u64 v = 0;
    if (limb < Fr::N) {
      v = s[limb] >> sh;
      if (sh + cw > 64 && limb + 1 < Fr::N) v |= s[limb + 1] << (64 - sh);
    }
    return v & (((u64)1 << cw) - 1);
  }
  // digit of scalar k in window w: |d| | NEG if negative (0: nothing to add)
  inline uint32_t digit(size_t k, unsigned w) const {
    const uint32_t flip = neg && neg[k] ? NEG : 0;
    if (tab) {
      const uint32_t t = tab[(size_t)w * n + k];
      if (!t) return 0;
      if (t == 0x8000u) return 0x8000u ^ flip;  // +2^15 (c = 16)
      return ((t & 0x7fffu) | ((t & 0x8000u) << 16)) ^ flip;
    }
    u64 v = window((const u64*)scalar(k), w) + ((carries[k] >> w) & 1);
    if (v > top_half(w)) {
      uint32_t a = (uint32_t)(((u64)1 << plan.width(w)) - v);  // v == 2^c: digit 0, carried up
      return a ? ((a | NEG) ^ flip) : 0;
    }
    return v ? ((uint32_t)v ^ flip) : 0;
  }
};

// Per point, the split's own work in the cost model's unit (a bucket addition):
// the decomposition, phi, the second scalar's digits and the top window summed by
// bucket sort. Measured with perf on the 2-core Zen 4 VM: about 2 of the cheap
// 8-lane batch-affine additions, under one scalar addition.
inline double glv_split_cost() {
#if defined(SNARKD_SIMD52)
  if (g_use_simd52) return 2.0;
#endif
  return 0.7;
}
// Largest MSM the split is used for. The model above counts additions and bucket
// reductions only; measured (bench/results/glv-cpu*.json, 2 threads, both curves),
// the split wins where the per-window costs dominate: 0.56-0.67x at 2^12 points,
// 0.75-0.88x at 2^13 (and 0.85-0.92x at 2^15 on the scalar path); from 2^14 (8-lane)
// or 2^16 (scalar) up it is even or behind (0.90-1.13x, 3% behind in a one-thread
// perf run): the bucket additions are the same, and the split, the images and the
// second half's top window cost what the saved reductions gain. The scalar path with its
// batch-affine reduction (msm/buckets.hpp; BN254, one thread, CPU time): 0.84x at 2^12,
// 0.93-0.97x at 2^13-2^15, 1.05x at 2^16.
inline size_t glv_max_points() {
#if defined(SNARKD_SIMD52)
  if (g_use_simd52) return (size_t)1 << 13;
#endif
  return (size_t)1 << 15;
}

// G2 (GLS): the largest MSM the split is used for, and its own work per point in G2
// bucket additions (ec/glv.hpp's psi is a few base multiplications, the decomposition
// the same as on G1; a G2 addition costs about three G1 ones). Measured
// (bench/results/gls-cpu-msm*.json, bench/gls_cpu.py, 2 threads, both curves; process CPU
// time, split / plain): 0.59-0.78x at 2^12 points, 0.82-0.96x at 2^13 on both paths. Above,
// on the 8-lane path even (0.94-1.08x to 2^18). On the scalar path with its batch-affine
// reduction (msm/buckets.hpp; one thread, CPU time, bench/cpu-notes.md "Round 3: the scalar
// path"): BN254 0.89x at 2^12, 0.93x at 2^13, 0.97-0.98x at 2^14-2^15; BLS12-381 (6-limb Fq:
// the split's fixed cost per point is smaller next to its additions) 0.96x at 2^14-2^15 and
// even (0.96-1.03x) at 2^16-2^18. So 2^13 on both paths and curves: above it the 4% the split
// saves on BLS12-381's B2 (about 1% of a proof) costs its images (n points of 192 bytes) and
// the halves' bucket-sorted top window, ~10 MiB of a chain 2^15 proof's peak RSS (55 vs 45).
inline double gls_split_cost() { return 0.25; }
template <class Cfg>
inline size_t gls_max_points() {
  return (size_t)1 << 13;
}

// Whether the endomorphism split pays for an MSM of n points on Cfg: twice the
// points at C::BITS (half the windows: the same additions into buckets, half the
// bucket reductions) plus the split, against n points at `bits`. The split's window
// stays at most 16 bits (or the plain plan's): the larger bucket arrays the model
// would pick for 2n points fall out of cache (2^20 on IFMA: c = 17 ran 1.5x slower).
template <class Cfg>
inline bool glv_pays(size_t n, unsigned T, unsigned bits, unsigned* cmax = nullptr) {
  if constexpr (!GlvOf<Cfg>::ok) return false;
  else {
    double plain, split;
    const unsigned cap = std::max(msm_plan(std::max<size_t>(n, 1), T, bits, &plain).c, 16u);
    if (cmax) *cmax = cap;
    if (n == 0) return false;
    constexpr bool g2 = GlvOf<Cfg>::psi;
    const int mode = g2 ? msm_gls_mode() : msm_glv_mode();
    if (mode != 1) return mode == 2;
    if (n > (g2 ? gls_max_points<Cfg>() : glv_max_points())) return false;
    msm_plan(2 * n, T, GlvOf<Cfg>::C::BITS, &split, cap);
    return split + (g2 ? gls_split_cost() : glv_split_cost()) * (double)n / T < plain;
  }
}

// The batch-affine Pippenger (msm/buckets.hpp) on adder BA: digits recoded once (Recoder's
// table, or carry bits for c > 16), (window x chunk) tasks on T threads,
// crowded windows by bucket sort.
template <class Cfg, class Fr, class BA>
Affine<Cfg> msm_batched(const MsmPoints<Cfg>& pts, const uint8_t* scalars, const uint8_t* neg, size_t n, unsigned sbits,
                        unsigned T, MsmPlan plan) {
  using Pt = XYZZ<Cfg>;
  if (plan.c < 4) plan = {4, sbits / 4 + 1, plan.k};
  const unsigned nw = plan.nw, k = plan.k;
  const size_t ntasks = (size_t)nw * k;
  Recoder<Fr> rec;
  rec.build(scalars, nullptr, n, plan, T);
  rec.neg = neg;
  const size_t B = msm_batch(plan);
  unsigned TT = (unsigned)std::min<size_t>(T, ntasks);
  std::vector<Pt> partial(ntasks, Pt::inf());
  std::vector<Buckets<Cfg, BA>> acc(TT);
  std::vector<SortedBuckets<Cfg, BA>> sorted(TT);
  parallel_tasks(ntasks, TT, [&](size_t task, unsigned tid) {
    unsigned w = (unsigned)(task / k), ch = (unsigned)(task % k);
    size_t b = n * ch / k, e = n * (ch + 1) / k;
    const size_t nbw = window_buckets(plan, w, sbits), nba = window_array(plan, w, sbits);
    // the digit and index lambdas take b and w by value: by reference they were reloaded for every
    // digit (the bucket stores may alias them), ~1% of a 2^16 G1 MSM's instructions (round 15)
    partial[task] = window_sum(acc[tid], sorted[tid], nbw, nba, B, pts, e - b,
                               [&rec, b, w](size_t q) { return rec.digit(b + q, w); }, [b](size_t q) { return b + q; },
                               neg && w + 1 == nw && nbw < nba);
  });
  Pt sum = Pt::inf();  // Horner from the top: window w weighs 2^pos(w)
  for (unsigned w = nw; w-- > 0;) {
    for (unsigned i = 0; i < plan.width(w); i++) sum.dbl();
    for (unsigned ch = 0; ch < k; ch++) sum.add(partial[(size_t)w * k + ch]);
  }
  return sum.to_affine();
}

// sum_i s_i P_i over pts.at(0 .. n-1), scalars of at most sbits bits (32 bytes
// each), neg (or null): per scalar, 1 = subtract instead (GLV halves)
template <class Cfg, class Fr>
Affine<Cfg> msm_core(const MsmPoints<Cfg>& pts, const uint8_t* scalars, const uint8_t* neg, size_t n, unsigned sbits,
                     unsigned T, unsigned cmax = 20) {
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  if (n == 0) return Aff::inf();
  MsmPlan plan = msm_plan_run(n, T, sbits, neg != nullptr, cmax);
  // the batch-affine adder where its window pays (msm/batch_adder.hpp), else one addition at a time below
  Aff r;
  if (with_batch_adder<Cfg>([&](auto adder) {
        using A = decltype(adder);
        if (plan.c < A::min_c) return false;
        r = msm_batched<Cfg, Fr, typename A::template type<Cfg>>(pts, scalars, neg, n, sbits, T, plan);
        return true;
      }))
    return r;
  const unsigned c = plan.c, nw = plan.nw, k = plan.k;
  const size_t nb = (size_t)1 << (c - 1);
  std::vector<uint32_t> digits((size_t)nw * n);

  // 1) digits (window-major so each task streams its window)
  parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
    uint8_t zero[sizeof(Aff)];
    std::memset(zero, 0, sizeof(zero));
    for (size_t i = b; i < e; i++) {
      if (std::memcmp(pts.at(i), zero, sizeof(Aff)) == 0) {
        for (unsigned w = 0; w < nw; w++) digits[(size_t)w * n + i] = 0;
        continue;
      }
      u64 s[Fr::N];
      std::memcpy(s, scalars + i * 32, 32);
      Fr::reduce_raw(s);
      signed_digits(s, Fr::N, c, nw, digits.data() + i, n);
      if (neg && neg[i])
        for (unsigned w = 0; w < nw; w++) {
          uint32_t& d = digits[(size_t)w * n + i];
          if (d) d ^= NEG;
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
        Aff p = Aff::load(pts.at(i));
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

// sum_i s_i P_i over n affine bases (snarkjs layout) and n plain 32-byte scalars
// (>= r reduced mod r); through the endomorphism split where it pays (G1: GLV, G2: GLS).
// Whether fewer than 1/16 of the scalars are above 1 (a witness of bits, as B2 gets it on the
// scalar path): the split then only adds its images and halves. Measured on G2, scalar path
// (bench/results/gls-cpu-bits.json, two runs, 2^14 and 2^16): all 0/1, the split 1.15-1.59x;
// 10% full, 0.70-0.94x. G2 only (G1 is not measured here).
template <class Fr>
inline bool mostly_bits(const uint8_t* scalars, size_t n, unsigned T) {
  std::atomic<size_t> full{0};
  parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
    size_t f = 0;
    for (size_t i = b; i < e; i++) {
      const u64* s = (const u64*)(scalars + 32 * i);
      f += (s[0] > 1) | (s[1] != 0) | (s[2] != 0) | (s[3] != 0);
    }
    full += f;
  }, 8192);
  return full.load() * 16 < n;
}

template <class Cfg, class Fr>
Affine<Cfg> msm(const uint8_t* bases, const uint8_t* scalars, size_t n, unsigned T) {
  if constexpr (GlvOf<Cfg>::ok) {
    unsigned cmax = 20;
    if (glv_pays<Cfg>(n, T, (unsigned)Fr::BITS, &cmax) &&
        !(GlvOf<Cfg>::psi && msm_gls_mode() == 1 && mostly_bits<Fr>(scalars, n, T))) {
      using C = typename GlvOf<Cfg>::C;
      GlvScalars gs;
      gs.template build<C, Fr>(n, T, [&](size_t q) { return scalars + 32 * q; });
      std::vector<Affine<Cfg>> phi;
      glv_images<Cfg>(phi, n, T, [&](size_t q) { return bases + q * sizeof(Affine<Cfg>); });
      return msm_core<Cfg, Fr>(MsmPoints<Cfg>(bases, n, phi.data()), gs.data(), gs.neg.data(), 2 * n, C::BITS, T, cmax);
    }
  }
  return msm_core<Cfg, Fr>(MsmPoints<Cfg>(bases), scalars, nullptr, n, (unsigned)Fr::BITS, T);
}

}  // namespace snarkd
