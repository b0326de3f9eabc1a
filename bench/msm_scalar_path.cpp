// G1 and G2 MSM (BN254, or BLS12-381 with a 4th argument "bls") on the scalar path (IFMA off), one thread, process CPU time: the
// median of R runs, and a hash of the result so that two builds can be checked against
// each other (bench/cpu-notes.md, round 4). G2 takes random coordinates: the adder's cost
// does not depend on the curve equation, and the hash still compares builds.
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -pthread -I TREE/src/snarkd/native \
//       bench/msm_scalar_path.cpp -o /tmp/msm_TREE && /tmp/msm_TREE 16 9 g2 [bls]
//
// Environment: MSM_C=c forces every MSM's window to c bits (as _core._set_msm_window); FORCE_ADX=1
// switches the asm products on under valgrind (callgrind instruction counts; cpu-notes round 12). With
// MSM_MIXED=0|1|2 (trees with msm/plan.hpp, round 15 on) sets the mixed window widths' mode.
#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <random>
#include <string>
#include <type_traits>
#include <vector>
#include "curves/groups.hpp"
#include "msm/pippenger.hpp"
using namespace snarkd;
static double cpu_now() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec * 1e-6; }
template <class Cfg, class Fr>
void run(const char* name, unsigned lg, int R) {
  using Fq = typename Cfg::F;
  using Aff = Affine<Cfg>; using Pt = XYZZ<Cfg>;
  size_t n = (size_t)1 << lg;
  std::mt19937_64 rng(5);
  std::vector<Aff> P(n);
  if constexpr (!IsFp2<Fq>::value) {  // G1: multiples of the generator
    Aff g;
    if constexpr (std::is_same_v<Cfg, bn254::G1Cfg>) {
      g = Aff{bn254::Fq::one(), bn254::Fq::one().dbl()};
    } else {
      const uint64_t gx[6] = {0xfb3af00adb22c6bbULL, 0x6c55e83ff97a1aefULL, 0xa14e3a3f171bac58ULL,
                              0xc3688c4f9774b905ULL, 0x2695638c4fa9ac0fULL, 0x17f1d3a73197d794ULL};
      const uint64_t gy[6] = {0x0caa232946c5e7e1ULL, 0xd03cc744a2888ae4ULL, 0x00db18cb2c04b3edULL,
                              0xfcf5e095d5d00af6ULL, 0xa09e30ed741d8ae4ULL, 0x08b3f481e3aaa0f1ULL};
      g = Aff{Fq::from_limbs(gx), Fq::from_limbs(gy)};
    }
    Pt acc = Pt::from_affine(g);
    for (size_t i = 0; i < n; i++) { acc.dbl(); acc.add_affine(g); P[i] = acc.to_affine(); }
  } else {  // G2: random coordinates (the cost does not depend on the curve equation; results compared run to run)
    using B = typename Fq::Base;
    auto rf = [&]() { uint64_t l[B::N]; for (auto& w : l) w = rng(); l[B::N - 1] &= 0x0fffffffffffffffULL; return B::from_limbs(l); };
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
#if defined(__x86_64__)
  if (std::getenv("FORCE_ADX")) g_use_adx = true;  // under valgrind, whose CPUID hides ADX (run it on an ADX CPU only)
#endif
  if (const char* c = std::getenv("MSM_C")) msm_force_c() = atoi(c);  // a window width forced (0: the plan's)
#if __has_include("msm/plan.hpp")
  if (const char* m = std::getenv("MSM_MIXED")) msm_mixed_mode() = atoi(m);  // mixed widths: 0 off, 1 plan, 2 always
#endif
  std::mt19937_64 rng(7);
  printf("inversion: bn254 Fq %.0f ns, bls12-381 Fq %.0f ns\n", inv_ns<bn254::Fq, 4>(rng), inv_ns<bls12_381::Fq, 6>(rng));
  if (argc > 4) {
    run<bls12_381::G1Cfg, bls12_381::Fr>("bls12-381 G1", lg, R);
    if (std::string(argv[3]) == "g2") run<bls12_381::G2Cfg, bls12_381::Fr>("bls12-381 G2", lg, R);
    return 0;
  }
  run<bn254::G1Cfg, bn254::Fr>("bn254 G1", lg, R);
  if (argc > 3 && std::string(argv[3]) == "g2") run<bn254::G2Cfg, bn254::Fr>("bn254 G2", lg, R);
}
