// Prototype, measured and not kept (bench/cpu-notes.md, "Round 3: the scalar path"): a G1 MSM
// over precomputed multiples of its fixed bases, tab[w n + i] = 2^(c w) P_i for W of the nw
// windows, so that W windows share one set of buckets (one bucket reduction per pass of W
// windows instead of one per window) and wider windows pay, against the plain batched MSM of
// msm/pippenger.hpp; the scalar path (IFMA off), process CPU time, best of 3, one thread.
// Random bases (a running sum of a point), scalars below 2^253.
//
//   g++ -O3 -std=c++17 -fno-strict-aliasing -pthread -Isrc/snarkd/native bench/fixed_base_tables.cpp \
//       -o /tmp/fixed_base_tables && /tmp/fixed_base_tables 16 1
#include <chrono>
#include <cstdio>
#include <random>
#include <vector>
#include "curves/groups.hpp"
#include "msm/pippenger.hpp"
using namespace snarkd;
using Cfg = bn254::G1Cfg;
using Fr = bn254::Fr;
using Aff = Affine<Cfg>;
using Pt = XYZZ<Cfg>;
#include <ctime>
static double cpu_now() { timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec * 1e-6; }
static double ms(double a) { return cpu_now() - a; }

// tables: tab[w * n + i] = 2^(c w) P_i, w < W
Aff table_msm(const std::vector<Aff>& tab, size_t n, unsigned W, const uint8_t* sc, unsigned c, unsigned T) {
  const unsigned bits = 254, nw = bits / c + 1, passes = (nw + W - 1) / W;
  const size_t nb = (size_t)1 << (c - 1);
  Recoder<Fr> rec;
  rec.build(sc, nullptr, n, MsmPlan{c, nw, 1}, T);
  const unsigned k = std::max<unsigned>(1, (T + passes - 1) / passes);  // chunks per pass
  const size_t ntasks = (size_t)passes * k;
  std::vector<Pt> part(ntasks, Pt::inf());
  std::vector<Buckets<Cfg, ScalarBatchAdd<Cfg>>> bk(T);
  std::vector<SortedBuckets<Cfg, ScalarBatchAdd<Cfg>>> sb(T);
  const size_t B = std::min<size_t>(std::max<size_t>(nb / 4, 64), 512);
  MsmPoints<Cfg> pts((const uint8_t*)tab.data());
  parallel_tasks(ntasks, T, [&](size_t task, unsigned tid) {
    unsigned q = (unsigned)(task / k), ch = (unsigned)(task % k);
    unsigned w0 = q * W, w1 = std::min(nw, w0 + W), ww = w1 - w0;
    size_t b = n * ch / k, e = n * (ch + 1) / k, m = (e - b) * ww;
    // entries: point-major (i, w) so the bucket reads of a point's windows are spread
    part[task] = window_sum(bk[tid], sb[tid], nb, nb, B, pts, m,
                            [&](size_t x) { size_t i = b + x / ww; unsigned w = w0 + (unsigned)(x % ww); return rec.digit(i, w); },
                            [&](size_t x) { size_t i = b + x / ww; unsigned w = (unsigned)(x % ww); return (size_t)w * n + i; });
  });
  Pt sum = Pt::inf();
  for (unsigned q = passes; q-- > 0;) {
    for (unsigned i = 0; i < c * W; i++) sum.dbl();
    for (unsigned ch = 0; ch < k; ch++) sum.add(part[(size_t)q * k + ch]);
  }
  return sum.to_affine();
}

int main(int argc, char** argv) {
  unsigned lg = argc > 1 ? atoi(argv[1]) : 16, T = argc > 2 ? atoi(argv[2]) : 1;
  size_t n = (size_t)1 << lg;
  g_use_simd52 = false;
  std::mt19937_64 rng(5);
  // bases: random multiples via a running sum
  std::vector<Aff> P(n);
  Aff g{bn254::Fq::one(), bn254::Fq::one().dbl()};
  Pt acc = Pt::from_affine(g);
  for (size_t i = 0; i < n; i++) { acc.dbl(); acc.add_affine(g); P[i] = acc.to_affine(); }
  std::vector<uint64_t> sc(4 * n);
  for (size_t i = 0; i < n; i++) { for (int j = 0; j < 4; j++) sc[4 * i + j] = rng(); sc[4 * i + 3] &= (1ULL << 61) - 1; }
  const uint8_t* S = (const uint8_t*)sc.data();
  double t0 = cpu_now();
  Aff want = msm<Cfg, Fr>((const uint8_t*)P.data(), S, n, T);
  double plain = ms(t0);
  t0 = cpu_now();
  for (int r = 0; r < 3; r++) {
    t0 = cpu_now();
    want = msm<Cfg, Fr>((const uint8_t*)P.data(), S, n, T);
    plain = std::min(plain, ms(t0));
  }
  printf("plain: %.1f ms\n", plain);
  std::vector<std::pair<unsigned, unsigned>> cfgs = {{15, 8}, {16, 8}, {16, 16}, {17, 8}, {17, 15}, {18, 8}, {18, 15}, {19, 14}};
  for (auto [c, W] : cfgs) {
    unsigned nw = 254 / c + 1;
    if (W > nw) W = nw;
    {
      std::vector<Aff> tab((size_t)W * n);
      for (size_t i = 0; i < n; i++) {
        Pt x = Pt::from_affine(P[i]);
        for (unsigned w = 0; w < W; w++) {
          tab[(size_t)w * n + i] = x.to_affine();
          for (unsigned d = 0; d < c; d++) x.dbl();
        }
      }
      double best = 1e9;
      Aff got;
      for (int r = 0; r < 3; r++) {
        t0 = cpu_now();
        got = table_msm(tab, n, W, S, c, T);
        best = std::min(best, ms(t0));
      }
      printf("c %u W %u (%u passes, %.0f MB): %.1f ms (%.2f) %s\n", c, W, (nw + W - 1) / W, tab.size() * 64 / 1e6, best, best / plain,
             (got.x == want.x && got.y == want.y) ? "ok" : "MISMATCH");
    }
  }
}
