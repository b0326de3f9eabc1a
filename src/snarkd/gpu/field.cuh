// Montgomery prime fields on 32-bit limbs (PTX mad.lo.cc / madc.hi.cc carry
// chains), written once and parameterised by P (params.cuh): N limbs, INV =
// -p^-1 mod 2^32, mod(i)/one(i)/r2(i) as constexpr word functions so that
// unrolled loops fold them into immediates. Radix R = 2^(32N), the same as the
// CPU core's 2^(64 N/2), so device and host share one representation: the
// zkey's bytes. Every operation returns a canonical value (< p).
#pragma once
#include "params.cuh"

#define SNARKD_DI __device__ __forceinline__
// The multiplication is ~300 (BN254) to ~550 (BLS12-381) instructions: as a
// real call the point operations' code stays small enough for the
// instruction cache (inlined, ncu showed a third of the MSM's stall cycles
// were instruction fetch). -DSNARKD_MUL_INLINE inlines it everywhere.
#if defined(SNARKD_MUL_INLINE)
#define SNARKD_MUL __device__ __forceinline__
#else
#define SNARKD_MUL __device__ __noinline__
#endif

template <class P>
struct Fp {
  static constexpr int N = P::N;
  uint32_t v[N];

  static SNARKD_DI Fp zero() {
    Fp r;
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = 0;
    return r;
  }
  static SNARKD_DI Fp one() {
    Fp r;
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = P::one(i);
    return r;
  }
  SNARKD_DI bool is_zero() const {
    uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < N; i++) acc |= v[i];
    return acc == 0;
  }
  SNARKD_DI bool operator==(const Fp& o) const {
    uint32_t acc = 0;
#pragma unroll
    for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
    return acc == 0;
  }
  static SNARKD_DI Fp load(const uint32_t* p) {
    Fp r;
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = p[i];
    return r;
  }
  SNARKD_DI void store(uint32_t* p) const {
#pragma unroll
    for (int i = 0; i < N; i++) p[i] = v[i];
  }

  // x - p if x >= p (x given as N words plus a top carry word)
  static SNARKD_DI void final_sub(uint32_t* x, uint32_t top) {
    uint32_t t[N], borrow;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(t[0]) : "r"(x[0]), "r"(P::mod(0)));
#pragma unroll
    for (int i = 1; i < N; i++) asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(t[i]) : "r"(x[i]), "r"(P::mod(i)));
    asm volatile("subc.u32 %0, %1, 0;" : "=r"(borrow) : "r"(top));
    // borrow == 0xffffffff exactly when x < p: keep x
    bool keep = borrow == 0xffffffffu;
#pragma unroll
    for (int i = 0; i < N; i++) x[i] = keep ? x[i] : t[i];
  }

  friend SNARKD_DI Fp operator+(const Fp& a, const Fp& b) {
    Fp r;
    uint32_t top;
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
    for (int i = 1; i < N; i++) asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(a.v[i]), "r"(b.v[i]));
    asm volatile("addc.u32 %0, 0, 0;" : "=r"(top));
    final_sub(r.v, top);
    return r;
  }
  friend SNARKD_DI Fp operator-(const Fp& a, const Fp& b) {
    Fp r, t;
    uint32_t borrow;
    asm volatile("sub.cc.u32 %0, %1, %2;" : "=r"(r.v[0]) : "r"(a.v[0]), "r"(b.v[0]));
#pragma unroll
    for (int i = 1; i < N; i++) asm volatile("subc.cc.u32 %0, %1, %2;" : "=r"(r.v[i]) : "r"(a.v[i]), "r"(b.v[i]));
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
    // add p back when it borrowed (borrow == 0xffffffff): add (p & mask)
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(t.v[0]) : "r"(r.v[0]), "r"(P::mod(0) & borrow));
#pragma unroll
    for (int i = 1; i < N; i++) asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(t.v[i]) : "r"(r.v[i]), "r"(P::mod(i) & borrow));
    asm volatile("addc.u32 %0, 0, 0;" : "=r"(borrow));  // discard the carry
    return t;
  }
  SNARKD_DI Fp dbl() const { return *this + *this; }
  SNARKD_DI Fp neg() const { return is_zero() ? *this : zero() - *this; }

  // Products x[j]*y (j >= j0) for the positions q = i + j of one parity, added
  // into the word pairs (q, q+1) of A as one carry chain; the chain's carry
  // goes into the word above its last pair (that word has only ever taken
  // carries, so it cannot overflow: every row's chain ends higher than the
  // rows before it). Pairs of one parity start at even or at odd registers
  // every time, which lets ptxas use one IMAD.WIDE.U32(.X) per product (both
  // halves and the carry) instead of an IMAD + IADD3.X per half.
  static SNARKD_DI void mad_row(uint32_t* A, const uint32_t* x, uint32_t y, int i, int parity, int j0 = 0) {
    int last = -1;
#pragma unroll
    for (int j = j0; j < N; j++) {
      const int q = i + j;
      if ((q & 1) != parity) continue;
      if (last < 0) asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(A[q]) : "r"(x[j]), "r"(y));
      else asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(A[q]) : "r"(x[j]), "r"(y));
      asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(A[q + 1]) : "r"(x[j]), "r"(y));
      last = q;
    }
    if (last >= 0) asm volatile("addc.u32 %0, %0, 0;" : "+r"(A[last + 2]));
  }

  // Montgomery multiplication, operand scanning over a double-width product
  // kept as two accumulators, E (pairs at even positions) and O (pairs at odd
  // positions), T = E + O. Row i adds a*b_i, then m*p with m chosen to clear
  // word i of T; c carries word i's overflow (E[i] + O[i] + c) into word i+1.
  // The high half of T is < 2p; one final conditional subtraction.
  friend SNARKD_DI Fp operator*(const Fp& a, const Fp& b) { return mont_mul(a, b); }
  static SNARKD_MUL Fp mont_mul(const Fp a, const Fp b) {
    uint32_t E[2 * N + 2], O[2 * N + 2], p[N];
#pragma unroll
    for (int k = 0; k < 2 * N + 2; k++) E[k] = O[k] = 0;
#pragma unroll
    for (int k = 0; k < N; k++) p[k] = P::mod(k);
    uint32_t c = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
      mad_row(E, a.v, b.v[i], i, 0);
      mad_row(O, a.v, b.v[i], i, 1);
      const uint32_t m = (E[i] + O[i] + c) * P::INV;
      mad_row(E, p, m, i, 0);
      mad_row(O, p, m, i, 1);
      c = word_carry(E[i], O[i], c);
    }
    return high_half(E, O, c, nullptr);
  }
  // Word i of the running sum E + O + c is now 0 mod 2^32: its carry (0..2).
  static SNARKD_DI uint32_t word_carry(uint32_t e, uint32_t o, uint32_t c) {
    uint32_t s, c1, c2;
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(s) : "r"(e), "r"(o));
    asm volatile("addc.u32 %0, 0, 0;" : "=r"(c1));
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(s) : "r"(s), "r"(c));
    asm volatile("addc.u32 %0, 0, 0;" : "=r"(c2));
    return c1 + c2;
  }
  // The reduced result: E[N..2N] + O[N..2N] + c (+ hi, N words, when given), < 2p; one final subtraction.
  static SNARKD_DI Fp high_half(const uint32_t* E, const uint32_t* O, uint32_t c, const uint32_t* hi) {
    uint32_t t[N + 1];
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(t[0]) : "r"(E[N]), "r"(O[N]));
#pragma unroll
    for (int k = 1; k <= N; k++) asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(t[k]) : "r"(E[N + k]), "r"(O[N + k]));
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(t[0]) : "r"(c));
#pragma unroll
    for (int k = 1; k <= N; k++) asm volatile("addc.cc.u32 %0, %0, 0;" : "+r"(t[k]));
    if (hi) {
      asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(t[0]) : "r"(hi[0]));
#pragma unroll
      for (int k = 1; k < N; k++) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(t[k]) : "r"(hi[k]));
      asm volatile("addc.u32 %0, %0, 0;" : "+r"(t[N]));
    }
    final_sub(t, t[N]);
    Fp r;
#pragma unroll
    for (int j = 0; j < N; j++) r.v[j] = t[j];
    return r;
  }
  // T = E + O over 2N words (the sum fits: the accumulators hold parts of one product).
  static SNARKD_DI void sum_eo(uint32_t* T, const uint32_t* E, const uint32_t* O) {
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(T[0]) : "r"(E[0]), "r"(O[0]));
#pragma unroll
    for (int k = 1; k < 2 * N; k++) asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(T[k]) : "r"(E[k]), "r"(O[k]));
  }

  // T (2N words) = a * b for any N-word a, b (no reduction).
  static SNARKD_DI void wide_mul(uint32_t* T, const uint32_t* a, const uint32_t* b) {
    uint32_t E[2 * N + 2], O[2 * N + 2];
#pragma unroll
    for (int k = 0; k < 2 * N + 2; k++) E[k] = O[k] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
      mad_row(E, a, b[i], i, 0);
      mad_row(O, a, b[i], i, 1);
    }
    sum_eo(T, E, O);
  }
  // T (2N words) = a^2: the N(N-1)/2 products a_i a_j (i < j) once, doubled,
  // then the diagonal a_i^2 as one carry chain over all 2N words.
  static SNARKD_DI void wide_sqr(uint32_t* T, const uint32_t* a) {
    uint32_t E[2 * N + 2], O[2 * N + 2];
#pragma unroll
    for (int k = 0; k < 2 * N + 2; k++) E[k] = O[k] = 0;
#pragma unroll
    for (int i = 0; i < N - 1; i++) {
      mad_row(E, a, a[i], i, 0, i + 1);
      mad_row(O, a, a[i], i, 1, i + 1);
    }
    sum_eo(T, E, O);
#pragma unroll
    for (int k = 2 * N - 1; k > 0; k--) T[k] = __funnelshift_l(T[k - 1], T[k], 1);
    T[0] <<= 1;
    asm volatile("mad.lo.cc.u32 %0, %1, %1, %0;" : "+r"(T[0]) : "r"(a[0]));
    asm volatile("madc.hi.cc.u32 %0, %1, %1, %0;" : "+r"(T[1]) : "r"(a[0]));
#pragma unroll
    for (int i = 1; i < N; i++) {
      asm volatile("madc.lo.cc.u32 %0, %1, %1, %0;" : "+r"(T[2 * i]) : "r"(a[i]));
      asm volatile("madc.hi.cc.u32 %0, %1, %1, %0;" : "+r"(T[2 * i + 1]) : "r"(a[i]));
    }
  }
  // Montgomery reduction T R^-1 mod p of a 2N-word T < p R, canonical: the
  // reduction rows of mont_mul with T's low half in E, its high half added last.
  static SNARKD_DI Fp redc(const uint32_t* T) {
    uint32_t E[2 * N + 2], O[2 * N + 2], p[N];
#pragma unroll
    for (int k = 0; k < 2 * N + 2; k++) { E[k] = k < N ? T[k] : 0; O[k] = 0; }
#pragma unroll
    for (int k = 0; k < N; k++) p[k] = P::mod(k);
    uint32_t c = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
      const uint32_t m = (E[i] + O[i] + c) * P::INV;
      mad_row(E, p, m, i, 0);
      mad_row(O, p, m, i, 1);
      c = word_carry(E[i], O[i], c);
    }
    return high_half(E, O, c, T + N);
  }
  // a^2 in Montgomery form: 36 + 64 word products for BN254 instead of 64 + 64.
  static SNARKD_MUL Fp mont_sqr(const Fp a) {
    uint32_t T[2 * N];
    wide_sqr(T, a.v);
    return redc(T);
  }
  // r = a + b without reduction (a, b < p and 2p < 2^(32N) on both curves).
  static SNARKD_DI void add_nored(uint32_t* r, const uint32_t* a, const uint32_t* b) {
    asm volatile("add.cc.u32 %0, %1, %2;" : "=r"(r[0]) : "r"(a[0]), "r"(b[0]));
#pragma unroll
    for (int i = 1; i < N; i++) asm volatile("addc.cc.u32 %0, %1, %2;" : "=r"(r[i]) : "r"(a[i]), "r"(b[i]));
  }
  // a -= b over 2N words; returns 0xffffffff when it borrowed, else 0.
  static SNARKD_DI uint32_t sub_wide(uint32_t* a, const uint32_t* b) {
    uint32_t borrow;
    asm volatile("sub.cc.u32 %0, %0, %1;" : "+r"(a[0]) : "r"(b[0]));
#pragma unroll
    for (int i = 1; i < 2 * N; i++) asm volatile("subc.cc.u32 %0, %0, %1;" : "+r"(a[i]) : "r"(b[i]));
    asm volatile("subc.u32 %0, 0, 0;" : "=r"(borrow));
    return borrow;
  }
  // a += (p & mask) * 2^(32N) over 2N words, the carry out dropped.
  static SNARKD_DI void add_p_high(uint32_t* a, uint32_t mask) {
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(a[N]) : "r"(P::mod(0) & mask));
#pragma unroll
    for (int i = 1; i < N; i++) asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(a[N + i]) : "r"(P::mod(i) & mask));
  }

  SNARKD_DI Fp sqr() const { return mont_sqr(*this); }

  SNARKD_DI Fp to_mont() const {
    Fp r2;
#pragma unroll
    for (int i = 0; i < N; i++) r2.v[i] = P::r2(i);
    return *this * r2;
  }
  SNARKD_DI Fp from_mont() const {
    Fp o = zero();
    o.v[0] = 1;
    return *this * o;
  }
  // a^(p-2) (Fermat; 0 -> 0). Only for one-off conversions (window tables),
  // so plain square-and-multiply over the exponent's bits, top down.
  SNARKD_DI Fp inv() const {
    Fp r = one();
#pragma unroll 1
    for (int i = N - 1; i >= 0; i--) {
      const uint32_t e = P::mod(i) - (i == 0 ? 2u : 0u);  // p is odd and > 2: no borrow
#pragma unroll 1
      for (int b = 31; b >= 0; b--) {
        r = r.sqr();
        if ((e >> b) & 1) r = r * *this;
      }
    }
    return r;
  }
  // Reduce any N-word value below p (plain scalars may be >= p).
  SNARKD_DI void reduce_raw() {
#pragma unroll 1
    for (int k = 0; k < 8; k++) {
      uint32_t t[N];
#pragma unroll
      for (int i = 0; i < N; i++) t[i] = v[i];
      final_sub(t, 0);
      bool same = true;
#pragma unroll
      for (int i = 0; i < N; i++) same &= t[i] == v[i];
#pragma unroll
      for (int i = 0; i < N; i++) v[i] = t[i];
      if (same) break;
    }
  }
};

// F[u]/(u^2 + 1) (both curves)
template <class F>
struct Fp2 {
  F c0, c1;
  static constexpr int N = 2 * F::N;
  static SNARKD_DI Fp2 zero() { return {F::zero(), F::zero()}; }
  static SNARKD_DI Fp2 one() { return {F::one(), F::zero()}; }
  SNARKD_DI bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  SNARKD_DI bool operator==(const Fp2& o) const { return c0 == o.c0 && c1 == o.c1; }
  static SNARKD_DI Fp2 load(const uint32_t* p) { return {F::load(p), F::load(p + F::N)}; }
  SNARKD_DI void store(uint32_t* p) const { c0.store(p); c1.store(p + F::N); }
  friend SNARKD_DI Fp2 operator+(const Fp2& a, const Fp2& b) { return {a.c0 + b.c0, a.c1 + b.c1}; }
  friend SNARKD_DI Fp2 operator-(const Fp2& a, const Fp2& b) { return {a.c0 - b.c0, a.c1 - b.c1}; }
  friend SNARKD_DI Fp2 operator*(const Fp2& a, const Fp2& b) { return mul(a, b); }
  // Karatsuba with lazy reduction: three double-width products and two
  // Montgomery reductions (instead of three multiplications, each with its
  // own reduction). c0 = REDC(a0 b0 - a1 b1), plus p R when that is negative
  // (then < p R); c1 = REDC((a0 + a1)(b0 + b1) - a0 b0 - a1 b1) = REDC(a0 b1 + a1 b0)
  // < 2 p^2 < p R, with the sums unreduced (< 2p < 2^(32N)).
  static SNARKD_MUL Fp2 mul(const Fp2 a, const Fp2 b) {
    constexpr int N1 = F::N;
    uint32_t s[2 * N1], t[2 * N1], d[2 * N1];
    {
      uint32_t sa[N1], sb[N1];
      F::add_nored(sa, a.c0.v, a.c1.v);
      F::add_nored(sb, b.c0.v, b.c1.v);
      F::wide_mul(s, sa, sb);
    }
    F::wide_mul(d, a.c0.v, b.c0.v);
    F::sub_wide(s, d);
    F::wide_mul(t, a.c1.v, b.c1.v);
    F::sub_wide(s, t);
    F::add_p_high(d, F::sub_wide(d, t));
    return {F::redc(d), F::redc(s)};
  }
  SNARKD_DI Fp2 sqr() const {
    F t = c0 * c1;
    return {(c0 + c1) * (c0 - c1), t + t};
  }
  SNARKD_DI Fp2 dbl() const { return {c0.dbl(), c1.dbl()}; }
  SNARKD_DI Fp2 neg() const { return {c0.neg(), c1.neg()}; }
  // 1 / (c0 + c1 u) = (c0 - c1 u) / (c0^2 + c1^2)
  SNARKD_DI Fp2 inv() const {
    const F t = (c0.sqr() + c1.sqr()).inv();
    return {c0 * t, (c1 * t).neg()};
  }
};

typedef Fp<FqP> Fq;
typedef Fp<FrP> Fr;
typedef Fp2<Fq> Fq2;
