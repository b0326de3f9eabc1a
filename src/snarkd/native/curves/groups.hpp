// Group descriptors (coordinate field + b) for G1/G2 of both curves.
#pragma once
#include "curves/bn254.hpp"
#include "curves/bls12_381.hpp"
#include "ec/point.hpp"

namespace snarkd {
namespace bn254 {
struct G1Cfg { using F = Fq; static inline F b() { return F::from_limbs(G1_B); } };
struct G2Cfg { using F = Fq2; static inline F b() { return {Fq::from_limbs(G2_B0), Fq::from_limbs(G2_B1)}; } };
}  // namespace bn254
namespace bls12_381 {
struct G1Cfg { using F = Fq; static inline F b() { return F::from_limbs(G1_B); } };
struct G2Cfg { using F = Fq2; static inline F b() { return {Fq::from_limbs(G2_B0), Fq::from_limbs(G2_B1)}; } };
}  // namespace bls12_381
}  // namespace snarkd
