// snarkd.native._scan: whole-array checks over field elements, one call per array, the GIL released.
// (The service path checks every witness of every job: as numpy passes these held and re-took the
// interpreter lock for each limb of each 1 MiB chunk, competing with every other thread.)
// Also the checksum formats/ takes of files (CRC-32C): a small module, so that
// `snarkd witness` does not load the core (4 MB of code) for it.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "crc32c.hpp"
#include "parallel.hpp"
#include "py_buffer.hpp"

namespace py = pybind11;
using namespace snarkd;

namespace {

// Index of the first of the n little-endian `limbs`-word integers in `values` that is >= m, or -1.
long long first_not_below(const uint64_t* values, size_t n, const uint64_t* m, size_t limbs) {
  for (size_t i = 0; i < n; ++i) {
    const uint64_t* v = values + i * limbs;
    size_t j = limbs;
    while (j > 0 && v[j - 1] == m[j - 1]) --j;
    if (j == 0 || v[j - 1] > m[j - 1]) return (long long)i;  // equal to m, or above it
  }
  return -1;
}

}  // namespace

PYBIND11_MODULE(_scan, mod) {
  mod.doc() = "Whole-array checks over field elements (GIL released)";
  mod.def(
      "first_not_below",
      [](py::object values, py::bytes modulus, size_t limbs, long threads) -> long long {
        Buf V(values, "values");
        std::string ms = modulus;
        if (limbs == 0 || limbs > 8 || ms.size() != 8 * limbs)
          throw py::value_error("modulus: expected " + std::to_string(8 * limbs) + " little-endian bytes for " +
                                std::to_string(limbs) + " limbs");
        uint64_t m[8];
        std::memcpy(m, ms.data(), ms.size());
        size_t n = V.count(8 * limbs, "whole field elements");
        const uint64_t* p = (const uint64_t*)V.data();
        py::gil_scoped_release nogil;
        // contiguous ranges on up to `threads` threads (0: all cores), 2^18 values at least each
        std::vector<long long> first(resolve_threads(threads), -1);
        parallel_for(n, (unsigned)first.size(), [&](size_t b, size_t e, unsigned t) {
          long long i = first_not_below(p + b * limbs, e - b, m, limbs);
          if (i >= 0) first[t] = (long long)b + i;
        }, size_t(1) << 18);
        for (long long i : first)
          if (i >= 0) return i;  // ranges are in thread order: the first hit is the lowest index
        return -1;
      },
      py::arg("values"), py::arg("modulus"), py::arg("limbs"), py::arg("threads") = 0,
      "Index of the first value (little-endian u64 limbs) that is >= modulus, or -1.");
  mod.def("crc32c", [](py::object data) {
    Buf B(data, "data");
    py::gil_scoped_release nogil;
    return crc32c(B.data(), B.len());
  }, py::arg("data"), "CRC-32C of a buffer (SSE4.2 crc32 where available)");
}
