// Fixed-base scalar multiplication of ONE base point by many scalars, for the
// Groth16 setup (every query point is g^{s_i} for one generator g).
//
// Method: signed windowed recoding (window w, digits in [-2^(w-1), 2^(w-1)]),
// a precomputed affine table T[j][k-1] = k * 2^(wj) * g, and *batch-affine*
// accumulation: a batch of B accumulators is advanced window by window, every
// addition acc += +-T[j][|d|] done in affine coordinates with one shared
// inversion per (batch, window) (Montgomery's trick). An affine add then costs
// about 6 multiplications (3 for the batch inversion, lambda, lambda^2,
// y3), against ~10 for a mixed XYZZ add, and the result is already affine, so
// no final normalisation is needed: points are written straight into the
// output buffer in the zkey layout (x then y, Montgomery, infinity = zeros).
//
// Equal x (acc = +-T) is handled: doubling uses lambda = 3x^2 / 2y, and
// acc = -T gives infinity. Scalars are plain little-endian Fr integers; values
// >= r are reduced mod r.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ec/point.hpp"
#include "parallel.hpp"

namespace snarkd {
namespace setup {

template <class Cfg, class Fr>
class FixedBase {
 public:
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  using F = typename Cfg::F;

  FixedBase(const Aff& base, unsigned window, unsigned threads)
      : w_(window), nw_((unsigned)((Fr::BITS + 1 + window - 1) / window)), base_(base) {
    const size_t per = (size_t)1 << (w_ - 1);
    table_.assign((size_t)nw_ * per, Aff::inf());
    if (base.is_inf()) return;
    // window bases P_j = 2^(wj) g, sequential doublings (cheap: ~BITS doublings)
    std::vector<Pt> pj(nw_);
    Pt p = Pt::from_affine(base);
    for (unsigned j = 0; j < nw_; j++) {
      pj[j] = p;
      for (unsigned i = 0; i < w_; i++) p.dbl();
    }
    // multiples k * P_j, one window per task, then batch normalisation
    parallel_tasks(nw_, threads, [&](size_t j, unsigned) {
      std::vector<Pt> mult(per);
      Aff pa = pj[j].to_affine();
      Pt acc = Pt::from_affine(pa);
      for (size_t k = 0; k < per; k++) {
        mult[k] = acc;
        acc.add_affine(pa);
      }
      normalize(mult.data(), per, table_.data() + j * per);
    });
  }

  unsigned window() const { return w_; }
  unsigned windows() const { return nw_; }
  size_t table_points() const { return table_.size(); }
  const Aff& base() const { return base_; }

  // Batch normalisation XYZZ -> affine (one inversion for all).
  static void normalize(const Pt* in, size_t n, Aff* out) {
    std::vector<F> zzz(n), scratch(n);
    for (size_t i = 0; i < n; i++) zzz[i] = in[i].ZZZ;
    batch_inverse(zzz.data(), n, scratch.data());
    for (size_t i = 0; i < n; i++) {
      if (in[i].is_inf()) { out[i] = Aff::inf(); continue; }
      F I = zzz[i];
      F Zi = in[i].ZZ * I;
      out[i] = Aff{in[i].X * Zi.sqr(), in[i].Y * I};
    }
  }

  // out[i] = scalars[i] * base, for i < n. scalars: n x 32 bytes plain LE.
  // out: n * sizeof(Aff) bytes (may be unaligned).
  void mul(const uint8_t* scalars, size_t n, uint8_t* out, unsigned threads, size_t batch = 1024) const {
    if (n == 0) return;
    const size_t ntasks = (n + batch - 1) / batch;
    parallel_tasks(ntasks, threads, [&](size_t t, unsigned) {
      size_t b = t * batch, e = std::min(n, b + batch);
      run_batch(scalars + b * 32, e - b, out + b * sizeof(Aff));
    });
  }

 private:
  unsigned w_, nw_;
  Aff base_;
  std::vector<Aff> table_;

  void run_batch(const uint8_t* scalars, size_t n, uint8_t* out) const {
    const size_t per = (size_t)1 << (w_ - 1);
    std::vector<int32_t> digits((size_t)n * nw_);
    std::vector<Aff> acc(n);
    std::vector<uint8_t> inf(n, 1);
    std::vector<F> den(n), scratch(n), lam_num(n);
    std::vector<uint32_t> idx(n);
    std::vector<Aff> tp(n);

    // signed recoding (window-major)
    const u64 mask = ((u64)1 << w_) - 1;
    for (size_t i = 0; i < n; i++) {
      u64 s[Fr::N];
      std::memcpy(s, scalars + i * 32, 32);
      Fr::reduce_raw(s);
      u64 carry = 0;
      for (unsigned j = 0; j < nw_; j++) {
        size_t pos = (size_t)j * w_, limb = pos / 64, sh = pos % 64;
        u64 v = 0;
        if (limb < Fr::N) {
          v = s[limb] >> sh;
          if (sh + w_ > 64 && limb + 1 < Fr::N) v |= s[limb + 1] << (64 - sh);
        }
        v = (v & mask) + carry;
        int32_t d;
        if (v > ((u64)1 << (w_ - 1))) {
          d = -(int32_t)(((u64)1 << w_) - v);
          carry = 1;
        } else {
          d = (int32_t)v;
          carry = 0;
        }
        digits[(size_t)j * n + i] = d;
      }
    }

    for (unsigned j = 0; j < nw_; j++) {
      const Aff* T = table_.data() + (size_t)j * per;
      const int32_t* dg = digits.data() + (size_t)j * n;
      size_t cnt = 0;
      for (size_t i = 0; i < n; i++) {
        int32_t d = dg[i];
        if (!d) continue;
        Aff p = T[(d < 0 ? -d : d) - 1];
        if (d < 0) p.y = p.y.neg();
        if (inf[i]) { acc[i] = p; inf[i] = 0; continue; }
        const Aff& a = acc[i];
        if (a.x == p.x) {
          if (a.y == p.y) {  // doubling: lambda = 3x^2 / 2y
            F x2 = a.x.sqr();
            lam_num[cnt] = x2.dbl() + x2;
            den[cnt] = a.y.dbl();
          } else {  // acc = -p
            inf[i] = 1;
            acc[i] = Aff::inf();
            continue;
          }
        } else {
          lam_num[cnt] = p.y - a.y;
          den[cnt] = p.x - a.x;
        }
        idx[cnt] = (uint32_t)i;
        tp[cnt] = p;
        cnt++;
      }
      if (!cnt) continue;
      batch_inverse(den.data(), cnt, scratch.data());
      for (size_t k = 0; k < cnt; k++) {
        Aff& a = acc[idx[k]];
        F lam = lam_num[k] * den[k];
        F x3 = lam.sqr() - a.x - tp[k].x;  // doubling: tp.x == a.x
        F y3 = lam * (a.x - x3) - a.y;
        a.x = x3;
        a.y = y3;
      }
    }
    for (size_t i = 0; i < n; i++) {
      if (inf[i]) Aff::inf().store(out + i * sizeof(Aff));
      else acc[i].store(out + i * sizeof(Aff));
    }
  }
};

}  // namespace setup
}  // namespace snarkd
