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
  // (Straus: one shared chain of squarings, 4-bit windows).
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

  // Straus with signed 5-bit windows (digits in [-16, 16]; f^-k = conj(f^k) in the cyclotomic subgroup).
  static F12 multi_exp_one(const F12* base, const uint8_t* exps, size_t n) {
    constexpr unsigned W = 5, NW = (256 + W) / W + 1;
    std::vector<F12> tab(n * 16);
    std::vector<int8_t> dig(n * NW);
    for (size_t i = 0; i < n; i++) {
      tab[i * 16] = base[i];
      tab[i * 16 + 1] = base[i].cyclotomic_sqr();
      for (int k = 2; k < 16; k++) tab[i * 16 + k] = tab[i * 16 + k - 1] * base[i];
      int carry = 0;
      for (unsigned j = 0; j < NW; j++) {
        unsigned pos = j * W, byte = pos / 8, sh = pos % 8;
        unsigned v = 0;
        if (byte < 32) v = exps[i * 32 + byte] >> sh;
        if (byte + 1 < 32) v |= (unsigned)exps[i * 32 + byte + 1] << (8 - sh);
        int d = (int)(v & 31) + carry;
        if (d > 16) { d -= 32; carry = 1; } else carry = 0;
        dig[i * NW + j] = (int8_t)d;
      }
    }
    F12 acc = F12::one();
    bool started = false;
    for (unsigned w = NW; w-- > 0;) {
      if (started)
        for (unsigned s = 0; s < W; s++) acc = acc.cyclotomic_sqr();
      for (size_t i = 0; i < n; i++) {
        int d = dig[i * NW + w];
        if (d > 0) { acc = acc * tab[i * 16 + d - 1]; started = true; }
        else if (d < 0) { acc = acc * tab[i * 16 - d - 1].conj(); started = true; }
      }
    }
    return acc;
  }
};

}  // namespace aggregate
}  // namespace snarkd
