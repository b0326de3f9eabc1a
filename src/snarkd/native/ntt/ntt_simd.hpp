// The QAP step (H values on the odd coset) with 8-lane AVX-512 IFMA field arithmetic.
//
// Arrays are converted once from the key's layout (AoS, Montgomery R = 2^256) to
// limb-major SoA (L arrays of n 52-bit limbs) in the wider Montgomery domain
// R' = 2^260, whose slack lets every value stay below 4p without a canonical
// reduction per butterfly (p / R' < 0.03 for both scalar fields). Butterflies
// run eight at a time on contiguous vectors; the three smallest stages (half
// sizes 1, 2, 4) are done inside pairs of vectors with lane permutations.
// As in ntt.hpp: blocks of 2^11 elements take all their small stages while in L2,
// the large stages are single passes, DIF (natural -> bit-reversed) then DIT
// (bit-reversed -> natural) so no permutation pass is needed.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "big_buffer.hpp"
#include "ff/simd52.hpp"
#include "ntt/ntt.hpp"
#include "parallel.hpp"

#if defined(SNARKD_SIMD52)
namespace snarkd {

template <class Tr>
struct NttSimd {
  using Fr = typename Tr::Fr;
  using P = typename Fr::Params;
  static_assert(P::N == 4, "scalar fields of 4 limbs");
  using Pr = simd52::Params<P, 260>;
  using E = simd52::Fe<Pr>;
  using V = simd52::V;
  static constexpr unsigned L = Pr::L;
  static constexpr unsigned LOG_BLOCK = 11;

  // L limb arrays of n words each (n a multiple of 8), 64-byte aligned: owned (the tables and the twiddle
  // scratch, from the heap as before: mapped with huge pages they measured a higher peak RSS, cpu-notes
  // round 32), or a view into a block owned elsewhere (the QAP step's three arrays, one big_buffer.hpp block).
  struct Soa {
    u64* p = nullptr;
    size_t n = 0;
    bool own = false;
    explicit Soa(size_t n_) : n(n_), own(true) {
      p = static_cast<u64*>(::operator new(L * n * 8, std::align_val_t(64)));
    }
    Soa(u64* at, size_t n_) : p(at), n(n_) {}  // a view: L n words at `at` (64-byte aligned)
    ~Soa() {
      if (own) ::operator delete(p, std::align_val_t(64));
    }
    Soa(const Soa&) = delete;
    Soa& operator=(const Soa&) = delete;
    SNARKD_SIMD52_INLINE E ld(size_t i) const {
      E e;
      for (unsigned l = 0; l < L; l++) e.l[l] = _mm512_load_si512(p + l * n + i);
      return e;
    }
    SNARKD_SIMD52_INLINE void st(size_t i, const E& e) {
      for (unsigned l = 0; l < L; l++) _mm512_store_si512(p + l * n + i, e.l[l]);
    }
  };

  // plain 2^264 mod r: multiplying an R = 2^256 value by it gives the R' = 2^260 value
  static const Fr& k_to_wide() {
    static const Fr k = [] { Fr x = Fr::zero(); x.v[0] = 256; return x.to_mont(); }();
    return k;
  }

  // AoS Montgomery(R) elements -> E (R'), eight from src
  SNARKD_SIMD52_INLINE static E load_aos(const Fr* src, const E& kw) {
    const uint8_t* ptr[8];
    for (int k = 0; k < 8; k++) ptr[k] = (const uint8_t*)(src + k);
    V w[4];
    simd52::load_rows<4>(ptr, w);
    return simd52::mul(simd52::from_words<Pr>(w), kw);
  }

  // Twiddles of the in-block stages (m < 2^11): tw[m + j] = w_2m^(+-j), both directions;
  // of the large stages: one table big[j] = w_n^j, j <= n/2, read with stride n/2m (the
  // inverse via w^-j = -w^(n/2 - j)). About 0.5 n entries where per-stage tables of both
  // directions would take 2n. The coset factors V[i] = g^rev(i) / n factor by block: for a
  // block of B = 2^lb elements, rev(bB + j) = rev_lb(j) 2^(log_n - lb) + rev(b) (b's bits
  // reversed among the log_n - lb high ones), so V[bB + j] = V[j] * g^rev(b): `scale` holds
  // V[j] for j < B, `block_scale` g^rev(b) (Montgomery R) for each block. A table of all n
  // factors was n fresh pages each one-shot proof (its page faults ~3% of the SHA-256 2^17
  // proof's CPU, bench/cpu-notes.md round 29) and a pass of its own over the three arrays.
  struct Tables {
    std::unique_ptr<Soa> small_fwd, small_inv, big, scale;
    std::vector<Fr> block_scale;
  };

  // t[at + j] = w^j for j < count, in whole vectors of 8 (count rounded up). T threads, each from its own
  // first power: the tables are rebuilt for every one-shot proof (clear_tables), and one thread filling
  // (and faulting in) them was ~2 ms of a 2^16 proof's NTT phase with the other core idle (round 17)
  SNARKD_SIMD52_TARGET static void powers(Soa& t, size_t at, size_t count, const Fr& w, unsigned T = 1) {
    parallel_for((count + 7) / 8, T, [&](size_t vb, size_t ve, unsigned) { powers_range(t, at, w, vb, ve); }, 512);
  }
  SNARKD_SIMD52_TARGET static void powers_range(Soa& t, size_t at, const Fr& w, size_t vb, size_t ve) {
    Fr first[8];
    first[0] = w.pow(8 * (u64)vb);
    for (int k = 1; k < 8; k++) first[k] = first[k - 1] * w;
    const Fr w8 = w.pow(8);
    const E kw = simd52::broadcast<Pr>(k_to_wide().v);
    E x = load_aos(first, kw), step = simd52::mul(simd52::broadcast<Pr>(w8.v), kw);
    for (size_t v = vb; v < ve; v++) {
      t.st(at + 8 * v, simd52::csub<1>(x));
      x = simd52::mul(x, step);
    }
  }

  SNARKD_SIMD52_TARGET static void fill_twiddles(Soa& t, unsigned log_n, bool inverse) {
    const size_t n = (size_t)1 << log_n, m = n / 2;
    Fr w = Ntt<Tr>::root_of_unity(log_n);
    if (inverse) w = w.inv();
    powers(t, m, m, w);  // largest stage, m >= 8
    // smaller stages: tw_mm[j] = tw_2mm[2j]
    for (size_t mm = m / 2; mm >= 1; mm /= 2)
      for (unsigned l = 0; l < L; l++) {
        u64* a = t.p + l * t.n;
        for (size_t j = 0; j < mm; j++) a[mm + j] = a[2 * mm + 2 * j];
      }
    for (unsigned l = 0; l < L; l++) t.p[l * t.n] = 0;  // index 0 unused
  }

  SNARKD_SIMD52_TARGET static void fill_big(Soa& t, unsigned log_n, unsigned T) {
    const size_t half = (size_t)1 << (log_n - 1);
    powers(t, 0, half + 1, Ntt<Tr>::root_of_unity(log_n), T);  // one vector past n/2: big[n/2] = -1 is read
  }

  // V[i] = g^rev(i) / n for i < 2^lb into v, and block_scale[b] = g^rev(b) for b < 2^(log_n - lb) (see Tables)
  SNARKD_SIMD52_TARGET static void fill_scale(Soa& v, std::vector<Fr>& block_scale, unsigned log_n, unsigned lb,
                                              unsigned T) {
    // built by doubling: V[i + m] = V[i] * g^(n / 2m) (the first vector as Ntt's, the levels from 8 on in
    // vectors)
    const size_t n = (size_t)1 << log_n;
    const std::vector<Fr> hp = Ntt<Tr>::coset_bit_factors(log_n);
    Fr first[8];
    first[0] = Ntt<Tr>::inv_n(n);
    Ntt<Tr>::bit_products(first, hp.data(), 3);
    const E kw = simd52::broadcast<Pr>(k_to_wide().v);
    v.st(0, simd52::csub<1>(load_aos(first, kw)));
    for (unsigned l = 3; l < lb; l++) {  // each level on T threads (see powers)
      const size_t m = (size_t)1 << l;
      const E hv = simd52::csub<1>(simd52::mul(simd52::broadcast<Pr>(hp[l].v), kw));
      parallel_for(m / 8, T, [&](size_t b, size_t e, unsigned) { scale_level(v, m, hv, b, e); }, 512);
    }
    block_scale.assign((size_t)1 << (log_n - lb), Fr::one());
    Ntt<Tr>::bit_products(block_scale.data(), hp.data() + lb, log_n - lb);
  }
  SNARKD_SIMD52_TARGET static void scale_level(Soa& v, size_t m, const E& hv, size_t b, size_t e) {
    for (size_t i = 8 * b; i < 8 * e; i += 8) v.st(i + m, simd52::csub<1>(simd52::mul(v.ld(i), hv)));
  }

  static std::mutex& cache_mu() { static std::mutex mu; return mu; }
  static std::map<unsigned, std::shared_ptr<const Tables>>& cache() {
    static std::map<unsigned, std::shared_ptr<const Tables>> c;
    return c;
  }
  // Forget the cached tables (a one-shot proof frees their memory once done).
  static void clear_tables() {
    std::lock_guard<std::mutex> g(cache_mu());
    cache().clear();
  }
  static std::shared_ptr<const Tables> tables(unsigned log_n, unsigned T) {
    std::lock_guard<std::mutex> g(cache_mu());
    auto& cache = NttSimd::cache();
    auto it = cache.find(log_n);
    if (it != cache.end()) return it->second;
    auto t = std::make_shared<Tables>();
    const size_t n = (size_t)1 << log_n;
    const unsigned lb = std::min(log_n, LOG_BLOCK);
    t->small_fwd = std::make_unique<Soa>((size_t)1 << lb);
    t->small_inv = std::make_unique<Soa>((size_t)1 << lb);
    fill_twiddles(*t->small_fwd, lb, false);
    fill_twiddles(*t->small_inv, lb, true);
    if (log_n > LOG_BLOCK) {
      t->big = std::make_unique<Soa>(n / 2 + 8);
      fill_big(*t->big, log_n, T);
    }
    t->scale = std::make_unique<Soa>((size_t)1 << lb);
    fill_scale(*t->scale, t->block_scale, log_n, lb, T);
    cache[log_n] = t;
    return t;
  }

  // ---- butterflies ----
  // The DIT (the forward transform after the coset scales) is lazy: no reduction per butterfly. Its
  // inputs are products (< 2p); the first stage (twiddle 1) gives a + b < 4p and a - b + 4p < 6p, and
  // every later one adds t = b w < 2p (b w / R' + p, with b < 85 p: R' / r = 2^260 / r > 84) to a or
  // subtracts it (a - t + 2p), so after the log_n <= 28 stages every value is below 6p + 2 (log_n - 1) p
  // <= 60p < R' = 2^(52L): normalized limbs hold it, and products of such values stay below
  // 60^2 p^2 / R' + p < 44p. convert_out brings C below 32p first. Same values mod p, and the H values
  // leave canonical, so the same bytes as with a reduction per butterfly (cpu-notes round 26).
  // The bound needs (2 S + 5) p < R' for the field's 2-adicity S: BN254's Fr (S = 28, R' / r = 84.6) has
  // it; BLS12-381's (S = 32, R' / r = 35) does not and keeps values below 4p (csub per output).
  //
  // The DIF (the inverse transform, natural -> bit-reversed) is lazy too where LAZY holds. Its difference
  // outputs are products (u - b + 32p) w < 64p * p / R' + p < 1.76p; its sums a + b double their bound per
  // stage, but only along a run of sum outputs: after k stages an element whose last j stages were all
  // sums (j = the trailing zero bits of its next block index bb, or k where bb = 0) is below 2^(j+1) p
  // (the converted inputs are products, < 2p). Values are kept below 32p: a butterfly whose block has
  // j >= 4 (inputs below 32p, its sum below 64p < R' = 84.6p) brings the sum back with one csub<32>, the
  // others (j <= 3, 15 in 16 blocks of a stage) have sums below 32p and skip it. The last stage (twiddle
  // 1) leaves both outputs below 64p unreduced: the coset scale (a factor below 1.02p) multiplies them
  // to below 64 * 1.02 / 84.6 p + p < 1.8p, what the forward transform above takes (< 2p). BLS12-381
  // (32p > R') keeps its DIF below 4p with a csub per sum.
  static constexpr bool LAZY = ((P::MOD[3] >> 32) + 1) * (2 * (u64)Tr::S + 5) < ((u64)1 << 36);
  // does the DIF butterfly of block bb after k stages reduce its sum (see above)
  static bool dif_reduces(size_t bb, unsigned k) { return (bb == 0 ? k : (unsigned)__builtin_ctzll(bb)) >= 4; }
  SNARKD_SIMD52_INLINE static void bf_dit(E& a, E& b, const E& w) {
    E t = simd52::mul(b, w);
    if constexpr (LAZY) {
      b = simd52::sub<2>(a, t);
      a = simd52::add(a, t);
    } else {
      b = simd52::csub<4>(simd52::sub<2>(a, t));
      a = simd52::csub<4>(simd52::add(a, t));
    }
  }
  SNARKD_SIMD52_INLINE static void bf_dit1(E& a, E& b) {  // twiddle 1: the first DIT stage only (b < 4p)
    E t = b;
    if constexpr (LAZY) {
      b = simd52::sub<4>(a, t);
      a = simd52::add(a, t);
    } else {
      b = simd52::csub<4>(simd52::sub<4>(a, t));
      a = simd52::csub<4>(simd52::add(a, t));
    }
  }
  // red: the sum needs its csub (dif_reduces; always where !LAZY)
  SNARKD_SIMD52_INLINE static void bf_dif(E& a, E& b, const E& w, bool red) {
    E u = a;
    if constexpr (LAZY) {
      a = simd52::add(u, b);
      if (red) a = simd52::csub<32>(a);
      b = simd52::mul(simd52::sub<32>(u, b), w);
    } else {
      a = simd52::csub<4>(simd52::add(u, b));
      b = simd52::mul(simd52::sub<4>(u, b), w);
    }
  }
  // DIF with the twiddle given as its negation: (u - v)(-t) = (v - u) t
  SNARKD_SIMD52_INLINE static void bf_dif_neg(E& a, E& b, const E& t, bool red) {
    E u = a;
    if constexpr (LAZY) {
      a = simd52::add(u, b);
      if (red) a = simd52::csub<32>(a);
      b = simd52::mul(simd52::sub<32>(b, u), t);
    } else {
      a = simd52::csub<4>(simd52::add(u, b));
      b = simd52::mul(simd52::sub<4>(b, u), t);
    }
  }
  SNARKD_SIMD52_INLINE static void bf_dif1(E& a, E& b) {  // the last DIF stage: lazy, both outputs < 64p
    E u = a;
    if constexpr (LAZY) {
      a = simd52::add(u, b);
      b = simd52::sub<32>(u, b);
    } else {
      a = simd52::csub<4>(simd52::add(u, b));
      b = simd52::csub<4>(simd52::sub<4>(u, b));
    }
  }

  // lanes of a pair of vectors, limb by limb: a = x:y picked by ia, b = by ib (permutex2var)
  SNARKD_SIMD52_INLINE static void pick(const E& x, const E& y, V ia, V ib, E& a, E& b) {
    for (unsigned l = 0; l < L; l++) {
      a.l[l] = _mm512_permutex2var_epi64(x.l[l], ia, y.l[l]);
      b.l[l] = _mm512_permutex2var_epi64(x.l[l], ib, y.l[l]);
    }
  }
  // a = the low 256-bit halves of x and y, b = the high ones (an involution on the pair)
  SNARKD_SIMD52_INLINE static void halves(const E& x, const E& y, E& a, E& b) {
    for (unsigned l = 0; l < L; l++) {
      a.l[l] = _mm512_shuffle_i64x2(x.l[l], y.l[l], 0x44);
      b.l[l] = _mm512_shuffle_i64x2(x.l[l], y.l[l], 0xEE);
    }
  }

  // the three small stages on 16 elements (two groups of 8), DIT order m = 1, 2, 4; for each stage the
  // pairs' lanes are gathered (ev/od, s2a/s2b, halves), the butterflies run, and the lanes go back
  // (i1a/i1b, i2a/i2b, halves). K such pairs (v0[k], v1[k]) step by step: each pair's three stages are one
  // chain of dependent products, so K of them side by side let the core overlap them (see inv_scale_fwd)
  template <size_t K>
  SNARKD_SIMD52_INLINE static void small_dit(E* v0, E* v1, const E& w2, const E& w4) {
    const V ev = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0), od = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
    const V i1a = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), i1b = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    const V s2a = _mm512_set_epi64(13, 12, 9, 8, 5, 4, 1, 0), s2b = _mm512_set_epi64(15, 14, 11, 10, 7, 6, 3, 2);
    const V i2a = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0), i2b = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
    E a[K], b[K];
    for (size_t k = 0; k < K; k++) pick(v0[k], v1[k], ev, od, a[k], b[k]);  // m = 1
    for (size_t k = 0; k < K; k++) bf_dit1(a[k], b[k]);
    for (size_t k = 0; k < K; k++) pick(a[k], b[k], i1a, i1b, v0[k], v1[k]);
    for (size_t k = 0; k < K; k++) pick(v0[k], v1[k], s2a, s2b, a[k], b[k]);  // m = 2
    for (size_t k = 0; k < K; k++) bf_dit(a[k], b[k], w2);
    for (size_t k = 0; k < K; k++) pick(a[k], b[k], i2a, i2b, v0[k], v1[k]);
    for (size_t k = 0; k < K; k++) halves(v0[k], v1[k], a[k], b[k]);  // m = 4
    for (size_t k = 0; k < K; k++) bf_dit(a[k], b[k], w4);
    for (size_t k = 0; k < K; k++) halves(a[k], b[k], v0[k], v1[k]);
  }

  // DIF order m = 4, 2, 1; red4 / red2: the m = 4 / m = 2 stage's sums need their csub (dif_reduces of the
  // pair's first block, the one with the most trailing zeros)
  template <size_t K>
  SNARKD_SIMD52_INLINE static void small_dif(E* v0, E* v1, const E& w2, const E& w4, bool red4, bool red2) {
    const V ev = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0), od = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
    const V i1a = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0), i1b = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
    const V s2a = _mm512_set_epi64(13, 12, 9, 8, 5, 4, 1, 0), s2b = _mm512_set_epi64(15, 14, 11, 10, 7, 6, 3, 2);
    const V i2a = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0), i2b = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
    E a[K], b[K];
    for (size_t k = 0; k < K; k++) halves(v0[k], v1[k], a[k], b[k]);  // m = 4
    for (size_t k = 0; k < K; k++) bf_dif(a[k], b[k], w4, red4);
    for (size_t k = 0; k < K; k++) halves(a[k], b[k], v0[k], v1[k]);
    for (size_t k = 0; k < K; k++) pick(v0[k], v1[k], s2a, s2b, a[k], b[k]);  // m = 2
    for (size_t k = 0; k < K; k++) bf_dif(a[k], b[k], w2, red2);
    for (size_t k = 0; k < K; k++) pick(a[k], b[k], i2a, i2b, v0[k], v1[k]);
    for (size_t k = 0; k < K; k++) pick(v0[k], v1[k], ev, od, a[k], b[k]);  // m = 1
    for (size_t k = 0; k < K; k++) bf_dif1(a[k], b[k]);
    for (size_t k = 0; k < K; k++) pick(a[k], b[k], i1a, i1b, v0[k], v1[k]);
  }

  // twiddle vectors for the small stages: m = 2: (t0 t1) x 4, m = 4: (t0..t3) x 2
  SNARKD_SIMD52_INLINE static void small_twiddles(const Soa& tw, E& w2, E& w4) {
    const V r2 = _mm512_set_epi64(3, 2, 3, 2, 3, 2, 3, 2), r4 = _mm512_set_epi64(7, 6, 5, 4, 7, 6, 5, 4);
    for (unsigned l = 0; l < L; l++) {
      V head = _mm512_load_si512(tw.p + l * tw.n);  // tw[0..8): [-, 1, t2_0, t2_1, t4_0..t4_3]
      w2.l[l] = _mm512_permutexvar_epi64(r2, head);
      w4.l[l] = _mm512_permutexvar_epi64(r4, head);
    }
  }

  // stage m (a power of two, >= 8) on [base, base + len) of an array of 2^log_n
  SNARKD_SIMD52_INLINE static void stage(Soa& x, const Soa& tw, size_t base, size_t len, size_t m, bool dit,
                                         unsigned log_n) {
    const unsigned k = log_n - 1 - (unsigned)__builtin_ctzll(m);  // stages before this one (DIF)
    for (size_t s = base; s < base + len; s += 2 * m) {
      const bool red = !dit && dif_reduces(s / (2 * m), k);
      for (size_t j = 0; j < m; j += 8) {
        E a = x.ld(s + j), b = x.ld(s + j + m), w = tw.ld(m + j);
        if (dit) bf_dit(a, b, w); else bf_dif(a, b, w, red);
        x.st(s + j, a);
        x.st(s + j + m, b);
      }
    }
  }

  // The transforms of the arrays xs[0 .. nx) together, stage by stage: each large stage's twiddles are
  // gathered once for all of them and each stage is one parallel region (one at a time, the three
  // arrays of the QAP step gathered every table three times on the calling thread while the other
  // threads waited: ~2 ms of a 2^16 proof, bench/cpu-notes.md round 17). Each array sees the same
  // butterflies in the same order as alone.
  // The inverse transform's (DIF's) stages down to the block size B, the in-block stages of both
  // transforms with the coset scales between them (inv_scale_fwd), then the forward transform's (DIT's)
  // large stages: each array sees the butterflies of dif(), scale(), dit() in the same order as before.
  // tw: scratch of n / 4 elements for the large stages' gathered twiddles (null where n <= 2B: none
  // gathered), one buffer for all stages where a buffer per stage was fresh pages each time.
  SNARKD_SIMD52_TARGET static void dif_large(Soa* const* xs, size_t nx, unsigned log_n, const Tables& tb, Soa* tw,
                                             unsigned T) {
    const size_t n = (size_t)1 << log_n;
    const size_t B = (size_t)1 << std::min(log_n, LOG_BLOCK);
    for (size_t m = n / 2; m >= B && n > B; m /= 2) {
      const Soa* w = stage_twiddles(*tb.big, tw, m, n, false, T);
      // one pass: vector butterflies k in [0, n / 16)
      parallel_for(n / 16, T, [&](size_t kb, size_t ke, unsigned) {
        for (size_t i = 0; i < nx; i++) run_large(*xs[i], *tb.big, w, m, n, kb, ke, false);
      }, 64);
    }
  }
  SNARKD_SIMD52_TARGET static void dit_large(Soa* const* xs, size_t nx, unsigned log_n, const Tables& tb, Soa* tw,
                                             unsigned T) {
    const size_t n = (size_t)1 << log_n;
    const size_t B = (size_t)1 << std::min(log_n, LOG_BLOCK);
    for (size_t m = B; m < n; m *= 2) {
      const Soa* w = stage_twiddles(*tb.big, tw, m, n, true, T);
      parallel_for(n / 16, T, [&](size_t kb, size_t ke, unsigned) {
        for (size_t i = 0; i < nx; i++) run_large(*xs[i], *tb.big, w, m, n, kb, ke, true);
      }, 64);
    }
  }
  // A large stage (m >= 2^11) needs w_2m^j = big[j s], s = n / 2m, or for the
  // inverse w_2m^-j = -big[n/2 - j s] (the sign goes into the butterfly). For
  // s > 1 the stage's m values are gathered once into the contiguous scratch tw (every
  // block of the stage reuses them); s = 1 reads big directly (null returned).
  SNARKD_SIMD52_TARGET static const Soa* stage_twiddles(const Soa& big, Soa* tw, size_t m, size_t n, bool dit,
                                                        unsigned T) {
    if (n / (2 * m) == 1) return nullptr;
    // tw->n is the limb stride: the stage's m values use the first m words of each limb array
    parallel_for(m / 8, T, [&](size_t b, size_t e, unsigned) { gather_range(*tw, big, m, n, dit, b, e); }, 64);
    return tw;
  }
  SNARKD_SIMD52_TARGET static void gather_range(Soa& tw, const Soa& big, size_t m, size_t n, bool dit, size_t vb,
                                                size_t ve) {
    const long long s = (long long)(n / (2 * m)), half = (long long)(n / 2);
    const V lanes = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
    for (size_t j = 8 * vb; j < 8 * ve; j += 8) {
      V idx = _mm512_mullo_epi64(_mm512_add_epi64(_mm512_set1_epi64((long long)j), lanes), _mm512_set1_epi64(s));
      if (!dit) idx = _mm512_sub_epi64(_mm512_set1_epi64(half), idx);
      E w;
      for (unsigned l = 0; l < L; l++) w.l[l] = _mm512_i64gather_epi64(idx, (const long long*)(big.p + l * big.n), 8);
      tw.st(j, w);
    }
  }
  SNARKD_SIMD52_TARGET static void run_large(Soa& x, const Soa& big, const Soa* tw, size_t m, size_t n, size_t kb,
                                             size_t ke, bool dit) {
    const size_t per = m / 8;  // vector butterflies per block of 2m
    const size_t half = n / 2;
    const unsigned kst = (unsigned)__builtin_ctzll(n / (2 * m));  // stages before this one (DIF)
    const V rev = _mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    for (size_t k = kb; k < ke; k++) {
      size_t blk = k / per, j = (k % per) * 8, base = blk * 2 * m;
      E a = x.ld(base + j), b = x.ld(base + j + m), w;
      if (tw) {
        w = tw->ld(j);  // limb stride tw->n >= m
      } else if (dit) {
        w = big.ld(j);
      } else {  // big[n/2 - j - t], t = 0..7: eight contiguous values, lanes reversed
        for (unsigned l = 0; l < L; l++)
          w.l[l] = _mm512_permutexvar_epi64(rev, _mm512_loadu_si512(big.p + l * big.n + half - j - 7));
      }
      if (dit) bf_dit(a, b, w); else bf_dif_neg(a, b, w, dif_reduces(blk, kst));
      x.st(base + j, a);
      x.st(base + j + m, b);
    }
  }
  // 3 (the QAP's arrays all at once): 2^17 one thread 53.2-53.6 ms -> 49.5-50.6 (2 arrays + 1: 52.0-52.2;
  // bench/cpu-notes.md round 29)
  static constexpr size_t KS = 3;
  template <size_t K>
  SNARKD_SIMD52_INLINE static void sweep(Soa* const* xs, size_t at, const E& s0, const E& s1, const E& w2i,
                                         const E& w4i, const E& w2f, const E& w4f, bool red4, bool red2) {
    E v0[K], v1[K];
    for (size_t k = 0; k < K; k++) {
      v0[k] = xs[k]->ld(at);
      v1[k] = xs[k]->ld(at + 8);
    }
    small_dif<K>(v0, v1, w2i, w4i, red4, red2);
    for (size_t k = 0; k < K; k++) {
      v0[k] = simd52::mul(v0[k], s0);
      v1[k] = simd52::mul(v1[k], s1);
    }
    small_dit<K>(v0, v1, w2f, w4f);
    for (size_t k = 0; k < K; k++) {
      xs[k]->st(at, v0[k]);
      xs[k]->st(at + 8, v1[k]);
    }
  }
  // Blocks [b, e) of B elements, while each is in L2: the inverse transform's in-block stages (the
  // three smallest inside vector pairs), the coset scales V[bB + j] = V[j] g^rev(b), the forward
  // transform's in-block stages. The smallest stages of both and the scale run in one sweep over 16
  // elements at a time, the scale factors formed once for the nx arrays. Bounds: the DIF leaves
  // values below 4p, V[j] < p and g^rev(b) (a product) below 2p give a factor below 2p, the scaled
  // value below 8p^2 / R' + p < 2p: the DIT's first stage takes it as the separate scale pass left it.
  SNARKD_SIMD52_TARGET static void inv_scale_fwd(Soa* const* xs, size_t nx, const Tables& tb, unsigned log_n,
                                                 size_t B, size_t b, size_t e) {
    E w2i, w4i, w2f, w4f;
    small_twiddles(*tb.small_inv, w2i, w4i);
    small_twiddles(*tb.small_fwd, w2f, w4f);
    const E kw = simd52::broadcast<Pr>(k_to_wide().v);
    const Soa& v = *tb.scale;
    for (size_t blk = b; blk < e; blk++) {
      const size_t base = blk * B;
      for (size_t i = 0; i < nx; i++)
        for (size_t m = B / 2; m >= 8; m /= 2) stage(*xs[i], *tb.small_inv, base, B, m, false, log_n);
      const E gb = simd52::mul(simd52::broadcast<Pr>(tb.block_scale[blk].v), kw);  // R -> R', < 2p
      for (size_t j = 0; j < B; j += 16) {
        const E s0 = simd52::mul(v.ld(j), gb), s1 = simd52::mul(v.ld(j + 8), gb);  // < 1.02p
        const size_t g = base + j;  // the m = 4 stage's first block is g / 8 (log_n - 3 stages before it)
        const bool red4 = dif_reduces(g / 8, log_n - 3), red2 = dif_reduces(g / 4, log_n - 2);
        // the arrays side by side, step by step: one array's 16 elements are a chain of seven
        // dependent products (three DIF stages, the scale, three DIT stages)
        size_t i = 0;
        for (; i + KS <= nx; i += KS) sweep<KS>(xs + i, base + j, s0, s1, w2i, w4i, w2f, w4f, red4, red2);
        for (; i < nx; i++) sweep<1>(xs + i, base + j, s0, s1, w2i, w4i, w2f, w4f, red4, red2);
      }
      for (size_t i = 0; i < nx; i++)
        for (size_t m = 8; m < B; m *= 2) stage(*xs[i], *tb.small_fwd, base, B, m, true, log_n);
    }
  }

  // ---- the QAP step ----
  // h[i] = (a b - c)(g w^i) for i < n, c = a o b on the domain; a, b: Montgomery
  // (R) on the domain; h: plain. n = 2^log_n >= 16.
  // inputs_done (optional): called once a and b are read (the caller may free them)
  SNARKD_SIMD52_TARGET static void h_coset(const Fr* a, const Fr* b, Fr* h, unsigned log_n, unsigned T,
                                           double* h_ms = nullptr, void (*inputs_done)(void*) = nullptr,
                                           void* ctx = nullptr) {
    const size_t n = (size_t)1 << log_n;
    auto tb = tables(log_n, T);
    const size_t B = (size_t)1 << std::min(log_n, LOG_BLOCK);
    // The three arrays in one big_buffer.hpp block: at 2^17 each alone is 5 MiB, two huge pages and a 1 MiB
    // tail of 4 KiB ones; together 15 MiB, seven huge pages and one 1 MiB tail (512 page faults fewer).
    // Each part's size is a multiple of 64 bytes (n a multiple of 16).
    BigArray<u64> mem(3 * L * n);
    Soa A(mem.get(), n), Bv(mem.get() + L * n, n), C(mem.get() + 2 * L * n, n);
    const E kw = simd52::broadcast<Pr>(k_to_wide().v);
    parallel_for(n / 8, T, [&](size_t kb, size_t ke, unsigned) { convert_in(a, b, A, Bv, C, kw, kb, ke); }, 256);
    if (inputs_done) inputs_done(ctx);
    Soa* const xs[3] = {&A, &Bv, &C};
    // the large stages' gathered twiddles (stage_twiddles), at most n / 4 of them: from the heap after a and
    // b are freed, as before (in the block above it measured a higher peak, cpu-notes round 32)
    std::unique_ptr<Soa> tw;
    if (n > 2 * B) tw = std::make_unique<Soa>(n / 4);
    dif_large(xs, 3, log_n, *tb, tw.get(), T);
    parallel_for(n / B, T, [&](size_t b, size_t e, unsigned) { inv_scale_fwd(xs, 3, *tb, log_n, B, b, e); });
    dit_large(xs, 3, log_n, *tb, tw.get(), T);
    auto t0 = std::chrono::steady_clock::now();
    parallel_for(n / 8, T, [&](size_t kb, size_t ke, unsigned) { convert_out(A, Bv, C, h, kb, ke); }, 256);
    if (h_ms) *h_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  SNARKD_SIMD52_TARGET static void convert_in(const Fr* a, const Fr* b, Soa& A, Soa& Bv, Soa& C, const E& kw,
                                              size_t kb, size_t ke) {
    for (size_t k = kb; k < ke; k++) {
      E x = load_aos(a + 8 * k, kw), y = load_aos(b + 8 * k, kw);
      A.st(8 * k, x);
      Bv.st(8 * k, y);
      C.st(8 * k, simd52::mul(x, y));
    }
  }
  SNARKD_SIMD52_TARGET static void convert_out(const Soa& A, const Soa& Bv, const Soa& C, Fr* h, size_t kb, size_t ke) {
    u64 one_w[4] = {1, 0, 0, 0};
    const E one = simd52::broadcast<Pr>(one_w);
    for (size_t k = kb; k < ke; k++) {
      E ab = simd52::mul(A.ld(8 * k), Bv.ld(8 * k));  // lazy: < 44p (see the butterflies); else < 2p
      E d;
      if constexpr (LAZY) d = simd52::sub<32>(ab, simd52::csub<32>(C.ld(8 * k)));  // C < 60p -> < 32p; d < 76p < R'
      else d = simd52::sub<4>(ab, C.ld(8 * k));
      E plain = simd52::csub<1>(simd52::mul(d, one));  // x R' / R' = x, canonical
      V w[8];
      simd52::to_words<Pr>(plain, w);
      for (int l = 4; l < 8; l++) w[l] = _mm512_setzero_si512();
      uint8_t* ptr[8];
      for (int q = 0; q < 8; q++) ptr[q] = (uint8_t*)(h + 8 * k + q);
      simd52::store_rows<4>(ptr, w, 0xff);
    }
  }
};

}  // namespace snarkd
#endif
