// The whole Groth16 prover over a key's raw sections, for a one-shot proof:
// witness check, A.w and B.w, the QAP step, the H MSM, the witness MSMs and the
// blinding (groth16/blind.hpp, shared with the staged prover), in one call
// (snarkjs's groth16_prove.js order).
//
// The bulk sections are checked (canonical coordinates, coefficient entries)
// just before their first use, and with drop_pages (the sections are a
// read-only file mapping) their pages are released after their last use, so
// the key is never resident all at once: peak memory is the largest phase,
// not the whole file.
#pragma once
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define SNARKD_HAVE_MADVISE 1
#endif

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ec/point.hpp"
#include "groth16/blind.hpp"
#include "groth16/csr.hpp"
#include "groth16/prover.hpp"
#include "groth16/qap.hpp"
#include "msm/witness_msm.hpp"
#include "parallel.hpp"

namespace snarkd {

struct ProveError {
  int section = 0;        // zkey section id (0: the witness)
  long index = -1;        // entry / point / witness value index
  std::string message;    // "" when there is no error
};

template <class G1, class G2, class Fr, class Tr>
struct Groth16Prover {
  using A1 = Affine<G1>;
  using A2 = Affine<G2>;
  using Fq = typename G1::F;

  struct Key {
    const uint8_t* coefs = nullptr;  // section 4, including its u32 count
    size_t coefs_len = 0;
    const uint8_t *a = nullptr, *b1 = nullptr, *b2 = nullptr, *c = nullptr, *h = nullptr;
    const uint8_t *alpha1 = nullptr, *beta1 = nullptr, *delta1 = nullptr, *beta2 = nullptr, *delta2 = nullptr;
    size_t n_vars = 0, n_public = 0, domain = 0;
    // the prepared sidecar's CSR (groth16/csr.hpp), or null: then section 4 is read
    const uint32_t* rows[2] = {nullptr, nullptr};
    const uint32_t* vrows[2] = {nullptr, nullptr};
    const uint32_t* ent[2] = {nullptr, nullptr};
    const Fr* val[2] = {nullptr, nullptr};
  };
  struct Result {
    A1 pi_a, pi_c;
    A2 pi_b;
    std::vector<std::pair<std::string, double>> ms;  // phase timings
    ProveError err;
  };

  // first coordinate not below q among count points of `words` 64-bit words each
  static long first_noncanonical(const uint8_t* pts, size_t count, size_t coords, unsigned T, long* coord) {
    std::vector<long> first(T, -1), which(T, 0);
    parallel_for(count, T, [&](size_t b, size_t e, unsigned t) {
      for (size_t i = b; i < e; i++)
        for (size_t k = 0; k < coords; k++)
          if (!Fq::lt_mod((const u64*)(pts + (i * coords + k) * sizeof(Fq)))) {
            first[t] = (long)i;
            which[t] = (long)k;
            return;
          }
    }, 4096);
    for (unsigned t = 0; t < T; t++)
      if (first[t] >= 0) { *coord = which[t]; return first[t]; }
    return -1;
  }

  static ProveError check_points(int sid, const uint8_t* pts, size_t count, bool g2, unsigned T) {
    long coord = 0;
    long bad = first_noncanonical(pts, count, g2 ? 4 : 2, T, &coord);
    if (bad < 0) return {};
    static const char* n1[] = {"x", "y"};
    static const char* n2[] = {"x.c0", "x.c1", "y.c0", "y.c1"};
    return {sid, bad, "point " + std::to_string(bad) + ": coordinate " + (g2 ? n2[coord] : n1[coord]) +
                          " is not canonical (not below q)"};
  }

  // release a read-only file mapping's pages (they are read again from the page cache if touched)
  static void drop(const uint8_t* p, size_t len) {
#if defined(SNARKD_HAVE_MADVISE)
    static const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uintptr_t b = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
    uintptr_t e = ((uintptr_t)p + len) & ~(uintptr_t)(page - 1);
    if (e > b) madvise((void*)b, e - b, MADV_DONTNEED);
#else
    (void)p;
    (void)len;
#endif
  }

  // r, s, rs: plain scalars < r. witness: n_vars plain 32-byte values.
  // on_phase (optional): told each phase as it ends, with its milliseconds (a progress bar)
  static Result prove(const Key& k, const uint8_t* witness, const u64* r, const u64* s, const u64* rs, unsigned T,
                      bool drop_pages, const std::function<void(const char*, double)>& on_phase = nullptr) {
    Result res;
    auto t0 = std::chrono::steady_clock::now();
    auto lap = [&](const char* name) {
      auto t1 = std::chrono::steady_clock::now();
      double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      res.ms.push_back({name, ms});
      if (on_phase) on_phase(name, ms);
      t0 = std::chrono::steady_clock::now();
    };
    const size_t n = k.n_vars, dom = k.domain, l = k.n_public;
    unsigned log_n = 0;
    while (((size_t)1 << log_n) < dom) log_n++;

    // witness: every value canonical (< r)
    {
      std::vector<long> first(T, -1);
      parallel_for(n, T, [&](size_t b, size_t e, unsigned t) {
        for (size_t i = b; i < e; i++)
          if (!Fr::lt_mod((const u64*)(witness + 32 * i))) { first[t] = (long)i; return; }
      }, 4096);
      for (unsigned t = 0; t < T; t++)
        if (first[t] >= 0) { res.err = {0, first[t], "witness value is not canonical"}; return res; }
      // header points
      const uint8_t* g1h[3] = {k.alpha1, k.beta1, k.delta1};
      const char* g1n[3] = {"alpha1", "beta1", "delta1"};
      for (int q = 0; q < 3; q++)
        if (check_points(2, g1h[q], 1, false, 1).message.size()) {
          res.err = {2, -1, std::string("point ") + g1n[q] + " is not canonical (not below q)"};
          return res;
        }
      const uint8_t* g2h[2] = {k.beta2, k.delta2};
      const char* g2n[2] = {"beta2", "delta2"};
      for (int q = 0; q < 2; q++)
        if (check_points(2, g2h[q], 1, true, 1).message.size()) {
          res.err = {2, -1, std::string("point ") + g2n[q] + " is not canonical (not below q)"};
          return res;
        }
    }
    lap("check");

    // a = A.w, b = B.w
    std::vector<Fr> a(dom), b(dom), hv(dom);
    {
      if (k.rows[0]) {
        spmv_csr<Fr>(k.rows, k.vrows, k.ent, k.val, witness, n, dom, a.data(), b.data(), T);
        if (drop_pages)  // the sidecar is a read-only file mapping too
          for (int q = 0; q < 2; q++) {
            drop((const uint8_t*)k.ent[q], 4 * (size_t)k.rows[q][dom]);
            drop((const uint8_t*)k.val[q], sizeof(Fr) * (size_t)k.vrows[q][dom]);
            drop((const uint8_t*)k.rows[q], 4 * (dom + 1));
            drop((const uint8_t*)k.vrows[q], 4 * (dom + 1));
          }
      } else {
        long bad = -1;
        std::string e = coefs_error<Fr>(k.coefs, dom, n, &bad);
        if (!e.empty()) { res.err = {4, bad, e}; return res; }
        std::memset((void*)a.data(), 0, dom * sizeof(Fr));
        std::memset((void*)b.data(), 0, dom * sizeof(Fr));
        e = spmv_ab<Fr>(k.coefs, k.coefs_len, witness, n, dom, a.data(), b.data(), T);
        if (!e.empty()) { res.err = {4, -1, e}; return res; }
        if (drop_pages) drop(k.coefs, k.coefs_len);
      }
    }
    lap("spmv");

    struct Inputs { std::vector<Fr>* a; std::vector<Fr>* b; } in{&a, &b};
    qap_h<Tr>(a.data(), b.data(), hv.data(), log_n, T, nullptr, [](void* c) {
      auto* p = (Inputs*)c;  // read once: freed before the transforms
      std::vector<Fr>().swap(*p->a);
      std::vector<Fr>().swap(*p->b);
    }, &in);
#if defined(SNARKD_SIMD52)
    NttSimd<Tr>::clear_tables();  // one proof: give their memory back before the MSMs
#endif
    std::vector<Fr>().swap(a);
    std::vector<Fr>().swap(b);
    lap("ntt");

    A1 sum_h;
    {
      res.err = check_points(9, k.h, dom, false, T);
      if (!res.err.message.empty()) return res;
      sum_h = msm<G1, Fr>(k.h, (const uint8_t*)hv.data(), dom, T);
      std::vector<Fr>().swap(hv);
      if (drop_pages) drop(k.h, dom * sizeof(A1));
    }
    lap("msm_h");

    // the witness MSMs, one at a time (each on all threads), named as --timings names them
    A1 o1[3];
    A2 o2;
    {
      const size_t nc = n - l - 1;
      struct G1Job { const char* name; int sid; MsmJob job; };
      const G1Job g1jobs[3] = {{"msm_a", 5, {k.a, 0, n}}, {"msm_b1", 6, {k.b1, 0, n}}, {"msm_c", 8, {k.c, l + 1, nc}}};
      for (int q = 0; q < 3; q++) {
        const G1Job& g = g1jobs[q];
        res.err = check_points(g.sid, g.job.bases, g.job.n, false, T);
        if (!res.err.message.empty()) return res;
        std::vector<A1> o;
        std::vector<A2> none;
        WitnessMsm<G1, G2, Fr>::run(witness, n, {g.job}, {}, T, o, none);
        o1[q] = o[0];
        if (drop_pages) drop(g.job.bases, g.job.n * sizeof(A1));
        lap(g.name);
      }
      res.err = check_points(7, k.b2, n, true, T);
      if (!res.err.message.empty()) return res;
      std::vector<A1> none;
      std::vector<A2> o;
      WitnessMsm<G1, G2, Fr>::run(witness, n, {}, {{k.b2, 0, n}}, T, none, o);
      o2 = o[0];
      if (drop_pages) drop(k.b2, n * sizeof(A2));
      lap("msm_b2");
    }

    // blinding and assembly (groth16/blind.hpp: the staged prover's too)
    using GB = Groth16Blind<G1, G2>;
    typename GB::Header hdr;
    hdr.alpha1 = k.alpha1;
    hdr.beta1 = k.beta1;
    hdr.delta1 = k.delta1;
    hdr.beta2 = k.beta2;
    hdr.delta2 = k.delta2;
    auto pf = GB::blind(o1[0], o1[1], o1[2], sum_h, o2, hdr, r, s, rs);
    res.pi_a = pf.pi_a;
    res.pi_b = pf.pi_b;
    res.pi_c = pf.pi_c;
    lap("assemble");
    return res;
  }
};

}  // namespace snarkd
