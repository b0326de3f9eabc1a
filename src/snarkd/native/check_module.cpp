// snarkd.native._check: the bulk checks behind `snarkd check`, submodules bn254
// and bls12_381.
//
//   g1_first_invalid / g2_first_invalid: the first point of an array (zkey
//     layout: affine, little-endian Montgomery, all zeros = infinity) that is off
//     its curve, has a coordinate >= q, or lies outside the order-r subgroup.
//   r1cs_first_unsatisfied: the first constraint (A·w)(B·w) != C·w of an R1CS in
//     CSR form (snarkd.formats.r1cs) for a witness (plain, as in .wtns).
//   r1cs_lc_offsets: the walk over an .r1cs section's term counts, for the reader.
//
// Inputs are never trusted: lengths, row pointers, wire indices and field
// elements are checked here too (a ValueError names the argument), so a bad
// array cannot make the core read out of bounds. Work is split over threads;
// each thread stops at its first failure and the smallest index wins.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <memory>
#include <cstring>
#include <string>
#include <vector>

#include "pairing/groth16_verify.hpp"
#include "parallel.hpp"
#include "py_buffer.hpp"

namespace py = pybind11;
using namespace snarkd;
using namespace snarkd::pairing;

namespace {

enum PointStatus : int { POINT_OK = 0, POINT_NOT_ON_CURVE = 1, POINT_NOT_IN_SUBGROUP = 2 };

// Lower `best` to i (lock-free minimum).
inline void lower_to(std::atomic<long>& best, long i) {
  long cur = best.load();
  while (i < cur && !best.compare_exchange_weak(cur, i)) {
  }
}

// First index in [0, n) for which bad(i) != 0, with that status; (-1, 0) if none.
template <class Bad>
py::tuple first_failing(size_t n, unsigned threads, size_t min_chunk, Bad&& bad) {
  const long none = LONG_MAX;
  std::atomic<long> best{none};
  {
    py::gil_scoped_release rel;
    parallel_for(n, threads, [&](size_t s, size_t e, unsigned) {
      for (size_t i = s; i < e; i++) {
        if ((long)i >= best.load(std::memory_order_relaxed)) return;  // a lower failure is known
        if (bad(i)) { lower_to(best, (long)i); return; }
      }
    }, min_chunk);
  }
  long i = best.load();
  if (i == none) return py::make_tuple(-1, (int)POINT_OK);
  return py::make_tuple(i, bad(i));
}

template <class Cfg>
void define(py::module_& m) {
  using Pr = Pairing<Cfg>;
  using G1 = typename Cfg::G1;
  using G2 = typename Cfg::G2;
  using Fr = typename Cfg::Fr;

  m.def("g1_first_invalid", [](py::object points, long threads) {
    Buf P(points, "points");
    size_t n = P.count(sizeof(G1), "G1 points");
    const uint8_t* d = P.data();
    return first_failing(n, resolve_threads(threads), 256, [d](size_t i) -> int {
      G1 p = G1::load(d + i * sizeof(G1));
      if (!p.on_curve()) return POINT_NOT_ON_CURVE;
      return Pr::g1_in_subgroup(p) ? POINT_OK : POINT_NOT_IN_SUBGROUP;
    });
  }, py::arg("points"), py::arg("threads") = 0,
     "(index, status) of the first G1 point off the curve (status 1) or outside the subgroup (2); (-1, 0) if none");

  m.def("g2_first_invalid", [](py::object points, long threads) {
    Buf P(points, "points");
    size_t n = P.count(sizeof(G2), "G2 points");
    const uint8_t* d = P.data();
    return first_failing(n, resolve_threads(threads), 64, [d](size_t i) -> int {
      G2 q = G2::load(d + i * sizeof(G2));
      if (!q.on_curve()) return POINT_NOT_ON_CURVE;
      return Pr::g2_in_subgroup(q) ? POINT_OK : POINT_NOT_IN_SUBGROUP;
    });
  }, py::arg("points"), py::arg("threads") = 0, "as g1_first_invalid, for G2");

  m.def("r1cs_first_unsatisfied", [](py::tuple a, py::tuple b, py::tuple c, py::object witness, long threads) {
    // One matrix: (row_ptr int64[m+1], wires uint32[nnz], coefs uint64[nnz, 4] plain).
    struct Mat {
      const int64_t* ptr;
      const uint32_t* wires;
      const uint8_t* coefs;
      size_t m, nnz;
    };
    Buf W(witness, "witness");
    size_t n_wit = W.count(sizeof(Fr), "32-byte plain field elements");
    std::vector<std::unique_ptr<Buf>> keep;
    const char* names[3] = {"A", "B", "C"};
    py::tuple mats_in[3] = {a, b, c};
    Mat mats[3];
    size_t m = 0;
    for (int k = 0; k < 3; k++) {
      std::string nm = names[k];
      if (mats_in[k].size() != 3) throw py::value_error(nm + ": expected (row_ptr, wires, coefs)");
      keep.emplace_back(new Buf(mats_in[k][0], "row_ptr"));
      keep.emplace_back(new Buf(mats_in[k][1], "wires"));
      keep.emplace_back(new Buf(mats_in[k][2], "coefs"));
      Buf &P = *keep[keep.size() - 3], &Wi = *keep[keep.size() - 2], &C = *keep[keep.size() - 1];
      size_t rows = P.count(8, "int64 row pointers");
      size_t nnz = Wi.count(4, "uint32 wire indices");
      if (C.count(sizeof(Fr), "32-byte coefficients") != nnz)
        throw py::value_error(nm + ": coefs and wires differ in length");
      if (rows == 0) throw py::value_error(nm + ": row_ptr is empty (needs m + 1 entries)");
      if (k == 0) m = rows - 1;
      else if (rows - 1 != m) throw py::value_error(nm + ": has a different number of constraints than A");
      const int64_t* ptr = (const int64_t*)P.data();
      if (((uintptr_t)ptr & 7) || ((uintptr_t)Wi.data() & 3)) throw py::value_error(nm + ": arrays must be aligned");
      if (ptr[0] != 0 || ptr[m] != (int64_t)nnz) throw py::value_error(nm + ": row_ptr must run from 0 to nnz");
      for (size_t i = 0; i < m; i++)
        if (ptr[i] > ptr[i + 1]) throw py::value_error(nm + ": row_ptr is not non-decreasing at row " + std::to_string(i));
      const uint32_t* wires = (const uint32_t*)Wi.data();
      for (size_t t = 0; t < nnz; t++) {
        if (wires[t] >= n_wit) throw py::value_error(nm + ": wire " + std::to_string(wires[t]) + " is not below the witness length");
        if (!Fr::load(C.data() + t * sizeof(Fr)).is_canonical())
          throw py::value_error(nm + ": coefficient " + std::to_string(t) + " is not below r");
      }
      mats[k] = {ptr, wires, C.data(), m, nnz};
    }
    // Witness in Montgomery form: mul(plain coef, mont w) = coef·w, plain.
    std::vector<Fr> w(n_wit);
    unsigned T = resolve_threads(threads);
    bool canonical = true;
    for (size_t i = 0; i < n_wit && canonical; i++) canonical = Fr::load(W.data() + i * sizeof(Fr)).is_canonical();
    if (!canonical) throw py::value_error("witness: a value is not below r");
    {
      py::gil_scoped_release rel;
      parallel_for(n_wit, T, [&](size_t s, size_t e, unsigned) {
        for (size_t i = s; i < e; i++) w[i] = Fr::load(W.data() + i * sizeof(Fr)).to_mont();
      }, 4096);
    }
    auto row = [&](const Mat& M, size_t i) {
      Fr acc = Fr::zero();
      for (int64_t t = M.ptr[i]; t < M.ptr[i + 1]; t++) acc += Fr::load(M.coefs + t * sizeof(Fr)) * w[M.wires[t]];
      return acc;  // plain
    };
    Fr plain_one = Fr::zero();
    plain_one.v[0] = 1;
    py::tuple r = first_failing(m, T, 1024, [&](size_t i) -> int {
      // a, b, c plain: a·b == c  <=>  mul(a, b) == mul(c, 1) (both carry one R^-1)
      return (row(mats[0], i) * row(mats[1], i)) == (row(mats[2], i) * plain_one) ? 0 : 1;
    });
    return r[0].cast<long>();
  }, py::arg("a"), py::arg("b"), py::arg("c"), py::arg("witness"), py::arg("threads") = 0,
     "Index of the first constraint with (A·w)(B·w) != C·w, or -1. Each matrix is (row_ptr, wires, coefs).");
}

// The chain of linear-combination counts of an .r1cs constraints section (each
// position depends on the count before it: inherently sequential, so done here
// rather than in a Python loop). Returns (starts int64[k], k, end): the word
// offset of each of the first k counts read, k = n_lcs unless the section ends
// first, and the word offset after the last combination read (end > n_words
// when the last combination's terms run past the section).
py::tuple r1cs_lc_offsets(py::object words, size_t n_lcs, size_t term_words) {
  Buf W(words, "words");
  size_t total = W.count(4, "u32 words");
  const uint8_t* w = W.data();
  // each combination needs at least its count word: never allocate past that
  size_t cap = std::min(n_lcs, total);
  py::array_t<int64_t> starts((py::ssize_t)cap);
  int64_t* st = starts.mutable_data();
  size_t i = 0;
  uint64_t pos = 0;
  {
    py::gil_scoped_release rel;
    for (; i < n_lcs; i++) {
      if (pos >= total) break;
      st[i] = (int64_t)pos;
      uint32_t count;
      std::memcpy(&count, w + 4 * pos, 4);
      pos += 1 + (uint64_t)count * term_words;
    }
  }
  return py::make_tuple(starts, (long)i, (unsigned long long)pos);
}

}  // namespace

PYBIND11_MODULE(_check, m) {
  m.def("r1cs_lc_offsets", &r1cs_lc_offsets, py::arg("words"), py::arg("n_lcs"), py::arg("term_words"),
        "(starts, k, end) of the linear-combination counts of an .r1cs constraints section (for snarkd.formats.r1cs)");
  m.doc() = "snarkd native checks: key points on curve and in subgroup, R1CS satisfaction (BN254, BLS12-381)";
  m.attr("POINT_OK") = (int)POINT_OK;
  m.attr("POINT_NOT_ON_CURVE") = (int)POINT_NOT_ON_CURVE;
  m.attr("POINT_NOT_IN_SUBGROUP") = (int)POINT_NOT_IN_SUBGROUP;
  auto bn = m.def_submodule("bn254", "BN254 (bn128)");
  define<BN254Pairing>(bn);
  auto bls = m.def_submodule("bls12_381", "BLS12-381");
  define<BLS12_381Pairing>(bls);
}
