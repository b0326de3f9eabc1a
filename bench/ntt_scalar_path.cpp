// The scalar NTT of the QAP step (BN254 Fr, IFMA off): coset_shift (inverse DIF, scale, forward
// DIT) and a forward transform of 2^lg random values, T threads, the median of R runs, and a
// hash of the results so that two builds can be checked against each other (bench/cpu-notes.md,
// round 11). FORCE_ADX=1 switches the asm product on by hand: valgrind's CPUID hides ADX, and
// without it callgrind counts the portable product instead (as round 10's lazy try did).
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -pthread -I TREE/src/snarkd/native \
//       bench/ntt_scalar_path.cpp -o /tmp/ntt_TREE && /tmp/ntt_TREE 17 9 [T]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>
#include "curves/bn254.hpp"
#include "ntt/ntt.hpp"
using namespace snarkd;
struct FrTr {
  using Fr = bn254::Fr;
  static constexpr unsigned S = bn254::TWO_ADICITY;
  static Fr root_s() { return Fr::from_limbs(bn254::ROOT_MONT); }
  static Fr shift() { return Fr::from_limbs(bn254::SHIFT_MONT); }
};
using Fr = bn254::Fr;
static double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
// process CPU time (all threads): on this shared 2-core VM a run that waits for a core reads
// long by the wall clock but not by this (cpu-notes round 14)
static double cpu_ms() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
int main(int argc, char** argv) {
  const unsigned lg = argc > 1 ? atoi(argv[1]) : 17;
  const int R = argc > 2 ? atoi(argv[2]) : 5;
  const unsigned T = argc > 3 ? atoi(argv[3]) : 1;
#if defined(__x86_64__)
  if (std::getenv("FORCE_ADX")) g_use_adx = true;  // under valgrind (run it on an ADX CPU only)
#endif
  const size_t n = (size_t)1 << lg;
  std::mt19937_64 rng(7);
  std::vector<Fr> a(n);
  for (auto& x : a) {
    uint64_t l[4] = {rng(), rng(), rng(), rng() >> 3};
    x = Fr::from_limbs(l);
    Fr::reduce_raw(x.v);
  }
  const auto V = Ntt<FrTr>::coset_scales(lg, T);  // std::unique_ptr<Fr[]> (round 30; a vector before)
  Ntt<FrTr>::twiddles(lg, true);
  Ntt<FrTr>::twiddles(lg, false);
  std::vector<double> tc, tf, cc, cf;
  std::vector<Fr> w, f;
  for (int r = 0; r < R; r++) {
    w = a;
    double t0 = now_ms(), c0 = cpu_ms();
    Ntt<FrTr>::coset_shift(w.data(), lg, T, &V[0]);
    tc.push_back(now_ms() - t0);
    cc.push_back(cpu_ms() - c0);
    f = a;
    t0 = now_ms(), c0 = cpu_ms();
    Ntt<FrTr>::transform(f.data(), lg, false, T);
    tf.push_back(now_ms() - t0);
    cf.push_back(cpu_ms() - c0);
  }
  std::sort(tc.begin(), tc.end());
  std::sort(tf.begin(), tf.end());
  std::sort(cc.begin(), cc.end());
  std::sort(cf.begin(), cf.end());
  uint64_t h = 1469598103934665603ULL;
  for (const auto* v : {&w, &f})
    for (const Fr& x : *v)
      for (int i = 0; i < 4; i++) { h ^= x.v[i]; h *= 1099511628211ULL; }
  printf("2^%u T=%u: coset_shift median %.2f ms (min %.2f; cpu %.2f), transform median %.2f ms (min %.2f; cpu %.2f)  hash %016llx\n",
         lg, T, tc[R / 2], tc[0], cc[R / 2], tf[R / 2], tf[0], cf[R / 2], (unsigned long long)h);
}
