// Radix-2 NTT over Fr, natural order in and out, with snarkjs's roots of unity:
// omega_{2^s} = 5^t (r - 1 = 2^s t), smaller domains by squaring.
// Structure: bit-reversal, then the small stages are run block by block (a
// block fits in L2 so all its stages stay in cache), then the remaining large
// stages one pass each. Twiddles per (log_n, direction) are cached; stage with
// half-size m reads tw[m + j] = w_{2m}^j, j < m.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <vector>
#include "parallel.hpp"

namespace snarkd {

// Tr: using Fr; static constexpr unsigned S; static Fr root_s(); static Fr shift();
template <class Tr>
struct Ntt {
  using Fr = typename Tr::Fr;

  static Fr root_of_unity(unsigned log_n) {
    Fr w = Tr::root_s();
    for (unsigned i = log_n; i < Tr::S; i++) w = w.sqr();
    return w;
  }

  static std::shared_ptr<const std::vector<Fr>> twiddles(unsigned log_n, bool inverse) {
    static std::mutex mu;
    static std::map<std::pair<unsigned, bool>, std::shared_ptr<const std::vector<Fr>>> cache;
    {
      std::lock_guard<std::mutex> g(mu);
      auto it = cache.find({log_n, inverse});
      if (it != cache.end()) return it->second;
    }
    size_t n = (size_t)1 << log_n;
    auto tw = std::make_shared<std::vector<Fr>>(std::max<size_t>(n, 2));
    Fr w = root_of_unity(log_n);
    if (inverse) w = w.inv();
    // w is the n-th root; the 2m-th root is w^(n/2m). Fill the largest stage
    // first and derive smaller stages by taking every other element.
    if (n >= 2) {
      size_t m = n / 2;
      Fr x = Fr::one();
      for (size_t j = 0; j < m; j++) { (*tw)[m + j] = x; x = x * w; }
      for (size_t mm = m / 2; mm >= 1; mm /= 2)
        for (size_t j = 0; j < mm; j++) (*tw)[mm + j] = (*tw)[2 * mm + 2 * j];
    }
    std::lock_guard<std::mutex> g(mu);
    auto& slot = cache[{log_n, inverse}];
    if (!slot) slot = tw;
    return slot;
  }

  static inline size_t bitrev(size_t x, unsigned bits) {
    size_t r = 0;
    for (unsigned i = 0; i < bits; i++) { r = (r << 1) | (x & 1); x >>= 1; }
    return r;
  }

  static inline void butterfly(Fr& x, Fr& y, const Fr& w) {
    Fr t = y * w;
    y = x - t;
    x = x + t;
  }

  // Forward or inverse transform in place. scale: multiply by 1/n when inverse.
  static void transform(Fr* a, unsigned log_n, bool inverse, unsigned T, bool scale = true) {
    size_t n = (size_t)1 << log_n;
    if (n == 1) return;
    auto twp = twiddles(log_n, inverse);
    const Fr* tw = twp->data();

    parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
      for (size_t i = b; i < e; i++) {
        size_t j = bitrev(i, log_n);
        if (i < j) std::swap(a[i], a[j]);
      }
    }, 4096);

    const unsigned LB = std::min<unsigned>(log_n, 11);  // 2^11 * 32 B = 64 KiB blocks
    const size_t B = (size_t)1 << LB;
    parallel_for(n / B, T, [&](size_t b, size_t e, unsigned) {
      for (size_t blk = b; blk < e; blk++) {
        Fr* x = a + blk * B;
        for (size_t i = 0; i < B; i += 2) {  // m = 1: twiddle is 1
          Fr t = x[i + 1];
          x[i + 1] = x[i] - t;
          x[i] = x[i] + t;
        }
        for (size_t m = 2; m < B; m *= 2)
          for (size_t s = 0; s < B; s += 2 * m)
            for (size_t j = 0; j < m; j++) butterfly(x[s + j], x[s + j + m], tw[m + j]);
      }
    });
    for (size_t m = B; m < n; m *= 2) {
      parallel_for(n / 2, T, [&](size_t b, size_t e, unsigned) {
        for (size_t k = b; k < e; k++) {
          size_t j = k & (m - 1);
          size_t i = ((k - j) << 1) + j;
          butterfly(a[i], a[i + m], tw[m + j]);
        }
      }, 1024);
    }
    if (inverse && scale) {
      Fr ninv = Fr::one();
      {
        Fr nn = Fr::zero();
        nn.v[0] = n;
        ninv = nn.to_mont().inv();
      }
      parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
        for (size_t i = b; i < e; i++) a[i] = a[i] * ninv;
      }, 4096);
    }
  }

  // Evaluations on the domain -> evaluations on the odd coset g*<w_n>, where
  // g = w_{2n} (snarkjs uses Fr.shift when n = 2^s).
  static void coset_shift(Fr* a, unsigned log_n, unsigned T) {
    size_t n = (size_t)1 << log_n;
    transform(a, log_n, true, T, false);
    Fr g = log_n == Tr::S ? Tr::shift() : root_of_unity(log_n + 1);
    Fr nn = Fr::zero();
    nn.v[0] = n;
    Fr ninv = nn.to_mont().inv();
    parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
      u64 eb = b;
      Fr x = g.pow_limbs(&eb, 1) * ninv;  // 1/n folded into the shift
      for (size_t i = b; i < e; i++) { a[i] = a[i] * x; x = x * g; }
    }, 4096);
    transform(a, log_n, false, T);
  }
};

}  // namespace snarkd
