// Quadratic extension F[u]/(u^2 - NONRES). Both BN254 and BLS12-381 use u^2 = -1.
#pragma once
#include <type_traits>

#include "ff/mont.hpp"

namespace snarkd {

template <class F, int NONRES>
struct Fp2 {
  using Base = F;
  F c0, c1;
  static constexpr size_t N = 2 * F::N;  // limbs in total

  static inline Fp2 zero() { return {F::zero(), F::zero()}; }
  static inline Fp2 one() { return {F::one(), F::zero()}; }
  static inline Fp2 load(const void* p) {
    Fp2 r;
    std::memcpy(&r, p, sizeof(Fp2));
    return r;
  }
  inline void store(void* p) const { std::memcpy(p, this, sizeof(Fp2)); }
  inline __attribute__((always_inline)) void store_words(void* p) const {
    c0.store_words(p);
    c1.store_words(static_cast<uint8_t*>(p) + sizeof(F));
  }
  inline bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  inline bool is_canonical() const { return c0.is_canonical() && c1.is_canonical(); }
  inline bool operator==(const Fp2& o) const { return c0 == o.c0 && c1 == o.c1; }
  inline bool operator!=(const Fp2& o) const { return !(*this == o); }

  static inline F mul_nr(const F& a) {
    if constexpr (NONRES == -1) {
      return a.neg();
    } else {
      F r = F::zero();
      F x = NONRES < 0 ? a.neg() : a;
      for (int i = 0; i < (NONRES < 0 ? -NONRES : NONRES); i++) r = r + x;
      return r;
    }
  }

  friend inline __attribute__((always_inline)) Fp2 operator+(const Fp2& a, const Fp2& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  friend inline __attribute__((always_inline)) Fp2 operator-(const Fp2& a, const Fp2& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  friend inline __attribute__((always_inline)) Fp2 operator*(const Fp2& a, const Fp2& b) {
    // 4 limbs with ADX: two sums of products (Mont::fp2_mul_sums); 6: Karatsuba
    // (Mont::fp2_mul_lazy); otherwise Karatsuba on base products, the sums feeding the
    // third product unreduced (< 2p, see Mont::add_nr).
    if constexpr (NONRES == -1) {
      Fp2 r;
      if (F::template fp2_mul_sums<false>(r.c0, r.c1, a.c0, a.c1, b.c0, b.c1)) return r;
      if (F::fp2_mul_lazy(r.c0, r.c1, a.c0, a.c1, b.c0, b.c1)) return r;
    }
    F t0 = a.c0 * b.c0, t1 = a.c1 * b.c1;
    F s = F::add_nr(a.c0, a.c1) * F::add_nr(b.c0, b.c1);
    if constexpr (NONRES == -1) return {t0 - t1, s - t0 - t1};
    else return {t0 + mul_nr(t1), s - t0 - t1};
  }
  inline __attribute__((always_inline)) Fp2 sqr() const {
    if constexpr (NONRES == -1) {
      // (c0 + c1)(c0 - c1) + 2 c0 c1 u : 2 base multiplications
      F t = c0 * c1;
      return {F::add_nr(c0, c1) * (c0 - c1), t + t};
    } else {
      return *this * *this;
    }
  }
  // o = a op b in place (o may alias a or b): see Mont::mul_to
  static inline __attribute__((always_inline)) void mul_to(Fp2& o, const Fp2& a, const Fp2& b) {
    if constexpr (NONRES == -1) {
      if (F::template fp2_mul_sums<false>(o.c0, o.c1, a.c0, a.c1, b.c0, b.c1)) return;
      if (F::fp2_mul_lazy(o.c0, o.c1, a.c0, a.c1, b.c0, b.c1)) return;
    }
    o = a * b;
  }
  // o = a conj(b) (the batch-affine G2 flush's (y2 - y1) conj(dx)): on 4 limbs with ADX
  // c0 = a0 b0 + a1 b1 directly, no negation of b1 first; o may alias a or b
  static inline __attribute__((always_inline)) void mul_conj_to(Fp2& o, const Fp2& a, const Fp2& b) {
    if constexpr (NONRES == -1) {
      if (F::template fp2_mul_sums<true>(o.c0, o.c1, a.c0, a.c1, b.c0, b.c1)) return;
    }
    Fp2 c;
    c.c0 = b.c0;
    F::sub_to(c.c1, F::zero(), b.c1);
    mul_to(o, a, c);
  }
  static inline __attribute__((always_inline)) void sqr_to(Fp2& o, const Fp2& a) {
    if constexpr (NONRES == -1) {
      F s = F::add_nr(a.c0, a.c1), d, t;
      F::sub_to(d, a.c0, a.c1);
      F::mul_to(t, a.c0, a.c1);
      F::mul_to(o.c0, s, d);
      F::add_to(o.c1, t, t);
    } else {
      o = a.sqr();
    }
  }
  static inline __attribute__((always_inline)) void add_to(Fp2& o, const Fp2& a, const Fp2& b) {
    F::add_to(o.c0, a.c0, b.c0);
    F::add_to(o.c1, a.c1, b.c1);
  }
  static inline __attribute__((always_inline)) void sub_to(Fp2& o, const Fp2& a, const Fp2& b) {
    F::sub_to(o.c0, a.c0, b.c0);
    F::sub_to(o.c1, a.c1, b.c1);
  }
  // o = (c0 - c1 u) / norm, given ni = 1 / norm (inv_from_norm in place)
  inline __attribute__((always_inline)) void inv_from_norm_to(Fp2& o, const F& ni) const {
    F t;
    F::mul_to(o.c0, c0, ni);
    F::mul_to(t, c1, ni);
    F::sub_to(o.c1, F::zero(), t);
  }
  inline __attribute__((always_inline)) Fp2 dbl() const { return {c0.dbl(), c1.dbl()}; }
  inline __attribute__((always_inline)) Fp2 neg() const { return {c0.neg(), c1.neg()}; }
  inline Fp2 operator-() const { return neg(); }
  inline Fp2& operator*=(const Fp2& b) { return *this = *this * b; }
  inline Fp2& operator+=(const Fp2& b) { return *this = *this + b; }
  inline Fp2& operator-=(const Fp2& b) { return *this = *this - b; }
  // c0^2 - NONRES c1^2 = (c0 + c1 u)(c0 - c1 u), in the base field
  inline __attribute__((always_inline)) F norm() const {
    if constexpr (NONRES == -1) return F::sqr_sum(c0, c1);
    else return c0.sqr() - mul_nr(c1.sqr());
  }
  inline __attribute__((always_inline)) void norm_to(F& o) const {
    if constexpr (NONRES == -1) F::sqr_sum_to(o, c0, c1);
    else o = norm();
  }
  // 1/(c0 + c1 u) = (c0 - c1 u) / norm, given ni = 1 / norm
  inline __attribute__((always_inline)) Fp2 inv_from_norm(const F& ni) const { return {c0 * ni, (c1 * ni).neg()}; }
  inline Fp2 inv() const { return inv_from_norm(norm().inv()); }
};

}  // namespace snarkd

namespace snarkd {
// Whether F is a quadratic extension (Fp2<...>): batch inversions there invert the norms
// in the base field instead (three base products per element cheaper than Fp2's).
template <class F, class = void>
struct IsFp2 : std::false_type {};
template <class F>
struct IsFp2<F, std::void_t<typename F::Base>> : std::true_type {};
}  // namespace snarkd
