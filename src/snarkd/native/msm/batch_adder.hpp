// The one place that picks the batch-affine adder (msm/buckets.hpp's queue protocol) for a curve:
// eight at a time on AVX-512 IFMA (SimdBatchAdd) where g_use_simd52, else four at a time on the AVX2
// lanes (Simd29BatchAdd) where the lanes fit the curve and its switch is on (simd29_on: the load-time
// calibration per field, ff/simd29.hpp), else one at a time (ScalarBatchAdd). msm_core (msm/pippenger.hpp),
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

// f(tag) with the adder for curve Cfg (the MSM's G1 where G1 and G2 jobs run together: G2 then
// takes the same template, whose lanes fall back to ScalarBatchAdd where they do not fit G2).
// Every branch's f must return the same type.
template <class Cfg, class Fn>
decltype(auto) with_batch_adder(Fn&& f) {
#if defined(SNARKD_SIMD52)
  if (g_use_simd52) return f(BatchAdder<SimdBatchAdd, 0>{});
#endif
#if defined(SNARKD_SIMD29)
  if constexpr (simd29_curve<Cfg>())
    if (simd29_on<Cfg>()) return f(BatchAdder<Simd29BatchAdd, 7>{});
#endif
  return f(BatchAdder<ScalarBatchAdd, 7>{});
}

}  // namespace snarkd
