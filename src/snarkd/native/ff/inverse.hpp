// Modular inversion by divsteps (Bernstein-Yang, "Fast constant-time gcd computation
// and modular inversion", 2019), variable-time form: each batch of 62 steps runs
// on the low 64 bits of f and g only and yields a 2x2 matrix of 63-bit integers,
// which is then applied to the full-size f, g and to the cofactors d, e (with a
// Montgomery-style division by 2^62 mod p). About 4x cheaper than Fermat's
// a^(p-2) (~380 multiplications): it matters where one inversion is shared by a
// batch of affine additions (MSM buckets) and the batch size is bounded.
//
// Invariants: f = d x (mod p), g = e x (mod p); f odd. Start f = p, g = x, d = 0,
// e = 1. When g reaches 0, f = +-1 (p prime, x != 0) and x^-1 = +-d.
// Numbers are held as K signed limbs of 62 bits (value = sum v[i] 2^(62 i); limbs
// below the top in [0, 2^62), the top one signed).
#pragma once
#include <cstddef>
#include <cstdint>

namespace snarkd {

template <class P>
struct DivstepInverse {
  static constexpr size_t N = P::N;
  static constexpr size_t K = (64 * N + 2) / 62 + 1;  // room for values up to ~2^(64N+1), signed
  static constexpr int64_t M62 = (int64_t)((1ULL << 62) - 1);
  using i128 = __int128;

  struct S62 { int64_t v[K]; };

  static constexpr S62 from_u64(const uint64_t* a) {
    S62 r{};
    for (size_t i = 0; i < K; i++) {
      size_t pos = 62 * i, w = pos / 64, s = pos % 64;
      uint64_t x = w < N ? a[w] >> s : 0;
      if (s > 2 && w + 1 < N) x |= a[w + 1] << (64 - s);
      r.v[i] = (int64_t)(x & (uint64_t)M62);
    }
    return r;
  }
  static constexpr uint64_t inv62() {  // p^-1 mod 2^62
    uint64_t inv = 1;
    for (int i = 0; i < 7; i++) inv *= 2 - P::MOD[0] * inv;
    return inv & (uint64_t)M62;
  }
  static constexpr S62 MODS = from_u64(P::MOD);
  static constexpr uint64_t PINV = inv62();

  static inline bool is_zero(const S62& a) {
    int64_t acc = 0;
    for (size_t i = 0; i < K; i++) acc |= a.v[i];
    return acc == 0;
  }
  static inline bool is_neg(const S62& a) { return a.v[K - 1] < 0; }

  // 62 divsteps on the low 64 bits of f and g. Returns the matrix (u v; q r) with
  // 2^62 f' = u f + v g, 2^62 g' = q f + r g; updates delta.
  //
  // Several steps at a time: a run of even g is one shift (ctz), and between swaps f stays
  // fixed while each step adds f to an odd g and halves, so the next k of those steps
  // (k <= delta's distance from a swap, k <= 6) come to g += w f with w = -g / f mod 2^k
  // (f^-1 mod 64 = f (2 - f^2) for odd f), the halvings left to the next shift. The same
  // steps as one at a time, with about a sixth of the data-dependent branches, which
  // mispredicted on nearly every step (bench/cpu-notes.md, round 4).
  static inline void divsteps62(int64_t& delta, uint64_t f, uint64_t g, int64_t& u, int64_t& v, int64_t& q,
                                int64_t& r) {
    uint64_t uu = 1, vv = 0, qq = 0, rr = 1;  // wrapping arithmetic; the true values stay within 63 bits
    int64_t eta = -delta;
    int i = 62;
    for (;;) {
      const int z = __builtin_ctzll(g | (~0ULL << i));  // i >= 1: the mask caps the run at i
      g >>= z;
      uu <<= z;
      vv <<= z;
      eta -= z;
      i -= z;
      if (i == 0) break;
      if (eta < 0) {  // delta > 0, g odd: (f, g) <- (g, -f), the step's addition follows
        eta = -eta;
        uint64_t t = f;
        f = g;
        g = 0 - t;
        t = uu; uu = qq; qq = 0 - t;
        t = vv; vv = rr; rr = 0 - t;
      }
      int64_t k = eta + 1 < i ? eta + 1 : i;
      if (k > 6) k = 6;
      const uint64_t w = (f * g * (f * f - 2)) & (~0ULL >> (64 - k));
      g += w * f;
      qq += w * uu;
      rr += w * vv;
    }
    delta = -eta;
    u = (int64_t)uu;
    v = (int64_t)vv;
    q = (int64_t)qq;
    r = (int64_t)rr;
  }

  // (f, g) <- ((u f + v g) / 2^62, (q f + r g) / 2^62), exact divisions.
  static inline void update_fg(S62& f, S62& g, int64_t u, int64_t v, int64_t q, int64_t r) {
    i128 cf = (i128)u * f.v[0] + (i128)v * g.v[0];
    i128 cg = (i128)q * f.v[0] + (i128)r * g.v[0];
    cf >>= 62;
    cg >>= 62;
    for (size_t i = 1; i < K; i++) {
      cf += (i128)u * f.v[i] + (i128)v * g.v[i];
      cg += (i128)q * f.v[i] + (i128)r * g.v[i];
      f.v[i - 1] = (int64_t)cf & M62;
      g.v[i - 1] = (int64_t)cg & M62;
      cf >>= 62;
      cg >>= 62;
    }
    f.v[K - 1] = (int64_t)cf;
    g.v[K - 1] = (int64_t)cg;
  }

  // (d, e) <- ((u d + v e) / 2^62, (q d + r e) / 2^62) mod p, the divisions made
  // exact by adding md p, me p (md, me in (-2^61, 2^61]). |d|, |e| < p before gives
  // |result| < 1.5 p; one conditional add/subtract of p brings it back under p.
  static inline void update_de(S62& d, S62& e, int64_t u, int64_t v, int64_t q, int64_t r) {
    // low 64 bits of u d + v e (unsigned: wraps, no signed overflow)
    uint64_t ld = (uint64_t)u * (uint64_t)d.v[0] + (uint64_t)v * (uint64_t)e.v[0];
    uint64_t le = (uint64_t)q * (uint64_t)d.v[0] + (uint64_t)r * (uint64_t)e.v[0];
    int64_t md = (int64_t)((0 - ld * PINV) & (uint64_t)M62);
    int64_t me = (int64_t)((0 - le * PINV) & (uint64_t)M62);
    if (md > (int64_t)1 << 61) md -= (int64_t)1 << 62;
    if (me > (int64_t)1 << 61) me -= (int64_t)1 << 62;
    i128 cd = (i128)u * d.v[0] + (i128)v * e.v[0] + (i128)md * MODS.v[0];
    i128 ce = (i128)q * d.v[0] + (i128)r * e.v[0] + (i128)me * MODS.v[0];
    cd >>= 62;
    ce >>= 62;
    for (size_t i = 1; i < K; i++) {
      cd += (i128)u * d.v[i] + (i128)v * e.v[i] + (i128)md * MODS.v[i];
      ce += (i128)q * d.v[i] + (i128)r * e.v[i] + (i128)me * MODS.v[i];
      d.v[i - 1] = (int64_t)cd & M62;
      e.v[i - 1] = (int64_t)ce & M62;
      cd >>= 62;
      ce >>= 62;
    }
    d.v[K - 1] = (int64_t)cd;
    e.v[K - 1] = (int64_t)ce;
    fold(d);
    fold(e);
  }

  static inline void add_mod(S62& a, int sign) {  // a += sign * p
    int64_t c = 0;
    for (size_t i = 0; i < K; i++) {
      int64_t x = a.v[i] + sign * MODS.v[i] + c;
      if (i + 1 < K) {
        c = x >> 62;
        a.v[i] = x & M62;
      } else {
        a.v[i] = x;
      }
    }
  }
  // compare a with p (a >= 0)
  static inline bool ge_mod(const S62& a) {
    for (size_t i = K; i-- > 0;) {
      if (a.v[i] != MODS.v[i]) return a.v[i] > MODS.v[i];
    }
    return true;
  }
  // (-1.5p, 1.5p) -> (-p, p)
  static inline void fold(S62& a) {
    if (is_neg(a)) {
      S62 t = a;
      add_mod(t, 1);
      if (is_neg(t) || is_zero(t)) a = t;  // a <= -p
    } else if (ge_mod(a)) {
      add_mod(a, -1);
    }
  }

  // out = x^-1 mod p for a plain integer 0 < x < p (x = 0 gives 0).
  static void invert(const uint64_t* x, uint64_t* out) {
    S62 f = MODS, g = from_u64(x), d{}, e{};
    e.v[0] = 1;
    if (is_zero(g)) {
      for (size_t i = 0; i < N; i++) out[i] = 0;
      return;
    }
    int64_t delta = 1;
    for (int it = 0; it < 64 && !is_zero(g); it++) {
      int64_t u, v, q, r;
      uint64_t fl = (uint64_t)f.v[0] | ((uint64_t)f.v[1] << 62);
      uint64_t gl = (uint64_t)g.v[0] | ((uint64_t)g.v[1] << 62);
      divsteps62(delta, fl, gl, u, v, q, r);
      update_fg(f, g, u, v, q, r);
      update_de(d, e, u, v, q, r);
    }
    // f = +-1: x^-1 = sign(f) d
    if (is_neg(f)) {
      for (size_t i = 0; i < K; i++) d.v[i] = -d.v[i];
      normalize(d);
    }
    while (is_neg(d)) add_mod(d, 1);
    while (ge_mod(d)) add_mod(d, -1);
    unsigned __int128 acc = 0;
    unsigned have = 0;
    size_t w = 0;
    for (size_t i = 0; i < K && w < N; i++) {
      acc |= (unsigned __int128)(uint64_t)d.v[i] << have;
      have += 62;
      while (have >= 64 && w < N) {
        out[w++] = (uint64_t)acc;
        acc >>= 64;
        have -= 64;
      }
    }
    while (w < N) {
      out[w++] = (uint64_t)acc;
      acc >>= 64;
    }
  }

  // limbs after a negation: re-establish lower limbs in [0, 2^62)
  static inline void normalize(S62& a) {
    int64_t c = 0;
    for (size_t i = 0; i < K; i++) {
      int64_t x = a.v[i] + c;
      if (i + 1 < K) {
        c = x >> 62;
        a.v[i] = x & M62;
      } else {
        a.v[i] = x;
      }
    }
  }
};

}  // namespace snarkd
