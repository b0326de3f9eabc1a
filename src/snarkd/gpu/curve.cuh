// Short Weierstrass points (a = 0) on the device: affine in the zkey layout (x, y;
// all-zero = infinity) and XYZZ buckets (x = X/ZZ, y = Y/ZZZ). The point formulas
// are the CPU core's own (src/snarkd/native/ec/xyzz.hpp, included by its path
// relative to this file); what is the device's alone stays here: the word
// load/store and the point operations as real calls.
#pragma once
#include "field.cuh"
#include "../native/ec/xyzz.hpp"

// Point operations are real calls (not inlined; the CPU's are inline): each is
// thousands of instructions, so the call costs nothing and the kernels stay
// small enough to compile in seconds.
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

  // The formulas: native/ec/xyzz.hpp, shared with the CPU core (inlined into these calls).
  SNARKD_PT void dbl() { snarkd::xyzz::dbl(*this); }                                 // dbl-2008-s-1
  SNARKD_PT void set_dbl_affine(const Affine<F>& a) { snarkd::xyzz::set_dbl_affine(*this, a); }  // this = 2a
  SNARKD_PT void add_affine(const Affine<F>& a) { snarkd::xyzz::add_affine(*this, a); }  // this += a (a not infinity)
  SNARKD_PT void add(const XYZZ& o) { snarkd::xyzz::add(*this, o); }                 // this += o
};
