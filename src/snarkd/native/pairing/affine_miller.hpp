// A multi Miller loop for pairs used once (batch verification): the G2 points run in
// affine coordinates, the inversions of each step shared by all pairs (Montgomery's
// trick: one Fp2 inversion per step plus 3 Fp2 products per pair), and every line is
// divided by its y_P and by its y coefficient, so that it has a 1 among its three
// coefficients:
//   D-twist (BN254):     1 + lambda (-x_P/y_P) w + (lambda x_T - y_T)/y_P vw
//   M-twist (BLS12-381): (lambda x_T - y_T)/y_P + lambda (-x_P/y_P) v + vw
// (lambda: the line's slope, T: a point on it). The product of two such lines costs 3
// Fp2 products instead of 6 (Fp12::monic_line_product_034/014), and the projective
// G2 doubling (4M + 6S) becomes 6M + 2S. Each line differs from MillerLoop's (prepare,
// dbl_step, add_step) by a factor in Fp2, which the final exponentiation kills, so the
// result equals MillerLoop::multi_unprepared's after it (tests/verifier/test_affine_miller.py).
// MillerLoop's lines stay as they are: the aggregation code and the GPU port use them.
#pragma once
#include <vector>
#include "pairing/miller_loop.hpp"

namespace snarkd {
namespace pairing {

template <class Cfg>
struct AffineMillerLoop {
  using F = typename Cfg::Fq;
  using F2 = typename Cfg::Fq2;
  using F12 = typename Cfg::Fq12;
  using G1 = typename Cfg::G1;
  using G2 = typename Cfg::G2;
  using ML = MillerLoop<Cfg>;

  // The two coefficients of a line that are not 1 (D-twist: at w and vw; M-twist: at v and 1).
  struct MonicLine { F2 slope_term, const_term; };

  // Per-pair state of the pairs that take part (no infinity point), compacted.
  struct Scratch {
    std::vector<F> x_neg_over_y, y_inv, inv_scratch;  // -x_P / y_P, 1 / y_P
    std::vector<G2> Q, T, R;             // the G2 points, the running points, the step's addend
    std::vector<size_t> at;              // each compacted pair's index among the n given
    std::vector<F2> den, prefix;         // the step's denominators and their prefix products
    std::vector<MonicLine> lines;
    std::vector<typename ML::Proj> proj_T;  // for the projective fallback
    std::vector<typename ML::Eval> proj_ev;
    std::vector<size_t> proj_live;
  };

  // f *= the product of the lines, two at a time. (flatten: the field arithmetic inlined
  // here, in the hot loops only, is ~10% faster than the calls to Fp2's products.)
  __attribute__((flatten)) static void apply_all(F12& f, const MonicLine* l, size_t m) {
    size_t k = 0;
    for (; k + 1 < m; k += 2) {
      if constexpr (Cfg::D_TWIST)
        f = f.mul_by_01234(F12::monic_line_product_034(l[k].slope_term, l[k].const_term, l[k + 1].slope_term, l[k + 1].const_term));
      else
        f = f.mul_by_01245(F12::monic_line_product_014(l[k].const_term, l[k].slope_term, l[k + 1].const_term, l[k + 1].slope_term));
    }
    if (k < m) {
      if constexpr (Cfg::D_TWIST) f = f.mul_by_034(F2::one(), l[k].slope_term, l[k].const_term);
      else f = f.mul_by_014(l[k].const_term, l[k].slope_term, F2::one());
    }
  }

  // One step for all m pairs: T_k <- 2 T_k (doubling) or T_k + R_k, and the line of each
  // into s.lines. update = false: the lines only (the loop's last step). False, with
  // nothing changed, when a denominator is zero (T_k = +-R_k, or y = 0 when doubling:
  // never for points of the order-r subgroups; the caller falls back to the projective loop).
  __attribute__((flatten)) static bool step(Scratch& s, size_t m, bool doubling, bool update) {
    F2 acc = F2::one();
    for (size_t k = 0; k < m; k++) {
      const G2& T = s.T[k];
      F2 d = doubling ? T.y.dbl() : T.x - s.R[k].x;
      if (d.is_zero()) return false;
      s.den[k] = d;
      s.prefix[k] = acc;
      acc = acc * d;
    }
    F2 inv = acc.inv();
    for (size_t k = m; k-- > 0;) {
      F2 d_inv = inv * s.prefix[k];
      inv = inv * s.den[k];
      G2& T = s.T[k];
      F2 lambda;
      if (doubling) {
        F2 xx = T.x.sqr();
        lambda = (xx.dbl() + xx) * d_inv;
      } else {
        lambda = (T.y - s.R[k].y) * d_inv;
      }
      F2 c = lambda * T.x - T.y;  // the line: y - lambda x + c, through T
      s.lines[k] = {mul_by_base(lambda, s.x_neg_over_y[k]), mul_by_base(c, s.y_inv[k])};
      if (update) {
        F2 x3 = lambda.sqr() - T.x - (doubling ? T.x : s.R[k].x);
        T.y = c - lambda * x3;
        T.x = x3;
      }
    }
    return true;
  }

  // prod_i f_{loop, Q_i}(P_i) up to factors in proper subfields (equal to
  // MillerLoop::multi_unprepared's value after the final exponentiation). Pairs with an
  // infinity point contribute 1.
  //
  // in_g2 (null: not asked): in_g2[i] = 1 when the loop itself shows Q_i in G2, else 0 (not in
  // G2, or not decided here: the caller checks those points its own way). pi: the untwist-
  // Frobenius-twist endomorphism.
  //   BN254: the running point ends as [6u + 2] Q + pi(Q) - pi^2(Q), and Q is in G2 exactly when
  //     that equals -pi^3(Q): the endomorphism [6u + 2] + pi - pi^2 + pi^3 kills G2 and acts on each
  //     part of prime order l | h2 of E'(Fp2) (h2 squarefree: 10069 * 5864401 * 1875725156269 * a
  //     178-bit prime) as a nonzero scalar mod l (tests/verifier/test_affine_miller.py checks both
  //     on points of every order), so it kills no point outside G2.
  //   BLS12-381: the running point ends as [|u|] Q, and the test is the single verifier's own,
  //     pi(Q) == [u] Q (Pairing::g2_in_subgroup), i.e. T == -pi(Q).
  // A pair whose P is infinity, or a chunk that falls back to the projective loop, leaves its
  // flag 0; Q = infinity is in G2.
  static F12 multi(const G1* P, const G2* Q, size_t n, Scratch& s, uint8_t* in_g2 = nullptr) {
    s.x_neg_over_y.clear();
    s.y_inv.clear();
    s.Q.clear();
    s.at.clear();
    for (size_t i = 0; i < n; i++) {
      if (in_g2) in_g2[i] = Q[i].is_inf();
      if (P[i].is_inf() || Q[i].is_inf()) continue;
      s.y_inv.push_back(P[i].y);
      s.x_neg_over_y.push_back(P[i].x.neg());
      s.Q.push_back(Q[i]);
      s.at.push_back(i);
    }
    const size_t m = s.Q.size();
    s.den.resize(m);
    s.prefix.resize(m);
    s.lines.resize(m);
    s.R.resize(m);
    for (size_t k = 0; k < m; k++)
      if (s.y_inv[k].is_zero()) return ML::multi_unprepared(P, Q, n, s.proj_T, s.proj_ev, s.proj_live);
    s.inv_scratch.resize(m);
    batch_inverse(s.y_inv.data(), m, s.inv_scratch.data());
    for (size_t k = 0; k < m; k++) s.x_neg_over_y[k] = s.x_neg_over_y[k] * s.y_inv[k];
    s.T = s.Q;

    F12 f = F12::one();
    auto run = [&](bool doubling, bool update) {
      if (!step(s, m, doubling, update)) return false;
      apply_all(f, s.lines.data(), m);
      return true;
    };
    for (size_t i = 1; i < Cfg::LOOP_LEN; i++) {
      if (i > 1) f = f.sqr();
      const int d = Cfg::LOOP[i];
      const bool last = !Cfg::BN && i + 1 == Cfg::LOOP_LEN && d == 0 && in_g2 == nullptr;
      if (!run(true, !last)) return ML::multi_unprepared(P, Q, n, s.proj_T, s.proj_ev, s.proj_live);
      if (d != 0) {
        for (size_t k = 0; k < m; k++) s.R[k] = d == 1 ? s.Q[k] : s.Q[k].neg();
        if (!run(false, Cfg::BN || i + 1 < Cfg::LOOP_LEN || in_g2 != nullptr))
          return ML::multi_unprepared(P, Q, n, s.proj_T, s.proj_ev, s.proj_live);
      }
    }
    if constexpr (Cfg::BN) {
      // T + pi(Q), then the line through T and -pi^2(Q) (T itself is not needed after it)
      const auto& fc = FrobeniusConsts<typename Cfg::Fq6>::get();
      for (size_t k = 0; k < m; k++) s.R[k] = G2{conj(s.Q[k].x) * fc.g[0][2], conj(s.Q[k].y) * fc.g[0][3]};
      if (!run(false, true)) return ML::multi_unprepared(P, Q, n, s.proj_T, s.proj_ev, s.proj_live);
      for (size_t k = 0; k < m; k++) s.R[k] = G2{s.Q[k].x * fc.g[1][2], (s.Q[k].y * fc.g[1][3]).neg()};
      if (!run(false, in_g2 != nullptr)) return ML::multi_unprepared(P, Q, n, s.proj_T, s.proj_ev, s.proj_live);
      if (in_g2)
        for (size_t k = 0; k < m; k++) {  // T = -pi^3(Q) = -pi(pi^2(Q)), pi^2(Q) = (x g_{2,2}, y g_{2,3})
          const G2 pi3{conj(s.Q[k].x * fc.g[1][2]) * fc.g[0][2], conj(s.Q[k].y * fc.g[1][3]) * fc.g[0][3]};
          in_g2[s.at[k]] = s.T[k].x == pi3.x && s.T[k].y == pi3.y.neg();
        }
    }
    if constexpr (!Cfg::BN) {
      if (in_g2) {  // T = [|u|] Q; u = -|u|: pi(Q) == [u] Q is T == -pi(Q)
        const auto& fc = FrobeniusConsts<typename Cfg::Fq6>::get();
        for (size_t k = 0; k < m; k++)
          in_g2[s.at[k]] = s.T[k].x == conj(s.Q[k].x) * fc.g1_inv[2] && s.T[k].y == (conj(s.Q[k].y) * fc.g1_inv[3]).neg();
      }
    }
    if constexpr (Cfg::NEG_U) f = f.conj();
    return f;
  }
};

}  // namespace pairing
}  // namespace snarkd
