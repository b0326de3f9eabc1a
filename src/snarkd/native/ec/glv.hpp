// GLV scalar splitting on G1 (Gallant, Lambert, Vanstone 2001), and on G2 the same
// with the Frobenius-based psi (GLS, Galbraith, Lin, Scott 2009; glv_phi below). On y^2 = x^3 + b
// over a field with a cube root of unity beta, phi(x, y) = (beta x, y) is an
// endomorphism, and on the order-r subgroup phi(P) = lambda P for a cube root of
// unity lambda in Fr. So k P = k1 P + k2 phi(P) with k = k1 + lambda k2 (mod r),
// and k1, k2 can be chosen with about half of r's bits: an MSM over n points
// with full scalars becomes one over 2n points with half-length scalars (half
// the windows, so half the bucket reductions and doublings), and phi(P) costs
// one field multiplication.
//
// The decomposition is Babai rounding in a reduced lattice basis with the
// divisions by r precomputed (curves/gen_glv.py derives the constants and
// explains the formulas):
//     u1 = round(k g1 / 2^256), u2 = round(k g2 / 2^256)
//     k1 = k + u1 M11 + u2 M12,  k2 = u1 M21 + u2 M22      (mod 2^192)
// |k1|, |k2| < 2^C::BITS (127 on both curves), so three limbs in two's complement
// hold them exactly, and a negative half becomes a negated point (the sign is
// returned apart).
#pragma once
#include <cstdint>
#include "ec/point.hpp"

namespace snarkd {

// GlvOf<Cfg>::ok: the group has an endomorphism wired in (curves/groups.hpp
// specialises it with C = the generated constants of curves/glv_constants.hpp).
// psi: a G2 endomorphism (GLS) with its constants (C::FROB, CX_MONT, CY_MONT).
template <class Cfg>
struct GlvOf {
  static constexpr bool ok = false;
  static constexpr bool psi = false;
};

namespace glv_detail {
// out = a * b mod 2^192 (three limbs each)
inline void mul192(const u64* a, const u64* b, u64* out) {
  u64 r[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    u64 carry = 0;
    for (int j = 0; i + j < 3; j++) {
      u128 t = (u128)a[i] * b[j] + r[i + j] + carry;
      r[i + j] = (u64)t;
      carry = (u64)(t >> 64);
    }
  }
  out[0] = r[0]; out[1] = r[1]; out[2] = r[2];
}
inline void add192(u64* a, const u64* b) {
  u128 c = 0;
  for (int i = 0; i < 3; i++) {
    c += (u128)a[i] + b[i];
    a[i] = (u64)c;
    c >>= 64;
  }
}
// round(k g / 2^256) for k < 2^256 (4 limbs), g (3 limbs): the product's limbs 4..6
// after adding 2^255. The result is below 2^192 (k < r, g < 2^130).
inline void mul_round256(const u64* k, const u64* g, u64* out) {
  u64 p[7] = {0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < 4; i++) {
    u64 carry = 0;
    for (int j = 0; j < 3; j++) {
      u128 t = (u128)k[i] * g[j] + p[i + j] + carry;
      p[i + j] = (u64)t;
      carry = (u64)(t >> 64);
    }
    p[i + 3] = carry;
  }
  u128 c = (u128)p[3] + (1ULL << 63);
  p[3] = (u64)c;
  for (int i = 4; i < 7; i++) {
    c = (u128)p[i] + (u64)(c >> 64);
    p[i] = (u64)c;
  }
  out[0] = p[4]; out[1] = p[5]; out[2] = p[6];
}
// |v| into 4 limbs (top one zero), v two's complement mod 2^192; returns v < 0
inline bool magnitude(const u64* v, u64* out) {
  bool neg = v[2] >> 63;
  if (neg) {
    u128 c = 1;
    for (int i = 0; i < 3; i++) {
      c += (u64)~v[i];
      out[i] = (u64)c;
      c >>= 64;
    }
  } else {
    out[0] = v[0]; out[1] = v[1]; out[2] = v[2];
  }
  out[3] = 0;
  return neg;
}
}  // namespace glv_detail

// k (4 limbs, reduced mod r) = k1 + lambda k2 (mod r): |k1|, |k2| as 4-limb
// magnitudes below 2^C::BITS, signs in n1, n2 (true: negative).
template <class C>
inline void glv_split(const u64* k, u64* k1, bool& n1, u64* k2, bool& n2) {
  using namespace glv_detail;
  u64 u1[3], u2[3], t[3], a[3] = {k[0], k[1], k[2]}, b[3];
  mul_round256(k, C::G1, u1);
  mul_round256(k, C::G2, u2);
  mul192(u1, C::M11, t); add192(a, t);
  mul192(u2, C::M12, t); add192(a, t);
  mul192(u1, C::M21, b);
  mul192(u2, C::M22, t); add192(b, t);
  n1 = magnitude(a, k1);
  n2 = magnitude(b, k2);
}

// The endomorphism's image of P: on G1 phi(P) = (beta x, y); on G2 (GLS,
// GlvOf<Cfg>::psi) psi(x, y) = (conj(x) cx, conj(y) cy) (BN254) or psi^2(x, y) =
// (x cx, y cy) with cx, cy in Fq (BLS12-381), see curves/gen_glv.py. Both are
// multiplication by C::LAMBDA on the order-r subgroup. Infinity (all zero) stays
// infinity.
template <class Cfg>
inline Affine<Cfg> glv_phi(const Affine<Cfg>& p) {
  using F = typename Cfg::F;
  using C = typename GlvOf<Cfg>::C;
  if constexpr (GlvOf<Cfg>::psi) {
    using B = decltype(F::c0);
    static const F cx{B::from_limbs(C::CX_MONT[0]), B::from_limbs(C::CX_MONT[1])};
    static const F cy{B::from_limbs(C::CY_MONT[0]), B::from_limbs(C::CY_MONT[1])};
    if constexpr (C::FROB) {
      return {F{p.x.c0, p.x.c1.neg()} * cx, F{p.y.c0, p.y.c1.neg()} * cy};
    } else {  // cx, cy in Fq: two base multiplications each
      return {F{p.x.c0 * cx.c0, p.x.c1 * cx.c0}, F{p.y.c0 * cy.c0, p.y.c1 * cy.c0}};
    }
  } else {
    static const F beta = F::from_limbs(C::BETA_MONT);
    return {p.x * beta, p.y};
  }
}

}  // namespace snarkd
