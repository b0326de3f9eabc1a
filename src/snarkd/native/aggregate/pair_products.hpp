// Products of Miller loops that share their G2 points, for SnarkPack's
// commitments and GIPA rounds:
//   out[k] = prod_i f_{loop, Q_i}(P_k[i])      k < K, i < m
// (no final exponentiation: the caller multiplies the values that belong to one
// pairing product, then exponentiates once). Every G2 point's lines are computed
// once, on the fly, and applied to the K accumulators (one G1 point each), so
// no line tables are stored; the points are split into chunks, each chunk runs
// one Miller loop with K shared accumulators (one squaring chain per chunk),
// chunks run in parallel and their results are multiplied.
#pragma once
#include <algorithm>
#include <vector>

#include "pairing/final_exp.hpp"
#include "parallel.hpp"

namespace snarkd {
namespace aggregate {

using pairing::MillerLoop;

template <class Cfg>
struct PairProducts {
  using ML = MillerLoop<Cfg>;
  using F12 = typename Cfg::Fq12;
  using G1 = typename Cfg::G1;
  using G2 = typename Cfg::G2;
  using Proj = typename ML::Proj;
  using F2 = typename Cfg::Fq2;
  using F6 = typename Cfg::Fq6;

  // A line's value at a G1 point: three Fp2 coefficients at the twist's sparse positions
  // (D-twist: 1, w, vw; M-twist: 1, v, vw), as MillerLoop::apply places them.
  struct Sparse { F2 d0, d1, d2; };

  static inline Sparse eval(const pairing::Line<F2>& l, const G1& P) {
    F2 a = pairing::mul_by_base(l.cx, P.x), b = pairing::mul_by_base(l.cy, P.y);
    if constexpr (Cfg::D_TWIST) return {b, a, l.c};
    else return {l.c, a, b};
  }

  static inline void mul_one(F12& f, const Sparse& s) {
    if constexpr (Cfg::D_TWIST) f = f.mul_by_034(s.d0, s.d1, s.d2);
    else f = f.mul_by_014(s.d0, s.d1, s.d2);
  }

  // f *= l * l' for two lines: their product first (6 Fp2 multiplications, Karatsuba), then one
  // product with an element of five nonzero coefficients (17): 23 against 26 for two sparse products.
  static inline void mul_two(F12& f, const Sparse& l, const Sparse& m) {
    F2 t0 = l.d0 * m.d0, t1 = l.d1 * m.d1, t2 = l.d2 * m.d2;
    F2 x01 = (l.d0 + l.d1) * (m.d0 + m.d1) - t0 - t1;
    F2 x02 = (l.d0 + l.d2) * (m.d0 + m.d2) - t0 - t2;
    F2 x12 = (l.d1 + l.d2) * (m.d1 + m.d2) - t1 - t2;
    F6 aa, bb, sum;
    if constexpr (Cfg::D_TWIST) {
      // (d0 + (d3 + d4 v) w)(e0 + (e3 + e4 v) w): c0 = (t0 + xi t4, t3, x34), c1 = (x03, x04, 0)
      F6 c0{t0 + F6::mul_by_xi(t2), t1, x12};
      aa = f.c0 * c0;
      bb = f.c1.mul_by_01(x01, x02);
      sum = F6{c0.c0 + x01, c0.c1 + x02, c0.c2};
    } else {
      // (d0 + d1 v + d4 vw)(e0 + e1 v + e4 vw): c0 = (t0 + xi t4, x01, t1), c1 = (0, x04, x14) = v (x04 + x14 v)
      F6 c0{t0 + F6::mul_by_xi(t2), x01, t1};
      aa = f.c0 * c0;
      bb = f.c1.mul_by_01(x02, x12).mul_by_v();
      sum = F6{c0.c0, c0.c1 + x02, c0.c2 + x12};
    }
    F6 r1 = (f.c0 + f.c1) * sum - aa - bb;
    f = F12{aa + bb.mul_by_v(), r1};
  }

  // Miller loop over Q[b, e) with K accumulators; P[k][i] the G1 point of pair (k, i).
  static void chunk(const G2* Q, const G1* const* P, size_t K, size_t b, size_t e, F12* f) {
    for (size_t k = 0; k < K; k++) f[k] = F12::one();
    std::vector<size_t> live;
    for (size_t i = b; i < e; i++)
      if (!Q[i].is_inf()) live.push_back(i);
    if (live.empty()) return;
    const size_t L = live.size();
    std::vector<Proj> T(L);
    std::vector<G2> negQ(L);
    // pair (k, j) contributes unless its G1 point is infinity
    std::vector<uint8_t> use(K * L);
    for (size_t j = 0; j < L; j++) {
      const G2& q = Q[live[j]];
      T[j] = Proj{q.x, q.y, Cfg::Fq2::one()};
      negQ[j] = q.neg();
      for (size_t k = 0; k < K; k++) use[k * L + j] = !P[k][live[j]].is_inf();
    }
    // Each accumulator keeps one line value pending and multiplies lines into itself two at a time.
    std::vector<Sparse> pending(K);
    std::vector<uint8_t> has(K, 0);
    auto apply_all = [&](size_t j, const pairing::Line<F2>& l) {
      size_t i = live[j];
      for (size_t k = 0; k < K; k++) {
        if (!use[k * L + j]) continue;
        Sparse v = eval(l, P[k][i]);
        if (has[k]) { mul_two(f[k], pending[k], v); has[k] = 0; }
        else { pending[k] = v; has[k] = 1; }
      }
    };
    auto flush = [&]() {
      for (size_t k = 0; k < K; k++)
        if (has[k]) { mul_one(f[k], pending[k]); has[k] = 0; }
    };
    for (size_t s = 1; s < Cfg::LOOP_LEN; s++) {
      if (s > 1)
        for (size_t k = 0; k < K; k++) f[k] = f[k].sqr();  // (nothing pending: flushed below)
      int d = Cfg::LOOP[s];
      for (size_t j = 0; j < L; j++) {
        apply_all(j, ML::dbl_step(T[j]));
        if (d == 1) apply_all(j, ML::add_step(T[j], Q[live[j]]));
        else if (d == -1) apply_all(j, ML::add_step(T[j], negQ[j]));
      }
      flush();
    }
    if constexpr (Cfg::BN) {
      const auto& fc = pairing::FrobeniusConsts<typename Cfg::Fq6>::get();
      for (size_t j = 0; j < L; j++) {
        const G2& q = Q[live[j]];
        G2 Q1{pairing::conj(q.x) * fc.g[0][2], pairing::conj(q.y) * fc.g[0][3]};
        G2 Q2{q.x * fc.g[1][2], (q.y * fc.g[1][3]).neg()};
        apply_all(j, ML::add_step(T[j], Q1));
        apply_all(j, ML::add_step(T[j], Q2));
      }
      flush();
    }
    if constexpr (Cfg::NEG_U)
      for (size_t k = 0; k < K; k++) f[k] = f[k].conj();
  }

  // out[k] for k < K over m pairs each; chunks of `per` points scheduled over T threads.
  static void run(const G2* Q, size_t m, const G1* const* P, size_t K, unsigned T, F12* out, size_t per = 64) {
    for (size_t k = 0; k < K; k++) out[k] = F12::one();
    if (m == 0) return;
    const size_t ntasks = (m + per - 1) / per;
    unsigned TT = (unsigned)std::min<size_t>(std::max(1u, T), ntasks);
    std::vector<F12> acc(TT * K, F12::one());
    parallel_tasks(ntasks, TT, [&](size_t t, unsigned tid) {
      std::vector<F12> f(K);
      chunk(Q, P, K, t * per, std::min(m, (t + 1) * per), f.data());
      for (size_t k = 0; k < K; k++) acc[tid * K + k] = acc[tid * K + k] * f[k];
    });
    for (unsigned t = 0; t < TT; t++)
      for (size_t k = 0; k < K; k++) out[k] = out[k] * acc[t * K + k];
  }
};

}  // namespace aggregate
}  // namespace snarkd
