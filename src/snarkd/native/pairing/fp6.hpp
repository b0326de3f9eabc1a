// Cubic extension Fp6 = Fp2[v] / (v^3 - xi), xi = XI0 + XI1*u (u^2 = -1 in the
// core's Fp2 for both curves). BN254: xi = 9 + u; BLS12-381: xi = 1 + u.
#pragma once
#include "pairing/fp2_ext.hpp"

namespace snarkd {
namespace pairing {

template <class F2, int XI0, int XI1>
struct Fp6 {
  using Fq2 = F2;
  static constexpr int xi0 = XI0, xi1 = XI1;
  F2 c0, c1, c2;

  static inline Fp6 zero() { return {F2::zero(), F2::zero(), F2::zero()}; }
  static inline Fp6 one() { return {F2::one(), F2::zero(), F2::zero()}; }
  inline bool is_zero() const { return c0.is_zero() && c1.is_zero() && c2.is_zero(); }
  inline bool operator==(const Fp6& o) const { return c0 == o.c0 && c1 == o.c1 && c2 == o.c2; }
  inline bool operator!=(const Fp6& o) const { return !(*this == o); }

  // a * xi, with u^2 = -1: (a0*XI0 - a1*XI1) + (a0*XI1 + a1*XI0) u
  static inline F2 mul_by_xi(const F2& a) {
    auto k0 = [](const auto& x) { return mul_small<XI0>(x); };
    auto k1 = [](const auto& x) { return mul_small<XI1>(x); };
    return {k0(a.c0) - k1(a.c1), k1(a.c0) + k0(a.c1)};
  }

  friend inline Fp6 operator+(const Fp6& a, const Fp6& b) { return {a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2}; }
  friend inline Fp6 operator-(const Fp6& a, const Fp6& b) { return {a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2}; }
  inline Fp6 neg() const { return {c0.neg(), c1.neg(), c2.neg()}; }
  inline Fp6 dbl() const { return {c0.dbl(), c1.dbl(), c2.dbl()}; }
  // * v: (c0 + c1 v + c2 v^2) v = xi c2 + c0 v + c1 v^2
  inline Fp6 mul_by_v() const { return {mul_by_xi(c2), c0, c1}; }

  friend inline Fp6 operator*(const Fp6& a, const Fp6& b) {
    F2 t0 = a.c0 * b.c0, t1 = a.c1 * b.c1, t2 = a.c2 * b.c2;
    F2 r0 = mul_by_xi((a.c1 + a.c2) * (b.c1 + b.c2) - t1 - t2) + t0;
    F2 r1 = (a.c0 + a.c1) * (b.c0 + b.c1) - t0 - t1 + mul_by_xi(t2);
    F2 r2 = (a.c0 + a.c2) * (b.c0 + b.c2) - t0 - t2 + t1;
    return {r0, r1, r2};
  }
  inline Fp6& operator*=(const Fp6& b) { return *this = *this * b; }

  // Chung-Hasan SQR2
  inline Fp6 sqr() const {
    F2 s0 = c0.sqr();
    F2 s1 = (c0 * c1).dbl();
    F2 s2 = (c0 - c1 + c2).sqr();
    F2 s3 = (c1 * c2).dbl();
    F2 s4 = c2.sqr();
    return {s0 + mul_by_xi(s3), s1 + mul_by_xi(s4), s1 + s2 + s3 - s0 - s4};
  }

  inline Fp6 scale(const F2& s) const { return {c0 * s, c1 * s, c2 * s}; }

  // * (b0 + b1 v)
  inline Fp6 mul_by_01(const F2& b0, const F2& b1) const {
    F2 t0 = c0 * b0, t1 = c1 * b1;
    F2 r0 = mul_by_xi((c1 + c2) * b1 - t1) + t0;
    F2 r1 = (c0 + c1) * (b0 + b1) - t0 - t1;
    F2 r2 = (c0 + c2) * b0 - t0 + t1;
    return {r0, r1, r2};
  }
  // * (b1 v + b2 v^2)
  inline Fp6 mul_by_12(const F2& b1, const F2& b2) const {
    F2 t1 = c1 * b1, t2 = c2 * b2;
    F2 r0 = mul_by_xi((c1 + c2) * (b1 + b2) - t1 - t2);
    F2 r1 = c0 * b1 + mul_by_xi(t2);
    F2 r2 = c0 * b2 + t1;
    return {r0, r1, r2};
  }
  // * (b1 v)
  inline Fp6 mul_by_1(const F2& b1) const { return {mul_by_xi(c2 * b1), c0 * b1, c1 * b1}; }

  inline Fp6 inv() const {
    F2 t0 = c0.sqr() - mul_by_xi(c1 * c2);
    F2 t1 = mul_by_xi(c2.sqr()) - c0 * c1;
    F2 t2 = c1.sqr() - c0 * c2;
    F2 d = c0 * t0 + mul_by_xi(c2 * t1 + c1 * t2);
    F2 di = d.inv();
    return {t0 * di, t1 * di, t2 * di};
  }
};

}  // namespace pairing
}  // namespace snarkd
