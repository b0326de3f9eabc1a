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

  // A line's value at a G1 point, and lines multiplied into an accumulator two at a time: the
  // Miller loop's own (MillerLoop::eval / apply_all, Fp12::line_product_034/014).
  using Sparse = typename ML::Eval;
  static inline Sparse eval(const pairing::Line<F2>& l, const G1& P) { return ML::eval(l, P); }
  static inline void mul_one(F12& f, const Sparse& s) { ML::apply_all(f, &s, 1); }
  static inline void mul_two(F12& f, const Sparse& l, const Sparse& m) {
    const Sparse two[2] = {l, m};
    ML::apply_all(f, two, 2);
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
