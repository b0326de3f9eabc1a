// A.w and B.w from a per-key precomputed layout of zkey section 4 (the
// "prepared" sidecar): the entries of each matrix sorted by row (CSR), with the
// coefficients +1 and -1 (three in four entries of a circom key) marked so they
// cost an addition instead of a product, and the others stored as coef * R.
//
// Per matrix: rows[domain + 1] (entry offsets), vrows[domain + 1] (offsets
// into the values of the general entries), ent[nnz] (signal | class << 30),
// val[general entries] (coef * R, Montgomery). The witness is converted to
// Montgomery once, then each row is a short sum.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "parallel.hpp"

namespace snarkd {

constexpr uint32_t CSR_SIGNAL = (1u << 30) - 1;
constexpr uint32_t CSR_ONE = 1u << 30, CSR_MINUS_ONE = 2u << 30;  // class bits; 0: general

template <class Fr>
struct CsrMatrix {
  std::vector<uint32_t> rows, vrows, ent;
  std::vector<Fr> val;
};

// Builds both matrices from section 4 (entries already checked: matrix <= 1,
// constraint < domain, signal < n_vars < 2^30, value < r).
template <class Fr>
void build_csr(const uint8_t* sec, size_t domain, CsrMatrix<Fr>* m /* [2] */) {
  constexpr size_t ES = 12 + 32;
  uint32_t count;
  std::memcpy(&count, sec, 4);
  const uint8_t* ent = sec + 4;
  // coef * R^2 of +1 and -1 as zkeys store them
  const Fr r2 = Fr::from_limbs(Fr::Params::R2), mr2 = r2.neg();
  for (int k = 0; k < 2; k++) {
    m[k].rows.assign(domain + 1, 0);
    m[k].vrows.assign(domain + 1, 0);
  }
  for (size_t i = 0; i < count; i++) {
    uint32_t h[3];
    std::memcpy(h, ent + i * ES, 12);
    Fr v = Fr::load(ent + i * ES + 12);
    m[h[0]].rows[h[1] + 1]++;
    if (!(v == r2) && !(v == mr2)) m[h[0]].vrows[h[1] + 1]++;
  }
  for (int k = 0; k < 2; k++) {
    for (size_t r = 0; r < domain; r++) {
      m[k].rows[r + 1] += m[k].rows[r];
      m[k].vrows[r + 1] += m[k].vrows[r];
    }
    m[k].ent.resize(m[k].rows[domain]);
    m[k].val.resize(m[k].vrows[domain]);
  }
  std::vector<uint32_t> fill[2] = {std::vector<uint32_t>(m[0].rows.begin(), m[0].rows.end() - 1),
                                   std::vector<uint32_t>(m[1].rows.begin(), m[1].rows.end() - 1)};
  std::vector<uint32_t> vfill[2] = {std::vector<uint32_t>(m[0].vrows.begin(), m[0].vrows.end() - 1),
                                    std::vector<uint32_t>(m[1].vrows.begin(), m[1].vrows.end() - 1)};
  Fr one_plain = Fr::zero();
  one_plain.v[0] = 1;
  for (size_t i = 0; i < count; i++) {  // file order within a row: the same sums, the same order
    uint32_t h[3];
    std::memcpy(h, ent + i * ES, 12);
    Fr v = Fr::load(ent + i * ES + 12);
    uint32_t cls = v == r2 ? CSR_ONE : v == mr2 ? CSR_MINUS_ONE : 0;
    m[h[0]].ent[fill[h[0]][h[1]]++] = h[2] | cls;
    if (!cls) m[h[0]].val[vfill[h[0]][h[1]]++] = v * one_plain;  // coef R^2 / R = coef R
  }
}

// Consistency of CSR arrays read from a file (a checksum catches corruption, this
// keeps a damaged or foreign file from indexing out of bounds): offsets
// non-decreasing and in range, signals < n_vars, general entries counted right.
inline std::string csr_error(const uint32_t* rows, const uint32_t* vrows, const uint32_t* ent, size_t n_ent,
                             size_t n_val, size_t domain, size_t n_vars) {
  if (rows[0] != 0 || vrows[0] != 0) return "row offsets do not start at 0";
  if (rows[domain] != n_ent || vrows[domain] != n_val) return "row offsets do not end at the entry counts";
  for (size_t r = 0; r < domain; r++) {
    if (rows[r + 1] < rows[r] || vrows[r + 1] < vrows[r]) return "row offsets decrease at row " + std::to_string(r);
    uint32_t general = 0;
    for (uint32_t q = rows[r]; q < rows[r + 1]; q++) {
      uint32_t e = ent[q];
      if ((e & CSR_SIGNAL) >= n_vars) return "entry " + std::to_string(q) + ": signal out of range";
      if ((e & ~CSR_SIGNAL) == (3u << 30)) return "entry " + std::to_string(q) + ": unknown coefficient class";
      general += (e & ~CSR_SIGNAL) == 0;
    }
    if (vrows[r + 1] - vrows[r] != general) return "row " + std::to_string(r) + ": value offsets do not match its entries";
  }
  return "";
}

// a = A.w, b = B.w (Montgomery) from the CSR arrays; w: plain witness values.
template <class Fr>
void spmv_csr(const uint32_t* const rows[2], const uint32_t* const vrows[2], const uint32_t* const ent[2],
              const Fr* const val[2], const uint8_t* wit, size_t nwit, size_t domain, Fr* a, Fr* b, unsigned T) {
  std::vector<Fr> wm(nwit);
  const Fr r2 = Fr::from_limbs(Fr::Params::R2);
  parallel_for(nwit, T, [&](size_t s, size_t e, unsigned) {
    for (size_t i = s; i < e; i++) wm[i] = Fr::load(wit + 32 * i) * r2;  // w R
  }, 4096);
  Fr* out[2] = {a, b};
  parallel_for(domain, T, [&](size_t rb, size_t re, unsigned) {
    for (int k = 0; k < 2; k++) {
      const uint32_t* rw = rows[k];
      const uint32_t* en = ent[k];
      const Fr* vl = val[k] + vrows[k][rb];
      for (size_t r = rb; r < re; r++) {
        Fr acc = Fr::zero();
        for (uint32_t q = rw[r]; q < rw[r + 1]; q++) {
          uint32_t e = en[q];
          const Fr& x = wm[e & CSR_SIGNAL];
          switch (e & ~CSR_SIGNAL) {
            case CSR_ONE: acc = acc + x; break;
            case CSR_MINUS_ONE: acc = acc - x; break;
            default: acc = acc + *vl++ * x; break;
          }
        }
        out[k][r] = acc;
      }
    }
  }, 1024);
}

}  // namespace snarkd
