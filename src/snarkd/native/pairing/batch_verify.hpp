// Batch verification of many Groth16 proofs of one prepared key by a random
// linear combination (RLC). With secret random 128-bit r_i, the n equations
//   e(A_i, B_i) = e(alpha, beta) e(cpub_i, gamma) e(C_i, delta)
// are checked as one:
//   prod_i e(-r_i A_i, B_i) * e(s alpha, beta) * e(sum_i r_i cpub_i, gamma) * e(sum_i r_i C_i, delta) == 1
// with s = sum_i r_i: n + 3 Miller loops (the three fixed G2 points' lines come
// prepared with the key; their G1 sides are merged sums) and one final
// exponentiation. sum_i r_i cpub_i = s IC_0 + sum_j (sum_i r_i pub_ij) IC_j is
// computed on scalars first, so it costs n_public + 1 scalar multiplications
// whatever n is.
//
// Soundness: every proof point is checked on its curve and in the order-r
// subgroup first (exactly the single verifier's checks), so each proof's
// pairing ratio d_i lies in the order-r group GT. If some d_i != 1, the
// combined product prod d_i^{r_i} is 1 for at most a 2^-128 fraction of the
// r_i (a nonzero linear form over Z_r in r_i taking 2^128 values), and r_i are
// drawn after the proofs are fixed and never revealed.
//
// Split in two steps so bisection reuses the per-proof work: `prepare` does the
// per-proof part once (checks, r_i A_i, r_i C_i, r_i pub_ij), in parallel;
// `check` runs the RLC over any subset of the prepared proofs (the sub-checks
// of a bisection use the same r_i restricted to the subset, which is again an
// RLC with secret coefficients).
#pragma once
#include <cstdint>
#include <cstring>
#include <vector>
#include "parallel.hpp"
#include "pairing/groth16_verify.hpp"

namespace snarkd {
namespace pairing {

template <class Cfg>
struct BatchVerify {
  using Pr = Pairing<Cfg>;
  using ML = MillerLoop<Cfg>;
  using F12 = typename Cfg::Fq12;
  using G1 = typename Cfg::G1;
  using G2 = typename Cfg::G2;
  using Fr = typename Cfg::Fr;
  using C1 = typename Cfg::G1Curve;
  using PVK = typename Pr::PreparedVK;
  static constexpr size_t COEFF_BYTES = 16;  // 128-bit coefficients
  // Pairs per shared Miller loop: one Fp12 squaring per step is shared by the
  // chunk; 64 prepared G2 points (~17 KB each on BN254) stay in cache-friendly
  // bounds per thread while the squarings cost ~1/64 of a loop per pair.
  static constexpr size_t CHUNK = 64;

  struct Batch {
    size_t n = 0, n_public = 0;
    std::vector<uint8_t> status;   // per proof: VERIFY_OK (checked, usable in the RLC) or the single verifier's reason
    std::vector<G1> neg_rA, rC;    // -(r_i A_i), r_i C_i, affine
    std::vector<G2> B;
    std::vector<Fr> r_pub;         // per proof: r_i, then r_i * pub_ij (Montgomery), n_public + 1 values
  };

  // publics: n * n_public plain little-endian scalars; a, c: n G1 points; b: n G2
  // points (zkey layout); coeffs: n 128-bit little-endian coefficients (a zero one
  // is taken as 1: it would leave its proof unchecked; probability 2^-128 each).
  static Batch prepare(const PVK& vk, const uint8_t* publics, const uint8_t* a, const uint8_t* b, const uint8_t* c,
                       const uint8_t* coeffs, size_t n, unsigned T) {
    Batch bt;
    bt.n = n;
    bt.n_public = vk.ic.size() - 1;
    const size_t np = bt.n_public, stride = np + 1;
    bt.status.assign(n, VERIFY_OK);
    bt.neg_rA.resize(n);
    bt.rC.resize(n);
    bt.B.resize(n);
    bt.r_pub.resize(n * stride);
    parallel_for(n, T, [&](size_t begin, size_t end, unsigned) {
      std::vector<u64> scal(Fr::N);
      for (size_t i = begin; i < end; i++) {
        uint8_t& st = bt.status[i];
        for (size_t j = 0; j < np && st == VERIFY_OK; j++) {
          std::memcpy(scal.data(), publics + (i * np + j) * sizeof(Fr), sizeof(Fr));
          if (!Fr::lt_mod(scal.data())) st = PUBLIC_OUT_OF_RANGE;
        }
        if (st != VERIFY_OK) continue;
        G1 A = G1::load(a + i * sizeof(G1)), C = G1::load(c + i * sizeof(G1));
        G2 Bi = G2::load(b + i * sizeof(G2));
        if (!A.on_curve() || !Bi.on_curve() || !C.on_curve()) { st = PROOF_NOT_ON_CURVE; continue; }
        if (!Pr::g1_in_subgroup(A) || !Pr::g1_in_subgroup(C) || !Pr::g2_in_subgroup(Bi)) { st = PROOF_NOT_IN_SUBGROUP; continue; }
        u64 r[Fr::N] = {};
        std::memcpy(r, coeffs + i * COEFF_BYTES, COEFF_BYTES);
        if (r[0] == 0 && r[1] == 0) r[0] = 1;
        bt.neg_rA[i] = scalar_mul<C1>(A, r, 2).to_affine().neg();
        bt.rC[i] = scalar_mul<C1>(C, r, 2).to_affine();
        bt.B[i] = Bi;
        Fr rm = Fr::from_limbs(r).to_mont();
        Fr* out = &bt.r_pub[i * stride];
        out[0] = rm;
        for (size_t j = 0; j < np; j++) {
          std::memcpy(scal.data(), publics + (i * np + j) * sizeof(Fr), sizeof(Fr));
          out[j + 1] = rm * Fr::from_limbs(scal.data()).to_mont();
        }
      }
    }, 4);
    return bt;
  }

  // The RLC over the proofs idx[0..m) (each must have status VERIFY_OK).
  static bool check(const PVK& vk, const Batch& bt, const uint32_t* idx, size_t m, unsigned T) {
    const size_t np = bt.n_public, stride = np + 1;
    // sums of r_i and r_i pub_ij over the subset (scalars, Montgomery)
    std::vector<Fr> sums(stride, Fr::zero());
    XYZZ<C1> c_sum = XYZZ<C1>::inf();
    for (size_t k = 0; k < m; k++) {
      const Fr* rp = &bt.r_pub[(size_t)idx[k] * stride];
      for (size_t j = 0; j < stride; j++) sums[j] += rp[j];
      c_sum.add_affine_checked(bt.rC[idx[k]]);
    }
    std::vector<Fr> plain(stride);
    for (size_t j = 0; j < stride; j++) plain[j] = sums[j].from_mont();
    XYZZ<C1> cpub = scalar_mul<C1>(vk.ic[0], plain[0].v, Fr::N);
    for (size_t j = 0; j < np; j++) cpub.add(scalar_mul<C1>(vk.ic[j + 1], plain[j + 1].v, Fr::N));
    G1 fixedP[3] = {scalar_mul<C1>(vk.alpha, plain[0].v, Fr::N).to_affine(), cpub.to_affine(), c_sum.to_affine()};
    const G2Prepared<Cfg>* fixedQ[3] = {&vk.beta, &vk.gamma, &vk.delta};

    // the proofs' pairs: chunks of CHUNK pairs share one squaring chain; one accumulator per thread
    unsigned TT = (unsigned)std::max<size_t>(1, std::min<size_t>(T, (m + CHUNK - 1) / CHUNK));
    std::vector<F12> acc(TT, F12::one());
    parallel_for(m, TT, [&](size_t begin, size_t end, unsigned t) {
      std::vector<G2Prepared<Cfg>> prep(CHUNK);
      std::vector<const G2Prepared<Cfg>*> q(CHUNK);
      std::vector<G1> p(CHUNK);
      for (size_t s = begin; s < end; s += CHUNK) {
        size_t k = std::min(CHUNK, end - s);
        for (size_t j = 0; j < k; j++) {
          uint32_t i = idx[s + j];
          prep[j] = ML::prepare(bt.B[i]);
          q[j] = &prep[j];
          p[j] = bt.neg_rA[i];
        }
        acc[t] *= ML::multi(p.data(), q.data(), k);
      }
    });
    F12 f = ML::multi(fixedP, fixedQ, 3);
    for (auto& x : acc) f *= x;
    return FinalExp<Cfg>::apply(f).is_one();
  }
};

}  // namespace pairing
}  // namespace snarkd
