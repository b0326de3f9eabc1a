// Groth16 setup scalars: the QAP polynomials evaluated at tau, in O(n + nnz).
//
// Domain <omega_n>, n = 2^log_n, omega from snarkjs's root (5^t). Lagrange basis
//   L_c(tau) = (tau^n - 1)/n * omega^c / (tau - omega^c)      (one batch inversion)
// Per signal s:  u_s = sum_c A[c][s] L_c,  v_s = sum_c B[c][s] L_c,  w_s = sum_c C[c][s] L_c,
// with the extra public rows A[m + s][s] = 1 for s = 0..nPublic (as snarkjs).
// Outputs (plain LE Fr, the scalars of the zkey's query points):
//   a[s]  = u_s                          (section 5, and with v: 6 / 7)
//   b[s]  = v_s
//   ic[s] = beta u_s + alpha v_s + w_s                 s <= nPublic   (gamma = 1)
//   c[s]  = (beta u_s + alpha v_s + w_s) / delta        s > nPublic
//   h[i]  = K_i(tau) / delta, i < n, where K_i is the basis the prover expects:
//           sum_i q(x_i) K_i(tau) = h(tau) Z(tau) for q = h Z evaluated on the
//           coset x_i = g omega^i (g = omega_2n, or snarkjs's shift when n = 2^S):
//           K_i(tau) = Z(tau) (tau^n - g^n) x_i / ((g^n - 1) n g^n (tau - x_i)).
//           For g = omega_2n this is L^(2n)_(2i+1)(tau), snarkjs's H basis.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "parallel.hpp"

namespace snarkd {
namespace setup {

struct Csr {
  const int64_t* row_ptr;  // m + 1
  const uint32_t* wires;   // nnz
  const uint8_t* coefs;    // nnz x 32 bytes, plain LE
};

template <class Fr>
struct QapOut {
  std::vector<Fr> a, b, ic, c, h;  // plain (from_mont) on return
};

template <class Fr>
inline Fr fr_from_u64(u64 x) {
  Fr r = Fr::zero();
  r.v[0] = x;
  return r.to_mont();
}

template <class Fr>
inline Fr fr_pow(const Fr& x, u64 e) { return x.pow(e); }

// values[i] = start * step^i for i < n, in parallel.
template <class Fr>
void geometric(Fr* out, size_t n, const Fr& start, const Fr& step, unsigned T) {
  parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
    u64 eb = b;
    Fr x = start * step.pow_limbs(&eb, 1);
    for (size_t i = b; i < e; i++) { out[i] = x; x = x * step; }
  }, 4096);
}

// out[i] = scale * x[i] / (tau - x[i]) (x[i] != tau guaranteed by the caller).
template <class Fr>
void scaled_ratio(Fr* x, size_t n, const Fr& tau, const Fr& scale, unsigned T) {
  parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
    std::vector<Fr> d(e - b), scratch(e - b);
    for (size_t i = b; i < e; i++) d[i - b] = tau - x[i];
    batch_inverse(d.data(), e - b, scratch.data());
    for (size_t i = b; i < e; i++) x[i] = scale * x[i] * d[i - b];
  }, 4096);
}

// Returns "" or an error message. tau, alpha, beta, delta in Montgomery form.
// omega: primitive n-th root; g: coset generator (Montgomery).
template <class Fr>
std::string qap_eval(const Fr& tau, const Fr& alpha, const Fr& beta, const Fr& delta,
                     const Fr& omega, const Fr& g, unsigned log_n,
                     size_t n_vars, size_t n_public, size_t m, const Csr mats[3], unsigned T,
                     QapOut<Fr>& out) {
  const size_t n = (size_t)1 << log_n;
  if (m + n_public + 1 > n) return "domain too small for the constraints and public rows";
  if (n_vars < n_public + 1) return "nVars must exceed nPublic";
  const Fr one = Fr::one();
  const Fr n_fr = fr_from_u64<Fr>(n);
  const Fr n_inv = n_fr.inv();
  const Fr tau_n = tau.pow(n);
  const Fr Z = tau_n - one;
  if (Z.is_zero()) return "tau lies in the evaluation domain";
  const Fr delta_inv = delta.inv();
  if (delta_inv.is_zero()) return "delta is zero";

  // Lagrange basis at tau for the rows actually used.
  const size_t rows = m + n_public + 1;
  std::vector<Fr> L(rows);
  geometric(L.data(), rows, one, omega, T);
  scaled_ratio(L.data(), rows, tau, Z * n_inv, T);

  // u, v, w per signal (sparse accumulation; coefficients plain -> Montgomery).
  std::vector<Fr> u(n_vars, Fr::zero()), v(n_vars, Fr::zero()), w(n_vars, Fr::zero());
  std::vector<Fr>* acc[3] = {&u, &v, &w};
  std::string err;
  // one thread per matrix (3 independent accumulations)
  run_threads(std::min<unsigned>(3, std::max(1u, T)), [&](unsigned tid) {
    unsigned TT = std::min<unsigned>(3, std::max(1u, T));
    for (unsigned k = tid; k < 3; k += TT) {
      const Csr& M = mats[k];
      Fr* dst = acc[k]->data();
      for (size_t c = 0; c < m; c++) {
        const Fr Lc = L[c];
        for (int64_t t = M.row_ptr[c]; t < M.row_ptr[c + 1]; t++) {
          uint32_t s = M.wires[t];
          if (s >= n_vars) continue;  // validated by the caller
          Fr coef = Fr::load(M.coefs + (size_t)t * 32);
          Fr::reduce_raw(coef.v);
          dst[s] = dst[s] + coef.to_mont() * Lc;
        }
      }
    }
  });
  for (size_t s = 0; s <= n_public; s++) u[s] = u[s] + L[m + s];
  L.clear();
  L.shrink_to_fit();

  out.a.resize(n_vars);
  out.b.resize(n_vars);
  out.ic.resize(n_public + 1);
  out.c.resize(n_vars - n_public - 1);
  parallel_for(n_vars, T, [&](size_t b, size_t e, unsigned) {
    for (size_t s = b; s < e; s++) {
      Fr z = beta * u[s] + alpha * v[s] + w[s];
      if (s <= n_public) out.ic[s] = z.from_mont();
      else out.c[s - n_public - 1] = (z * delta_inv).from_mont();
      out.a[s] = u[s].from_mont();
      out.b[s] = v[s].from_mont();
    }
  }, 4096);
  u = std::vector<Fr>();
  v = std::vector<Fr>();
  w = std::vector<Fr>();

  // H basis on the coset x_i = g omega^i.
  const Fr gn = g.pow(n);
  const Fr gn1 = gn - one;
  if (gn1.is_zero()) return "coset generator lies in the domain";
  const Fr tn_gn = tau_n - gn;
  if (tn_gn.is_zero()) return "tau lies in the coset";
  const Fr scale = Z * tn_gn * (gn1 * n_fr * gn).inv() * delta_inv;
  out.h.resize(n);
  geometric(out.h.data(), n, g, omega, T);
  scaled_ratio(out.h.data(), n, tau, scale, T);
  parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
    for (size_t i = b; i < e; i++) out.h[i] = out.h[i].from_mont();
  }, 4096);
  return err;
}

}  // namespace setup
}  // namespace snarkd
