// One-core micro-benchmark of the BN254 Fq squaring against the product a*a (bench/cpu-notes.md,
// round 6): throughput over 4096 independent elements and latency of a dependent chain, best of
// 15, process CPU time; the chains are compared for equality.
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -I TREE/src/snarkd/native bench/sqr_micro.cpp -o /tmp/sqr && /tmp/sqr
#include <cstdio>
#include <ctime>
#include <random>
#include <vector>
#include <algorithm>
#include "curves/groups.hpp"
using namespace snarkd;
using F = bn254::Fq;
static double cpu_now() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
int main() {
  std::mt19937_64 rng(1);
  const int n = 4096;
  std::vector<F> a(n);
  for (auto& x : a) { uint64_t l[4] = {rng(), rng(), rng(), rng() & 0x0fffffffffffffffULL}; x = F::from_limbs(l); }
  double bm = 1e18, bs = 1e18, lm = 1e18, ls = 1e18;
  uint64_t h = 0;
  for (int r = 0; r < 15; r++) {
    std::vector<F> o(n);
    double t0 = cpu_now();
    for (int k = 0; k < 8; k++) for (int i = 0; i < n; i++) F::mul_to(o[i], a[i], a[i]);
    double t1 = cpu_now();
    for (int k = 0; k < 8; k++) for (int i = 0; i < n; i++) F::sqr_to(o[i], a[i]);
    double t2 = cpu_now();
    F x = a[r], y = a[r];
    for (int i = 0; i < 8 * n; i++) F::mul_to(x, x, x);
    double t3 = cpu_now();
    for (int i = 0; i < 8 * n; i++) F::sqr_to(y, y);
    double t4 = cpu_now();
    if (!(x == y)) printf("MISMATCH\n");
    h ^= o[r].v[0] ^ x.v[1];
    bm = std::min(bm, (t1 - t0) / (8 * n)); bs = std::min(bs, (t2 - t1) / (8 * n));
    lm = std::min(lm, (t3 - t2) / (8 * n)); ls = std::min(ls, (t4 - t3) / (8 * n));
  }
  printf("throughput mul(a,a) %.2f ns  sqr %.2f ns | latency mul %.2f ns  sqr %.2f ns  (%llx)\n", bm, bs, lm, ls, (unsigned long long)(h & 0xff));
}
