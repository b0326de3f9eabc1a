// Short Weierstrass points (a = 0) on the device, mirroring the CPU core
// (src/snarkd/native/ec/point.hpp): affine in the zkey layout (x, y;
// all-zero = infinity) and XYZZ buckets (x = X/ZZ, y = Y/ZZZ).
#pragma once
#include "field.cuh"

// Point operations are real calls (not inlined): each is thousands of
// instructions, so the call costs nothing and the kernels stay small enough to
// compile in seconds.
#define SNARKD_PT __device__ __noinline__

template <class F>
struct Affine {
  F x, y;
  static constexpr int WORDS = 2 * F::N;
  static SNARKD_DI Affine load(const uint32_t* p) { return {F::load(p), F::load(p + F::N)}; }
  SNARKD_DI bool is_inf() const { return x.is_zero() && y.is_zero(); }
};

template <class F>
struct XYZZ {
  F X, Y, ZZ, ZZZ;
  static constexpr int WORDS = 4 * F::N;

  static SNARKD_DI XYZZ inf() { return {F::one(), F::one(), F::zero(), F::zero()}; }
  SNARKD_DI bool is_inf() const { return ZZ.is_zero(); }
  static SNARKD_DI XYZZ load(const uint32_t* p) {
    return {F::load(p), F::load(p + F::N), F::load(p + 2 * F::N), F::load(p + 3 * F::N)};
  }
  SNARKD_DI void store(uint32_t* p) const {
    X.store(p); Y.store(p + F::N); ZZ.store(p + 2 * F::N); ZZZ.store(p + 3 * F::N);
  }

  // dbl-2008-s-1
  SNARKD_PT void dbl() {
    if (is_inf()) return;
    F U = Y.dbl();
    F V = U.sqr();
    F W = U * V;
    F S = X * V;
    F X2 = X.sqr();
    F M = X2.dbl() + X2;
    X = M.sqr() - S.dbl();
    Y = M * (S - X) - W * Y;
    ZZ = V * ZZ;
    ZZZ = W * ZZZ;
  }

  // mdbl-2008-s-1: this = 2a
  SNARKD_PT void set_dbl_affine(const Affine<F>& a) {
    F U = a.y.dbl();
    F V = U.sqr();
    F W = U * V;
    F S = a.x * V;
    F X2 = a.x.sqr();
    F M = X2.dbl() + X2;
    X = M.sqr() - S.dbl();
    Y = M * (S - X) - W * a.y;
    ZZ = V;
    ZZZ = W;
  }

  // madd-2008-s: this += a (a not infinity)
  SNARKD_PT void add_affine(const Affine<F>& a) {
    if (is_inf()) {
      X = a.x; Y = a.y; ZZ = F::one(); ZZZ = F::one();
      return;
    }
    F U2 = a.x * ZZ;
    F S2 = a.y * ZZZ;
    F P = U2 - X;
    F R = S2 - Y;
    if (P.is_zero()) {
      if (R.is_zero()) set_dbl_affine(a);
      else *this = inf();
      return;
    }
    F PP = P.sqr();
    F PPP = P * PP;
    F Q = X * PP;
    X = R.sqr() - PPP - Q.dbl();
    Y = R * (Q - X) - Y * PPP;
    ZZ = ZZ * PP;
    ZZZ = ZZZ * PPP;
  }

  // add-2008-s: this += o
  SNARKD_PT void add(const XYZZ& o) {
    if (o.is_inf()) return;
    if (is_inf()) { *this = o; return; }
    F U1 = X * o.ZZ;
    F U2 = o.X * ZZ;
    F S1 = Y * o.ZZZ;
    F S2 = o.Y * ZZZ;
    F P = U2 - U1;
    F R = S2 - S1;
    if (P.is_zero()) {
      if (R.is_zero()) dbl();
      else *this = inf();
      return;
    }
    F PP = P.sqr();
    F PPP = P * PP;
    F Q = U1 * PP;
    X = R.sqr() - PPP - Q.dbl();
    Y = R * (Q - X) - S1 * PPP;
    ZZ = ZZ * o.ZZ * PP;
    ZZZ = ZZZ * o.ZZZ * PPP;
  }
};
