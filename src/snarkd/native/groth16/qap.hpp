// The QAP step: h = (a b - c) on the odd coset of the 2n-th roots, c = a o b on
// the domain (snarkjs never stores C: for a satisfying witness c = a b there).
// a, b: Montgomery, natural order, on the domain; h: plain scalars for the H MSM.
#pragma once
#include <chrono>
#include <cstring>
#include <vector>

#include "ntt/ntt.hpp"
#include "ntt/ntt_simd.hpp"
#include "parallel.hpp"

namespace snarkd {

// The 8-lane path when the CPU has it, else the scalar transforms on copies.
// h_ms (optional): milliseconds of the last step, the H values from the coset
// evaluations (the "h" phase of --timings; the rest is "ntt").
// inputs_done(ctx) (optional) is called once a and b have been read: the caller
// may free them then (a one-shot proof keeps its peak memory down).
template <class Tr, class Fr>
void qap_h(const Fr* a, const Fr* b, Fr* h, unsigned log_n, unsigned T, double* h_ms = nullptr,
           void (*inputs_done)(void*) = nullptr, void* ctx = nullptr) {
  const size_t n = (size_t)1 << log_n;
#if defined(SNARKD_SIMD52)
  if (g_use_simd52 && log_n >= 4) {
    NttSimd<Tr>::h_coset(a, b, h, log_n, T, h_ms, inputs_done, ctx);
    return;
  }
#endif
  std::vector<Fr> A(a, a + n), B(b, b + n), C(n);
  if (inputs_done) inputs_done(ctx);
  parallel_for(n, T, [&](size_t s, size_t e, unsigned) {
    for (size_t i = s; i < e; i++) Fr::mul_to(C[i], A[i], B[i]);
  }, 4096);
  {
    const std::vector<Fr> V = Ntt<Tr>::coset_scales(log_n, T);  // one set of scales for all three
    for (auto* v : {&A, &B, &C}) Ntt<Tr>::coset_shift(v->data(), log_n, T, V.data());
  }
  auto t0 = std::chrono::steady_clock::now();
  parallel_for(n, T, [&](size_t s, size_t e, unsigned) {
    for (size_t i = s; i < e; i++) {
      Fr t;
      Fr::mul_to(t, A[i], B[i]);
      Fr::sub_to(t, t, C[i]);
      h[i] = t.from_mont();
    }
  }, 4096);
  if (h_ms) *h_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace snarkd
