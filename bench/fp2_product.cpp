// BN254 Fq2 product and norm alone (cpu-notes round 13): ns per operation, best of 41 passes
// over 2048 random elements: throughput (independent products), latency (a chain x = x b)
// and the norm c0^2 + c1^2 (Fp2::mul_to and norm_to: Karatsuba before round 13, sums of
// products in registers after). Built against a tree's headers, the hash compares builds:
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -I TREE/src/snarkd/native bench/fp2_product.cpp -o /tmp/fp2 && /tmp/fp2
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <vector>
#include "curves/groups.hpp"
using namespace snarkd;
using F2 = bn254::G2Cfg::F;
using F = F2::Base;
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static inline void mul(F2& o, const F2& a, const F2& b) { F2::mul_to(o, a, b); }
int main() {
  std::mt19937_64 rng(3);
  auto rf = [&]() { uint64_t l[4]; for (auto& w : l) w = rng(); l[3] &= 0x0fffffffffffffffULL; return F::from_limbs(l); };
  const size_t n = 2048;
  std::vector<F2> a(n), b(n), o(n);
  std::vector<F> nr(n);
  for (size_t i = 0; i < n; i++) { a[i] = {rf(), rf()}; b[i] = {rf(), rf()}; }
  double bt = 1e18, bl = 1e18, bn = 1e18;
  uint64_t h = 0;
  for (int r = 0; r < 41; r++) {
    double t0 = now();
    for (size_t i = 0; i < n; i++) mul(o[i], a[i], b[i]);
    double t1 = now();
    F2 x = a[0];
    for (size_t i = 0; i < n; i++) mul(x, x, b[i]);
    double t2 = now();
    for (size_t i = 0; i < n; i++) a[i].norm_to(nr[i]);
    double t3 = now();
    bt = std::min(bt, (t1 - t0) / n); bl = std::min(bl, (t2 - t1) / n); bn = std::min(bn, (t3 - t2) / n);
    h ^= o[r].c0.v[0] ^ x.c1.v[1] ^ nr[r].v[2];  // the results compared build to build
  }
  printf("fp2 mul throughput %.1f ns  latency %.1f ns  norm %.1f ns  (hash %llx)\n", bt, bl, bn, (unsigned long long)h);
}
