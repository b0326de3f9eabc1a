// Groth16 prover pieces: sparse A*w / B*w from zkey section 4, and H values.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>
#include "msm/simd_coords.hpp"
#include "parallel.hpp"

namespace snarkd {

// The checks snarkd.formats.zkey makes on section 4's entries, same messages
// ("" if all are fine; *index: the first bad entry). The count and size are
// checked already. T threads find the first bad entry (serial, this scan was 2-4 ms of a
// 2^16-2^17 proof's spmv phase with the other core idle, bench/cpu-notes.md round 17); its message is
// then written as before.
template <class Fr>
std::string coefs_error(const uint8_t* sec, size_t domain, size_t n_vars, long* index, unsigned T = 1) {
  constexpr size_t ES = 12 + 32;
  uint32_t count;
  std::memcpy(&count, sec, 4);
  const uint8_t* ent = sec + 4;
  auto header = [&](size_t i, uint32_t* hd) { std::memcpy(hd, ent + i * ES, 12); };
  const size_t i = first_index(count, T, [&](size_t k) {
    uint32_t hd[3];
    header(k, hd);
    return hd[0] > 1 || hd[1] >= domain || hd[2] >= n_vars || !Fr::lt_mod((const uint64_t*)(ent + k * ES + 12));
  });
  *index = -1;
  if (i == count) return "";
  uint32_t hd[3];
  header(i, hd);
  *index = (long)i;
  if (hd[0] > 1) return "entry " + std::to_string(i) + ": matrix " + std::to_string(hd[0]) + " is not 0 (A) or 1 (B)";
  if (hd[1] >= domain)
    return "entry " + std::to_string(i) + ": constraint " + std::to_string(hd[1]) + " is outside the domain (domainSize = " +
           std::to_string(domain) + ")";
  if (hd[2] >= n_vars)
    return "entry " + std::to_string(i) + ": signal " + std::to_string(hd[2]) + " is out of range (nVars = " +
           std::to_string(n_vars) + ")";
  return "entry " + std::to_string(i) + ": value is not canonical (not below r)";
}

// Coefficients +-2^j (j < 8) as zkeys store them (coef R^2 mod r). circom's matrices are
// mostly these: the SHA-256 key's 293k entries hold 1, -1 (77%), 2, -4 and -2 only, the
// chain keys' only +-1. Such a term is w R doubled j times and added or subtracted, ~2 ns
// against ~12 ns for a product.
template <class Fr>
struct SmallCoefs {
  Fr v[16];  // v[2j] = 2^j R^2, v[2j + 1] = -2^j R^2
  SmallCoefs() {
    Fr x = Fr::from_limbs(Fr::Params::R2);
    for (int j = 0; j < 8; j++, x = x.dbl()) {
      v[2 * j] = x;
      v[2 * j + 1] = x.neg();
    }
  }
  int find(const Fr& c) const {  // the class k, or -1 for a general coefficient
    for (int k = 0; k < 16; k++)
      if (c.v[0] == v[k].v[0] && c == v[k]) return k;
    return -1;
  }
};

#if defined(SNARKD_SIMD52)
// Eight canonical plain values -> w R (canonical, the scalar product's values) on the
// 8-lane IFMA product: the witness conversion is one product per value.
template <class Fr>
SNARKD_SIMD52_TARGET void to_mont_eight(const Fr* w, Fr* out) {
  using VC = simd52::VecCoord<Fr>;
  VC::extract(VC::mul(VC::insert(w), simd52::broadcast<typename VC::Pr>(Fr::Params::R2)), out);
}
#endif

// spmv_ab's check of entry i (header h): "" if it is fine.
inline std::string spmv_entry_error(const uint32_t h[3], size_t i, size_t domain, size_t nwit) {
  if (h[0] > 1)
    return "coefs_section: entry " + std::to_string(i) + ": matrix " + std::to_string(h[0]) + " is not 0 (A) or 1 (B)";
  if (h[1] >= domain)
    return "coefs_section: entry " + std::to_string(i) + ": constraint " + std::to_string(h[1]) +
           " >= domain_size " + std::to_string(domain);
  if (h[2] >= nwit)
    return "coefs_section: entry " + std::to_string(i) + ": signal " + std::to_string(h[2]) +
           " >= witness length " + std::to_string(nwit);
  return "";
}

// Returns "" on success or an error message. a, b: domain Fr each, written in full (each
// thread zeroes the rows it owns first: no separate zeroing pass over fresh pages).
// Entry layout: u32 matrix, u32 constraint, u32 signal, 32-byte value (= coef*R^2 mod r).
// Three passes: the checks (the first bad entry in file order is reported) in index
// chunks, which also find whether the constraints never decrease (snarkjs writes them so);
// w R for every witness value; the sums. Sorted entries are split into index ranges at
// constraint boundaries, one per thread, each entry read once; otherwise each thread
// owns a row range and scans all entries. Sums of canonical values: the order of the
// terms does not change the result.
template <class Fr>
std::string spmv_ab(const uint8_t* sec, size_t sec_len, const uint8_t* wit, size_t nwit,
                    size_t domain, Fr* a, Fr* b, unsigned T) {
  constexpr size_t ES = 12 + 32;
  if (sec_len < 4) return "coefs_section: too short for the entry count (" + std::to_string(sec_len) + " bytes)";
  uint32_t count;
  std::memcpy(&count, sec, 4);
  if ((sec_len - 4) / ES < count)
    return "coefs_section: " + std::to_string(count) + " entries need " + std::to_string(4 + (size_t)count * ES) +
           " bytes but the buffer has " + std::to_string(sec_len);
  const uint8_t* ent = sec + 4;
  auto head = [ent](size_t i, uint32_t h[3]) { std::memcpy(h, ent + i * ES, 12); };
  const unsigned TT = (unsigned)std::max<size_t>(1, std::min<size_t>(T, count / 4096));
  std::vector<size_t> bad(TT, SIZE_MAX);
  std::vector<char> sorted(TT, 1);
  run_threads(TT, [&](unsigned t) {
    size_t s = (size_t)count * t / TT, e = (size_t)count * (t + 1) / TT;
    uint32_t h[3], prev = 0;
    if (s > 0) head(s - 1, h), prev = h[1];  // the order across the chunk's start too
    for (size_t i = s; i < e; i++) {
      head(i, h);
      if (h[0] > 1 || h[1] >= domain || h[2] >= nwit) { bad[t] = i; break; }
      if (h[1] < prev) sorted[t] = 0;
      prev = h[1];
    }
  });
  for (size_t i : bad)
    if (i != SIZE_MAX) {
      uint32_t h[3];
      head(i, h);
      return spmv_entry_error(h, i, domain, nwit);
    }
  // not value-initialized: each thread touches its part first. From the heap, not big_buffer.hpp: mapped
  // with huge pages it measured a higher peak RSS (its memory, freed here, is the heap's to hand out again;
  // bench/cpu-notes.md round 32)
  std::unique_ptr<Fr[]> wm(new Fr[nwit]);
  const Fr r2 = Fr::from_limbs(Fr::Params::R2);
  parallel_for(nwit, T, [&](size_t s, size_t e, unsigned) {
    size_t i = s;
#if defined(SNARKD_SIMD52)
    for (; g_use_simd52 && i + 8 <= e; i += 8) {
      Fr w[8];
      for (int k = 0; k < 8; k++) w[k] = Fr::load(wit + 32 * (i + k)), Fr::reduce_raw(w[k].v);
      to_mont_eight(w, &wm[i]);
    }
#endif
    for (; i < e; i++) {
      Fr w = Fr::load(wit + 32 * i);
      Fr::reduce_raw(w.v);
      wm[i] = w * r2;  // w R
    }
  }, 4096);
  auto zero_rows = [a, b](size_t s, size_t e) {
    std::fill(a + s, a + e, Fr::zero());
    std::fill(b + s, b + e, Fr::zero());
  };
  const SmallCoefs<Fr> small;
  auto add = [&](size_t i, const uint32_t h[3]) {
    const uint8_t* p = ent + i * ES;
    Fr v = Fr::load(p + 12);
    Fr::reduce_raw(v.v);
    Fr& d = (h[0] == 0 ? a : b)[h[1]];
    int k = small.find(v);
    if (k >= 0) {
      Fr x = wm[h[2]];
      for (int j = k >> 1; j > 0; j--) x = x.dbl();
      d = k & 1 ? d - x : d + x;
    } else {
      Fr w = Fr::load(wit + (size_t)h[2] * 32);
      Fr::reduce_raw(w.v);
      d = d + v * w;  // coef R^2 w / R: the Montgomery form of coef w
    }
  };
  if (std::all_of(sorted.begin(), sorted.end(), [](char c) { return c; })) {
    std::vector<size_t> cut(TT + 1, count);
    cut[0] = 0;
    for (unsigned t = 1; t < TT; t++) {  // move each cut to the next constraint boundary
      size_t i = std::max<size_t>((size_t)count * t / TT, cut[t - 1]);
      uint32_t h[3], g[3];
      while (i > 0 && i < count && (head(i - 1, h), head(i, g), h[1] == g[1])) i++;
      cut[t] = i;
    }
    std::vector<size_t> row(TT + 1, domain);  // thread t owns the rows [row[t], row[t + 1])
    row[0] = 0;
    for (unsigned t = 1; t < TT; t++) {
      uint32_t h[3];
      if (cut[t] < count) head(cut[t], h), row[t] = h[1];
    }
    run_threads(TT, [&](unsigned t) {
      zero_rows(row[t], row[t + 1]);
      uint32_t h[3];
      for (size_t i = cut[t]; i < cut[t + 1]; i++) head(i, h), add(i, h);
    });
    return "";
  }
  parallel_for(domain, T, [&](size_t rb, size_t re, unsigned) {  // each thread its rows
    zero_rows(rb, re);
    uint32_t h[3];
    for (size_t i = 0; i < count; i++) {
      head(i, h);
      if (h[1] >= rb && h[1] < re) add(i, h);
    }
  }, 1024);
  return "";
}

}  // namespace snarkd
