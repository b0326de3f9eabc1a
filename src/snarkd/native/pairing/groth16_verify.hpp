// Pairing API, subgroup checks and Groth16 verification over affine Montgomery
// points in the zkey byte layout (G1: x, y; G2: x.c0, x.c1, y.c0, y.c1; each
// coordinate n8q bytes little-endian Montgomery; all-zero bytes = infinity).
#pragma once
#include <cstring>
#include <vector>
#include "ec/jacobian.hpp"
#include "pairing/final_exp.hpp"

namespace snarkd {
namespace pairing {

enum VerifyStatus : int {
  VERIFY_OK = 0,              // the pairing equation holds
  VERIFY_FAILED = 1,          // the pairing equation does not hold
  PROOF_NOT_ON_CURVE = 2,     // a proof point is off its curve or has a coordinate >= q
  PROOF_NOT_IN_SUBGROUP = 3,  // a proof point is on the curve but not in the order-r subgroup
  PUBLIC_OUT_OF_RANGE = 4,    // a public value >= r
  VK_NOT_ON_CURVE = 5,        // a verification-key point is off its curve (bad input)
};

template <class Cfg>
struct Pairing {
  using F12 = typename Cfg::Fq12;
  using G1 = typename Cfg::G1;
  using G2 = typename Cfg::G2;
  using Fr = typename Cfg::Fr;
  using ML = MillerLoop<Cfg>;
  static constexpr size_t G1_BYTES = sizeof(G1);
  static constexpr size_t G2_BYTES = sizeof(G2);

  // Reference check [r] p == O (plain double-and-add over the 255-bit r).
  template <class Curve>
  static bool in_subgroup_naive(const Affine<Curve>& p) {
    if (p.is_inf()) return true;
    return scalar_mul<Curve>(p, Fr::modulus().v, Fr::N).is_inf();
  }

  // psi = untwist o Frobenius o twist on E'(Fp2)
  static G2 psi(const G2& q) {
    if (q.is_inf()) return q;
    const auto& fc = FrobeniusConsts<typename Cfg::Fq6>::get();
    if constexpr (Cfg::D_TWIST) return {conj(q.x) * fc.g[0][2], conj(q.y) * fc.g[0][3]};
    else return {conj(q.x) * fc.g1_inv[2], conj(q.y) * fc.g1_inv[3]};
  }

  // Endomorphism tests (all sound: see tests/verifier/test_pairing.py and the notes):
  //  G2, BN (before): psi(Q) == [6u^2] Q  (psi^2 - t psi + p = 0 and 6u^2 = p mod r give
  //           [(6u^2)^2 - t 6u^2 + p] Q = [r] Q = 0); replaced by the one below
  //  G2, BLS: psi(Q) == [u] Q     (Scott 2021/1130; gives [(u-1)^2 r / 3] Q = 0 and
  //           (u-1)^2/3 is prime to the G2 cofactor of BLS12-381)
  //  G1, BLS: phi(P) == [-u^2] P, phi(x, y) = (beta x, y)  (phi^2 + phi + 1 = 0 gives [r] P = 0)
  //  G2, BN (faster, used): [u+1]Q + psi([u]Q) + psi^2([u]Q) == psi^3([2u]Q) (El Housni-Guillevic-
  //           Piellard, eprint 2022/348, sec. 5.1: sound for BN seeds with u != 4 mod 13 and
  //           u != 92 mod 97, which BN254's u satisfies): one 63-bit multiplication instead of 127
  static Jacobian<typename Cfg::G2Curve> psi(const Jacobian<typename Cfg::G2Curve>& q) {
    // psi on x = X/Z^2, y = Y/Z^3: conjugation commutes with the division
    const auto& fc = FrobeniusConsts<typename Cfg::Fq6>::get();
    if constexpr (Cfg::D_TWIST) return {conj(q.X) * fc.g[0][2], conj(q.Y) * fc.g[0][3], conj(q.Z)};
    else return {conj(q.X) * fc.g1_inv[2], conj(q.Y) * fc.g1_inv[3], conj(q.Z)};
  }
  // (the scalar multiplications here are in Jacobian coordinates: ec/jacobian.hpp)
  static bool g2_in_subgroup(const G2& q) {
    if (q.is_inf()) return true;
    using C2 = typename Cfg::G2Curve;
    using J = Jacobian<C2>;
    if constexpr (Cfg::BN) {
      static_assert(Cfg::U % 13 != 4 && Cfg::U % 97 != 92, "the BN G2 test needs u != 4 mod 13, u != 92 mod 97");
      u64 k = Cfg::U;
      J uq = scalar_mul_jacobian<C2>(q, &k, 1);
      J psi_uq = psi(uq);
      J lhs = uq;
      lhs.add_affine(q);
      lhs.add(psi_uq);
      lhs.add(psi(psi_uq));
      J two_uq = uq;
      two_uq.dbl();
      return lhs.same(psi(psi(psi(two_uq))));
    } else {
      u64 k = Cfg::U;
      J uq = scalar_mul_jacobian<C2>(q, &k, 1);
      if (Cfg::NEG_U) uq = uq.neg();
      return uq.same(J::from_affine(psi(q)));
    }
  }
  static bool g1_in_subgroup(const G1& p) {
    if constexpr (Cfg::G1_COFACTOR_ONE) {
      return true;
    } else {
      if (p.is_inf()) return true;
      using C1 = typename Cfg::G1Curve;
      u128 k = (u128)Cfg::U * Cfg::U;
      u64 limbs[2] = {(u64)k, (u64)(k >> 64)};
      static const typename Cfg::Fq beta = Cfg::Fq::from_limbs(Cfg::G1_BETA).to_mont();
      G1 phi{p.x * beta, p.y};
      return scalar_mul_jacobian<C1>(p, limbs, 2).neg().same(Jacobian<C1>::from_affine(phi));
    }
  }

  static F12 multi_pairing(const G1* P, const G2* Q, size_t n) {
    std::vector<G2Prepared<Cfg>> prep(n);
    std::vector<const G2Prepared<Cfg>*> ptr(n);
    for (size_t i = 0; i < n; i++) { prep[i] = ML::prepare(Q[i]); ptr[i] = &prep[i]; }
    return FinalExp<Cfg>::apply(ML::multi(P, ptr.data(), n));
  }

  // Plain scalar (little-endian 64-bit limbs, < r) times an affine G1 point.
  static XYZZ<typename Cfg::G1Curve> g1_mul(const G1& p, const u64* k) { return scalar_mul<typename Cfg::G1Curve>(p, k, Fr::N); }

  // A verification key checked and prepared once (lines of beta, gamma, delta),
  // reusable for any number of proofs.
  struct PreparedVK {
    G1 alpha;
    std::vector<G1> ic;
    G2Prepared<Cfg> beta, gamma, delta;
    bool valid = false;  // all key points on their curves
  };

  static PreparedVK prepare_vk(const uint8_t* alpha1, const uint8_t* beta2, const uint8_t* gamma2, const uint8_t* delta2,
                               const uint8_t* ic, size_t n_ic) {
    PreparedVK vk;
    vk.alpha = G1::load(alpha1);
    G2 beta = G2::load(beta2), gamma = G2::load(gamma2), delta = G2::load(delta2);
    if (!vk.alpha.on_curve() || !beta.on_curve() || !gamma.on_curve() || !delta.on_curve()) return vk;
    vk.ic.resize(n_ic);
    for (size_t i = 0; i < n_ic; i++) {
      vk.ic[i] = G1::load(ic + i * G1_BYTES);
      if (!vk.ic[i].on_curve()) return vk;
    }
    vk.beta = ML::prepare(beta);
    vk.gamma = ML::prepare(gamma);
    vk.delta = ML::prepare(delta);
    vk.valid = true;
    return vk;
  }

  // publics: n_public = ic.size() - 1 plain little-endian scalars of 8 * Fr::N bytes.
  static int verify_prepared(const PreparedVK& vk, const uint8_t* publics, const uint8_t* pa, const uint8_t* pb,
                             const uint8_t* pc) {
    if (!vk.valid) return VK_NOT_ON_CURVE;
    size_t n_public = vk.ic.size() - 1;
    std::vector<u64> scalars(n_public * Fr::N);
    if (n_public) std::memcpy(scalars.data(), publics, scalars.size() * 8);
    for (size_t i = 0; i < n_public; i++)
      if (!Fr::lt_mod(&scalars[i * Fr::N])) return PUBLIC_OUT_OF_RANGE;

    G1 A = G1::load(pa), C = G1::load(pc);
    G2 B = G2::load(pb);
    if (!A.on_curve() || !B.on_curve() || !C.on_curve()) return PROOF_NOT_ON_CURVE;
    if (!g1_in_subgroup(A) || !g1_in_subgroup(C) || !g2_in_subgroup(B)) return PROOF_NOT_IN_SUBGROUP;

    // cpub = IC0 + sum pub_i IC_i
    XYZZ<typename Cfg::G1Curve> acc = XYZZ<typename Cfg::G1Curve>::from_affine(vk.ic[0]);
    for (size_t i = 0; i < n_public; i++) acc.add(g1_mul(vk.ic[i + 1], &scalars[i * Fr::N]));
    G1 cpub = acc.to_affine();

    // e(-A, B) e(alpha, beta) e(cpub, gamma) e(C, delta) == 1
    G2Prepared<Cfg> pB = ML::prepare(B);
    G1 P[4] = {A.neg(), vk.alpha, cpub, C};
    const G2Prepared<Cfg>* Q[4] = {&pB, &vk.beta, &vk.gamma, &vk.delta};
    return FinalExp<Cfg>::apply(ML::multi(P, Q, 4)).is_one() ? VERIFY_OK : VERIFY_FAILED;
  }

  static int groth16_verify(const uint8_t* alpha1, const uint8_t* beta2, const uint8_t* gamma2, const uint8_t* delta2,
                            const uint8_t* ic, size_t n_public, const uint8_t* publics,
                            const uint8_t* pa, const uint8_t* pb, const uint8_t* pc) {
    PreparedVK vk = prepare_vk(alpha1, beta2, gamma2, delta2, ic, n_public + 1);
    return verify_prepared(vk, publics, pa, pb, pc);
  }
};

}  // namespace pairing
}  // namespace snarkd
