// A proof's witness MSMs one call at a time (msm_w: A, B1, C on G1, then B2 on G2, as
// prover/cpu.py runs them, each key section checked and released around its own call)
// share one WitnessMsm::Prepared: the witness's classes and G1 digits (GLV halves and
// their table) are built by the first G1 call and read by the next two; the B2 call takes
// the classes and builds G2's own. Round 15's profile put the three repeated builds at
// ~2.5-3% of a scalar-path chain 2^16 proof.
//
// The key is the witness's bytes themselves: the cache keeps a copy (32 bytes a value)
// and a call reuses it only where its witness compares equal in full (memcmp), with the
// same thread count and plan switches (the digits' plans read them). A buffer rewritten
// in place, or a different proof, is a miss and rebuilds, so results never depend on the
// cache. The digits are built from the copy, so they never point into a caller's buffer.
// One entry: the last G1 call's. A G2 call that matches takes it out (B2 is a proof's
// last witness MSM) and frees its G1 part first.
#pragma once
#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "msm/witness_msm.hpp"

namespace snarkd {

template <class G1, class G2, class Fr>
struct WitnessPrepCache {
  using WM = WitnessMsm<G1, G2, Fr>;
  struct Entry {
    std::vector<uint8_t> copy;  // the witness the entry was built from; its digits read it
    unsigned cfg[6] = {};
    typename WM::Prepared p;
  };

  static void config(unsigned* c, unsigned T) {
    c[0] = T;
    c[1] = g_use_simd52;
    c[2] = msm_force_c();
    c[3] = (unsigned)msm_mixed_mode();
    c[4] = (unsigned)msm_glv_mode();
    c[5] = (unsigned)msm_gls_mode();
  }

  static std::mutex& mu() { static std::mutex m; return m; }
  // testing aid (_witness_prep_counts): calls that reused an entry, and entries built
  static std::atomic<size_t>& hits() { static std::atomic<size_t> n{0}; return n; }
  static std::atomic<size_t>& builds() { static std::atomic<size_t> n{0}; return n; }
  static std::shared_ptr<Entry>& last() { static std::shared_ptr<Entry> e; return e; }

  // The cached entry if it was built from these bytes under this configuration, else null
  static std::shared_ptr<Entry> find(const uint8_t* w, size_t nw, unsigned T) {
    std::shared_ptr<Entry> e;
    {
      std::lock_guard<std::mutex> g(mu());
      e = last();
    }
    unsigned c[6];
    config(c, T);
    if (!e || e->copy.size() != nw * 32 || std::memcmp(e->cfg, c, sizeof(c)) != 0) return nullptr;
    if (nw && std::memcmp(e->copy.data(), w, nw * 32) != 0) return nullptr;
    hits()++;
    return e;
  }

  // One job on G1 (g2 false) or G2 over the witness w (nw values), as WitnessMsm::run
  static void run(const uint8_t* w, size_t nw, const MsmJob& job, bool g2, unsigned T, std::vector<Affine<G1>>& o1,
                  std::vector<Affine<G2>>& o2) {
    std::vector<MsmJob> j{job}, none;
    o1.assign(g2 ? 0 : 1, Affine<G1>::inf());
    o2.assign(g2 ? 1 : 0, Affine<G2>::inf());
    std::shared_ptr<Entry> e = find(w, nw, T);
    if (g2) {
      if (e) {  // take it out: B2 ends the proof's use of it
        std::lock_guard<std::mutex> g(mu());
        if (last() == e) last().reset();
      }
      // a concurrent call on the same entry still reads it: then build a fresh one
      if (!e || e.use_count() != 1) return WM::run(w, nw, none, j, T, o1, o2);
      e->p.drop_g1();
      e->p.g2();
      dispatch(e->p, none, j, T, o1, o2);
      return;
    }
    if (!e) {
      builds()++;
      e = std::make_shared<Entry>();
      e->copy.assign(w, w + nw * 32);
      config(e->cfg, T);
      e->p.classify(e->copy.data(), nw, T);
      e->p.g1();
      std::lock_guard<std::mutex> g(mu());
      last() = e;
    }
    dispatch(e->p, j, none, T, o1, o2);
  }

  static void dispatch(const typename WM::Prepared& p, const std::vector<MsmJob>& j1, const std::vector<MsmJob>& j2,
                       unsigned T, std::vector<Affine<G1>>& o1, std::vector<Affine<G2>>& o2) {
    with_batch_adder<G1, G2>([&](auto adder) {  // msm/batch_adder.hpp
      WM::template run_prepared<decltype(adder)::template type>(p, j1, j2, T, o1, o2);
    });
  }
};

}  // namespace snarkd
