// One batch-affine flush, G1 of BN254 and of BLS12-381: the 4-lane AVX2 adder (Simd29LaneAdd,
// msm/bucket_simd29.hpp) against ScalarBatchAdd (msm/buckets.hpp), ns per addition (cpu-notes round 25).
// B additions dst_i += src_i over random canonical coordinates with distinct x (the adders never look at
// the curve equation; the inversion is included: one per flush), each timing on fresh copies of dst,
// rounds alternated, best and median. The two adders' outputs are compared once per curve, and once on a
// flush of edge cases (infinity, equal x under negated sources; "outputs equal" covers both). One core:
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -pthread -I TREE/src/snarkd/native bench/simd29_flush.cpp -o /tmp/s29f
//   taskset -c 1 /tmp/s29f [ROUNDS] [B]
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
  using F = typename Cfg::F;
  constexpr int W = (int)F::N;
  const u64 top = (1ULL << (63 - __builtin_clzll(F::Params::MOD[W - 1]))) - 1;
  std::vector<Affine<Cfg>> v(n);
  for (auto& p : v)
    for (F* c : {&p.x, &p.y})
      for (int q = 0; q < W; q++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        c->v[q] = q == W - 1 ? s & top : s;
      }
  return v;
}

template <class BA, class Cfg>
double time_flush(BA& ba, std::vector<Affine<Cfg>>& dst, const std::vector<Affine<Cfg>>& src,
                  const std::vector<Affine<Cfg>>& dst0) {
  dst = dst0;
  const size_t B = dst.size();
  ba.reserve(B);
  for (size_t i = 0; i < B; i++) ba.push((uint8_t*)&dst[i], (const uint8_t*)&src[i], i % 3 == 0);
  auto t0 = std::chrono::steady_clock::now();
  ba.flush();
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / (double)B;
}

template <class Cfg>
void run(const char* name, int rounds, size_t B) {
  u64 s = 0x853c49e6748fea9bULL;
  auto dst0 = random_points<Cfg>(B, s), src = random_points<Cfg>(B, s);
  std::vector<Affine<Cfg>> d1, d2;
  Simd29LaneAdd<Cfg> lane;
  ScalarBatchAdd<Cfg> scal;
  // the edges, outside the timings: dst at infinity (all-zero rows) under negated and plain sources, equal x
  // under negated sources (left to `equal`, with the negated y), sources at infinity; dst rows and the equal
  // lists compared (the lanes list them group by group, backwards: sorted by dst offset). G1 has no y = 0 point.
  bool edges = true;
  {
    auto de = dst0, se = src;
    for (size_t i = 0; i < B; i++) {
      if (i % 5 == 1) std::memset(&de[i], 0, sizeof(Affine<Cfg>));
      if (i % 11 == 6) se[i].x = de[i].x;
      if (i % 13 == 8) std::memset(&se[i], 0, sizeof(Affine<Cfg>));
    }
    time_flush(lane, d1, se, de);
    time_flush(scal, d2, se, de);
    edges = std::memcmp(d1.data(), d2.data(), B * sizeof(Affine<Cfg>)) == 0 && lane.equal.size() == scal.equal.size();
    auto by_dst = [](const auto& a, const auto& b) { return a.dst < b.dst; };
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
  time_flush(lane, d1, src, dst0);
  time_flush(scal, d2, src, dst0);
  const bool same = edges && std::memcmp(d1.data(), d2.data(), B * sizeof(Affine<Cfg>)) == 0 && lane.equal.empty() && scal.equal.empty();
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
  std::printf("%s, B = %zu: lanes %.1f ns (median %.1f), scalar %.1f ns (median %.1f) per addition; lanes / scalar best %.3f, median %.3f; outputs %s\n",
              name, B, bl, med(tl), bs, med(ts), bl / bs, med(tl) / med(ts), same ? "equal" : "DIFFER");
}

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 51;
  const size_t B = std::max<size_t>(4, (argc > 2 ? (size_t)std::atoll(argv[2]) : 2048) & ~(size_t)3);  // the lane adder's queue: whole groups of four
  if (!detect_simd29()) {
    std::printf("no AVX2 + BMI2/ADX\n");
    return 1;
  }
  for (int k = 0; k < 2; k++) {
    run<bn254::G1Cfg>("bn254 G1", rounds, B);
    run<bls12_381::G1Cfg>("bls12-381 G1", rounds, B);
  }
}
