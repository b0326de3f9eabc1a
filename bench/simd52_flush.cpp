// One batch-affine flush on the 8 IFMA lanes (SimdBatchAdd, msm/bucket_simd.hpp), G1 of BN254 and of
// BLS12-381, ns per addition, against ScalarBatchAdd (msm/buckets.hpp): B additions dst_i += +-src_i
// over random canonical coordinates with distinct x (the adders never look at the curve equation; one
// inversion per flush included; every third source negated, a few infinities on either side), each
// timing on fresh copies of dst, rounds alternated, best and median. Outputs compared byte for byte.
// Built against two trees' headers, it compares their lane adders (cpu-notes round 29). One core:
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -pthread -I TREE/src/snarkd/native bench/simd52_flush.cpp -o /tmp/s52f
//   taskset -c 1 /tmp/s52f [ROUNDS] [B]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "curves/groups.hpp"
#include "msm/bucket_simd.hpp"
using namespace snarkd;

template <class Cfg>
std::vector<Affine<Cfg>> random_points(size_t n, u64& s) {
  using F = typename Cfg::F;
  constexpr int W = (int)F::N;
  const u64 top = (1ULL << (63 - __builtin_clzll(F::Params::MOD[W - 1]))) - 1;
  std::vector<Affine<Cfg>> v(n);
  for (size_t i = 0; i < n; i++)
    for (F* c : {&v[i].x, &v[i].y})
      for (int q = 0; q < W; q++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        c->v[q] = i % 97 == 5 ? 0 : q == W - 1 ? s & top : s;  // every 97th an infinity (all zero)
      }
  return v;
}

template <class BA, class Cfg>
double time_flush(BA& ba, std::vector<Affine<Cfg>>& dst, const std::vector<Affine<Cfg>>& src,
                  const std::vector<Affine<Cfg>>& dst0) {
  dst = dst0;
  const size_t B = dst.size();
  ba.reserve(B);
  const size_t step = B % 7 ? 7 : 1;  // the dst order scrambled, each dst once
  for (size_t i = 0; i < B; i++) ba.push((uint8_t*)&dst[(i * step) % B], (const uint8_t*)&src[B - 1 - i], i % 3 == 0);
  auto t0 = std::chrono::steady_clock::now();
  ba.flush();
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (double)B;
}

template <class Cfg>
void run(const char* name, int rounds, size_t B) {
  u64 s = 0x853c49e6748fea9bULL;
  auto dst0 = random_points<Cfg>(B, s), src = random_points<Cfg>(B + 3, s);
  src.resize(B);
  std::vector<Affine<Cfg>> d1, d2;
  SimdBatchAdd<Cfg> lane;
  ScalarBatchAdd<Cfg> scal;
  time_flush(lane, d1, src, dst0);
  time_flush(scal, d2, src, dst0);
  const bool same = std::memcmp(d1.data(), d2.data(), B * sizeof(Affine<Cfg>)) == 0 && lane.equal.empty() && scal.equal.empty();
  std::vector<double> tl, ts;
  for (int r = 0; r < rounds; r++) {
    if (r & 1) {
      tl.push_back(time_flush(lane, d1, src, dst0));
      ts.push_back(time_flush(scal, d2, src, dst0));
    } else {
      ts.push_back(time_flush(scal, d2, src, dst0));
      tl.push_back(time_flush(lane, d1, src, dst0));
    }
  }
  auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
  const double bl = *std::min_element(tl.begin(), tl.end()), bs = *std::min_element(ts.begin(), ts.end());
  std::printf("%s, B = %zu: lanes %.1f ns (median %.1f), scalar %.1f ns (median %.1f) per addition; outputs %s\n",
              name, B, bl, med(tl), bs, med(ts), same ? "equal" : "DIFFER");
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 51;
  const size_t B = std::max<size_t>(8, (argc > 2 ? (size_t)std::atoll(argv[2]) : 1024) & ~(size_t)7);
  if (!detect_simd52()) {
    std::printf("no AVX-512 IFMA\n");
    return 1;
  }
  run<bn254::G1Cfg>("bn254 G1", rounds, B);
  run<bls12_381::G1Cfg>("bls12-381 G1", rounds, B);
}
