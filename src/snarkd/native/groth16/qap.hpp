// The QAP step: h = (a b - c) on the odd coset of the 2n-th roots, c = a o b on
// the domain (snarkjs never stores C: for a satisfying witness c = a b there).
// a, b: Montgomery, natural order, on the domain; h: plain scalars for the H MSM.
#pragma once
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "big_buffer.hpp"
#include "ntt/ntt.hpp"
#include "ntt/ntt_simd.hpp"
#include "parallel.hpp"

namespace snarkd {

// The 8-lane path when the CPU has it, else the scalar transforms (in a and b where inputs_done is given).
// h_ms (optional): milliseconds of the last step, the H values from the coset
// evaluations (the "h" phase of --timings; the rest is "ntt").
// inputs_done(ctx) (optional) is called once a and b have been used: the caller
// may free them then (a one-shot proof keeps its peak memory down). Given it, a and
// b are the callee's until then: the scalar path transforms in them (non-const memory).
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
  // The scalar transforms run in place. With inputs_done the caller frees a and b after this
  // (a one-shot proof's spmv vectors): the transforms run in them, called at the end, where copies
  // were 8 MiB of fresh pages at 2^17 faulted in and unmapped each proof (cpu-notes round 30).
  // Else on copies. c = a o b (and the copies) in one parallel pass over memory left
  // uninitialised; C is transformed in h's storage, which the last step overwrites in place.
  BigArray<Fr> own_a, own_b;  // big_buffer.hpp: huge pages where advised
  Fr* A = const_cast<Fr*>(a);
  Fr* B = const_cast<Fr*>(b);
  if (!inputs_done || a == b) own_b.reset(n), B = own_b.get();  // a == b: B must not be A's storage
  if (!inputs_done) own_a.reset(n), A = own_a.get();
  Fr* C = h;
  parallel_for(n, T, [&](size_t s, size_t e, unsigned) {
    for (size_t i = s; i < e; i++) {
      Fr::mul_to(C[i], a[i], b[i]);
      if (own_a) A[i] = a[i];
      if (own_b) B[i] = b[i];
    }
  }, 4096);
  {
    const std::unique_ptr<Fr[]> V = Ntt<Tr>::coset_scales(log_n, T);  // one set of scales for all three
    for (Fr* v : {A, B, C}) Ntt<Tr>::coset_shift(v, log_n, T, V.get());
  }
  auto t0 = std::chrono::steady_clock::now();
  parallel_for(n, T, [&](size_t s, size_t e, unsigned) {
    for (size_t i = s; i < e; i++) {
      Fr t;
      Fr::mul_to(t, A[i], B[i]);
      Fr::sub_to(t, t, C[i]);
      Fr::from_mont_to(h[i], t);  // a bare reduction (16 mulx) where a product by 1 took 32
    }
  }, 4096);
  if (h_ms) *h_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (inputs_done) inputs_done(ctx);
}

}  // namespace snarkd
