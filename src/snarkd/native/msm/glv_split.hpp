// The inputs of an endomorphism-split MSM (ec/glv.hpp): sum k_q P_q over m points
// runs as sum over 2m points P_0..P_{m-1}, phi(P_0)..phi(P_{m-1}) with the
// half-length scalars |k1_q| then |k2_q|, each negative half a negated point (its
// Booth digits flipped). The bases stay where they are (often a read-only key
// mapping): only the m images phi(P) are written, and MsmPoints reads index i
// from the bases below na and from the images above.
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>

#include "ec/glv.hpp"
#include "parallel.hpp"

namespace snarkd {

template <class Cfg>
struct MsmPoints {
  static constexpr size_t PS = sizeof(Affine<Cfg>);
  const uint8_t* a = nullptr;            // points 0 .. na-1 (PS bytes each)
  const Affine<Cfg>* b = nullptr;        // points na ..
  size_t na = SIZE_MAX;
  MsmPoints() = default;
  explicit MsmPoints(const uint8_t* bases) : a(bases) {}
  MsmPoints(const uint8_t* bases, size_t n, const Affine<Cfg>* images) : a(bases), b(images), na(n) {}
  inline const uint8_t* at(size_t i) const { return i < na ? a + i * PS : (const uint8_t*)(b + (i - na)); }
};

// 2m half-length scalars: entry q holds |k1| of scalar q, entry m + q |k2| (4
// limbs, plain, the top two zero), neg[] their signs.
struct GlvScalars {
  std::vector<u64> sc;
  std::vector<uint8_t> neg;
  size_t m = 0;
  const uint8_t* data() const { return (const uint8_t*)sc.data(); }

  // scalar(q): pointer to scalar q (32 bytes, plain; values >= r are reduced here)
  template <class C, class Fr, class Scalar>
  void build(size_t m_, unsigned T, Scalar scalar) {
    m = m_;
    sc.resize(8 * m);
    neg.resize(2 * m);
    parallel_for(m, T, [&](size_t b, size_t e, unsigned) {
      for (size_t q = b; q < e; q++) {
        u64 k[4];
        std::memcpy(k, scalar(q), 32);
        Fr::reduce_raw(k);
        bool n1, n2;
        glv_split<C>(k, &sc[4 * q], n1, &sc[4 * (m + q)], n2);
        neg[q] = n1;
        neg[m + q] = n2;
      }
    }, 1024);
  }
};

// out[q] = phi(point(q)) for q < m (point(q): pointer to an affine point)
template <class Cfg, class Point>
void glv_images(std::vector<Affine<Cfg>>& out, size_t m, unsigned T, Point point) {
  out.resize(m);
  parallel_for(m, T, [&](size_t b, size_t e, unsigned) {
    for (size_t q = b; q < e; q++) out[q] = glv_phi<Cfg>(Affine<Cfg>::load(point(q)));
  }, 1024);
}

}  // namespace snarkd
