// The optimal ate Miller loop's two steps on the twist, written once for the CPU core
// (pairing/miller_loop.hpp: MillerLoop's dbl_step/add_step, used by prepare, multi_unprepared and
// the aggregation code) and the device (gpu/pairing.cuh: the miller_pairs kernel), so a product
// computed on either is the same Fp12 element, byte for byte. The running point T = (X : Y : Z) is
// homogeneous projective (Costello-Lange-Naehrig / Aranha et al. 2010); each step returns its line
// as three Fp2 values {c, cx, cy}: the line at P = (xP, yP) is c + cx xP + cy yP (where the three
// land in Fp12 is the twist's business: the callers' apply/eval).
//
// Template arguments: L, the caller's line type (an aggregate {c, cx, cy}); T, its running point
// (members X, Y, Z); Ops, what the two sides compute their own way: Ops::twist_b3() = 3 b' (the
// CPU reads a cached value, the device folds constants) and Ops::half(a) = a / 2. The field needs
// +, -, *, sqr(), dbl(), neg().
//
// Not here, and why: the loops that drive these steps differ in their batching, not in their
// arithmetic (the CPU stores a point's lines once and shares one squaring chain among all pairs;
// a device thread recomputes the lines of its own pair), and the affine loop of batch verification
// (pairing/affine_miller.hpp) uses other lines altogether (affine T with inversions shared across
// pairs, each line divided to be monic), equal to these only after the final exponentiation.
#pragma once
#include "../host_device.hpp"  // SNARKD_HD_INLINE (relative: the device's builds have no -I for native/)

namespace snarkd {
namespace pairing {

// T <- 2T; the tangent line at T.
template <class Ops, class L, class T>
SNARKD_HD_INLINE L line_dbl(T& t) {
  using F2 = decltype(t.X);
  const F2 A = Ops::half(t.X * t.Y);
  const F2 B = t.Y.sqr();
  const F2 C = t.Z.sqr();
  const F2 E = Ops::twist_b3() * C;
  const F2 F = E.dbl() + E;
  const F2 G = Ops::half(B + F);
  const F2 H = (t.Y + t.Z).sqr() - (B + C);  // 2YZ
  const F2 X2 = t.X.sqr();
  const F2 E2 = E.sqr();
  const L l{E - B, X2.dbl() + X2, H.neg()};
  t.X = A * (B - F);
  t.Y = G.sqr() - (E2.dbl() + E2);
  t.Z = B * H;
  return l;
}

// T <- T + Q (Q = (qx, qy) affine, not infinity); the chord line through T and Q.
template <class L, class T, class F2>
SNARKD_HD_INLINE L line_add(T& t, const F2& qx, const F2& qy) {
  const F2 theta = t.Y - qy * t.Z;
  const F2 lambda = t.X - qx * t.Z;
  const F2 C = theta.sqr();
  const F2 D = lambda.sqr();
  const F2 E = lambda * D;
  const F2 F = t.Z * C;
  const F2 G = t.X * D;
  const F2 H = E + F - G.dbl();
  const L l{theta * qx - lambda * qy, theta.neg(), lambda};
  t.X = lambda * H;
  t.Y = theta * (G - H) - t.Y * E;
  t.Z = t.Z * E;
  return l;
}

}  // namespace pairing
}  // namespace snarkd
