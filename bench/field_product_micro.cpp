// Base-field and Fq2 products on 4 limbs (BN254) and 6 limbs (BLS12-381) side by side
// (cpu-notes round 22): ns per operation, best of 41 passes over 2048 random canonical
// elements, one core. "indep" runs 2048 independent products (throughput), "dep" a chain
// x = x b (latency). Fq: mul_to (CIOS + final subtraction), sqr_to; Fq2: mul_to, mul_conj_to,
// sqr_to, norm_to. The hash compares builds (same values bit for bit). With SNARKD_NO_ADX-free
// builds only (ADX path); run pinned for steadier figures:
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -I TREE/src/snarkd/native bench/field_product_micro.cpp -o /tmp/fpm && taskset -c 1 /tmp/fpm
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <vector>
#include "curves/groups.hpp"
using namespace snarkd;
static double now() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static uint64_t g_hash = 0;

template <class F>
F random_canonical(std::mt19937_64& rng) {
  for (;;) {
    uint64_t l[F::N];
    for (auto& w : l) w = rng();
    l[F::N - 1] &= (1ULL << (64 - __builtin_clzll(F::Params::MOD[F::N - 1]))) - 1;
    F x = F::from_limbs(l);
    if (x.is_canonical()) return x;
  }
}

template <class T, class Op>
void bench(const char* what, std::vector<T>& a, const std::vector<T>& b, Op op) {
  const size_t n = a.size();
  std::vector<T> o(n);
  double bi = 1e18, bd = 1e18;
  for (int r = 0; r < 41; r++) {
    double t0 = now();
    for (size_t i = 0; i < n; i++) op(o[i], a[i], b[i]);
    double t1 = now();
    T x = a[r];
    for (size_t i = 0; i < n; i++) op(x, x, b[i]);
    double t2 = now();
    bi = std::min(bi, (t1 - t0) / n);
    bd = std::min(bd, (t2 - t1) / n);
    g_hash = g_hash * 31 + reinterpret_cast<const uint64_t*>(&o[r])[0] + reinterpret_cast<const uint64_t*>(&x)[1];
  }
  printf("  %-14s indep %6.2f ns   dep %6.2f ns\n", what, bi, bd);
}

template <class Cfg>
void run(const char* name) {
  using F2 = typename Cfg::F;
  using F = typename F2::Base;
  std::mt19937_64 rng(7);
  const size_t n = 2048;
  std::vector<F> a(n), b(n);
  std::vector<F2> a2(n), b2(n);
  for (size_t i = 0; i < n; i++) {
    a[i] = random_canonical<F>(rng); b[i] = random_canonical<F>(rng);
    a2[i] = {random_canonical<F>(rng), random_canonical<F>(rng)};
    b2[i] = {random_canonical<F>(rng), random_canonical<F>(rng)};
  }
  printf("%s (Fq %zu limbs)\n", name, F::N);
  bench("fq mul", a, b, [](F& o, const F& x, const F& y) { F::mul_to(o, x, y); });
  bench("fq mul_lazy", a, b, [](F& o, const F& x, const F& y) { F::mul_lazy_to(o, x, y); F::canonical_to(o); });
  bench("fq sqr", a, b, [](F& o, const F& x, const F&) { F::sqr_to(o, x); });
  bench("fq2 mul", a2, b2, [](F2& o, const F2& x, const F2& y) { F2::mul_to(o, x, y); });
  bench("fq2 mul_conj", a2, b2, [](F2& o, const F2& x, const F2& y) { F2::mul_conj_to(o, x, y); });
  bench("fq2 sqr", a2, b2, [](F2& o, const F2& x, const F2&) { F2::sqr_to(o, x); });
  bench("fq2 norm", a2, b2, [](F2& o, const F2& x, const F2&) { x.norm_to(o.c0); o.c1 = x.c1; });
}

int main() {
  run<bn254::G2Cfg>("BN254");
  run<bls12_381::G2Cfg>("BLS12-381");
  printf("hash %llx\n", (unsigned long long)g_hash);
}
