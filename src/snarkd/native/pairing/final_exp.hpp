// Final exponentiation f^((p^12 - 1) / r): easy part (p^6 - 1)(p^2 + 1), then
// an addition chain in u for the hard part (p^4 - p^2 + 1) / r.
//   BN254:     Scott et al. (Pairing 2009) chain: exactly (p^4 - p^2 + 1) / r.
//   BLS12-381: Hayashida-Hayasaka-Teruya (2020): 3 (p^4 - p^2 + 1) / r =
//              (u - 1)^2 (u + p) (u^2 + p^2 - 1) + 3  (3 is prime to r, so the
//              result is still a non-degenerate bilinear pairing).
#pragma once
#include "pairing/miller_loop.hpp"

namespace snarkd {
namespace pairing {

template <class Cfg>
struct FinalExp {
  using F12 = typename Cfg::Fq12;

  // f^u (u signed) for f in the cyclotomic subgroup
  static inline F12 exp_by_u(const F12& f) {
    F12 r = f.cyclotomic_pow(Cfg::U);
    return Cfg::NEG_U ? r.conj() : r;
  }

  static inline F12 easy(const F12& f) {
    F12 t = f.conj() * f.inv();  // f^(p^6 - 1)
    return t.template frobenius<2>() * t;
  }

  static inline F12 hard(const F12& f) {
    if constexpr (Cfg::BN) {
      F12 fu = exp_by_u(f), fu2 = exp_by_u(fu), fu3 = exp_by_u(fu2);
      F12 y0 = f.template frobenius<1>() * f.template frobenius<2>() * f.template frobenius<3>();
      F12 y1 = f.conj();
      F12 y2 = fu2.template frobenius<2>();
      F12 y3 = fu.template frobenius<1>().conj();
      F12 y4 = (fu * fu2.template frobenius<1>()).conj();
      F12 y5 = fu2.conj();
      F12 y6 = (fu3 * fu3.template frobenius<1>()).conj();
      F12 t0 = y6.cyclotomic_sqr() * y4 * y5;
      F12 t1 = y3 * y5 * t0;
      t0 = t0 * y2;
      t1 = (t1.cyclotomic_sqr() * t0).cyclotomic_sqr();
      t0 = t1 * y1;
      t1 = t1 * y0;
      return t0.cyclotomic_sqr() * t1;
    } else {
      // a = f^((u-1)^2)
      F12 a = exp_by_u(f) * f.conj();
      a = exp_by_u(a) * a.conj();
      // b = a^(u + p)
      F12 b = exp_by_u(a) * a.template frobenius<1>();
      // c = b^(u^2 + p^2 - 1)
      F12 c = exp_by_u(exp_by_u(b)) * b.template frobenius<2>() * b.conj();
      // * f^3
      return c * f.cyclotomic_sqr() * f;
    }
  }

  static inline F12 apply(const F12& f) { return hard(easy(f)); }
};

}  // namespace pairing
}  // namespace snarkd
