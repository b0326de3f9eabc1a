// Batch scalar multiplications of the GIPA rounds, for G1 and G2:
//   fold:  out[i] = L[i] + x * R[i]   (one scalar for every point: a round's rescaling)
//   scale: out[i] = s[i] * P[i]       (one scalar per point: B^(r^i), w^(r^-i))
// Signed 4-bit windows: each point gets a table of its multiples 1..8 (made
// affine for a whole chunk with one inversion), then 4 doublings and one mixed
// addition per window. Results are written affine (zkey layout) with one
// inversion per chunk. Scalars: plain little-endian Fr integers (< 2^256,
// reduced mod r here).
#pragma once
#include <cstring>
#include <vector>

#include "parallel.hpp"
#include "setup/fixed_base.hpp"

namespace snarkd {
namespace aggregate {

constexpr unsigned WIN = 4;

// Signed digits in [-8, 8] of a reduced scalar, least significant first.
template <class Fr>
inline unsigned signed_digits4(const uint8_t* scalar, int8_t* out) {
  u64 s[Fr::N];
  std::memcpy(s, scalar, 8 * Fr::N);
  Fr::reduce_raw(s);
  const unsigned nw = (unsigned)((Fr::BITS + WIN) / WIN + 1);
  int carry = 0;
  for (unsigned j = 0; j < nw; j++) {
    size_t pos = (size_t)j * WIN, limb = pos / 64, sh = pos % 64;
    int v = limb < Fr::N ? (int)((s[limb] >> sh) & 15) : 0;
    v += carry;
    if (v > 8) { out[j] = (int8_t)(v - 16); carry = 1; }
    else { out[j] = (int8_t)v; carry = 0; }
  }
  return nw;
}

template <class Cfg, class Fr>
struct Fold {
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  static constexpr size_t TABLE = 8;

  // digits(i) -> pointer to the digits of point i's scalar; add(i) -> affine point added to the product (or inf).
  template <class Digits, class Base, class Add>
  static void run(size_t n, unsigned nw, Digits digits, Base base, Add add, uint8_t* out, unsigned T, size_t per = 256) {
    const size_t ntasks = (n + per - 1) / per;
    parallel_tasks(ntasks, T, [&](size_t t, unsigned) {
      size_t b = t * per, e = std::min(n, b + per), c = e - b;
      std::vector<Pt> mult(c * TABLE);
      for (size_t i = 0; i < c; i++) {
        Aff p = base(b + i);
        Pt acc = Pt::inf();
        for (size_t k = 0; k < TABLE; k++) {
          acc.add_affine_checked(p);
          mult[i * TABLE + k] = acc;
        }
      }
      std::vector<Aff> table(c * TABLE);
      setup::FixedBase<Cfg, Fr>::normalize(mult.data(), c * TABLE, table.data());
      std::vector<Pt> res(c);
      for (size_t i = 0; i < c; i++) {
        const int8_t* d = digits(b + i);
        const Aff* tb = table.data() + i * TABLE;
        Pt acc = Pt::inf();
        for (unsigned j = nw; j-- > 0;) {
          if (!acc.is_inf())
            for (unsigned s = 0; s < WIN; s++) acc.dbl();
          int v = d[j];
          if (v > 0) acc.add_affine_checked(tb[v - 1]);
          else if (v < 0) acc.add_affine_checked(tb[-v - 1].neg());
        }
        acc.add_affine_checked(add(b + i));
        res[i] = acc;
      }
      std::vector<Aff> aff(c);
      setup::FixedBase<Cfg, Fr>::normalize(res.data(), c, aff.data());
      for (size_t i = 0; i < c; i++) aff[i].store(out + (b + i) * sizeof(Aff));
    });
  }

  static void fold(const uint8_t* L, const uint8_t* R, size_t n, const uint8_t* x, uint8_t* out, unsigned T) {
    int8_t d[80];
    unsigned nw = signed_digits4<Fr>(x, d);
    run(n, nw, [&](size_t) { return (const int8_t*)d; }, [&](size_t i) { return Aff::load(R + i * sizeof(Aff)); },
        [&](size_t i) { return Aff::load(L + i * sizeof(Aff)); }, out, T);
  }

  // sum_i s[i] * P[i] for a few points (the verifier's small combinations), one thread, affine.
  static Aff lincomb(const uint8_t* P, const uint8_t* s, size_t n) {
    std::vector<uint8_t> each(n * sizeof(Aff));
    scale(P, s, n, each.data(), 1);
    Pt acc = Pt::inf();
    for (size_t i = 0; i < n; i++) acc.add_affine_checked(Aff::load(each.data() + i * sizeof(Aff)));
    return acc.to_affine();
  }

  static void scale(const uint8_t* P, const uint8_t* s, size_t n, uint8_t* out, unsigned T) {
    const unsigned nw = (unsigned)((Fr::BITS + WIN) / WIN + 1);
    std::vector<int8_t> d(n * nw);
    parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
      for (size_t i = b; i < e; i++) signed_digits4<Fr>(s + i * 8 * Fr::N, d.data() + i * nw);
    });
    run(n, nw, [&](size_t i) { return (const int8_t*)d.data() + i * nw; },
        [&](size_t i) { return Aff::load(P + i * sizeof(Aff)); }, [&](size_t) { return Aff::inf(); }, out, T);
  }
};

}  // namespace aggregate
}  // namespace snarkd
