// Jacobian coordinates (x = X/Z^2, y = Y/Z^3) on y^2 = x^3 + b, for scalar
// multiplications that are mostly doublings (the subgroup checks): a doubling
// costs 2M + 5S here against 6M + 3S in XYZZ (ec/point.hpp), a mixed addition
// 7M + 4S against 8M + 2S. Every formula handles its exceptional cases (equal
// or opposite points, infinity): the subgroup checks see points of any order.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>
#include "ec/point.hpp"

namespace snarkd {

template <class Cfg>
struct Jacobian {
  using F = typename Cfg::F;
  using Aff = Affine<Cfg>;
  F X, Y, Z;

  static inline Jacobian inf() { return {F::one(), F::one(), F::zero()}; }
  inline bool is_inf() const { return Z.is_zero(); }
  static inline Jacobian from_affine(const Aff& a) {
    if (a.is_inf()) return inf();
    return {a.x, a.y, F::one()};
  }
  inline Jacobian neg() const { return {X, Y.neg(), Z}; }

  // dbl-2009-l (a = 0)
  inline void dbl() {
    if (is_inf()) return;
    F A = X.sqr(), B = Y.sqr(), C = B.sqr();
    F D = ((X + B).sqr() - A - C).dbl();
    F E = A.dbl() + A;
    F X3 = E.sqr() - D.dbl();
    F Y3 = E * (D - X3) - C.dbl().dbl().dbl();
    Z = (Y * Z).dbl();
    X = X3;
    Y = Y3;
  }

  // madd-2007-bl: this += a (affine)
  inline void add_affine(const Aff& a) {
    if (a.is_inf()) return;
    if (is_inf()) { *this = from_affine(a); return; }
    F Z1Z1 = Z.sqr();
    F H = a.x * Z1Z1 - X;
    F r = (a.y * Z * Z1Z1 - Y).dbl();
    if (H.is_zero()) {
      if (r.is_zero()) { *this = from_affine(a); dbl(); }  // this == a
      else *this = inf();                                  // this == -a
      return;
    }
    F HH = H.sqr();
    F I = HH.dbl().dbl();
    F J = H * I;
    F V = X * I;
    F X3 = r.sqr() - J - V.dbl();
    F Y3 = r * (V - X3) - (Y * J).dbl();
    Z = (Z + H).sqr() - Z1Z1 - HH;
    X = X3;
    Y = Y3;
  }

  // add-2007-bl: this += o
  inline void add(const Jacobian& o) {
    if (o.is_inf()) return;
    if (is_inf()) { *this = o; return; }
    F Z1Z1 = Z.sqr(), Z2Z2 = o.Z.sqr();
    F U1 = X * Z2Z2, S1 = Y * o.Z * Z2Z2;
    F H = o.X * Z1Z1 - U1;
    F r = (o.Y * Z * Z1Z1 - S1).dbl();
    if (H.is_zero()) {
      if (r.is_zero()) dbl();
      else *this = inf();
      return;
    }
    F I = H.dbl().sqr();
    F J = H * I;
    F V = U1 * I;
    F X3 = r.sqr() - J - V.dbl();
    F Y3 = r * (V - X3) - (S1 * J).dbl();
    Z = ((Z + o.Z).sqr() - Z1Z1 - Z2Z2) * H;
    X = X3;
    Y = Y3;
  }

  // the same point (not the same coordinates)
  inline bool same(const Jacobian& o) const {
    if (is_inf() || o.is_inf()) return is_inf() && o.is_inf();
    F Z1Z1 = Z.sqr(), Z2Z2 = o.Z.sqr();
    return X * Z2Z2 == o.X * Z1Z1 && Y * Z2Z2 * o.Z == o.Y * Z1Z1 * Z;
  }
};

// [k] p, k little-endian 64-bit limbs, by double-and-add over k's non-adjacent form
// (signed digits, -p is free: about a third of the digits are nonzero against half of
// the bits; BN254's u: 24 additions instead of 28).
template <class Cfg>
inline Jacobian<Cfg> scalar_mul_jacobian(const Affine<Cfg>& p, const u64* k, size_t nlimbs) {
  Jacobian<Cfg> acc = Jacobian<Cfg>::inf();
  if (p.is_inf()) return acc;
  const size_t nbits = 64 * nlimbs;
  auto bit = [&](size_t i) { return i < nbits ? (int)((k[i / 64] >> (i % 64)) & 1) : 0; };
  std::vector<int8_t> naf(nbits + 1);
  int carry = 0;
  for (size_t i = 0; i <= nbits; i++) {
    int b = bit(i) + carry;  // this digit's value with the carry from below: 0, 1 or 2
    if (b == 1) {
      naf[i] = bit(i + 1) ? -1 : 1;  // k = 3 mod 4: -1 and carry; k = 1 mod 4: 1
      carry = bit(i + 1);
    } else {
      naf[i] = 0;
      carry = b >> 1;
    }
  }
  const Affine<Cfg> neg_p = p.neg();
  bool started = false;
  for (size_t i = nbits + 1; i-- > 0;) {
    if (started) acc.dbl();
    if (naf[i] == 0) continue;
    if (!started) { acc = Jacobian<Cfg>::from_affine(p); started = true; }  // the top digit is 1
    else acc.add_affine(naf[i] > 0 ? p : neg_p);
  }
  return acc;
}

}  // namespace snarkd
