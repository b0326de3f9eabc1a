// One batch-affine G2 flush (Fq2 coordinates), BN254 and BLS12-381: the 4-lane AVX2 adder
// (Simd29G2Add::lane_flush, msm/bucket_simd29.hpp) against ScalarBatchAdd (msm/buckets.hpp), ns per
// addition, and the Fq2 products alone: the lanes' Karatsuba product (3 lane products + sums) against
// the scalar sums-form product (ff/mont.hpp fp2_mul_sums through Fp2's operator*), ns per Fq2 product
// (cpu-notes round 27). Random canonical coordinates (the adders never look at the curve equation),
// one flush inversion included, fresh copies per timing, rounds alternated; outputs compared ("outputs equal"
// covers a flush of edge cases too: infinity, zero y components under negation, equal x). One core:
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -pthread -I TREE/src/snarkd/native bench/simd29_g2_flush.cpp -o /tmp/s29g2
//   taskset -c 1 /tmp/s29g2 [ROUNDS] [B]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "curves/groups.hpp"
#include "msm/bucket_simd29.hpp"
using namespace snarkd;

template <class Cfg>
std::vector<Affine<Cfg>> random_points(size_t n, u64& s) {
  using FI = typename Cfg::F::Base;
  constexpr int W = (int)FI::N;
  const u64 top = (1ULL << (63 - __builtin_clzll(FI::Params::MOD[W - 1]))) - 1;
  std::vector<Affine<Cfg>> v(n);
  for (auto& p : v)
    for (FI* c : {&p.x.c0, &p.x.c1, &p.y.c0, &p.y.c1})
      for (int q = 0; q < W; q++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        c->v[q] = q == W - 1 ? s & top : s;
      }
  return v;
}

template <class BA, class Cfg>
double time_flush(BA& ba, std::vector<Affine<Cfg>>& dst, const std::vector<Affine<Cfg>>& src,
                  const std::vector<Affine<Cfg>>& dst0, bool lanes) {
  dst = dst0;
  const size_t B = dst.size();
  ba.reserve(B);
  for (size_t i = 0; i < B; i++) ba.push((uint8_t*)&dst[i], (const uint8_t*)&src[i], i % 3 == 0);
  auto t0 = std::chrono::steady_clock::now();
  if constexpr (std::is_same<BA, Simd29G2Add<Cfg>>::value) {
    if (lanes) ba.lane_flush();
    else ba.flush();
  } else {
    ba.flush();
  }
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (double)B;
}

static double med(std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

// Fq2 products: n independent a_i b_i, lanes (Karatsuba) and scalar (operator*)
template <class Cfg>
SNARKD_SIMD29_TARGET __attribute__((noinline)) double lane_fq2_ns(typename Simd29G2Add<Cfg>::Fe2* buf, size_t groups,
                                                                  const simd29::Consts<typename Simd29G2Add<Cfg>::P>& k) {
  auto t0 = std::chrono::steady_clock::now();
  for (size_t g = 0; g + 1 < groups; g++) Simd29G2Add<Cfg>::mul2(buf[g], buf[g], buf[g + 1], k);
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (4.0 * (groups - 1));
}
template <class F>
__attribute__((noinline)) double scalar_fq2_ns(F* buf, size_t n) {
  auto t0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i + 1 < n; i++) buf[i] = buf[i] * buf[i + 1];
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (double)(n - 1);
}

template <class Cfg>
SNARKD_SIMD29_TARGET void run(const char* name, int rounds, size_t B) {
  using A = Simd29G2Add<Cfg>;
  using F = typename Cfg::F;
  u64 s = 0x853c49e6748fea9bULL;
  auto dst0 = random_points<Cfg>(B, s), src = random_points<Cfg>(B, s);
  // products: 1024 Fq2 elements (x coordinates of dst0 repeated)
  constexpr size_t NP = 1024;
  std::vector<F> sbuf(NP), sbuf0(NP);
  for (size_t i = 0; i < NP; i++) sbuf0[i] = dst0[i % B].x;
  Aligned64<typename A::Fe2> lbuf, lbuf0;
  lbuf.resize(NP / 4);
  lbuf0.resize(NP / 4);
  {
    const uint8_t* r[4];
    for (size_t g = 0; g < NP / 4; g++) {
      for (int l = 0; l < 4; l++) r[l] = (const uint8_t*)&sbuf0[4 * g + l];
      A::load2(lbuf0[g], r, 0);
    }
  }
  const simd29::Consts<typename A::P> k;
  std::vector<double> pl, ps;
  for (int r = 0; r < rounds; r++) {
    sbuf = sbuf0;
    std::memcpy(lbuf.p, lbuf0.p, sizeof(typename A::Fe2) * NP / 4);
    ps.push_back(scalar_fq2_ns(sbuf.data(), NP));
    pl.push_back(lane_fq2_ns<Cfg>(lbuf.p, NP / 4, k));
  }
  // the lane products' values against the scalar ones (one chain step: buf[0] = b0 b1)
  bool pequal = true;
  {
    std::vector<F> sv(sbuf0);
    for (size_t i = 0; i + 1 < NP; i++) sv[i] = sv[i] * sv[i + 1];
    alignas(32) u64 rows[4][4 * A::W];
    for (size_t g = 0; g + 1 < NP / 4; g++) {
      // lbuf holds the last round's results: group g = groups g times g+1 of the previous round...
    }
    // one direct check: lanes a*b for the first groups, from fresh inputs
    typename A::Fe2 o;
    for (size_t g = 0; g + 1 < NP / 4; g++) {
      A::mul2(o, lbuf0[g], lbuf0[g + 1], k);
      simd29::csub<typename A::P, 1>(o.c0, k);
      simd29::csub<typename A::P, 1>(o.c1, k);
      A::store2(o, rows, 0);
      for (int l = 0; l < 4; l++) {
        F want = sbuf0[4 * g + l] * sbuf0[4 * g + 4 + l];
        if (std::memcmp(rows[l], &want, sizeof(F)) != 0) pequal = false;
      }
    }
  }
  std::vector<Affine<Cfg>> d1, d2;
  A lane;
  ScalarBatchAdd<Cfg> scal;
  // the edges, outside the timings: dst at infinity (all-zero rows) under negated and plain sources,
  // source y components 0 (a negated source's dy reaches 2p there), equal x under negated sources (left
  // to `equal`, with the negated y), sources at infinity; dst rows and the equal lists compared
  bool edges = true;
  {
    auto de = dst0, se = src;
    for (size_t i = 0; i < B; i++) {
      if (i % 5 == 1) std::memset(&de[i], 0, sizeof(Affine<Cfg>));
      if (i % 7 == 2) se[i].y.c0 = F::Base::zero();
      if (i % 7 == 3) se[i].y.c1 = F::Base::zero();
      if (i % 7 == 4) se[i].y = F::zero();
      if (i % 11 == 6) se[i].x = de[i].x;
      if (i % 13 == 8) std::memset(&se[i], 0, sizeof(Affine<Cfg>));
    }
    time_flush(lane, d1, se, de, true);
    time_flush(scal, d2, se, de, false);
    edges = std::memcmp(d1.data(), d2.data(), B * sizeof(Affine<Cfg>)) == 0 && lane.equal.size() == scal.equal.size();
    auto by_dst = [](const auto& a, const auto& b) { return a.dst < b.dst; };  // the lanes list them group by group, backwards
    std::sort(lane.equal.begin(), lane.equal.end(), by_dst);
    std::sort(scal.equal.begin(), scal.equal.end(), by_dst);
    for (size_t i = 0; edges && i < lane.equal.size(); i++) {
      const auto &a = lane.equal[i], &b = scal.equal[i];
      edges = a.dst - (uint8_t*)d1.data() == b.dst - (uint8_t*)d2.data() && std::memcmp(&a.p, &b.p, sizeof(a.p)) == 0 &&
              std::memcmp(&a.q, &b.q, sizeof(a.q)) == 0;
    }
    if (B >= 32 && lane.equal.empty()) edges = false;  // the case must have been met
    lane.equal.clear();
    scal.equal.clear();
  }
  time_flush(lane, d1, src, dst0, true);
  time_flush(scal, d2, src, dst0, false);
  const bool same = edges && std::memcmp(d1.data(), d2.data(), B * sizeof(Affine<Cfg>)) == 0 && lane.equal.empty() && scal.equal.empty();
  std::vector<double> tl, ts;
  for (int r = 0; r < rounds; r++) {
    if (r & 1) {
      tl.push_back(time_flush(lane, d1, src, dst0, true));
      ts.push_back(time_flush(scal, d2, src, dst0, false));
    } else {
      ts.push_back(time_flush(scal, d2, src, dst0, false));
      tl.push_back(time_flush(lane, d1, src, dst0, true));
    }
  }
  const double bpl = *std::min_element(pl.begin(), pl.end()), bps = *std::min_element(ps.begin(), ps.end());
  std::printf("%s Fq2 product: lanes (%s) %.1f ns (median %.1f), scalar (sums) %.1f ns (median %.1f); lanes / scalar best %.3f; values %s\n",
              name, A::SUMS ? "sums form" : "Karatsuba", bpl, med(pl), bps, med(ps), bpl / bps, pequal ? "equal" : "DIFFER");
  const double bl = *std::min_element(tl.begin(), tl.end()), bs = *std::min_element(ts.begin(), ts.end());
  std::printf("%s flush, B = %zu: lanes %.1f ns (median %.1f), scalar %.1f ns (median %.1f) per addition; lanes / scalar best %.3f, median %.3f; outputs %s\n",
              name, B, bl, med(tl), bs, med(ts), bl / bs, med(tl) / med(ts), same ? "equal" : "DIFFER");
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 31;
  const size_t B = std::max<size_t>(4, (argc > 2 ? (size_t)std::atoll(argv[2]) : 2048) & ~(size_t)3);
  if (!detect_simd29()) {
    std::printf("no AVX2 + BMI2/ADX\n");
    return 1;
  }
  for (int k = 0; k < 2; k++) {
    run<bn254::G2Cfg>("bn254 G2", rounds, B);
    run<bls12_381::G2Cfg>("bls12-381 G2", rounds, B);
  }
}
