// The 4-lane AVX2 product (ff/simd29.hpp) against the scalar ADX product (Mont::mul_lazy_to), BN254's Fq
// (9 limbs of 29 bits against 4 x 64) and BLS12-381's (14 limbs against 6 x 64), the calibration's own
// timing functions (simd29::lane_product_ns / scalar_product_ns: 1024 independent products on the same
// random canonical operands), rounds alternated, best and median of each (cpu-notes round 25). Also the
// ratio of best times, which is what simd29_pays compares with 1.25. One core:
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -I TREE/src/snarkd/native bench/simd29_bls_product.cpp -o /tmp/s29p
//   taskset -c 1 /tmp/s29p [ROUNDS]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "curves/groups.hpp"
#include "ff/simd29.hpp"
using namespace snarkd;

template <class P>
SNARKD_SIMD29_TARGET void run(const char* name, int rounds) {
  using namespace simd29;
  using F = Mont<P>;
  constexpr int W = (int)P::N;
  constexpr size_t NG = 256;
  static FeOf<P> lane[NG];
  static F scal[4 * NG];
  const Consts<P> k;
  u64 s = 0x243f6a8885a308d3ULL;
  const u64 top = (1ULL << (63 - __builtin_clzll(P::MOD[W - 1]))) - 1;
  for (size_t i = 0; i < 4 * NG; i++)
    for (int q = 0; q < W; q++) {
      s ^= s << 13; s ^= s >> 7; s ^= s << 17;
      scal[i].v[q] = q == W - 1 ? s & top : s;
    }
  std::vector<double> tl, ts;
  for (int r = 0; r < rounds; r++) {
    for (size_t g = 0; g < NG; g++) load_rows4(lane[g], &scal[4 * g], &scal[4 * g + 1], &scal[4 * g + 2], &scal[4 * g + 3]);
    double a, b;
    if (r & 1) {
      a = lane_product_ns<P>(lane, NG, k);
      b = scalar_product_ns(scal, 4 * NG);
    } else {
      b = scalar_product_ns(scal, 4 * NG);
      a = lane_product_ns<P>(lane, NG, k);
    }
    tl.push_back(a);
    ts.push_back(b);
  }
  auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  const double bl = *std::min_element(tl.begin(), tl.end()), bs = *std::min_element(ts.begin(), ts.end());
  std::printf("%s: lane %.2f ns (median %.2f), scalar %.2f ns (median %.2f) per product; scalar / lane best %.3f, median %.3f; pays(1.25): %s\n",
              name, bl, med(tl), bs, med(ts), bs / bl, med(ts) / med(tl), bl * 1.25 <= bs ? "yes" : "no");
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 201;
  if (!detect_simd29()) {
    std::printf("no AVX2 + BMI2/ADX\n");
    return 1;
  }
  run<bn254::FqP>("bn254 Fq (9 x 29 vs 4 x 64)", rounds);
  run<bls12_381::FqP>("bls12-381 Fq (14 x 29 vs 6 x 64)", rounds);
  run<bn254::FqP>("bn254 Fq (9 x 29 vs 4 x 64)", rounds);
  run<bls12_381::FqP>("bls12-381 Fq (14 x 29 vs 6 x 64)", rounds);
}
