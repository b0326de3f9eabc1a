// Helpers on top of the core's Fp2/Mont that the pairing needs and the core
// does not provide (kept here so the core headers stay untouched).
#pragma once
#include <cstddef>
#include <cstdint>
#include "ff/mont.hpp"
#include "ff/fp2.hpp"

namespace snarkd {
namespace pairing {

// a / 2 in a Montgomery field (valid because p has a spare top bit: a + p < 2^(64N)).
template <class F>
inline F half(const F& a) {
  constexpr size_t N = F::N;
  u64 t[N];
  u64 mask = (u64)0 - (a.v[0] & 1);
  u64 c = 0;
  for (size_t i = 0; i < N; i++) {
    u128 s = (u128)a.v[i] + (F::modulus().v[i] & mask) + c;
    t[i] = (u64)s;
    c = (u64)(s >> 64);
  }
  F r;
  for (size_t i = 0; i < N; i++) r.v[i] = (t[i] >> 1) | (i + 1 < N ? (t[i + 1] << 63) : (c << 63));
  return r;
}

// k * a for a small non-negative constant k (double-and-add; k is a compile-time constant).
template <int K, class F>
inline F mul_small(const F& a) {
  static_assert(K >= 0, "mul_small takes K >= 0");
  if constexpr (K == 0) return F::zero();
  else if constexpr (K == 1) return a;
  else if constexpr (K == 2) return a.dbl();
  else if constexpr (K == 3) return a.dbl() + a;
  else if constexpr (K % 2 == 0) return mul_small<K / 2>(a).dbl();
  else return mul_small<K - 1>(a) + a;
}

template <class F2>
inline F2 conj(const F2& a) { return {a.c0, a.c1.neg()}; }

template <class F2, class F>
inline F2 mul_by_base(const F2& a, const F& s) { return {a.c0 * s, a.c1 * s}; }

template <class F2>
inline F2 half2(const F2& a) { return {half(a.c0), half(a.c1)}; }

// a^e, e as little-endian 64-bit limbs; works for any type with one(), sqr(), *.
template <class T>
inline T pow_limbs(const T& a, const u64* e, size_t ne) {
  T r = T::one();
  bool started = false;
  for (size_t i = ne; i-- > 0;)
    for (int b = 63; b >= 0; b--) {
      if (started) r = r.sqr();
      if ((e[i] >> b) & 1) { r = started ? r * a : a; started = true; }
    }
  return r;
}

// ---- tiny multi-precision helpers (used once, for constants) ----
// a /= d in place (little-endian limbs); returns the remainder.
inline u64 div_small(u64* a, size_t n, u64 d) {
  u128 rem = 0;
  for (size_t i = n; i-- > 0;) {
    u128 cur = (rem << 64) | a[i];
    a[i] = (u64)(cur / d);
    rem = cur % d;
  }
  return (u64)rem;
}
inline void sub_small(u64* a, size_t n, u64 s) {
  for (size_t i = 0; i < n && s; i++) {
    u64 old = a[i];
    a[i] = old - s;
    s = old < s ? 1 : 0;
  }
}

}  // namespace pairing
}  // namespace snarkd
