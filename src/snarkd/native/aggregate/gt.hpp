// Target-group values of the aggregate: compressed encoding, membership and
// multi-exponentiation.
//
// Compression (the torus T2 over Fp6): a GT element f = c0 + c1 w other than 1
// has norm 1 over Fp6 and c1 != 0, and is recovered from g = (1 + c0) / c1 as
//   f = (g + w) / (g - w) = ((g^2 + v) + 2g w) / (g^2 - v)       (w^2 = v)
// so 6 Fp values (half of Fp12) encode it; all-zero bytes encode 1 (g = 0
// would decode to -1, which is not in GT). Decoding refuses coordinates >= p
// and then anything outside the cyclotomic subgroup (f^(p^4) f == f^(p^2)),
// where the Granger-Scott squaring used by the exponentiation is exact.
#pragma once
#include <cstring>
#include <vector>

#include "pairing/final_exp.hpp"
#include "parallel.hpp"

namespace snarkd {
namespace aggregate {

template <class Cfg>
struct Gt {
  using F12 = typename Cfg::Fq12;
  using F6 = typename Cfg::Fq6;
  using F2 = typename Cfg::Fq2;
  using F = typename Cfg::Fq;
  using Fr = typename Cfg::Fr;
  static constexpr size_t BYTES = sizeof(F6);

  static bool in_cyclotomic(const F12& f) {
    if (f.is_zero()) return false;
    return f.template frobenius<2>().template frobenius<2>() * f == f.template frobenius<2>();
  }

  // false for an element that has no encoding (c1 == 0 and f != 1)
  static bool compress(const F12& f, uint8_t* out) {
    if (f.is_one()) { std::memset(out, 0, BYTES); return true; }
    if (f.c1.is_zero()) return false;
    F6 g = (f.c0 + F6::one()) * f.c1.inv();
    std::memcpy(out, &g, BYTES);
    return true;
  }

  static bool canonical(const F6& g) {
    const F2* c[3] = {&g.c0, &g.c1, &g.c2};
    for (auto* x : c)
      if (!x->c0.is_canonical() || !x->c1.is_canonical()) return false;
    return true;
  }

  // false on a non-canonical coordinate, g^2 == v, or a result outside the cyclotomic subgroup
  static bool decompress(const uint8_t* in, F12& f) {
    F6 g;
    std::memcpy(&g, in, BYTES);
    if (!canonical(g)) return false;
    if (g.is_zero()) { f = F12::one(); return true; }
    F6 v{F2::zero(), F2::one(), F2::zero()};
    F6 g2 = g.sqr();
    F6 den = g2 - v;
    if (den.is_zero()) return false;
    F6 d = den.inv();
    f = F12{(g2 + v) * d, (g * d).dbl()};
    return in_cyclotomic(f);
  }

  // prod_i base[i]^e[i] for cyclotomic bases, e[i] plain little-endian < 2^256
  // (Straus: one shared chain of squarings; see multi_exp_one).
  static F12 multi_exp(const F12* base, const uint8_t* exps, size_t n, unsigned T) {
    // the bases split over T threads (each its own squaring chain), the partial products multiplied
    const size_t per = 24;
    const size_t parts = std::max<size_t>(1, std::min<size_t>(T, (n + per - 1) / per));
    if (parts == 1) return multi_exp_one(base, exps, n);
    std::vector<F12> part(parts, F12::one());
    parallel_for(n, (unsigned)parts, [&](size_t b, size_t e, unsigned t) { part[t] = multi_exp_one(base + b, exps + 32 * b, e - b); });
    F12 acc = F12::one();
    for (auto& p : part) acc = acc * p;
    return acc;
  }

  // Straus over width-5 NAFs (digits odd in [-15, 15], at least 4 zeros after each nonzero one:
  // ~256/6 products per base against 256/5 for plain 5-bit windows, and a table of the 8 odd
  // powers against 16 powers; f^-k = conj(f^k) in the cyclotomic subgroup).
  static constexpr unsigned W = 5, DIGITS = 257;

  // e (32 bytes, little-endian) in width-W NAF, least significant digit first; its length.
  static size_t wnaf(const uint8_t* e, int8_t* out) {
    u64 k[5] = {0, 0, 0, 0, 0};  // the fifth limb takes the carry of k - d for a negative d
    std::memcpy(k, e, 32);
    size_t len = 0;
    while (k[0] | k[1] | k[2] | k[3] | k[4]) {
      int d = 0;
      if (k[0] & 1) {
        d = (int)(k[0] & ((1u << W) - 1));
        if (d >= (1 << (W - 1))) d -= 1 << W;
        u64 add = (u64)(d < 0 ? -d : 0), sub = (u64)(d > 0 ? d : 0);
        u128 c = (u128)k[0] + add - sub;  // k - d: the low W bits become 0, so no borrow past limb 0
        k[0] = (u64)c;
        for (int i = 1; i < 5 && (c >> 64); i++) { c = (u128)k[i] + 1; k[i] = (u64)c; }
      }
      out[len++] = (int8_t)d;
      for (int i = 0; i < 4; i++) k[i] = (k[i] >> 1) | (k[i + 1] << 63);
      k[4] >>= 1;
    }
    return len;
  }

  static F12 multi_exp_one(const F12* base, const uint8_t* exps, size_t n) {
    constexpr size_t TAB = (size_t)1 << (W - 2);  // base^1, base^3, ..., base^15
    std::vector<F12> tab(n * TAB);
    std::vector<int8_t> dig(n * DIGITS, 0);
    size_t top = 0;
    for (size_t i = 0; i < n; i++) {
      F12 sq = base[i].cyclotomic_sqr();
      tab[i * TAB] = base[i];
      for (size_t k = 1; k < TAB; k++) tab[i * TAB + k] = tab[i * TAB + k - 1] * sq;
      top = std::max(top, wnaf(exps + 32 * i, &dig[i * DIGITS]));
    }
    F12 acc = F12::one();
    bool started = false;
    for (size_t pos = top; pos-- > 0;) {
      if (started) acc = acc.cyclotomic_sqr();
      for (size_t i = 0; i < n; i++) {
        int d = dig[i * DIGITS + pos];
        if (d > 0) { acc = acc * tab[i * TAB + (d - 1) / 2]; started = true; }
        else if (d < 0) { acc = acc * tab[i * TAB + (-d - 1) / 2].conj(); started = true; }
      }
    }
    return acc;
  }
};

}  // namespace aggregate
}  // namespace snarkd
