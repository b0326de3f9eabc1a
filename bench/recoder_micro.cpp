// The MSM digit recoder (msm/pippenger.hpp's Recoder) on its own, one thread, process CPU time:
// build over 2^16 random scalars at c = 13 (nw = 20), then every digit read four times (the
// witness MSMs A, B1, C, B2 read the same digits); medians of 15, and a digest of the digits
// so that two trees can be checked against each other (bench/cpu-notes.md, round 8).
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -pthread -I TREE/src/snarkd/native \
//       bench/recoder_micro.cpp -o /tmp/rec_TREE && /tmp/rec_TREE
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <random>
#include <vector>
#include "curves/groups.hpp"
#include "msm/pippenger.hpp"
using namespace snarkd;
static double cpu_now() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec * 1e-6; }
int main() {
  size_t n = 1 << 16; std::mt19937_64 rng(5);
  std::vector<uint64_t> sc(4 * n);
  for (size_t i = 0; i < n; i++) { for (int j = 0; j < 4; j++) sc[4 * i + j] = rng(); sc[4 * i + 3] &= (1ULL << 61) - 1; }
  std::vector<double> tb, td; uint64_t h = 0;
  for (int r = 0; r < 15; r++) {
    Recoder<bn254::Fr> rec;
    double t0 = cpu_now();
    rec.build((const uint8_t*)sc.data(), nullptr, n, MsmPlan{13, 20, 1}, 1);
    double t1 = cpu_now();
    for (int m = 0; m < 4; m++)  // four MSMs read every digit (A, B1, C, B2)
      for (unsigned w = 0; w < 20; w++) for (size_t k = 0; k < n; k++) h = h * 31 + rec.digit(k, w);
    double t2 = cpu_now();
    tb.push_back(t1 - t0); td.push_back(t2 - t1);
  }
  std::sort(tb.begin(), tb.end()); std::sort(td.begin(), td.end());
  printf("build %.2f ms, 4x digits %.2f ms, hash %016llx\n", tb[7], td[7], (unsigned long long)h);
}
