// The XYZZ point formulas (a = 0; x = X/ZZ, y = Y/ZZZ, ZZ^3 = ZZZ^2), written once for the CPU
// core (ec/point.hpp) and the CUDA kernels (gpu/curve.cuh): EFD's dbl-2008-s-1, mdbl-2008-s-1,
// madd-2008-s and add-2008-s. No library headers or calls, so g++, nvcc and NVRTC all take it.
//
// Each formula is a function template over the point P (members X, Y, ZZ, ZZZ of a field type F;
// P::inf(), p.is_inf(), and p.dbl() / p.set_dbl_affine(a) for the exceptional cases) and the
// affine point A (members x, y). F needs +, -, *, sqr(), dbl(), is_zero(), F::one(): both the
// CPU's Fp/Fp2 (ff/mont.hpp, ff/fp2.hpp) and the device's (gpu/field.cuh) have them.
//
// The point types keep what differs and call these from their members: the CPU's load/store
// (snarkjs bytes), to_affine and neg in ec/point.hpp; the device's word load/store and its
// __noinline__ point calls in gpu/curve.cuh. Each side compiles to the code it had when its
// members held the formulas (SNARKD_HD_INLINE, host_device.hpp, says how).
#pragma once
#include "../host_device.hpp"  // SNARKD_HD_INLINE (relative: the device's builds have no -I for native/)

namespace snarkd {
namespace xyzz {

// dbl-2008-s-1: p = 2p
template <class P>
SNARKD_HD_INLINE void dbl(P& p) {
  using F = decltype(p.X);
  if (p.is_inf()) return;
  F U = p.Y.dbl();
  F V = U.sqr();
  F W = U * V;
  F S = p.X * V;
  F X2 = p.X.sqr();
  F M = X2.dbl() + X2;
  p.X = M.sqr() - S.dbl();
  p.Y = M * (S - p.X) - W * p.Y;
  p.ZZ = V * p.ZZ;
  p.ZZZ = W * p.ZZZ;
}

// mdbl-2008-s-1: p = 2a (a affine, not infinity)
template <class P, class A>
SNARKD_HD_INLINE void set_dbl_affine(P& p, const A& a) {
  using F = decltype(p.X);
  F U = a.y.dbl();
  F V = U.sqr();
  F W = U * V;
  F S = a.x * V;
  F X2 = a.x.sqr();
  F M = X2.dbl() + X2;
  p.X = M.sqr() - S.dbl();
  p.Y = M * (S - p.X) - W * a.y;
  p.ZZ = V;
  p.ZZZ = W;
}

// madd-2008-s: p += a (a affine, not infinity); p = a or p = 2a through p's own members.
template <class P, class A>
SNARKD_HD_INLINE void add_affine(P& p, const A& a) {
  using F = decltype(p.X);
  if (p.is_inf()) {
    p.X = a.x; p.Y = a.y; p.ZZ = F::one(); p.ZZZ = F::one();
    return;
  }
  F U2 = a.x * p.ZZ;
  F S2 = a.y * p.ZZZ;
  F Pd = U2 - p.X;
  F R = S2 - p.Y;
  if (Pd.is_zero()) {
    if (R.is_zero()) p.set_dbl_affine(a);
    else p = P::inf();
    return;
  }
  F PP = Pd.sqr();
  F PPP = Pd * PP;
  F Q = p.X * PP;
  p.X = R.sqr() - PPP - Q.dbl();
  p.Y = R * (Q - p.X) - p.Y * PPP;
  p.ZZ = p.ZZ * PP;
  p.ZZZ = p.ZZZ * PPP;
}

// add-2008-s: p += o (either may be infinity)
template <class P>
SNARKD_HD_INLINE void add(P& p, const P& o) {
  using F = decltype(p.X);
  if (o.is_inf()) return;
  if (p.is_inf()) { p = o; return; }
  F U1 = p.X * o.ZZ;
  F U2 = o.X * p.ZZ;
  F S1 = p.Y * o.ZZZ;
  F S2 = o.Y * p.ZZZ;
  F Pd = U2 - U1;
  F R = S2 - S1;
  if (Pd.is_zero()) {
    if (R.is_zero()) p.dbl();
    else p = P::inf();
    return;
  }
  F PP = Pd.sqr();
  F PPP = Pd * PP;
  F Q = U1 * PP;
  p.X = R.sqr() - PPP - Q.dbl();
  p.Y = R * (Q - p.X) - S1 * PPP;
  p.ZZ = p.ZZ * o.ZZ * PP;
  p.ZZZ = p.ZZZ * o.ZZZ * PPP;
}

}  // namespace xyzz
}  // namespace snarkd
