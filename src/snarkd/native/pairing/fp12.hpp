// Quadratic extension Fp12 = Fp6[w] / (w^2 - v), so w^6 = xi.
// An element is c0 + c1 w with c0 = (a0, a1, a2), c1 = (b0, b1, b2) in Fp6;
// as powers of w: a0 w^0, b0 w^1, a1 w^2, b1 w^3, a2 w^4, b2 w^5.
#pragma once
#include "pairing/fp6.hpp"

namespace snarkd {
namespace pairing {

// gamma[n-1][e] = xi^(e (p^n - 1) / 6), n = 1..3, e = 0..5 (Frobenius constants),
// computed once from the modulus.
template <class F6>
struct FrobeniusConsts {
  using F2 = typename F6::Fq2;
  F2 g[3][6];
  F2 g1_inv[6];  // gamma[0][e]^-1 (for the M-twist endomorphism)
  FrobeniusConsts() {
    using F = decltype(F2::zero().c0);
    constexpr size_t N = F::N;
    u64 e[N];
    for (size_t i = 0; i < N; i++) e[i] = F::modulus().v[i];
    sub_small(e, N, 1);
    div_small(e, N, 6);  // (p - 1) / 6 (p = 1 mod 6 on both curves)
    F2 xi = F6::mul_by_xi(F2::one());
    F2 base = pow_limbs(xi, e, N);
    F2 acc = F2::one();
    for (int k = 0; k < 6; k++) {
      g[0][k] = acc;
      g[1][k] = acc * conj(acc);        // xi^(k (p-1)(p+1)/6)
      g[2][k] = g[1][k] * acc;          // xi^(k (p-1)(p^2+p+1)/6)
      g1_inv[k] = acc.inv();
      acc = acc * base;
    }
  }
  static const FrobeniusConsts& get() {
    static const FrobeniusConsts c;
    return c;
  }
};

template <class F6>
struct Fp12 {
  using Fq6 = F6;
  using F2 = typename F6::Fq2;
  F6 c0, c1;

  static inline Fp12 zero() { return {F6::zero(), F6::zero()}; }
  static inline Fp12 one() { return {F6::one(), F6::zero()}; }
  inline bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  inline bool is_one() const { return c0 == F6::one() && c1.is_zero(); }
  inline bool operator==(const Fp12& o) const { return c0 == o.c0 && c1 == o.c1; }
  inline bool operator!=(const Fp12& o) const { return !(*this == o); }

  friend inline Fp12 operator*(const Fp12& a, const Fp12& b) {
    F6 aa = a.c0 * b.c0, bb = a.c1 * b.c1;
    F6 r1 = (a.c0 + a.c1) * (b.c0 + b.c1) - aa - bb;
    return {aa + bb.mul_by_v(), r1};
  }
  inline Fp12& operator*=(const Fp12& b) { return *this = *this * b; }

  inline Fp12 sqr() const {
    F6 ab = c0 * c1;
    F6 r0 = (c0 + c1) * (c0 + c1.mul_by_v()) - ab - ab.mul_by_v();
    return {r0, ab.dbl()};
  }
  // Conjugation = p^6 Frobenius = inverse in the cyclotomic subgroup.
  inline Fp12 conj() const { return {c0, c1.neg()}; }
  inline Fp12 inv() const {
    F6 t = (c0.sqr() - c1.sqr().mul_by_v()).inv();
    return {c0 * t, (c1 * t).neg()};
  }

  // Sparse products with line values (positions in the basis 1, v, v^2, w, vw, v^2w):
  // D-twist lines have d0 at 1, d3 at w, d4 at vw.
  inline Fp12 mul_by_034(const F2& d0, const F2& d3, const F2& d4) const {
    F6 aa = c0.scale(d0);
    F6 bb = c1.mul_by_01(d3, d4);
    F6 r1 = (c0 + c1).mul_by_01(d0 + d3, d4) - aa - bb;
    return {aa + bb.mul_by_v(), r1};
  }
  // M-twist lines have d0 at 1, d1 at v, d4 at vw.
  inline Fp12 mul_by_014(const F2& d0, const F2& d1, const F2& d4) const {
    F6 aa = c0.mul_by_01(d0, d1);
    F6 bb = c1.mul_by_1(d4);
    F6 r1 = (c0 + c1).mul_by_01(d0, d1 + d4) - aa - bb;
    return {aa + bb.mul_by_v(), r1};
  }

  // Two lines multiplied together first (6 Fp2 products), then into f with one sparse
  // product: cheaper than two mul_by_034 / mul_by_014 (used by multi-pairings).
  // D-twist: (d0 + d3 w + d4 vw)(e0 + e3 w + e4 vw); the product has no v^2 w term.
  static inline Fp12 line_product_034(const F2& d0, const F2& d3, const F2& d4, const F2& e0, const F2& e3, const F2& e4) {
    F2 t0 = d0 * e0, t3 = d3 * e3, t4 = d4 * e4;
    F2 x34 = (d3 + d4) * (e3 + e4) - t3 - t4;
    F2 x03 = (d0 + d3) * (e0 + e3) - t0 - t3;
    F2 x04 = (d0 + d4) * (e0 + e4) - t0 - t4;
    return {{t0 + F6::mul_by_xi(t4), t3, x34}, {x03, x04, F2::zero()}};
  }
  // M-twist: (d0 + d1 v + d4 vw)(e0 + e1 v + e4 vw); the product has no w term.
  static inline Fp12 line_product_014(const F2& d0, const F2& d1, const F2& d4, const F2& e0, const F2& e1, const F2& e4) {
    F2 t0 = d0 * e0, t1 = d1 * e1, t4 = d4 * e4;
    F2 x01 = (d0 + d1) * (e0 + e1) - t0 - t1;
    F2 x04 = (d0 + d4) * (e0 + e4) - t0 - t4;
    F2 x14 = (d1 + d4) * (e1 + e4) - t1 - t4;
    return {{t0 + F6::mul_by_xi(t4), x01, t1}, {F2::zero(), x04, x14}};
  }
  // The same for lines with a coefficient 1 (AffineMillerLoop's): 3 Fp2 products.
  // D-twist: (1 + d3 w + d4 vw)(1 + e3 w + e4 vw).
  static inline Fp12 monic_line_product_034(const F2& d3, const F2& d4, const F2& e3, const F2& e4) {
    F2 t3 = d3 * e3, t4 = d4 * e4;
    F2 x34 = (d3 + d4) * (e3 + e4) - t3 - t4;
    return {{F2::one() + F6::mul_by_xi(t4), t3, x34}, {d3 + e3, d4 + e4, F2::zero()}};
  }
  // M-twist: (d0 + d1 v + vw)(e0 + e1 v + vw).
  static inline Fp12 monic_line_product_014(const F2& d0, const F2& d1, const F2& e0, const F2& e1) {
    F2 t0 = d0 * e0, t1 = d1 * e1;
    F2 x01 = (d0 + d1) * (e0 + e1) - t0 - t1;
    static const F2 xi = F6::mul_by_xi(F2::one());
    return {{t0 + xi, x01, t1}, {F2::zero(), d0 + e0, d1 + e1}};
  }
  // * g where g.c1.c2 = 0 (a line_product_034)
  inline Fp12 mul_by_01234(const Fp12& g) const {
    F6 aa = c0 * g.c0;
    F6 bb = c1.mul_by_01(g.c1.c0, g.c1.c1);
    F6 r1 = (c0 + c1) * (g.c0 + g.c1) - aa - bb;
    return {aa + bb.mul_by_v(), r1};
  }
  // * g where g.c1.c0 = 0 (a line_product_014)
  inline Fp12 mul_by_01245(const Fp12& g) const {
    F6 aa = c0 * g.c0;
    F6 bb = c1.mul_by_12(g.c1.c1, g.c1.c2);
    F6 r1 = (c0 + c1) * (g.c0 + g.c1) - aa - bb;
    return {aa + bb.mul_by_v(), r1};
  }

  // x -> x^(p^n), n = 1, 2, 3
  template <int Nf>
  inline Fp12 frobenius() const {
    static_assert(Nf >= 1 && Nf <= 3, "frobenius<1..3>");
    const auto& g = FrobeniusConsts<F6>::get().g[Nf - 1];
    auto f = [](const F2& x) { return (Nf % 2) ? pairing::conj(x) : x; };
    return {{f(c0.c0), f(c0.c1) * g[2], f(c0.c2) * g[4]},
            {f(c1.c0) * g[1], f(c1.c1) * g[3], f(c1.c2) * g[5]}};
  }

  // Granger-Scott squaring, valid in the cyclotomic subgroup (after the easy part).
  inline Fp12 cyclotomic_sqr() const {
    auto nr = [](const F2& x) { return F6::mul_by_xi(x); };
    F2 z0 = c0.c0, z4 = c0.c1, z3 = c0.c2, z2 = c1.c0, z1 = c1.c1, z5 = c1.c2;
    F2 tmp = z0 * z1;
    F2 t0 = (z0 + z1) * (z0 + nr(z1)) - tmp - nr(tmp);
    F2 t1 = tmp.dbl();
    tmp = z2 * z3;
    F2 t2 = (z2 + z3) * (z2 + nr(z3)) - tmp - nr(tmp);
    F2 t3 = tmp.dbl();
    tmp = z4 * z5;
    F2 t4 = (z4 + z5) * (z4 + nr(z5)) - tmp - nr(tmp);
    F2 t5 = tmp.dbl();
    z0 = t0 - z0; z0 = z0.dbl() + t0;
    z1 = t1 + z1; z1 = z1.dbl() + t1;
    tmp = nr(t5);
    z2 = tmp + z2; z2 = z2.dbl() + tmp;
    z3 = t4 - z3; z3 = z3.dbl() + t4;
    z4 = t2 - z4; z4 = z4.dbl() + t2;
    z5 = t3 + z5; z5 = z5.dbl() + t3;
    return {{z0, z4, z3}, {z2, z1, z5}};
  }

  // x^e for a 64-bit e in the cyclotomic subgroup (NAF: x^-1 = conj(x) is free there).
  inline Fp12 cyclotomic_pow(u64 e) const {
    if (e == 0) return one();
    int8_t d[66];
    int n = 0;
    u128 k = e;
    while (k) {
      if (k & 1) {
        int z = 2 - (int)(k & 3);
        d[n++] = (int8_t)z;
        k = z > 0 ? k - 1 : k + 1;
      } else {
        d[n++] = 0;
      }
      k >>= 1;
    }
    Fp12 inv = conj();
    Fp12 r = *this;  // top digit is 1
    for (int i = n - 2; i >= 0; i--) {
      r = r.cyclotomic_sqr();
      if (d[i] == 1) r = r * *this;
      else if (d[i] == -1) r = r * inv;
    }
    return r;
  }
};

}  // namespace pairing
}  // namespace snarkd
