// Radix-2 NTT over Fr, natural order in and out, with snarkjs's roots of unity:
// omega_{2^s} = 5^t (r - 1 = 2^s t), smaller domains by squaring.
// Structure: bit-reversal, then the small stages are run block by block (a
// block fits in L2 so all its stages stay in cache), then the remaining large
// stages one pass each. Twiddles per (log_n, direction) are cached; stage with
// half-size m reads tw[m + j] = w_{2m}^j, j < m.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <vector>
#include "parallel.hpp"

namespace snarkd {

// Tr: using Fr; static constexpr unsigned S; static Fr root_s(); static Fr shift();
template <class Tr>
struct Ntt {
  using Fr = typename Tr::Fr;

  static Fr root_of_unity(unsigned log_n) {
    Fr w = Tr::root_s();
    for (unsigned i = log_n; i < Tr::S; i++) w = w.sqr();
    return w;
  }

  // T threads fill a new table (a one-shot proof builds both directions of its size once, and
  // serially the n / 2 products and the copies left the other core idle: cpu-notes round 30).
  // Not value-initialised (no serial zeroing pass over the fresh pages: the threads' fill touches
  // them first); entry 0 is unused and set to zero.
  using Table = std::shared_ptr<const Fr[]>;
  static Table twiddles(unsigned log_n, bool inverse, unsigned T = 1) {
    static std::mutex mu;
    static std::map<std::pair<unsigned, bool>, Table> cache;
    {
      std::lock_guard<std::mutex> g(mu);
      auto it = cache.find({log_n, inverse});
      if (it != cache.end()) return it->second;
    }
    size_t n = (size_t)1 << log_n;
    std::shared_ptr<Fr[]> tw(new Fr[std::max<size_t>(n, 2)]);
    Fr* t = tw.get();
    t[0] = Fr::zero();
    if (inverse && n >= 4) {
      // w_2m^-j = w_2m^(2m - j) = -w_2m^(m - j): the inverse table is the forward one's stage
      // read backwards and negated, no products (canonical values either way: the same table)
      auto f = twiddles(log_n, false, T);
      const Fr* ft = f.get();
      parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
        for (size_t i = std::max<size_t>(b, 1); i < e; i++) {  // i = m + j over all stages: m = top bit of i
          const size_t m = (size_t)1 << (63 - __builtin_clzll(i)), j = i - m;
          t[i] = j ? ft[2 * m - j].neg() : ft[i];
        }
      }, 16384);
    } else if (n >= 2) {
      Fr w = root_of_unity(log_n);
      if (inverse) w = w.inv();
      // w is the n-th root; the 2m-th root is w^(n/2m). The largest stage is filled first, each
      // thread's range from its own first power; the smaller stages take every other element.
      const size_t m = n / 2;
      parallel_for(m, T, [&](size_t b, size_t e, unsigned) {
        Fr x = w.pow(b);
        for (size_t j = b; j < e; j++) { t[m + j] = x; x = x * w; }
      }, 8192);
      parallel_for(m, T, [&](size_t b, size_t e, unsigned) {  // index i < m: stage mm = top bit of i
        for (size_t i = std::max<size_t>(b, 1); i < e; i++) {
          const size_t mm = (size_t)1 << (63 - __builtin_clzll(i));
          t[i] = t[m + (i - mm) * (m / mm)];  // w_2mm^j = w_n^(j n / 2mm)
        }
      }, 8192);
    }
    std::lock_guard<std::mutex> g(mu);
    auto& slot = cache[{log_n, inverse}];
    if (!slot) slot = tw;
    return slot;
  }

  static inline size_t bitrev(size_t x, unsigned bits) {
    uint64_t v = x;
    v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
    v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
    v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
    return bits ? (size_t)(__builtin_bswap64(v) >> (64 - bits)) : 0;
  }

  static void bitrev_permute(Fr* a, unsigned log_n, unsigned T) {
    size_t n = (size_t)1 << log_n;
    parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
      for (size_t i = b; i < e; i++) {
        size_t j = bitrev(i, log_n);
        if (i < j) std::swap(a[i], a[j]);
      }
    }, 4096);
  }

  static constexpr unsigned LOG_BLOCK = 11;  // 2^11 * 32 B = 64 KiB blocks stay in L2 (at least; block_size)

  // Butterflies written in place (Mont's _to forms): a product or sum returned by value
  // and then copied into the array is read back with 16-byte loads that stall on the
  // 8-byte stores just made (store forwarding; see Mont::store_words).
  //
  // LAZY (Fr::NTT_LAZY: BN254's Fr on x86-64): Harvey's butterflies. The DIF keeps values in
  // [0, 2p), the DIT in [0, 4p); the products leave out their final subtraction and the sums
  // their modular correction (asm: Mont::dit_lazy, dif_lazy, red2p), and the transform reduces
  // once at its end (to_canonical in the last pass, or the inverse's scaling product). An intrinsics version
  // of the same cost 14% more instructions than the plain butterflies (cpu-notes round 10);
  // this one fewer (round 11). Values are exact either way, so outputs are bit-identical.
  static constexpr bool LAZY = Fr::NTT_LAZY;
  static inline __attribute__((always_inline)) void bfly1(Fr& x, Fr& y) {  // (x, y) <- (x + y, x - y)
    Fr t;
    Fr::sub_to(t, x, y);
    Fr::add_to(x, x, y);
    t.store_words(&y);
  }
  static inline __attribute__((always_inline)) void bfly1_dit(Fr& x, Fr& y) {  // twiddle 1
    if constexpr (LAZY) {
      Fr::red2p(y);
      Fr::dit_lazy(x, y, y);
    } else {
      bfly1(x, y);
    }
  }
  static inline __attribute__((always_inline)) void bfly1_dif(Fr& x, Fr& y) {  // twiddle 1
    if constexpr (LAZY) {
      Fr::dif_lazy(x, y);
      Fr::red2p(y);
    } else {
      bfly1(x, y);
    }
  }
  static inline __attribute__((always_inline)) void bfly_dit(Fr& x, Fr& y, const Fr& w) {  // (x + wy, x - wy)
    Fr t;
    if constexpr (LAZY) {
      Fr::mul_lazy_to(t, y, w);
      Fr::dit_lazy(x, y, t);
    } else {
      Fr::mul_to(t, y, w);
      Fr::sub_to(y, x, t);
      Fr::add_to(x, x, t);
    }
  }
  // (x + y, (x - y) w); REV: the inverse DIF's butterfly on the forward table, w = w_2m^-j = -w_2m^(m - j) = -wf,
  // so (x - y) w = (y - x) wf: (x + y, (y - x) wf) (the coset shift reads no inverse table: one n-entry table
  // fewer to build and fault in each one-shot proof)
  template <bool REV = false>
  static inline __attribute__((always_inline)) void bfly_dif(Fr& x, Fr& y, const Fr& w) {
    if constexpr (LAZY) {
      if constexpr (REV) Fr::dif_lazy_rev(x, y);
      else Fr::dif_lazy(x, y);
      Fr::mul_lazy_to(y, y, w);
    } else {
      Fr t;
      if constexpr (REV) Fr::sub_to(t, y, x);
      else Fr::sub_to(t, x, y);
      Fr::add_to(x, x, y);
      Fr::mul_to(y, t, w);
    }
  }
  // the DIT's lazy outputs, [0, 4p) -> [0, p): in its last pass, while the values are in
  // cache (no pass of its own over the array)
  static inline __attribute__((always_inline)) void to_canonical(Fr& x) {
    if constexpr (LAZY) {
      Fr::red2p(x);
      Fr::canonical_to(x);
    }
  }

  // The stages past the L2 block, K at a time: each pass reads the 2^K elements x[t m]
  // (t < 2^K) of a column and runs stages m, 2m, .., 2^(K-1) m on them (in reverse for the
  // DIF), so the array (4 MiB at 2^17, beyond L2) is streamed once per K stages instead of
  // once per stage. The same butterflies on the same inputs in the same order per element
  // as one pass per stage, so the outputs are bit-identical.
  static constexpr unsigned LARGE_GROUP = 3;
  // stages for the next pass, `left` = 2^(stages left): 3s, then a 2 or two 2s; a single
  // stage only when one is left (4 -> 2 + 2, 5 -> 3 + 2, 7 -> 3 + 2 + 2)
  static unsigned group_stages(size_t left) {
    unsigned s = 0;
    while (((size_t)1 << s) < left) s++;
    if (s <= LARGE_GROUP) return s;
    return s == LARGE_GROUP + 1 ? 2 : LARGE_GROUP;
  }
  // Two neighbouring columns (j, j + 1: one cache line per row) are copied to the stack and
  // transformed there: a column's rows are m * 32 B apart, so its 2^K rows and 2^K - 1
  // twiddle lines all fall in one L1 set, and in place (8 ways) they evicted each other
  // between stages (cachegrind at 2^17: 2.2x the L1 misses of one pass per stage). The twiddles
  // are copied first so that the rows are the set's most recent lines at the write-back.
  // The write-back goes word by word (store_words: the butterflies' 8-byte stores).
  // INV_FWD (the inverse DIF, tw the forward table): stage M = h m's twiddle for j' = u m + j + jj is
  // -tw[2M - j'] (bfly_dif<true> takes it without the sign), and for j' = 0, 1 = -(-1).
  template <unsigned K, bool DIF, bool CANON = false, bool INV_FWD = false>
  static void large_pass(Fr* a, size_t n, size_t m, const Fr* tw, unsigned T) {
    constexpr unsigned R = 1u << K, J = 2;
    const Fr minus_one = Fr::one().neg();
    parallel_for(n >> (K + 1), T, [&](size_t b, size_t e, unsigned) {
      Fr x[J][R], wj[R][J];  // wj[h + u][jj]: stage h m's twiddle for column j + jj, u (wj[0] unused)
      for (size_t c = b; c < e; c++) {
        const size_t j = (2 * c) & (m - 1);
        Fr* col = a + ((2 * c - j) << K) + j;
#pragma GCC unroll 8
        for (unsigned q = 1; q < R; q++)
          for (unsigned jj = 0; jj < J; jj++) {
            if constexpr (INV_FWD) {
              const unsigned h = 1u << (31 - __builtin_clz(q));
              const size_t jp = (q - h) * m + j + jj;
              wj[q][jj] = jp ? tw[2 * h * m - jp] : minus_one;
            } else {
              wj[q][jj] = tw[q * m + j + jj];
            }
          }
#pragma GCC unroll 8
        for (unsigned t = 0; t < R; t++)
          for (unsigned jj = 0; jj < J; jj++) x[jj][t] = col[t * m + jj];
#pragma GCC unroll 2
        for (unsigned jj = 0; jj < J; jj++)
#pragma GCC unroll 4
          for (unsigned l = 0; l < K; l++) {
            const unsigned h = DIF ? 1u << (K - 1 - l) : 1u << l;  // this stage's half-size / m
#pragma GCC unroll 8
            for (unsigned t = 0; t < R; t += 2 * h)
#pragma GCC unroll 8
              for (unsigned u = 0; u < h; u++) {
                if constexpr (DIF) bfly_dif<INV_FWD>(x[jj][t + u], x[jj][t + u + h], wj[h + u][jj]);
                else bfly_dit(x[jj][t + u], x[jj][t + u + h], wj[h + u][jj]);
              }
          }
#pragma GCC unroll 8
        for (unsigned t = 0; t < R; t++)
          for (unsigned jj = 0; jj < J; jj++) {
            if constexpr (CANON) to_canonical(x[jj][t]);
            x[jj][t].store_words(&col[t * m + jj]);
          }
      }
    }, 512 >> (K - 1));
  }

  // A block's stages (all in L2): the DIT's from half-size m0 up, the DIF's down to half-size 2
  // (its m = 1 stage is the caller's: coset_shift runs it pair by pair with the scaling and the
  // DIT's m = 1 stage).
  static inline void dit_block(Fr* x, size_t B, const Fr* tw, size_t m0) {
    for (size_t m = m0; m < B; m *= 2)
      for (size_t s = 0; s < B; s += 2 * m) {
        bfly1_dit(x[s], x[s + m]);  // j = 0: the twiddle is 1 (1/m of the block's products)
        for (size_t j = 1; j < m; j++) bfly_dit(x[s + j], x[s + j + m], tw[m + j]);
      }
  }
  template <bool INV_FWD = false>  // the inverse DIF on the forward table tw (bfly_dif<true>)
  static inline void dif_block(Fr* x, size_t B, const Fr* tw) {
    for (size_t m = B / 2; m >= 2; m /= 2)
      for (size_t s = 0; s < B; s += 2 * m) {
        bfly1_dif(x[s], x[s + m]);  // j = 0: the twiddle is 1
        for (size_t j = 1; j < m; j++) bfly_dif<INV_FWD>(x[s + j], x[s + j + m], tw[INV_FWD ? 2 * m - j : m + j]);
      }
  }
  // Blocks of up to 2^13 (256 KiB, with the in-block twiddles 512 KiB: a Zen 2/3 core's L2, half
  // a Zen 4's) where the array still gives each thread two: one large stage fewer per 2x over
  // 2^11, and at 2^17 two passes of two stages over the array against two of three before.
  // coset_shift 2^17 on Zen 4, CPU: -1..-2% against 2^11 (2^14: -2%, not taken: it would fill a
  // smaller L2; cpu-notes round 30). Small arrays and many threads keep 2^11.
  static constexpr unsigned LOG_BLOCK_MAX = 13;
  static size_t block_size(unsigned log_n, unsigned T) {
    unsigned t2 = 1;  // ceil(log2(2 T))
    while (((size_t)1 << t2) < 2 * (size_t)std::max(T, 1u)) t2++;
    const unsigned lb = log_n > t2 ? std::min(LOG_BLOCK_MAX, log_n - t2) : 0;
    return (size_t)1 << std::max(std::min(log_n, LOG_BLOCK), lb);
  }
  // the DIT's stages past the block, up to three a pass; canonical: the last pass reduces
  static void dit_large(Fr* a, size_t n, size_t B, const Fr* tw, unsigned T, bool canonical) {
    for (size_t m = B; m < n;) {
      const unsigned k = group_stages(n / m);
      const bool last = canonical && (m << k) == n;
      if (k == 3) last ? large_pass<3, false, true>(a, n, m, tw, T) : large_pass<3, false>(a, n, m, tw, T);
      else if (k == 2) last ? large_pass<2, false, true>(a, n, m, tw, T) : large_pass<2, false>(a, n, m, tw, T);
      else last ? large_pass<1, false, true>(a, n, m, tw, T) : large_pass<1, false>(a, n, m, tw, T);
      m <<= k;
    }
  }
  template <bool INV_FWD = false>
  static void dif_large(Fr* a, size_t n, size_t B, const Fr* tw, unsigned T) {
    for (size_t top = n; top > B;) {  // stages with half-size below top, down to B
      const unsigned k = group_stages(top / B);
      const size_t m = top >> k;  // the group's smallest half-size
      if (k == 3) large_pass<3, true, false, INV_FWD>(a, n, m, tw, T);
      else if (k == 2) large_pass<2, true, false, INV_FWD>(a, n, m, tw, T);
      else large_pass<1, true, false, INV_FWD>(a, n, m, tw, T);
      top = m;
    }
  }

  // Cooley-Tukey, bit-reversed input -> natural output. canonical: outputs below p (else below
  // 4p when LAZY).
  static void dit(Fr* a, unsigned log_n, const Fr* tw, unsigned T, bool canonical) {
    size_t n = (size_t)1 << log_n;
    if (n == 1) return;
    const size_t B = block_size(log_n, T);
    parallel_for(n / B, T, [&](size_t b, size_t e, unsigned) {
      for (size_t blk = b; blk < e; blk++) {
        Fr* x = a + blk * B;
        for (size_t i = 0; i < B; i += 2) bfly1_dit(x[i], x[i + 1]);  // m = 1: twiddle is 1
        dit_block(x, B, tw, 2);
        if (canonical && B == n)
          for (size_t i = 0; i < B; i++) to_canonical(x[i]);
      }
    });
    dit_large(a, n, B, tw, T, canonical);
  }

  // Gentleman-Sande, natural input -> bit-reversed output.
  static void dif(Fr* a, unsigned log_n, const Fr* tw, unsigned T) {
    size_t n = (size_t)1 << log_n;
    if (n == 1) return;
    const size_t B = block_size(log_n, T);
    dif_large(a, n, B, tw, T);
    parallel_for(n / B, T, [&](size_t b, size_t e, unsigned) {
      for (size_t blk = b; blk < e; blk++) {
        Fr* x = a + blk * B;
        dif_block(x, B, tw);
        for (size_t i = 0; i < B; i += 2) bfly1_dif(x[i], x[i + 1]);
      }
    });
  }

  static Fr inv_n(size_t n) {
    Fr nn = Fr::zero();
    nn.v[0] = n;
    return nn.to_mont().inv();
  }

  // Forward or inverse transform in place, natural order in and out.
  // scale: multiply by 1/n when inverse.
  static void transform(Fr* a, unsigned log_n, bool inverse, unsigned T, bool scale = true) {
    size_t n = (size_t)1 << log_n;
    if (n == 1) return;
    auto twp = twiddles(log_n, inverse, T);
    bitrev_permute(a, log_n, T);
    dit(a, log_n, twp.get(), T, !(inverse && scale));  // else the scaling product reduces (input < 4p)
    if (inverse && scale) {
      Fr ninv = inv_n(n);
      parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
        for (size_t i = b; i < e; i++) Fr::mul_to(a[i], a[i], ninv);
      }, 4096);
    }
  }

  // Evaluations on <w_n> -> evaluations on the odd coset g*<w_n>, g = w_{2n}
  // (snarkjs uses Fr.shift when n = 2^s). No permutation pass: inverse DIF
  // (natural -> bit-reversed coefficients), scale coefficient rev(i) by
  // g^rev(i)/n in bit-reversed order (coset_scales; inside the DIT's first
  // block pass), forward DIT (bit-reversed -> natural).
  static void coset_shift(Fr* a, unsigned log_n, unsigned T) {
    if (log_n == 0) return;  // a constant: same value everywhere
    const std::unique_ptr<Fr[]> V = coset_scales(log_n, T);
    coset_shift(a, log_n, T, V.get());
  }
  // The same with the scales V = coset_scales(log_n) given: the QAP step shifts three
  // arrays of one size and builds V (n products) once for all three.
  static void coset_shift(Fr* a, unsigned log_n, unsigned T, const Fr* V) {
    if (log_n == 0) return;
    auto ftw = twiddles(log_n, false, T);  // both directions' twiddles (the inverse's by bfly_dif<true>)
    const size_t n = (size_t)1 << log_n, B = block_size(log_n, T);
    dif_large<true>(a, n, B, ftw.get(), T);
    // One pass per block from the inverse's small stages to the forward's: the inverse's last stage,
    // the scaling and the forward's first stage pair by pair in registers (three passes over the
    // block before, and the two block passes one parallel region: cpu-notes round 30). The same
    // operations on each value in the same order, so the same bytes.
    parallel_for(n / B, T, [&](size_t b, size_t e, unsigned) {
      for (size_t blk = b; blk < e; blk++) {
        Fr* x = a + blk * B;
        const Fr* v = V + blk * B;
        dif_block<true>(x, B, ftw.get());
        for (size_t i = 0; i < B; i += 2) {
          bfly1_dif(x[i], x[i + 1]);
          if constexpr (LAZY) {  // the DIF's outputs are below 2p
            Fr::mul_lazy_to(x[i], x[i], v[i]);
            Fr::mul_lazy_to(x[i + 1], x[i + 1], v[i + 1]);
          } else {
            Fr::mul_to(x[i], x[i], v[i]);
            Fr::mul_to(x[i + 1], x[i + 1], v[i + 1]);
          }
          bfly1_dit(x[i], x[i + 1]);
        }
        dit_block(x, B, ftw.get(), 2);
        if (B == n)
          for (size_t i = 0; i < B; i++) to_canonical(x[i]);
      }
    });
    dit_large(a, n, B, ftw.get(), T, true);
  }
  // hp[l] = g^(n / 2^(l+1)) for the coset generator g (the field's shift at the full 2-adic size,
  // else a 2n-th root of unity): bit l of i contributes hp[l] to g^rev(i). Shared with
  // NttSimd's tables.
  static std::vector<Fr> coset_bit_factors(unsigned log_n) {
    std::vector<Fr> hp(log_n);
    Fr h = log_n == Tr::S ? Tr::shift() : root_of_unity(log_n + 1);
    for (unsigned l = log_n; l-- > 0;) { hp[l] = h; h = h.sqr(); }
    return hp;
  }
  // t[j] = t[0] prod_{bit l of j} h[l] for j < 2^bits, by doubling (t[j + m] = t[j] h[l], m = 2^l);
  // t[0] given. One product an entry, canonical values.
  static void bit_products(Fr* t, const Fr* h, unsigned bits) {
    for (unsigned l = 0; l < bits; l++) {
      const size_t m = (size_t)1 << l;
      for (size_t i = 0; i < m; i++) Fr::mul_to(t[i + m], t[i], h[l]);
    }
  }
  // V[i] = g^rev(i) / n = V[0] prod_{bit l of i} hp[l]. The low 2^k and the factors of the high
  // bits P[j] by doubling (bit_products), then V[j 2^k + i] = V[i] P[j] on T threads, each writing
  // the fresh pages it touches (a serial doubling over a zeroed vector left the other core idle:
  // cpu-notes round 30). One product an element either way; canonical values, so the same table.
  static std::unique_ptr<Fr[]> coset_scales(unsigned log_n, unsigned T) {
    size_t n = (size_t)1 << log_n;
    std::unique_ptr<Fr[]> V(new Fr[n]);
    const std::vector<Fr> hp = coset_bit_factors(log_n);
    const unsigned k = std::min(log_n, 12u);
    const size_t lo = (size_t)1 << k, nh = n >> k;
    V[0] = inv_n(n);
    bit_products(V.get(), hp.data(), k);
    std::vector<Fr> P(nh);
    P[0] = Fr::one();
    bit_products(P.data(), hp.data() + k, log_n - k);
    parallel_for(nh - 1, T, [&](size_t b, size_t e, unsigned) {
      for (size_t j = b + 1; j < e + 1; j++)
        for (size_t i = 0; i < lo; i++) Fr::mul_to(V[j * lo + i], V[i], P[j]);
    });
    return V;
  }
};

}  // namespace snarkd
