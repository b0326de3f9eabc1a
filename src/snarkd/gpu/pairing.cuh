// Miller loops on the device, for SnarkPack's pairing products (aggregate/):
// the optimal ate loop of the CPU core (src/snarkd/native/pairing/miller_loop.hpp),
// with its two steps, native/pairing/lines.hpp, so a product computed here is
// the same Fp12 element, byte for byte, as the CPU's (tests/gpu/test_gpu_pairing.py).
//
// Fp12 = Fp6[w] / (w^2 - v), Fp6 = Fp2[v] / (v^3 - xi): BN254 xi = 9 + u (a
// D-twist: lines at 1, w, vw), BLS12-381 xi = 1 + u (an M-twist: lines at 1,
// v, vw). Elements are the CPU's layout: c0 = (a0, a1, a2), c1 = (b0, b1, b2),
// each Fp2 (re, im), Montgomery words.
//
// One thread per pair (Q_i, P_k[i]) with its own accumulator: the G2 steps are
// recomputed for each G1 point sharing a Q (cheaper than holding several Fp12
// accumulators per thread in registers); then fp12_product multiplies runs of
// values, level by level, down to one per product.
#pragma once
#include "curve.cuh"
#include "../native/pairing/lines.hpp"

#if defined(SNARKD_BN254)
#define SNARKD_XI0 9
#define SNARKD_D_TWIST 1
#define SNARKD_BN 1
#define SNARKD_NEG_U 0
// 6u + 2 in NAF, most significant digit first (BN254Pairing::LOOP)
#define SNARKD_LOOP_LEN 66
static __constant__ signed char MILLER_LOOP[SNARKD_LOOP_LEN] = {
    1, 0, -1, 0, 1, 0, 0, 0, -1, 0, -1, 0, 0, 0, -1, 0, 1, 0, -1, 0, 0, -1, 0,
    0, 0, 0, 0, 1, 0, 0, -1, 0, 1, 0, 0, -1, 0, 0, 0, 0, -1, 0, 1, 0, 0, 0,
    -1, 0, -1, 0, 0, 1, 0, 0, 0, -1, 0, 0, -1, 0, 1, 0, 1, 0, 0, 0};
#elif defined(SNARKD_BLS12_381)
#define SNARKD_XI0 1
#define SNARKD_D_TWIST 0
#define SNARKD_BN 0
#define SNARKD_NEG_U 1
// |u| in binary, most significant bit first (BLS12_381Pairing::LOOP)
#define SNARKD_LOOP_LEN 64
static __constant__ signed char MILLER_LOOP[SNARKD_LOOP_LEN] = {
    1, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
#endif

#define SNARKD_EXT __device__ __noinline__

// a / 2 (p odd and below 2^(32N - 1): a + p does not overflow N words plus a carry)
static SNARKD_DI Fq fq_half(const Fq& a) {
  const uint32_t mask = 0u - (a.v[0] & 1u);
  uint32_t t[Fq::N];
  unsigned long long c = 0;
#pragma unroll
  for (int i = 0; i < Fq::N; i++) {
    c += (unsigned long long)a.v[i] + (FqP::mod(i) & mask);
    t[i] = (uint32_t)c;
    c >>= 32;
  }
  Fq r;
#pragma unroll
  for (int i = 0; i < Fq::N; i++) r.v[i] = (t[i] >> 1) | ((i + 1 < Fq::N ? t[i + 1] : (uint32_t)c) << 31);
  return r;
}
static SNARKD_DI Fq2 half2(const Fq2& a) { return {fq_half(a.c0), fq_half(a.c1)}; }
static SNARKD_DI Fq2 conj2(const Fq2& a) { return {a.c0, a.c1.neg()}; }
static SNARKD_DI Fq2 mul_base(const Fq2& a, const Fq& s) { return {a.c0 * s, a.c1 * s}; }
// a * xi, xi = XI0 + u (u^2 = -1)
static SNARKD_DI Fq2 mul_xi(const Fq2& a) {
#if SNARKD_XI0 == 9
  const Fq a0 = a.c0.dbl().dbl().dbl() + a.c0, a1 = a.c1.dbl().dbl().dbl() + a.c1;
  return {a0 - a.c1, a1 + a.c0};
#else
  return {a.c0 - a.c1, a.c0 + a.c1};
#endif
}

struct Fq6 {
  Fq2 c0, c1, c2;
  static SNARKD_DI Fq6 one() { return {Fq2::one(), Fq2::zero(), Fq2::zero()}; }
  friend SNARKD_DI Fq6 operator+(const Fq6& a, const Fq6& b) { return {a.c0 + b.c0, a.c1 + b.c1, a.c2 + b.c2}; }
  friend SNARKD_DI Fq6 operator-(const Fq6& a, const Fq6& b) { return {a.c0 - b.c0, a.c1 - b.c1, a.c2 - b.c2}; }
  SNARKD_DI Fq6 mul_by_v() const { return {mul_xi(c2), c0, c1}; }
  SNARKD_DI Fq6 dbl() const { return {c0.dbl(), c1.dbl(), c2.dbl()}; }
  static SNARKD_EXT Fq6 mul(const Fq6 a, const Fq6 b) {
    const Fq2 t0 = a.c0 * b.c0, t1 = a.c1 * b.c1, t2 = a.c2 * b.c2;
    return {mul_xi((a.c1 + a.c2) * (b.c1 + b.c2) - t1 - t2) + t0,
            (a.c0 + a.c1) * (b.c0 + b.c1) - t0 - t1 + mul_xi(t2),
            (a.c0 + a.c2) * (b.c0 + b.c2) - t0 - t2 + t1};
  }
  // * (b0 + b1 v)
  static SNARKD_EXT Fq6 mul_by_01(const Fq6 a, const Fq2 b0, const Fq2 b1) {
    const Fq2 t0 = a.c0 * b0, t1 = a.c1 * b1;
    return {mul_xi((a.c1 + a.c2) * b1 - t1) + t0, (a.c0 + a.c1) * (b0 + b1) - t0 - t1, (a.c0 + a.c2) * b0 - t0 + t1};
  }
  // * (b1 v)
  static SNARKD_EXT Fq6 mul_by_1(const Fq6 a, const Fq2 b1) { return {mul_xi(a.c2 * b1), a.c0 * b1, a.c1 * b1}; }
  SNARKD_DI Fq6 scale(const Fq2& s) const { return {c0 * s, c1 * s, c2 * s}; }
};

struct Fq12 {
  Fq6 c0, c1;
  static constexpr int WORDS = 12 * Fq::N;
  static SNARKD_DI Fq12 one() { return {Fq6::one(), {Fq2::zero(), Fq2::zero(), Fq2::zero()}}; }
  static SNARKD_DI Fq12 load(const uint32_t* p) {
    constexpr int W = 2 * Fq::N;
    return {{Fq2::load(p), Fq2::load(p + W), Fq2::load(p + 2 * W)},
            {Fq2::load(p + 3 * W), Fq2::load(p + 4 * W), Fq2::load(p + 5 * W)}};
  }
  SNARKD_DI void store(uint32_t* p) const {
    constexpr int W = 2 * Fq::N;
    c0.c0.store(p); c0.c1.store(p + W); c0.c2.store(p + 2 * W);
    c1.c0.store(p + 3 * W); c1.c1.store(p + 4 * W); c1.c2.store(p + 5 * W);
  }
  SNARKD_DI Fq12 conj() const { return {c0, {c1.c0.neg(), c1.c1.neg(), c1.c2.neg()}}; }
  static SNARKD_EXT Fq12 mul(const Fq12 a, const Fq12 b) {
    const Fq6 aa = Fq6::mul(a.c0, b.c0), bb = Fq6::mul(a.c1, b.c1);
    return {aa + bb.mul_by_v(), Fq6::mul(a.c0 + a.c1, b.c0 + b.c1) - aa - bb};
  }
  static SNARKD_EXT Fq12 sqr(const Fq12 a) {
    const Fq6 ab = Fq6::mul(a.c0, a.c1);
    return {Fq6::mul(a.c0 + a.c1, a.c0 + a.c1.mul_by_v()) - ab - ab.mul_by_v(), ab.dbl()};
  }
  // D-twist line d0 + d3 w + d4 vw
  static SNARKD_EXT Fq12 mul_by_034(const Fq12 f, const Fq2 d0, const Fq2 d3, const Fq2 d4) {
    const Fq6 aa = f.c0.scale(d0), bb = Fq6::mul_by_01(f.c1, d3, d4);
    return {aa + bb.mul_by_v(), Fq6::mul_by_01(f.c0 + f.c1, d0 + d3, d4) - aa - bb};
  }
  // M-twist line d0 + d1 v + d4 vw
  static SNARKD_EXT Fq12 mul_by_014(const Fq12 f, const Fq2 d0, const Fq2 d1, const Fq2 d4) {
    const Fq6 aa = Fq6::mul_by_01(f.c0, d0, d1), bb = Fq6::mul_by_1(f.c1, d4);
    return {aa + bb.mul_by_v(), Fq6::mul_by_01(f.c0 + f.c1, d0, d1 + d4) - aa - bb};
  }
};

// A line c + cx xP + cy yP, and the running point T = (X : Y : Z) on the twist (homogeneous).
struct Line { Fq2 c, cx, cy; };
struct G2Proj { Fq2 X, Y, Z; };

// What the shared steps (native/pairing/lines.hpp) take from each side: here 3 b' is folded from
// params.cuh's constants and a / 2 is fq_half's.
struct LineOps {
  static SNARKD_DI Fq2 twist_b3() {
    Fq2 b;
#pragma unroll
    for (int i = 0; i < Fq::N; i++) { b.c0.v[i] = g2_b0(i); b.c1.v[i] = g2_b1(i); }
    return b.dbl() + b;
  }
  static SNARKD_DI Fq2 half(const Fq2& a) { return half2(a); }
};

// T <- 2T; the tangent line at T (the CPU's dbl_step: the same formulas)
static SNARKD_EXT Line dbl_step(G2Proj& T) { return snarkd::pairing::line_dbl<LineOps, Line>(T); }

// T <- T + Q (Q affine, not infinity); the chord line (the CPU's add_step)
static SNARKD_EXT Line add_step(G2Proj& T, const Fq2 qx, const Fq2 qy) {
  return snarkd::pairing::line_add<Line>(T, qx, qy);
}

static SNARKD_DI Fq12 apply_line(const Fq12& f, const Line& l, const Fq& px, const Fq& py) {
  const Fq2 a = mul_base(l.cx, px), b = mul_base(l.cy, py);
#if SNARKD_D_TWIST
  return Fq12::mul_by_034(f, b, a, l.c);
#else
  return Fq12::mul_by_014(f, l.c, a, b);
#endif
}

// out[k m + i] = f_{loop, Q_{qblock[k] m + i}}(P[k m + i]) for i < m, k < K (1 when either point is
// infinity): K products of m pairs each, product k taking its G2 points from block qblock[k] of Q
// (several products share a block: its points' lines are recomputed for each).
// Q: blocks of m G2 affine points; P: K m G1 affine points; frob (BN254 only): the Fp2 constants
// gamma_{1,2}, gamma_{1,3}, gamma_{2,2}, gamma_{2,3} of the two Frobenius lines.
extern "C" __global__ void __launch_bounds__(128) miller_pairs(const uint32_t* Q, const uint32_t* qblock,
                                                                const uint32_t* P, uint32_t m, uint32_t K,
                                                                const uint32_t* frob, uint32_t* out) {
  const unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (unsigned long long)m * K) return;
  const uint32_t i = (uint32_t)(t % m), k = (uint32_t)(t / m);
  const uint32_t* q = Q + ((size_t)qblock[k] * m + i) * 4 * Fq::N;
  const uint32_t* p = P + t * 2 * Fq::N;
  const Fq2 qx = Fq2::load(q), qy = Fq2::load(q + 2 * Fq::N);
  const Fq px = Fq::load(p), py = Fq::load(p + Fq::N);
  Fq12 f = Fq12::one();
  if ((qx.is_zero() && qy.is_zero()) || (px.is_zero() && py.is_zero())) {
    f.store(out + t * Fq12::WORDS);
    return;
  }
  const Fq2 nqy = qy.neg();
  G2Proj T{qx, qy, Fq2::one()};
  for (int s = 1; s < SNARKD_LOOP_LEN; s++) {
    if (s > 1) f = Fq12::sqr(f);
    f = apply_line(f, dbl_step(T), px, py);
    const int d = MILLER_LOOP[s];
    if (d != 0) f = apply_line(f, add_step(T, qx, d > 0 ? qy : nqy), px, py);
  }
#if SNARKD_BN
  {
    const Fq2 g02 = Fq2::load(frob), g03 = Fq2::load(frob + 2 * Fq::N);
    const Fq2 g12 = Fq2::load(frob + 4 * Fq::N), g13 = Fq2::load(frob + 6 * Fq::N);
    f = apply_line(f, add_step(T, conj2(qx) * g02, conj2(qy) * g03), px, py);
    f = apply_line(f, add_step(T, qx * g12, (qy * g13).neg()), px, py);
  }
#endif
#if SNARKD_NEG_U
  f = f.conj();
#endif
  f.store(out + t * Fq12::WORDS);
}

// out[g] = prod_{j < run} in[g run + j] over each group's own values: groups of `count` values
// (a product's), ceil(count / run) outputs per group, written group after group.
extern "C" __global__ void fp12_product(const uint32_t* in, uint32_t count, uint32_t groups, uint32_t run,
                                        uint32_t* out) {
  const uint32_t per = (count + run - 1) / run;
  const unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (unsigned long long)per * groups) return;
  const uint32_t g = (uint32_t)(t / per), j0 = (uint32_t)(t % per) * run;
  const uint32_t* base = in + ((size_t)g * count) * Fq12::WORDS;
  Fq12 acc = Fq12::load(base + (size_t)j0 * Fq12::WORDS);
  for (uint32_t j = j0 + 1; j < j0 + run && j < count; j++) acc = Fq12::mul(acc, Fq12::load(base + (size_t)j * Fq12::WORDS));
  acc.store(out + t * Fq12::WORDS);
}
