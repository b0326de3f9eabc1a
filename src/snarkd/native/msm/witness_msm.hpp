// The Groth16 MSMs that share the witness as scalars (A, B1, C on G1; B2 on G2),
// run as one job:
//   - scalars are classified once: zeros are skipped, ones are summed directly
//     (real circuits are full of both: bit decompositions, booleans, selectors),
//     the rest are recoded into signed digits once for every MSM;
//   - all (MSM x window) Pippenger tasks and the ones' sums go to one pool of
//     threads, so short MSMs do not leave a core idle.
// Job k computes sum_{i in [start, start + n)} w_i * bases_k[i - start] (C starts
// after the public inputs). G1 jobs split the full scalars with the endomorphism
// where the cost model says it pays (ec/glv.hpp; ones stay summed directly), G2 jobs
// with the G2 endomorphism (GLS) the same way.
// The batch-affine additions run eight at a time on AVX-512 IFMA (SimdBatchAdd), BN254's G1
// ones four at a time on AVX2 where that measured faster (Simd29BatchAdd, msm/bucket_simd29.hpp),
// one at a time elsewhere (ScalarBatchAdd); the same tasks, digits and splits either way.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "msm/pippenger.hpp"

namespace snarkd {

struct MsmJob {
  const uint8_t* bases;
  size_t start, n;
};

template <class G1, class G2, class Fr>
struct WitnessMsm {
  using A1 = Affine<G1>;
  using A2 = Affine<G2>;

  static void run(const uint8_t* scalars, size_t ns, const std::vector<MsmJob>& j1, const std::vector<MsmJob>& j2,
                  unsigned T, std::vector<A1>& out1, std::vector<A2>& out2) {
    out1.assign(j1.size(), A1::inf());
    out2.assign(j2.size(), A2::inf());
    with_batch_adder<G1, G2>([&](auto adder) {  // msm/batch_adder.hpp; G2 jobs take the same template
      run_batched<decltype(adder)::template type>(scalars, ns, j1, j2, T, out1, out2);
    });
  }

  // Signed digits of m scalars of at most `bits` bits with their plan: batch size B (see
  // Recoder; neg per scalar or null; mixed widths only without it, as msm_core).
  struct Digits {
    Recoder<Fr> rec;
    unsigned bits = 0;
    size_t B = 0;
    void build(const uint8_t* sc, const uint32_t* index, const uint8_t* neg, size_t m, unsigned bits_, unsigned T,
               unsigned cmax = 20) {
      bits = bits_;
      MsmPlan plan = msm_plan_run(m, T, bits, neg != nullptr, cmax);
      if (plan.c < 4) plan = {4, bits / 4 + 1, 1};
      B = msm_batch(plan);
      rec.build(sc, index, m, plan, T);
      rec.neg = neg;
    }
  };

  // What the MSMs take from the scalars alone (no bases): their classes and the digits each group's windows
  // read. Built in steps (classify, then g1 / g2 as a job needs them), so that WitnessPrepCache
  // (msm/witness_cache.hpp) can keep one across a proof's msm_w calls. `src`: the scalars the digits read
  // (a Recoder reads them again where c > 16), which must outlive this.
  struct Prepared {
    const uint8_t* src = nullptr;
    size_t ns = 0;
    unsigned T = 1;
    std::vector<uint32_t> ones, full;  // index order
    bool has1 = false, has2 = false, has_plain = false, glv = false, gls = false;
    GlvScalars gs, gs2;
    Digits d1, d2, d3;  // G1 halves, plain (either group without its split), G2 halves
    const Digits& g1d() const { return glv ? d1 : d2; }
    const Digits& g2d() const { return gls ? d3 : d2; }

    // 1) classify (parallel, each thread a range; lists stay in index order)
    void classify(const uint8_t* scalars, size_t ns_, unsigned T_) {
      src = scalars; ns = ns_; T = T_;
      const unsigned TC = (unsigned)std::max<size_t>(1, std::min<size_t>(T, ns / 4096));
      std::vector<std::vector<uint32_t>> ones_t(TC), full_t(TC);
      // Each index written to both lists and kept in the one its class picks (the count advanced by the
      // class): a witness of bits is 0 or 1 at random, and the branch per scalar mispredicted about every
      // other one (cpu-notes round 26)
      parallel_for(ns, TC, [&](size_t b, size_t e, unsigned t) {
        std::vector<uint32_t>& o = ones_t[t];
        std::vector<uint32_t>& f = full_t[t];
        o.resize(e - b);
        f.resize(e - b);
        size_t no = 0, nf = 0;
        for (size_t i = b; i < e; i++) {
          u64 s[Fr::N];
          std::memcpy(s, scalars + i * 32, 32);
          Fr::reduce_raw(s);
          u64 hi = 0;
          for (size_t l = 1; l < Fr::N; l++) hi |= s[l];
          const size_t small = (hi == 0) & (s[0] <= 1);
          o[no] = (uint32_t)i;
          f[nf] = (uint32_t)i;
          no += small & (s[0] == 1);
          nf += small ^ 1;
        }
        o.resize(no);
        f.resize(nf);
      });
      for (unsigned t = 0; t < TC; t++) {
        ones.insert(ones.end(), ones_t[t].begin(), ones_t[t].end());
        full.insert(full.end(), full_t[t].begin(), full_t[t].end());
      }
    }

    // 2) signed digits of the full scalars, recoded once into a table that every window
    //    of every job of the group reads (see Recoder). G1 may take the endomorphism
    //    split (ec/glv.hpp): the full scalars' halves (|k1| at q, |k2| at nf + q)
    //    over each job's full points followed by their images phi(P).
    //    G2 likewise with its own endomorphism (GLS, its own lambda: separate halves).
    //    Without its split a group reads the plain digits (built once for both).
    void g1() {
      if (has1) return;
      has1 = true;
      glv = split<G1>(gs, d1);
    }
    void g2() {
      if (has2) return;
      has2 = true;
      gls = split<G2>(gs2, d3);
    }
    // Group G's halves and their digits where its split pays (true), else the plain digits (false).
    template <class G>
    bool split(GlvScalars& halves, Digits& digits) {
      const size_t nf = full.size();
      unsigned cmax = 20;
      const bool pays = glv_pays<G>(nf, T, (unsigned)Fr::BITS, &cmax);
      if constexpr (GlvOf<G>::ok) {
        using C = typename GlvOf<G>::C;
        if (pays) {
          halves.template build<C, Fr>(nf, T, [&](size_t q) { return src + 32 * (size_t)full[q]; });
          digits.build(halves.data(), nullptr, halves.neg.data(), 2 * nf, C::BITS, T, cmax);
        }
      }
      if (!pays) plain();
      return pays;
    }
    void plain() {
      if (has_plain) return;
      has_plain = true;
      d2.build(src, full.data(), nullptr, full.size(), (unsigned)Fr::BITS, T);
    }
    // G1's digits and halves, when only G2 jobs follow (the cache's B2 call)
    void drop_g1() {
      if (!has1) return;
      has1 = false;
      if (glv) { gs = GlvScalars(); d1 = Digits(); }
      glv = false;
    }
  };

  // scalar class: 0 zero, 1 one, 2 other. BA: the batch-affine adder (msm/buckets.hpp)
  template <template <class> class BA>
  static void run_batched(const uint8_t* scalars, size_t ns, const std::vector<MsmJob>& j1, const std::vector<MsmJob>& j2,
                       unsigned T, std::vector<A1>& out1, std::vector<A2>& out2) {
    Prepared p;
    p.classify(scalars, ns, T);
    if (!j1.empty()) p.g1();
    if (!j2.empty()) p.g2();
    run_prepared<BA>(p, j1, j2, T, out1, out2);
  }

  // The MSMs over the prepared scalars (p.g1() done where j1 has jobs, p.g2() where j2 has)
  template <template <class> class BA>
  static void run_prepared(const Prepared& p, const std::vector<MsmJob>& j1, const std::vector<MsmJob>& j2,
                           unsigned T, std::vector<A1>& out1, std::vector<A2>& out2) {
    const std::vector<uint32_t>& ones = p.ones;
    const std::vector<uint32_t>& full = p.full;
    const size_t ns = p.ns;
    const bool glv = !j1.empty() && p.glv, gls = !j2.empty() && p.gls;
    static const Digits none;
    const Digits& g1d = j1.empty() ? none : p.g1d();
    const Digits& g2d = j2.empty() ? none : p.g2d();
    const size_t nf = full.size();
    // per job: the images of its full points, in the order of `full`
    auto images = [&](auto& out, const std::vector<MsmJob>& jobs, auto tag) {
      using Cfg = decltype(tag);
      for (size_t j = 0; j < out.size(); j++) {
        const MsmJob& job = jobs[j];
        const size_t k0 = first_full(full, job.start), k1 = first_full(full, job.start + job.n);
        glv_images<Cfg>(out[j], k1 - k0, T,
                        [&](size_t q) { return job.bases + (size_t)(full[k0 + q] - job.start) * sizeof(Affine<Cfg>); });
      }
    };
    std::vector<std::vector<A1>> phi(glv ? j1.size() : 0);
    std::vector<std::vector<A2>> psi(gls ? j2.size() : 0);
    images(phi, j1, G1{});
    images(psi, j2, G2{});

    // 3) tasks: per job, nw windows + the ones' sum in chunks
    const size_t OC = 1 << 14;  // ones per chunk task
    struct Task { unsigned g, job, kind; size_t a, b; };  // kind 0: window a; 1: ones [a, b)
    std::vector<Task> tasks;
    auto add_tasks = [&](unsigned g, const std::vector<MsmJob>& jobs, unsigned nw) {
      for (unsigned j = 0; j < jobs.size(); j++) {
        // ones first: they are the long tasks when the witness is mostly bits
        auto lo = std::lower_bound(ones.begin(), ones.end(), (uint32_t)jobs[j].start) - ones.begin();
        auto hi = std::lower_bound(ones.begin(), ones.end(), (uint32_t)std::min<size_t>(jobs[j].start + jobs[j].n, ns)) - ones.begin();
        for (size_t a = (size_t)lo; a < (size_t)hi; a += OC) tasks.push_back({g, j, 1, a, std::min<size_t>(a + OC, (size_t)hi)});
        if (nf)
          for (unsigned w = 0; w < nw; w++) tasks.push_back({g, j, 0, w, 0});
      }
    };
    add_tasks(2, j2, g2d.rec.plan.nw);  // G2 tasks are the slowest: schedule them first
    add_tasks(1, j1, g1d.rec.plan.nw);
    std::vector<XYZZ<G1>> part1(tasks.size(), XYZZ<G1>::inf());
    std::vector<XYZZ<G2>> part2(tasks.size(), XYZZ<G2>::inf());
    const unsigned TT = (unsigned)std::max<size_t>(1, std::min<size_t>(T, tasks.size()));
    std::vector<Buckets<G1, BA<G1>>> bk1(TT);
    std::vector<Buckets<G2, BA<G2>>> bk2(TT);
    std::vector<SortedBuckets<G1, BA<G1>>> sb1(TT);
    std::vector<SortedBuckets<G2, BA<G2>>> sb2(TT);
    parallel_tasks(tasks.size(), TT, [&](size_t ti, unsigned tid) {
      const Task& t = tasks[ti];
      if (t.g == 1)
        part1[ti] = run_task(t.kind, t.a, t.b, j1[t.job], bk1[tid], sb1[tid], ones, full, g1d,
                                 glv ? phi[t.job].data() : nullptr);
      else
        part2[ti] = run_task(t.kind, t.a, t.b, j2[t.job], bk2[tid], sb2[tid], ones, full, g2d,
                                 gls ? psi[t.job].data() : nullptr);
    });

    // 4) combine: windows by Horner from the top, plus the ones' sums
    auto combine = [&](unsigned g, unsigned job, auto& part, auto zero, const Digits& d) {
      auto acc = zero, ones_sum = zero;
      for (unsigned w = d.rec.plan.nw; w-- > 0;) {
        for (unsigned i = 0; i < d.rec.plan.width(w); i++) acc.dbl();
        for (size_t ti = 0; ti < tasks.size(); ti++)
          if (tasks[ti].g == g && tasks[ti].job == job && tasks[ti].kind == 0 && tasks[ti].a == w) acc.add(part[ti]);
      }
      for (size_t ti = 0; ti < tasks.size(); ti++)
        if (tasks[ti].g == g && tasks[ti].job == job && tasks[ti].kind == 1) ones_sum.add(part[ti]);
      acc.add(ones_sum);
      return acc.to_affine();
    };
    for (unsigned j = 0; j < j1.size(); j++) out1[j] = combine(1, j, part1, XYZZ<G1>::inf(), g1d);
    for (unsigned j = 0; j < j2.size(); j++) out2[j] = combine(2, j, part2, XYZZ<G2>::inf(), g2d);
  }

  // index of the first full scalar at or after witness index i
  static size_t first_full(const std::vector<uint32_t>& full, size_t i) {
    return (size_t)(std::lower_bound(full.begin(), full.end(), (uint32_t)std::min<size_t>(i, UINT32_MAX)) - full.begin());
  }

  // phi: with the endomorphism split (G1 or G2), the images of the job's full points:
  // entries [0, m) of a window are the job's full scalars' |k1|, [m, 2m) their |k2|
  template <class Cfg, class BA>
  static XYZZ<Cfg> run_task(unsigned kind, size_t a, size_t b, const MsmJob& job, Buckets<Cfg, BA>& bk,
                            SortedBuckets<Cfg, BA>& sb, const std::vector<uint32_t>& ones, const std::vector<uint32_t>& full,
                            const Digits& d, const Affine<Cfg>* phi) {
    if (kind == 1) {
      bk.ba.reserve(d.B < 256 ? 256 : d.B);
      return sum_points(bk.ba, job.bases, ones.data() + a, b - a, job.start);
    }
    const unsigned w = (unsigned)a;
    const uint32_t lo = (uint32_t)job.start;
    // C starts after the public inputs: skip the full scalars before it
    const size_t k0 = first_full(full, job.start), k1 = first_full(full, job.start + job.n), m = k1 - k0;
    const size_t nbw = window_buckets(d.rec.plan, w, d.bits), nba = window_array(d.rec.plan, w, d.bits);
    if (!phi)
      return window_sum(bk, sb, nbw, nba, d.B, MsmPoints<Cfg>(job.bases), m,
                        [&d, k0, w](size_t q) { return d.rec.digit(k0 + q, w); },
                        [&full, k0, lo](size_t q) { return full[k0 + q] - lo; });
    const size_t nf = full.size(), npts = job.n;  // images are points npts + q
    return window_sum(bk, sb, nbw, nba, d.B, MsmPoints<Cfg>(job.bases, npts, phi), 2 * m,
                      [&d, k0, m, nf, w](size_t q) { return q < m ? d.rec.digit(k0 + q, w) : d.rec.digit(nf + k0 + q - m, w); },
                      [&full, k0, m, lo, npts](size_t q) { return q < m ? (size_t)(full[k0 + q] - lo) : npts + (q - m); },
                      w + 1 == d.rec.plan.nw && nbw < nba);
  }
};

}  // namespace snarkd
