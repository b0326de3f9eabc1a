// The one place that picks the batch-affine adder (msm/buckets.hpp's queue protocol) for a curve:
// eight at a time on AVX-512 IFMA (SimdBatchAdd) where g_use_simd52, else four at a time on the AVX2
// lanes (Simd29BatchAdd) where the lanes fit the curve and its switch is on (simd29_on: each field's and
// G2's calibration at first use, ff/simd29.hpp, msm/bucket_simd29.hpp), else one at a time (ScalarBatchAdd). msm_core (msm/pippenger.hpp),
// WitnessMsm::run (msm/witness_msm.hpp) and WitnessPrepCache::dispatch (msm/witness_cache.hpp) all
// call with_batch_adder.
//
// The adders are templates of the curve (a template-template argument of the MSM templates, which
// apply one to G1 and G2 alike), so the choice is handed to the caller as a tag type that carries
// the template: f(BatchAdder<BA, MIN_C>{}) with BA as decltype(tag)::template type, MIN_C the
// smallest window from which the caller should take that adder at all (msm_core: below 64 buckets
// a scalar batch would share its inversion among too few additions; the IFMA adder is taken at
// every window, as it always was).
#pragma once
#include <type_traits>
#include <utility>

#include "msm/bucket_simd.hpp"
#include "msm/bucket_simd29.hpp"
#include "msm/buckets.hpp"

namespace snarkd {

template <template <class> class BA, unsigned MIN_C>
struct BatchAdder {
  template <class Cfg>
  using type = BA<Cfg>;
  static constexpr unsigned min_c = MIN_C;
};

// G1 one at a time, G2 on the lanes: a witness MSM's template where G2's lanes pay and G1's do not
// (Simd29G2Add checks G2's switch at each flush)
template <class Cfg>
using Simd29G2OnlyAdd = std::conditional_t<simd29_g2<Cfg>(), Simd29G2Add<Cfg>, ScalarBatchAdd<Cfg>>;

// f(tag) with the adder for curve Cfg; where G1 and G2 jobs run together (the witness MSMs) Cfg is the
// G1 and Cfg2 the G2 of the curve, and G2 takes the same template: the lanes where G1's switch is on (G2's
// lanes then fall back to ScalarBatchAdd at each flush where G2's switch is off), else G2 alone on the
// lanes where its switch is on. Each group's own calibration decides for it: on a 2-vCPU Xeon (Emerald
// Rapids) G1's lanes lose and BLS12-381's G2 lanes win (B2 CPU 540 vs 736 ms), where G1's switch used to
// decide both (cpu-notes round 37). Every branch's f must return the same type.
template <class Cfg, class Cfg2 = Cfg, class Fn>
decltype(auto) with_batch_adder(Fn&& f) {
#if defined(SNARKD_SIMD52)
  if (g_use_simd52) return f(BatchAdder<SimdBatchAdd, 0>{});
#endif
#if defined(SNARKD_SIMD29)
  if constexpr (simd29_curve<Cfg>()) {
    if (simd29_on<Cfg>()) return f(BatchAdder<Simd29BatchAdd, 7>{});
    if constexpr (!std::is_same<Cfg, Cfg2>::value && simd29_g2<Cfg2>())
      if (simd29_on<Cfg2>()) return f(BatchAdder<Simd29G2OnlyAdd, 7>{});
  }
#endif
  return f(BatchAdder<ScalarBatchAdd, 7>{});
}

}  // namespace snarkd
