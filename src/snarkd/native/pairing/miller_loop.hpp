// Optimal ate Miller loop, generic over a pairing config (see BN254Pairing and
// BLS12_381Pairing at the bottom).
//
// G2 points live on the sextic twist E'(Fp2). Lines are computed in homogeneous
// projective coordinates (Costello-Lange-Naehrig / Aranha et al. 2010; the two steps
// in pairing/lines.hpp, which the device's loop, gpu/pairing.cuh, shares) and
// stored without P as three Fp2 values (c, cx, cy): the line at P = (xP, yP) is
//   c + cx*xP + cy*yP placed at (vw, w, 1) for a D-twist   (BN254)
//                            at (1,  v, vw) for an M-twist  (BLS12-381)
// (any factor in a proper subfield is dropped: the final exponentiation kills it).
// A prepared G2 point (its lines) can be reused with any number of G1 points.
#pragma once
#include <vector>
#include "curves/groups.hpp"
#include "ec/point.hpp"
#include "pairing/fp12.hpp"
#include "pairing/lines.hpp"

namespace snarkd {
namespace pairing {

template <class F2>
struct Line {
  F2 c, cx, cy;
};

template <class Cfg>
struct G2Prepared {
  using F2 = typename Cfg::Fq2;
  std::vector<Line<F2>> lines;
  bool infinity = true;
};

template <class Cfg>
struct MillerLoop {
  using F = typename Cfg::Fq;
  using F2 = typename Cfg::Fq2;
  using F12 = typename Cfg::Fq12;
  using G1 = typename Cfg::G1;
  using G2 = typename Cfg::G2;
  using L = Line<F2>;

  struct Proj { F2 X, Y, Z; };

  static inline F2 twist_b3() {  // 3 b'
    static const F2 b3 = Cfg::G2Curve::b().dbl() + Cfg::G2Curve::b();
    return b3;
  }

  static inline F2 half(const F2& a) { return half2(a); }

  // The two steps (pairing/lines.hpp, shared with the device's Miller loop, gpu/pairing.cuh).
  static inline L dbl_step(Proj& T) { return line_dbl<MillerLoop, L>(T); }  // T <- 2T, the tangent line at T
  // T <- T + Q (Q affine, not infinity), the chord line.
  static inline L add_step(Proj& T, const G2& Q) { return line_add<L>(T, Q.x, Q.y); }

  // Lines of the loop for Q (empty if Q is infinity). Order of use:
  // for each digit after the top: dbl line, then an add line if the digit != 0;
  // then (BN only) the two Frobenius lines.
  static G2Prepared<Cfg> prepare(const G2& Q) {
    G2Prepared<Cfg> out;
    if (Q.is_inf()) return out;
    out.infinity = false;
    out.lines.reserve(Cfg::LOOP_LEN + Cfg::LOOP_NONZERO + 2);
    Proj T{Q.x, Q.y, F2::one()};
    G2 negQ = Q.neg();
    for (size_t i = 1; i < Cfg::LOOP_LEN; i++) {
      out.lines.push_back(dbl_step(T));
      int d = Cfg::LOOP[i];
      if (d == 1) out.lines.push_back(add_step(T, Q));
      else if (d == -1) out.lines.push_back(add_step(T, negQ));
    }
    if constexpr (Cfg::BN) {
      const auto& fc = FrobeniusConsts<typename Cfg::Fq6>::get();
      G2 Q1{conj(Q.x) * fc.g[0][2], conj(Q.y) * fc.g[0][3]};
      G2 Q2{Q.x * fc.g[1][2], (Q.y * fc.g[1][3]).neg()};
      out.lines.push_back(add_step(T, Q1));
      out.lines.push_back(add_step(T, Q2));
    }
    return out;
  }

  static inline void apply(F12& f, const L& l, const G1& P) {
    F2 a = mul_by_base(l.cx, P.x);
    F2 b = mul_by_base(l.cy, P.y);
    if constexpr (Cfg::D_TWIST) f = f.mul_by_034(b, a, l.c);
    else f = f.mul_by_014(l.c, a, b);
  }

  // prod_i f_{loop, Q_i}(P_i), one shared squaring chain. Pairs with an
  // infinity point contribute 1.
  static F12 multi(const G1* P, const G2Prepared<Cfg>* const* Q, size_t n) {
    std::vector<size_t> live;
    for (size_t i = 0; i < n; i++)
      if (!P[i].is_inf() && !Q[i]->infinity) live.push_back(i);
    F12 f = F12::one();
    size_t k = 0;  // line cursor (same for every prepared point)
    for (size_t i = 1; i < Cfg::LOOP_LEN; i++) {
      if (i > 1) f = f.sqr();
      for (size_t j : live) apply(f, Q[j]->lines[k], P[j]);
      k++;
      if (Cfg::LOOP[i] != 0) {
        for (size_t j : live) apply(f, Q[j]->lines[k], P[j]);
        k++;
      }
    }
    if constexpr (Cfg::BN) {
      for (int s = 0; s < 2; s++) {
        for (size_t j : live) apply(f, Q[j]->lines[k], P[j]);
        k++;
      }
    }
    if constexpr (Cfg::NEG_U) f = f.conj();
    return f;
  }

  // A line evaluated at P: its three nonzero Fp12 coefficients (D-twist: at 1, w, vw;
  // M-twist: at 1, v, vw).
  struct Eval { F2 d0, d1, d2; };
  static inline Eval eval(const L& l, const G1& P) {
    F2 a = mul_by_base(l.cx, P.x);
    F2 b = mul_by_base(l.cy, P.y);
    if constexpr (Cfg::D_TWIST) return {b, a, l.c};
    else return {l.c, a, b};
  }
  // f *= the product of the evaluated lines (two at a time: see Fp12::line_product_034)
  static inline void apply_all(F12& f, const Eval* e, size_t n) {
    size_t k = 0;
    for (; k + 1 < n; k += 2) {
      if constexpr (Cfg::D_TWIST)
        f = f.mul_by_01234(F12::line_product_034(e[k].d0, e[k].d1, e[k].d2, e[k + 1].d0, e[k + 1].d1, e[k + 1].d2));
      else
        f = f.mul_by_01245(F12::line_product_014(e[k].d0, e[k].d1, e[k].d2, e[k + 1].d0, e[k + 1].d1, e[k + 1].d2));
    }
    if (k < n) {
      if constexpr (Cfg::D_TWIST) f = f.mul_by_034(e[k].d0, e[k].d1, e[k].d2);
      else f = f.mul_by_014(e[k].d0, e[k].d1, e[k].d2);
    }
  }

  // prod_i f_{loop, Q_i}(P_i) for affine Q_i never reused: each line is computed and applied
  // at once (the same lines, in the same order, as prepare + multi), so nothing is stored;
  // the lines of a step are multiplied two by two before going into f.
  // T, ev, live: scratch. Pairs with an infinity point contribute 1.
  static F12 multi_unprepared(const G1* P, const G2* Q, size_t n, std::vector<Proj>& T, std::vector<Eval>& ev,
                              std::vector<size_t>& live) {
    live.clear();
    for (size_t i = 0; i < n; i++)
      if (!P[i].is_inf() && !Q[i].is_inf()) live.push_back(i);
    T.resize(n);
    ev.resize(live.size());
    for (size_t j : live) T[j] = Proj{Q[j].x, Q[j].y, F2::one()};
    const size_t nl = live.size();
    F12 f = F12::one();
    for (size_t i = 1; i < Cfg::LOOP_LEN; i++) {
      if (i > 1) f = f.sqr();
      for (size_t k = 0; k < nl; k++) ev[k] = eval(dbl_step(T[live[k]]), P[live[k]]);
      apply_all(f, ev.data(), nl);
      int d = Cfg::LOOP[i];
      if (d != 0) {
        for (size_t k = 0; k < nl; k++) {
          size_t j = live[k];
          ev[k] = eval(add_step(T[j], d == 1 ? Q[j] : Q[j].neg()), P[j]);
        }
        apply_all(f, ev.data(), nl);
      }
    }
    if constexpr (Cfg::BN) {
      const auto& fc = FrobeniusConsts<typename Cfg::Fq6>::get();
      for (size_t k = 0; k < nl; k++) {
        size_t j = live[k];
        G2 Q1{conj(Q[j].x) * fc.g[0][2], conj(Q[j].y) * fc.g[0][3]};
        ev[k] = eval(add_step(T[j], Q1), P[j]);
      }
      apply_all(f, ev.data(), nl);
      for (size_t k = 0; k < nl; k++) {
        size_t j = live[k];
        G2 Q2{Q[j].x * fc.g[1][2], (Q[j].y * fc.g[1][3]).neg()};
        ev[k] = eval(add_step(T[j], Q2), P[j]);
      }
      apply_all(f, ev.data(), nl);
    }
    if constexpr (Cfg::NEG_U) f = f.conj();
    return f;
  }
};

// ---------------------------------------------------------------- configs
struct BN254Pairing {
  using Fq = bn254::Fq;
  using Fq2 = bn254::Fq2;
  using Fq6 = Fp6<Fq2, 9, 1>;
  using Fq12 = Fp12<Fq6>;
  using G1Curve = bn254::G1Cfg;
  using G2Curve = bn254::G2Cfg;
  using G1 = Affine<G1Curve>;
  using G2 = Affine<G2Curve>;
  using Fr = bn254::Fr;
  static constexpr bool BN = true;
  static constexpr bool D_TWIST = true;
  static constexpr bool NEG_U = false;
  static constexpr u64 U = 4965661367192848881ULL;  // |u|
  static constexpr bool G1_COFACTOR_ONE = true;
  // 6u + 2 in NAF, most significant digit first
  static constexpr size_t LOOP_LEN = 66;
  static constexpr int8_t LOOP[LOOP_LEN] = {
      1, 0, -1, 0, 1, 0, 0, 0, -1, 0, -1, 0, 0, 0, -1, 0, 1, 0, -1, 0, 0, -1, 0,
      0, 0, 0, 0, 1, 0, 0, -1, 0, 1, 0, 0, -1, 0, 0, 0, 0, -1, 0, 1, 0, 0, 0,
      -1, 0, -1, 0, 0, 1, 0, 0, 0, -1, 0, 0, -1, 0, 1, 0, 1, 0, 0, 0};
  static constexpr size_t LOOP_NONZERO = 21;  // nonzero digits after the top one
};

struct BLS12_381Pairing {
  using Fq = bls12_381::Fq;
  using Fq2 = bls12_381::Fq2;
  using Fq6 = Fp6<Fq2, 1, 1>;
  using Fq12 = Fp12<Fq6>;
  using G1Curve = bls12_381::G1Cfg;
  using G2Curve = bls12_381::G2Cfg;
  using G1 = Affine<G1Curve>;
  using G2 = Affine<G2Curve>;
  using Fr = bls12_381::Fr;
  static constexpr bool BN = false;
  static constexpr bool D_TWIST = false;
  static constexpr bool NEG_U = true;
  static constexpr u64 U = 0xd201000000010000ULL;  // |u|, u = -U
  static constexpr bool G1_COFACTOR_ONE = false;
  // cube root of unity in Fq (plain integer) with phi(x, y) = (beta x, y) acting as -u^2 on G1
  static constexpr u64 G1_BETA[6] = {0x2e01fffffffefffeULL, 0xde17d813620a0002ULL, 0xddb3a93be6f89688ULL, 0xba69c6076a0f77eaULL, 0x5f19672fdf76ce51ULL, 0x0000000000000000ULL};
  // |u| in binary, most significant bit first
  static constexpr size_t LOOP_LEN = 64;
  static constexpr int8_t LOOP[LOOP_LEN] = {
      1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  static constexpr size_t LOOP_NONZERO = 5;
};

}  // namespace pairing
}  // namespace snarkd
