// Group descriptors (coordinate field + b) for G1/G2 of both curves.
#pragma once
#include "curves/bn254.hpp"
#include "curves/bls12_381.hpp"
#include "ec/point.hpp"
#include "ec/glv.hpp"
#include "curves/glv_constants.hpp"

namespace snarkd {
namespace bn254 {
struct G1Cfg { using F = Fq; static inline F b() { return F::from_limbs(G1_B); } };
struct G2Cfg { using F = Fq2; static inline F b() { return {Fq::from_limbs(G2_B0), Fq::from_limbs(G2_B1)}; } };
}  // namespace bn254
namespace bls12_381 {
struct G1Cfg { using F = Fq; static inline F b() { return F::from_limbs(G1_B); } };
struct G2Cfg { using F = Fq2; static inline F b() { return {Fq::from_limbs(G2_B0), Fq::from_limbs(G2_B1)}; } };
}  // namespace bls12_381

// G1 of both curves has the endomorphism phi(x, y) = (beta x, y) (ec/glv.hpp)
template <>
struct GlvOf<bn254::G1Cfg> {
  static constexpr bool ok = true;
  static constexpr bool psi = false;
  using C = bn254::GlvG1;
};
template <>
struct GlvOf<bls12_381::G1Cfg> {
  static constexpr bool ok = true;
  static constexpr bool psi = false;
  using C = bls12_381::GlvG1;
};
// G2 of both curves: the Frobenius-based psi (BN254) or psi^2 (BLS12-381), GLS
template <>
struct GlvOf<bn254::G2Cfg> {
  static constexpr bool ok = true;
  static constexpr bool psi = true;
  using C = bn254::GlsG2;
};
template <>
struct GlvOf<bls12_381::G2Cfg> {
  static constexpr bool ok = true;
  static constexpr bool psi = true;
  using C = bls12_381::GlsG2;
};
}  // namespace snarkd
