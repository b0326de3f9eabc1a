// Batch verification of many Groth16 proofs of one prepared key by a random
// linear combination (RLC). With secret random r_i (2^128 possible values each:
// r_i = a_i + b_i lambda, a_i, b_i 64-bit, see Glv below), the n equations
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
// per-proof part once (checks, r_i A_i, r_i pub_ij, phi(C_i)), in parallel;
// `check` runs the RLC over any subset of the prepared proofs (the sub-checks
// of a bisection use the same r_i restricted to the subset, which is again an
// RLC with secret coefficients).
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>
#include "parallel.hpp"
#include "pairing/affine_miller.hpp"
#include "pairing/groth16_verify.hpp"

namespace snarkd {
namespace pairing {

// The G1 endomorphism phi(x, y) = (beta x, y) = [lambda] (x, y) on the order-r subgroup
// (beta: a cube root of unity in Fq, plain limbs; lambda: the matching one mod r). The batch's
// coefficients are r_i = a_i + b_i lambda with a_i, b_i 64-bit: r_i A_i = [a_i] A_i + [b_i] phi(A_i)
// costs 64 doublings instead of 128, and the 2^128 pairs (a_i, b_i) give 2^128 distinct r_i
// (no nonzero (x, y) with |x|, |y| < 2^64 has x + y lambda = 0 mod r: the lattice of such
// vectors has minimum ~2^127, tests/verifier/test_batch.py checks it), so the soundness bound
// stays 2^-128.
template <class Cfg>
struct Glv;
template <>
struct Glv<BN254Pairing> {
  static constexpr u64 BETA[4] = {0x5763473177fffffeULL, 0xd4f263f1acdb5c4fULL, 0x59e26bcea0d48bacULL, 0};
  static constexpr u64 LAMBDA[4] = {0x8b17ea66b99c90ddULL, 0x5bfc41088d8daaa7ULL, 0xb3c4d79d41a91758ULL, 0};
};
template <>
struct Glv<BLS12_381Pairing> {
  static constexpr const u64* BETA = BLS12_381Pairing::G1_BETA;  // phi acts as -u^2 (see g1_in_subgroup)
  static constexpr u64 LAMBDA[4] = {0xfffffffe00000001ULL, 0xa7780001fffcb7fcULL, 0x3339d80809a1d804ULL,
                                    0x73eda753299d7d48ULL};  // -u^2 mod r
};

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
  // Pairs per shared Miller loop: one Fp12 squaring and one Fp2 inversion per step are
  // shared by the chunk; lines are computed and applied at once (AffineMillerLoop::multi),
  // so a chunk keeps only its 64 running points.
  static constexpr size_t CHUNK = 64;

  struct Batch {
    size_t n = 0, n_public = 0;
    std::vector<uint8_t> status;   // per proof: VERIFY_OK (checked, usable in the RLC) or the single verifier's reason
    std::vector<G1> neg_rA, C, phiC;  // -(r_i A_i) affine; C_i and phi(C_i) (sum r_i C_i: one MSM per check)
    std::vector<u64> ab;              // a_i, b_i (r_i = a_i + b_i lambda)
    std::vector<G2> B;
    // B_i's subgroup check is left to the first check's Miller loop (AffineMillerLoop::multi's in_g2:
    // a G2 scalar multiplication saved per proof), which settles it: 0 once settled (and, for a B_i
    // outside G2, the proof's status becomes PROOF_NOT_IN_SUBGROUP)
    std::vector<uint8_t> g2_pending;
    std::vector<Fr> r_pub;         // per proof: r_i, then r_i * pub_ij (Montgomery), n_public + 1 values
    // Miller-loop products of the chunks of pairs already computed, by their exact index lists:
    // the sub-checks of a bisection reuse their parent's chunks (python aligns the halves to
    // CHUNK), so finding one bad proof costs ~1 more Miller loop pass over a chunk, not over n.
    mutable std::map<std::vector<uint32_t>, F12> chunks;
    std::shared_ptr<std::mutex> lock = std::make_shared<std::mutex>();
  };

  // The per-proof passes hand out blocks of BLOCK proofs to the threads as they come free
  // (a static half each left one core idle at the end whenever the other was slowed by
  // other work on a shared machine).
  static constexpr size_t BLOCK = 16;
  template <class Fn>
  static void for_blocks(size_t n, unsigned T, Fn&& f) {
    parallel_tasks((n + BLOCK - 1) / BLOCK, T, [&](size_t b, unsigned) { f(b * BLOCK, std::min(n, (b + 1) * BLOCK)); });
  }

  // One proof's checks and randomization (the single verifier's checks, in its order).
  // pubs: n_public plain scalars (Fr::N limbs each); r: 2 limbs.
  static uint8_t prepare_one(Batch& bt, size_t i, const u64* pubs, const G1& A, const G2& Bi, const G1& C, const u64* r_in) {
    const size_t np = bt.n_public, stride = np + 1;
    for (size_t j = 0; j < np; j++)
      if (!Fr::lt_mod(pubs + j * Fr::N)) return PUBLIC_OUT_OF_RANGE;
    if (!A.on_curve() || !Bi.on_curve() || !C.on_curve()) return PROOF_NOT_ON_CURVE;
    if (!Pr::g1_in_subgroup(A) || !Pr::g1_in_subgroup(C)) return PROOF_NOT_IN_SUBGROUP;
    bt.g2_pending[i] = 1;  // B's subgroup check: settled in the first check (Batch::g2_pending)
    u64 a = r_in[0], b = r_in[1];
    if (a == 0 && b == 0) a = 1;
    bt.neg_rA[i] = glv_mul(A, a, b).to_affine().neg();
    bt.C[i] = C;
    bt.B[i] = Bi;
    // r_i = a + b lambda mod r (Montgomery), and its plain limbs for the MSM of the C_i
    u64 la[Fr::N] = {a}, lb[Fr::N] = {b};
    static const Fr lambda = Fr::from_limbs(Glv<Cfg>::LAMBDA).to_mont();
    Fr rm = Fr::from_limbs(la).to_mont() + Fr::from_limbs(lb).to_mont() * lambda;
    bt.ab[2 * i] = a;
    bt.ab[2 * i + 1] = b;
    static const typename Cfg::Fq beta = Cfg::Fq::from_limbs(Glv<Cfg>::BETA).to_mont();
    bt.phiC[i] = C.is_inf() ? C : G1{C.x * beta, C.y};
    Fr* out = &bt.r_pub[i * stride];
    out[0] = rm;
    for (size_t j = 0; j < np; j++) out[j + 1] = rm * Fr::from_limbs(pubs + j * Fr::N).to_mont();
    return VERIFY_OK;
  }

  // [a] P + [b] phi(P) (= [a + b lambda] P) by one joint double-and-add over 64 bits.
  static XYZZ<C1> glv_mul(const G1& P, u64 a, u64 b) {
    XYZZ<C1> acc = XYZZ<C1>::inf();
    if (P.is_inf()) return acc;
    static const typename Cfg::Fq beta = Cfg::Fq::from_limbs(Glv<Cfg>::BETA).to_mont();
    G1 phi{P.x * beta, P.y};
    XYZZ<C1> s = XYZZ<C1>::from_affine(P);
    s.add_affine(phi);
    G1 both = s.to_affine();  // P + phi(P) = [1 + lambda] P, never infinity for P != O
    for (int bit = 63; bit >= 0; bit--) {
      acc.dbl();
      unsigned k = (unsigned)((a >> bit) & 1) | (unsigned)(((b >> bit) & 1) << 1);
      if (k == 1) acc.add_affine(P);
      else if (k == 2) acc.add_affine(phi);
      else if (k == 3) acc.add_affine_checked(both);
    }
    return acc;
  }

  static Batch empty(const PVK& vk, size_t n) {
    Batch bt;
    bt.n = n;
    bt.n_public = vk.ic.size() - 1;
    bt.status.assign(n, VERIFY_OK);
    bt.neg_rA.resize(n);
    bt.C.resize(n);
    bt.phiC.resize(n);
    bt.ab.resize(2 * n);
    bt.B.resize(n);
    bt.g2_pending.assign(n, 0);
    bt.r_pub.resize(n * (bt.n_public + 1));
    return bt;
  }

  // publics: n * n_public plain little-endian scalars; a, c: n G1 points; b: n G2
  // points (zkey layout); coeffs: n 128-bit little-endian coefficients (a zero one
  // is taken as 1: it would leave its proof unchecked; probability 2^-128 each).
  static Batch prepare(const PVK& vk, const uint8_t* publics, const uint8_t* a, const uint8_t* b, const uint8_t* c,
                       const uint8_t* coeffs, size_t n, unsigned T) {
    Batch bt = empty(vk, n);
    const size_t np = bt.n_public;
    for_blocks(n, T, [&](size_t begin, size_t end) {
      std::vector<u64> pubs(np * Fr::N + 1);
      u64 r[2];
      for (size_t i = begin; i < end; i++) {
        if (np) std::memcpy(pubs.data(), publics + i * np * sizeof(Fr), np * sizeof(Fr));
        std::memcpy(r, coeffs + i * COEFF_BYTES, COEFF_BYTES);
        bt.status[i] = prepare_one(bt, i, pubs.data(), G1::load(a + i * sizeof(G1)), G2::load(b + i * sizeof(G2)),
                                   G1::load(c + i * sizeof(G1)), r);
      }
    });
    return bt;
  }

  // ---- the text path: proofs as snarkjs writes them (decimal strings), parsed here in parallel
  // Per proof one line (proofs separated by '\n'), fields separated by ',':
  //   ax, ay, az, bx0, bx1, by0, by1, bz0, bz1, cx, cy, cz, then the n_public public values,
  // each a string of 1..MAX_DIGITS decimal digits. Anything else (hex, signs, too long, a wrong
  // field count) gives its proof the status NOT_PARSED: the caller reads that one its own way.
  static constexpr int NOT_PARSED = 100;
  static constexpr size_t MAX_DIGITS = 160;  // BLS12-381 coordinates have up to 116 digits; longer ones go the slow way

  // A decimal string into `nl` little-endian limbs plus one overflow limb (out has nl + 1);
  // false if it is not 1..MAX_DIGITS digits.
  static bool parse_decimal(const char* s, size_t len, u64* out, size_t nl) {
    if (len == 0 || len > MAX_DIGITS) return false;
    for (size_t k = 0; k <= nl; k++) out[k] = 0;
    size_t i = 0;
    while (i < len) {
      size_t take = std::min<size_t>(19, len - i);
      u64 chunk = 0, mul = 1;
      for (size_t k = 0; k < take; k++) {
        char ch = s[i + k];
        if (ch < '0' || ch > '9') return false;
        chunk = chunk * 10 + (u64)(ch - '0');
        mul *= 10;
      }
      // out = out * mul + chunk (saturating into the overflow limb: any nonzero there means >= 2^(64 nl))
      u128 carry = chunk;
      for (size_t k = 0; k <= nl; k++) {
        u128 t = (u128)out[k] * mul + carry;
        out[k] = (u64)t;
        carry = t >> 64;
      }
      if (carry) out[nl] = ~0ULL;
      i += take;
    }
    return true;
  }

  using Fq = typename Cfg::Fq;
  using Fq2 = typename Cfg::Fq2;

  // Coordinate: canonical (< q) -> Montgomery; else `canonical` = false.
  static Fq coord(const u64* limbs, bool& canonical) {
    if (limbs[Fq::N] != 0 || !Fq::lt_mod(limbs)) { canonical = false; return Fq::zero(); }
    return Fq::from_limbs(limbs).to_mont();
  }

  // snarkjs Jacobian [X, Y, Z] -> the zkey-layout affine point (infinity = zeros); `bad` when
  // the affine point is (0, 0) (not a point; the zkey layout would read it as infinity).
  template <class F, class Aff>
  static Aff from_jacobian(const F& X, const F& Y, const F& Z, bool& bad) {
    if (Z.is_zero()) return Aff{F::zero(), F::zero()};
    Aff p;
    if (Z == F::one()) {
      p = Aff{X, Y};
    } else {
      F zi = Z.inv(), zi2 = zi.sqr();
      p = Aff{X * zi2, Y * zi2 * zi};
    }
    if (p.x.is_zero() && p.y.is_zero()) bad = true;
    return p;
  }

  static Batch prepare_text(const PVK& vk, const char* text, size_t len, size_t n, const uint8_t* coeffs, unsigned T) {
    Batch bt = empty(vk, n);
    const size_t np = bt.n_public, nf = 12 + np;
    std::vector<size_t> starts;
    starts.reserve(n + 1);
    starts.push_back(0);
    for (size_t k = 0; k < len; k++)
      if (text[k] == '\n') starts.push_back(k + 1);
    if (starts.size() != n) throw std::invalid_argument("text: expected one line per proof");
    starts.push_back(len + 1);
    for_blocks(n, T, [&](size_t begin, size_t end) {
      constexpr size_t NL = Fq::N > Fr::N ? Fq::N : Fr::N;
      std::vector<u64> vals(nf * (NL + 1));
      std::vector<u64> pubs(np * Fr::N + 1);
      for (size_t i = begin; i < end; i++) {
        const char* line = text + starts[i];
        size_t line_len = starts[i + 1] - 1 - starts[i];
        // split and parse the fields
        size_t f = 0, pos = 0;
        bool ok = true;
        while (ok) {
          size_t e = pos;
          while (e < line_len && line[e] != ',') e++;
          if (f >= nf) { ok = false; break; }
          size_t nl = f < 12 ? Fq::N : Fr::N;
          ok = parse_decimal(line + pos, e - pos, &vals[f * (NL + 1)], nl);
          if (ok && nl < NL) {  // keep the overflow limb at index nl: move it to the common slot
            vals[f * (NL + 1) + NL] = vals[f * (NL + 1) + nl];
            for (size_t k = nl; k < NL; k++) vals[f * (NL + 1) + k] = 0;
          }
          f++;
          if (e >= line_len) break;
          pos = e + 1;
        }
        if (!ok || f != nf) { bt.status[i] = NOT_PARSED; continue; }
        auto field = [&](size_t k) { return &vals[k * (NL + 1)]; };
        // publics first, as the single verifier: a value >= r is an invalid proof before anything else
        bool in_range = true;
        for (size_t j = 0; j < np; j++) {
          const u64* v = field(12 + j);
          if (v[NL] != 0) { in_range = false; break; }
          for (size_t k = Fr::N; k < NL; k++) if (v[k]) in_range = false;
          std::memcpy(&pubs[j * Fr::N], v, Fr::N * 8);
        }
        if (!in_range) { bt.status[i] = PUBLIC_OUT_OF_RANGE; continue; }
        for (size_t j = 0; j < np; j++)
          if (!Fr::lt_mod(&pubs[j * Fr::N])) in_range = false;
        if (!in_range) { bt.status[i] = PUBLIC_OUT_OF_RANGE; continue; }
        auto fq = [&](size_t k, bool& canon) {
          const u64* v = field(k);
          u64 tmp[Fq::N + 1];
          std::memcpy(tmp, v, Fq::N * 8);
          tmp[Fq::N] = v[NL];
          for (size_t q = Fq::N; q < NL; q++) if (v[q]) tmp[Fq::N] = 1;
          return coord(tmp, canon);
        };
        bool canon = true, bad = false;
        Fq ax = fq(0, canon), ay = fq(1, canon), az = fq(2, canon);
        Fq2 bx{fq(3, canon), fq(4, canon)}, by{fq(5, canon), fq(6, canon)}, bz{fq(7, canon), fq(8, canon)};
        Fq cx = fq(9, canon), cy = fq(10, canon), cz = fq(11, canon);
        if (!canon) { bt.status[i] = PROOF_NOT_ON_CURVE; continue; }  // non-canonical: invalid (see groth16.py)
        G1 A = from_jacobian<Fq, G1>(ax, ay, az, bad);
        G2 B = from_jacobian<Fq2, G2>(bx, by, bz, bad);
        G1 C = from_jacobian<Fq, G1>(cx, cy, cz, bad);
        if (bad) { bt.status[i] = PROOF_NOT_ON_CURVE; continue; }
        u64 r[2];
        std::memcpy(r, coeffs + i * COEFF_BYTES, COEFF_BYTES);
        bt.status[i] = prepare_one(bt, i, pubs.data(), A, B, C, r);
      }
    });
    return bt;
  }

  // sum_k r_{idx[k]} C_{idx[k]} = sum_k [a] C + [b] phi(C): a bucket (Pippenger) MSM of 2m points
  // with 64-bit scalars, its windows spread over the threads.
  static XYZZ<C1> msm_c(const Batch& bt, const uint32_t* idx, size_t m, unsigned T) {
    XYZZ<C1> total = XYZZ<C1>::inf();
    if (m < 16) {
      for (size_t k = 0; k < m; k++) {
        size_t i = idx[k];
        total.add(scalar_mul<C1>(bt.C[i], &bt.ab[2 * i], 1));
        total.add(scalar_mul<C1>(bt.phiC[i], &bt.ab[2 * i + 1], 1));
      }
      return total;
    }
    unsigned c = 4;
    while (c < 12 && ((size_t)1 << (c + 1)) < m) c++;
    const unsigned windows = (64 + c - 1) / c;
    std::vector<XYZZ<C1>> win(windows);
    parallel_tasks(windows, T, [&](size_t w, unsigned) {
      std::vector<XYZZ<C1>> buckets(((size_t)1 << c) - 1, XYZZ<C1>::inf());
      const unsigned bit = (unsigned)w * c;
      const u64 mask = ((u64)1 << c) - 1;
      for (size_t k = 0; k < m; k++) {
        size_t i = idx[k];
        u64 da = (bt.ab[2 * i] >> bit) & mask, db = (bt.ab[2 * i + 1] >> bit) & mask;
        if (da) buckets[da - 1].add_affine_checked(bt.C[i]);
        if (db) buckets[db - 1].add_affine_checked(bt.phiC[i]);
      }
      XYZZ<C1> running = XYZZ<C1>::inf(), sum = XYZZ<C1>::inf();
      for (size_t b = buckets.size(); b-- > 0;) {
        running.add(buckets[b]);
        sum.add(running);
      }
      win[w] = sum;
    });
    for (unsigned w = windows; w-- > 0;) {
      for (unsigned k = 0; k < c; k++) total.dbl();
      total.add(win[w]);
    }
    return total;
  }

  // The RLC over the proofs idx[0..m): false when one of them has (or is found to have, its B
  // outside G2: g2_pending) a status other than VERIFY_OK, so that such a proof is named bad by
  // the check of its own that bisection ends with, as the single verifier names it.
  static bool check(const PVK& vk, Batch& bt, const uint32_t* idx, size_t m, unsigned T) {
    const size_t np = bt.n_public, stride = np + 1;
    for (size_t k = 0; k < m; k++)
      if (bt.status[idx[k]] != VERIFY_OK) return false;
    // sums of r_i and r_i pub_ij over the subset (scalars, Montgomery)
    std::vector<Fr> sums(stride, Fr::zero());
    for (size_t k = 0; k < m; k++) {
      const Fr* rp = &bt.r_pub[(size_t)idx[k] * stride];
      for (size_t j = 0; j < stride; j++) sums[j] += rp[j];
    }
    XYZZ<C1> c_sum = msm_c(bt, idx, m, T);
    std::vector<Fr> plain(stride);
    for (size_t j = 0; j < stride; j++) plain[j] = sums[j].from_mont();
    XYZZ<C1> cpub = scalar_mul<C1>(vk.ic[0], plain[0].v, Fr::N);
    for (size_t j = 0; j < np; j++) cpub.add(scalar_mul<C1>(vk.ic[j + 1], plain[j + 1].v, Fr::N));
    G1 fixedP[3] = {scalar_mul<C1>(vk.alpha, plain[0].v, Fr::N).to_affine(), cpub.to_affine(), c_sum.to_affine()};
    const G2Prepared<Cfg>* fixedQ[3] = {&vk.beta, &vk.gamma, &vk.delta};

    // the proofs' pairs: chunks of CHUNK pairs (aligned to the start of idx) share one squaring
    // chain; chunks seen by an earlier check come from the cache
    const size_t nchunks = (m + CHUNK - 1) / CHUNK;
    std::vector<std::vector<uint32_t>> keys(nchunks);
    std::vector<F12> prod(nchunks, F12::one());
    std::vector<size_t> todo;
    {
      std::lock_guard<std::mutex> g(*bt.lock);
      for (size_t c = 0; c < nchunks; c++) {
        keys[c].assign(idx + c * CHUNK, idx + std::min(m, (c + 1) * CHUNK));
        auto it = bt.chunks.find(keys[c]);
        if (it != bt.chunks.end()) prod[c] = it->second;
        else todo.push_back(c);
      }
    }
    std::atomic<bool> outside_g2{false};
    parallel_tasks(todo.size(), T, [&](size_t task, unsigned) {
      const auto& key = keys[todo[task]];
      std::vector<G2> q(key.size());
      std::vector<G1> p(key.size());
      std::vector<uint8_t> in_g2(key.size());
      typename AffineMillerLoop<Cfg>::Scratch scratch;
      for (size_t j = 0; j < key.size(); j++) {
        q[j] = bt.B[key[j]];
        p[j] = bt.neg_rA[key[j]];
      }
      prod[todo[task]] = AffineMillerLoop<Cfg>::multi(p.data(), q.data(), key.size(), scratch, in_g2.data());
      for (size_t j = 0; j < key.size(); j++) {  // each proof is in one chunk of a check: no races
        const size_t i = key[j];
        if (!bt.g2_pending[i]) continue;
        if (!in_g2[j] && !Pr::g2_in_subgroup(q[j])) {  // not shown by the loop: the plain check decides
          bt.status[i] = PROOF_NOT_IN_SUBGROUP;
          outside_g2 = true;
        }
        bt.g2_pending[i] = 0;
      }
    });
    {
      std::lock_guard<std::mutex> g(*bt.lock);
      for (size_t c : todo) bt.chunks.emplace(std::move(keys[c]), prod[c]);
    }
    if (outside_g2) return false;
    F12 f = ML::multi(fixedP, fixedQ, 3);
    for (auto& x : prod) f *= x;
    return FinalExp<Cfg>::apply(f).is_one();
  }
};

}  // namespace pairing
}  // namespace snarkd
