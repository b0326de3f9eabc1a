// The IFMA QAP step (groth16/qap.hpp -> ntt/ntt_simd.hpp's h_coset, BN254 Fr) on 2^lg random values, one
// thread: min and median CPU of R calls and a hash of h, so that two trees' builds can be checked against
// each other (bench/cpu-notes.md round 29). CLEAR=1 drops the cached tables before every call, as a
// one-shot proof does (their build and first-touch pages counted); 0 keeps them (a daemon). Memory freed
// between calls is reused here, so the first-touch cost of the step's own arrays is not in these figures.
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -pthread -I TREE/src/snarkd/native bench/ntt_ifma_qap.cpp -o /tmp/q
//   taskset -c 1 /tmp/q [LG=17] [R=9] [CLEAR=0]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>
#include "curves/bn254.hpp"
#include "groth16/qap.hpp"
using namespace snarkd;
struct FrTr {
  using Fr = bn254::Fr;
  static constexpr unsigned S = bn254::TWO_ADICITY;
  static Fr root_s() { return Fr::from_limbs(bn254::ROOT_MONT); }
  static Fr shift() { return Fr::from_limbs(bn254::SHIFT_MONT); }
};
using Fr = bn254::Fr;
static double cpu_ms() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec * 1e-6; }
int main(int argc, char** argv) {
  const unsigned lg = argc > 1 ? atoi(argv[1]) : 17;
  const int R = argc > 2 ? atoi(argv[2]) : 9;
  const bool clear = argc > 3 && atoi(argv[3]);
  if (!g_use_simd52) {
    printf("no AVX-512 IFMA (qap_h would take the scalar path)\n");
    return 1;
  }
  const size_t n = (size_t)1 << lg;
  std::mt19937_64 rng(7);
  std::vector<Fr> a(n), b(n), h(n);
  for (size_t i = 0; i < n; i++) for (int k = 0; k < 4; k++) { a[i].v[k] = rng(); b[i].v[k] = rng(); }
  for (size_t i = 0; i < n; i++) { a[i].v[3] >>= 4; b[i].v[3] >>= 4; }
  std::vector<double> t;
  unsigned long long hs = 0;
  for (int r = 0; r < R; r++) {
    if (clear) NttSimd<FrTr>::clear_tables();
    double c0 = cpu_ms();
    qap_h<FrTr>(a.data(), b.data(), h.data(), lg, 1);
    t.push_back(cpu_ms() - c0);
  }
  for (size_t i = 0; i < n; i++) hs = hs * 1000003 ^ h[i].v[0] ^ h[i].v[3];
  std::sort(t.begin(), t.end());
  printf("qap 2^%u clear=%d: min %.2f med %.2f ms hash %llx\n", lg, (int)clear, t[0], t[t.size() / 2], hs);
}
