// Short Weierstrass y^2 = x^3 + b (a = 0) over a coordinate field F.
// Affine points use the snarkjs layout (x then y; all-zero bytes = infinity).
// Projective arithmetic uses XYZZ coordinates (x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2):
// a mixed add costs 8M+2S and needs no inversion (EFD "xyzz" formulas, ec/xyzz.hpp).
#pragma once
#include <cstdint>
#include <cstring>
#include "ec/xyzz.hpp"
#include "ff/mont.hpp"

namespace snarkd {

// Curve descriptor: Cfg::F (coordinate field) and Cfg::b() (Montgomery form).
template <class Cfg>
struct Affine {
  using F = typename Cfg::F;
  F x, y;
  static inline Affine inf() { return {F::zero(), F::zero()}; }
  inline bool is_inf() const { return x.is_zero() && y.is_zero(); }
  static inline Affine load(const void* p) {
    Affine r;
    std::memcpy(&r, p, sizeof(Affine));
    return r;
  }
  inline void store(void* p) const { std::memcpy(p, this, sizeof(Affine)); }
  inline Affine neg() const { return is_inf() ? *this : Affine{x, y.neg()}; }
  inline bool on_curve() const {
    if (is_inf()) return true;
    if (!x.is_canonical() || !y.is_canonical()) return false;
    return y.sqr() == x.sqr() * x + Cfg::b();
  }
};

template <class Cfg>
struct XYZZ {
  using F = typename Cfg::F;
  using Aff = Affine<Cfg>;
  F X, Y, ZZ, ZZZ;

  static inline XYZZ inf() { return {F::one(), F::one(), F::zero(), F::zero()}; }
  inline bool is_inf() const { return ZZ.is_zero(); }
  static inline XYZZ from_affine(const Aff& a) {
    if (a.is_inf()) return inf();
    return {a.x, a.y, F::one(), F::one()};
  }
  inline XYZZ neg() const { return {X, Y.neg(), ZZ, ZZZ}; }

  // The formulas: ec/xyzz.hpp, shared with the device (gpu/curve.cuh).
  inline void dbl() { xyzz::dbl(*this); }                                 // dbl-2008-s-1
  inline void set_dbl_affine(const Aff& a) { xyzz::set_dbl_affine(*this, a); }  // this = 2a (a not infinity)
  inline void add_affine(const Aff& a) { xyzz::add_affine(*this, a); }    // this += a (a not infinity)
  inline void add_affine_checked(const Aff& a) {
    if (!a.is_inf()) add_affine(a);
  }
  inline void add(const XYZZ& o) { xyzz::add(*this, o); }                 // this += o

  inline Aff to_affine() const {
    if (is_inf()) return Aff::inf();
    F I = ZZZ.inv();        // Z^-3
    F Zi = ZZ * I;          // Z^-1
    return {X * Zi.sqr(), Y * I};
  }
};

// Plain double-and-add over all bits of a little-endian scalar (not reduced).
template <class Cfg>
inline XYZZ<Cfg> scalar_mul(const Affine<Cfg>& p, const u64* k, size_t nlimbs) {
  XYZZ<Cfg> acc = XYZZ<Cfg>::inf();
  if (p.is_inf()) return acc;
  for (size_t i = nlimbs; i-- > 0;)
    for (int b = 63; b >= 0; b--) {
      acc.dbl();
      if ((k[i] >> b) & 1) acc.add_affine(p);
    }
  return acc;
}

}  // namespace snarkd
