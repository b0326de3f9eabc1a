// What a proof's steps check on the bytes they are given, and how a one-shot proof gives a mapped
// section's pages back: the native halves of the steps prover/groth16.py sequences (each bulk section
// checked just before its first use, its pages released after its last, when the key is a
// read-only file mapping read once).
#pragma once
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#define SNARKD_HAVE_MADVISE 1
#endif

#include <cstddef>
#include <cstdint>
#include <vector>

#include "parallel.hpp"

namespace snarkd {

// Index of the first of `count` values of F::N words each (plain, little-endian) that is not below
// F's modulus, or -1; *coord (optional): which of the `coords` field elements of that entry
// (points: x, y or x.c0, x.c1, y.c0, y.c1).
template <class F>
long first_noncanonical(const uint8_t* p, size_t count, size_t coords, unsigned T, long* coord = nullptr) {
  std::vector<long> first(T, -1), which(T, 0);
  parallel_for(count, T, [&](size_t b, size_t e, unsigned t) {
    for (size_t i = b; i < e; i++)
      for (size_t k = 0; k < coords; k++)
        if (!F::lt_mod((const u64*)(p + (i * coords + k) * sizeof(F)))) {
          first[t] = (long)i;
          which[t] = (long)k;
          return;
        }
  }, 4096);
  for (unsigned t = 0; t < T; t++)
    if (first[t] >= 0) {
      if (coord) *coord = which[t];
      return first[t];
    }
  return -1;
}

// Releases the whole pages of [p, p + len) of a read-only file mapping: they are read again from the
// page cache if touched, so a key read once is never resident all at once.
inline void drop_pages(const void* p, size_t len) {
#if defined(SNARKD_HAVE_MADVISE)
  static const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  uintptr_t b = ((uintptr_t)p + page - 1) & ~(uintptr_t)(page - 1);
  uintptr_t e = ((uintptr_t)p + len) & ~(uintptr_t)(page - 1);
  if (e > b) madvise((void*)b, e - b, MADV_DONTNEED);
#else
  (void)p;
  (void)len;
#endif
}

}  // namespace snarkd
