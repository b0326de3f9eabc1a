// G1 and G2 (BN254) MSM on the scalar path (IFMA off), one thread, process CPU time: the
// median of R runs, and a hash of the result so that two builds can be checked against
// each other (bench/cpu-notes.md, round 4). G2 takes random coordinates: the adder's cost
// does not depend on the curve equation, and the hash still compares builds.
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -pthread -I TREE/src/snarkd/native \
//       bench/msm_scalar_path.cpp -o /tmp/msm_TREE && /tmp/msm_TREE 16 9 g2
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <type_traits>
#include <vector>
#include "curves/groups.hpp"
#include "msm/pippenger.hpp"
using namespace snarkd;
static double cpu_now() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec * 1e-6; }
template <class Cfg, class Fr>
void run(const char* name, unsigned lg, int R) {
  using Aff = Affine<Cfg>; using Pt = XYZZ<Cfg>;
  size_t n = (size_t)1 << lg;
  std::mt19937_64 rng(5);
  std::vector<Aff> P(n);
  if constexpr (std::is_same_v<Cfg, bn254::G1Cfg>) {
    Aff g{bn254::Fq::one(), bn254::Fq::one().dbl()};
    Pt acc = Pt::from_affine(g);
    for (size_t i = 0; i < n; i++) { acc.dbl(); acc.add_affine(g); P[i] = acc.to_affine(); }
  } else {  // G2: random coordinates (the cost does not depend on the curve equation; results compared run to run)
    auto rf = [&]() { uint64_t l[4] = {rng(), rng(), rng(), rng() & 0x0fffffffffffffffULL}; return bn254::Fq::from_limbs(l); };
    for (size_t i = 0; i < n; i++) P[i] = Aff{{rf(), rf()}, {rf(), rf()}};
  }
  std::vector<uint64_t> sc(4 * n);
  for (size_t i = 0; i < n; i++) { for (int j = 0; j < 4; j++) sc[4 * i + j] = rng(); sc[4 * i + 3] &= (1ULL << 61) - 1; }
  const uint8_t* S = (const uint8_t*)sc.data();
  Aff r = msm<Cfg, Fr>((const uint8_t*)P.data(), S, n, 1);
  std::vector<double> ts;
  for (int k = 0; k < R; k++) { double t0 = cpu_now(); Aff q = msm<Cfg, Fr>((const uint8_t*)P.data(), S, n, 1); ts.push_back(cpu_now() - t0);
    if (!(q.x == r.x && q.y == r.y)) printf("MISMATCH\n"); }
  std::sort(ts.begin(), ts.end());
  uint64_t h = 0; for (size_t i = 0; i < sizeof(Aff) / 8; i++) h = h * 1000003 ^ ((const uint64_t*)&r)[i];
  printf("%s 2^%u: median %.1f ms min %.1f  result %016llx\n", name, lg, ts[R / 2], ts[0], (unsigned long long)h);
}
// one field inversion (divsteps), ns: best of 7 passes over 4096 random elements
template <class F, size_t L>
double inv_ns(std::mt19937_64& rng) {
  std::vector<F> a(4096);
  for (auto& x : a) {
    uint64_t l[L];
    for (size_t j = 0; j < L; j++) l[j] = rng();
    l[L - 1] &= 0x0fffffffffffffffULL;  // below p for both curves
    x = F::from_limbs(l);
  }
  double best = 1e18;
  uint64_t h = 0;
  for (int r = 0; r < 7; r++) {
    double t0 = cpu_now();
    for (auto& x : a) h ^= x.inv().v[0];
    best = std::min(best, (cpu_now() - t0) * 1e6 / a.size());
  }
  return h == 1 ? -best : best;  // h keeps the loop
}
int main(int argc, char** argv) {
  unsigned lg = argc > 1 ? atoi(argv[1]) : 16; int R = argc > 2 ? atoi(argv[2]) : 7;
  g_use_simd52 = false;
  std::mt19937_64 rng(7);
  printf("inversion: bn254 Fq %.0f ns, bls12-381 Fq %.0f ns\n", inv_ns<bn254::Fq, 4>(rng), inv_ns<bls12_381::Fq, 6>(rng));
  run<bn254::G1Cfg, bn254::Fr>("bn254 G1", lg, R);
  if (argc > 3) run<bn254::G2Cfg, bn254::Fr>("bn254 G2", lg, R);
}
