// Groth16 prover pieces: sparse A*w / B*w from zkey section 4, and H values.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
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

// Returns "" on success or an error message. a, b: domain Fr each, zeroed.
// Entry layout: u32 matrix, u32 constraint, u32 signal, 32-byte value (= coef*R^2 mod r).
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
  // the first bad entry on T threads (see coefs_error), its message as before
  const size_t bad = first_index(count, T, [&](size_t k) {
    uint32_t h[3];
    std::memcpy(h, ent + k * ES, 12);
    return h[0] > 1 || h[1] >= domain || h[2] >= nwit;
  });
  if (bad < count) {
    const size_t i = bad;
    uint32_t h[3];
    std::memcpy(h, ent + i * ES, 12);
    if (h[0] > 1)
      return "coefs_section: entry " + std::to_string(i) + ": matrix " + std::to_string(h[0]) + " is not 0 (A) or 1 (B)";
    if (h[1] >= domain)
      return "coefs_section: entry " + std::to_string(i) + ": constraint " + std::to_string(h[1]) +
             " >= domain_size " + std::to_string(domain);
    if (h[2] >= nwit)
      return "coefs_section: entry " + std::to_string(i) + ": signal " + std::to_string(h[2]) +
             " >= witness length " + std::to_string(nwit);
  }
  // Partition by output row: each thread owns a row range and scans all entries.
  parallel_for(domain, T, [&](size_t rb, size_t re, unsigned) {
    for (size_t i = 0; i < count; i++) {
      const uint8_t* p = ent + i * ES;
      uint32_t h[3];
      std::memcpy(h, p, 12);
      if (h[1] < rb || h[1] >= re) continue;
      Fr v = Fr::load(p + 12);
      Fr::reduce_raw(v.v);
      Fr w = Fr::load(wit + (size_t)h[2] * 32);
      Fr::reduce_raw(w.v);
      Fr t = v * w;  // coef*R * w / R... = Montgomery form of coef*w
      Fr* dst = h[0] == 0 ? a : b;
      dst[h[1]] = dst[h[1]] + t;
    }
  }, 1024);
  return "";
}

}  // namespace snarkd
