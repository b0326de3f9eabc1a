// pybind11 bindings: snarkd.native._core.{bn254,bls12_381}.
// Inputs are any C-contiguous buffers (read through raw pointers, never copied);
// outputs are numpy uint64 arrays, except the proof's steps (prover/groth16.py sequences them): their
// domain vectors are FrVector (buffer protocol) and their sums bytes, so a one-shot proof never imports
// numpy. The GIL is released around all computation (Computing).
#include <pybind11/pybind11.h>
#include <pybind11/numpy.h>

#include <array>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "curves/groups.hpp"
#include "groth16/prover.hpp"
#include "msm/pippenger.hpp"
#include "msm/witness_msm.hpp"
#include "msm/witness_cache.hpp"
#include "ntt/ntt.hpp"
#include "crc32c.hpp"
#include "groth16/blind.hpp"
#include "groth16/csr.hpp"
#include "groth16/checks.hpp"
#include "groth16/qap.hpp"
#include "big_buffer.hpp"
#include "parallel.hpp"
#include "py_buffer.hpp"
#include "py_path_gate.hpp"

namespace py = pybind11;
using namespace snarkd;

namespace {

py::array_t<uint64_t> new_u64(size_t rows, size_t cols) {
  return py::array_t<uint64_t>(std::vector<py::ssize_t>{(py::ssize_t)rows, (py::ssize_t)cols});
}
py::array_t<uint64_t> new_u64_1d(size_t n) { return py::array_t<uint64_t>((py::ssize_t)n); }

// The path gate held across several calls (hold_paths): a proof made of several steps runs on one path.
struct PathHold {
  bool held = false;
};

// A domain vector of a proof's steps (a, b = A.w, B.w on the domain; h): n rows of 4 u64 words, owned
// here, read through the buffer protocol as (n, 4) uint64 (numpy.asarray views it without a copy).
// Making one needs no numpy: the one-shot `snarkd prove` never imports it.
// Its storage is a big_buffer.hpp block (a 2^17 vector is 4 MiB of fresh pages: huge pages where advised).
struct FrVector {
  BigArray<u64> w;
  size_t n = 0;
  FrVector(size_t rows, bool zero) : w(4 * rows, zero), n(rows) {}
  u64* data() const { return w.get(); }
  void release() {
    w.reset();
    n = 0;
  }
};

// A proof's witness MSMs run beside its other steps (parallel.hpp BesideTasks; msm_w_beside): the inputs'
// buffers held until the object goes (with the GIL), the sums written by the tasks.
struct BesideSums {
  std::vector<std::unique_ptr<Buf>> bufs;
  std::vector<std::string> out;
  // Each job's section check when asked for (canonical coordinates, as first_noncanonical_point): -1 (canonical or
  // not asked), else the first bad point and its coordinate; a section that fails is not summed
  std::vector<long> bad, bad_coord;
  // The path gate held for the whole batch (one path for all its tasks, whichever thread runs them): a switch
  // waits for the batch, and no task waits for a switch (the caller may hold the gate already: a proof's
  // hold_paths, and a task waiting for a switch that waits for it would never end)
  struct Gate {
    bool held = false;
    void release() {
      if (held) path_gate().release();
      held = false;
    }
    ~Gate() { release(); }
  } gate;
  std::unique_ptr<BesideTasks> tasks;  // declared last: destroyed (its helper joined) before the gate and buffers
  bool finished = false;
};

py::int_ limbs_to_int(const u64* l, size_t n) {
  py::int_ r(0);
  for (size_t i = n; i-- > 0;) {
    r = py::int_(py::reinterpret_steal<py::object>(PyNumber_Lshift(r.ptr(), py::int_(64).ptr())));
    r = py::int_(py::reinterpret_steal<py::object>(PyNumber_Or(r.ptr(), py::int_(l[i]).ptr())));
  }
  return r;
}

template <class F>
using BinOp = F (*)(const F&, const F&);

// Elementwise binary op over n elements; output (n, N).
template <class F, class Op>
py::array_t<uint64_t> elementwise2(py::object a, py::object b, long threads, Op op) {
  Buf A(a, "a"), B(b, "b");
  size_t n = A.count(sizeof(F), "field elements");
  size_t nb = B.count(sizeof(F), "field elements");
  if (nb != n) throw py::value_error("b: has " + std::to_string(nb) + " elements, a has " + std::to_string(n));
  auto out = new_u64(n, F::N);
  uint8_t* o = (uint8_t*)out.mutable_data();
  unsigned T = resolve_threads(threads);
  {
    Computing rel;
    parallel_for(n, T, [&](size_t s, size_t e, unsigned) {
      for (size_t i = s; i < e; i++) op(F::load(A.data() + i * sizeof(F)), F::load(B.data() + i * sizeof(F))).store(o + i * sizeof(F));
    }, 4096);
  }
  return out;
}

template <class F, class Op>
py::array_t<uint64_t> elementwise1(py::object a, long threads, Op op) {
  Buf A(a, "a");
  size_t n = A.count(sizeof(F), "field elements");
  auto out = new_u64(n, F::N);
  uint8_t* o = (uint8_t*)out.mutable_data();
  unsigned T = resolve_threads(threads);
  {
    Computing rel;
    parallel_for(n, T, [&](size_t s, size_t e, unsigned) {
      for (size_t i = s; i < e; i++) op(F::load(A.data() + i * sizeof(F))).store(o + i * sizeof(F));
    }, 1024);
  }
  return out;
}

template <class F>
void bind_field(py::module_& m, const char* pfx) {
  std::string p(pfx);
  auto T = py::arg("threads") = 0;
  m.def((p + "_mul").c_str(), [](py::object a, py::object b, long t) {
    return elementwise2<F>(a, b, t, [](const F& x, const F& y) { return x * y; });
  }, py::arg("a"), py::arg("b"), T, "Elementwise product (Montgomery in/out) -> uint64[n, L]");
  m.def((p + "_add").c_str(), [](py::object a, py::object b, long t) {
    return elementwise2<F>(a, b, t, [](const F& x, const F& y) { return x + y; });
  }, py::arg("a"), py::arg("b"), T);
  m.def((p + "_sub").c_str(), [](py::object a, py::object b, long t) {
    return elementwise2<F>(a, b, t, [](const F& x, const F& y) { return x - y; });
  }, py::arg("a"), py::arg("b"), T);
  m.def((p + "_sqr").c_str(), [](py::object a, long t) {
    return elementwise1<F>(a, t, [](const F& x) { F r; F::sqr_to(r, x); return r; });
  }, py::arg("a"), T, "Elementwise square (Montgomery in/out; the dedicated squaring where there is one)");
  m.def((p + "_mul_lazy").c_str(), [](py::object a, py::object b, long t) {
    if constexpr (F::Params::MOD[F::N - 1] < (1ULL << 62)) {
      return elementwise2<F>(a, b, t, [](const F& x, const F& y) { F r; F::mul_lazy_to(r, x, y); return r; });
    } else {
      throw py::value_error("no lazy products in this field (4p > R)");
      return py::array_t<uint64_t>();
    }
  }, py::arg("a"), py::arg("b"), T,
     "Testing: stored values below 2p in, a*b/R mod p in [0, 2p) out (the final subtraction left out)");
  m.def((p + "_sqr_lazy").c_str(), [](py::object a, long t) {
    if constexpr (F::Params::MOD[F::N - 1] < (1ULL << 62)) {
      return elementwise1<F>(a, t, [](const F& x) { F r; F::sqr_lazy_to(r, x); return r; });
    } else {
      throw py::value_error("no lazy products in this field (4p > R)");
      return py::array_t<uint64_t>();
    }
  }, py::arg("a"), T, "Testing: stored values below 2p in, a^2/R mod p in [0, 2p) out");
  m.def((p + "_inv").c_str(), [](py::object a, long t) {
    return elementwise1<F>(a, t, [](const F& x) { return x.inv(); });
  }, py::arg("a"), T, "Elementwise inverse (0 -> 0)");
  m.def((p + "_to_mont").c_str(), [](py::object a, long t) {
    return elementwise1<F>(a, t, [](F x) { F::reduce_raw(x.v); return x.to_mont(); });
  }, py::arg("a"), T, "Plain (any value < 2^(64L), reduced) -> Montgomery");
  m.def((p + "_from_mont").c_str(), [](py::object a, long t) {
    return elementwise1<F>(a, t, [](const F& x) { return x.from_mont(); });
  }, py::arg("a"), T);
}

template <class Cfg>
void bind_group(py::module_& m, const char* pfx) {
  using Aff = Affine<Cfg>;
  using Pt = XYZZ<Cfg>;
  constexpr size_t PS = sizeof(Aff);
  constexpr size_t PL = PS / 8;
  std::string p(pfx);
  auto T = py::arg("threads") = 0;

  m.def((p + "_add").c_str(), [](py::object a, py::object b) {
    Buf A(a, "p"), B(b, "q");
    size_t n = A.count(PS, "points"), nb = B.count(PS, "points");
    if (n != nb) throw py::value_error("q: point count differs from p");
    auto out = new_u64_1d(n * PL);
    uint8_t* o = (uint8_t*)out.mutable_data();
    Computing rel;
    for (size_t i = 0; i < n; i++) {
      Pt x = Pt::from_affine(Aff::load(A.data() + i * PS));
      x.add(Pt::from_affine(Aff::load(B.data() + i * PS)));
      x.to_affine().store(o + i * PS);
    }
    return out;
  }, py::arg("p"), py::arg("q"), "Affine add of n point pairs -> flat uint64[n*2L(*2)]");
  m.def((p + "_double").c_str(), [](py::object a) {
    Buf A(a, "p");
    size_t n = A.count(PS, "points");
    auto out = new_u64_1d(n * PL);
    uint8_t* o = (uint8_t*)out.mutable_data();
    Computing rel;
    for (size_t i = 0; i < n; i++) {
      Pt x = Pt::from_affine(Aff::load(A.data() + i * PS));
      x.dbl();
      x.to_affine().store(o + i * PS);
    }
    return out;
  }, py::arg("p"));
  m.def((p + "_neg").c_str(), [](py::object a) {
    Buf A(a, "p");
    size_t n = A.count(PS, "points");
    auto out = new_u64_1d(n * PL);
    uint8_t* o = (uint8_t*)out.mutable_data();
    Computing rel;
    for (size_t i = 0; i < n; i++) Aff::load(A.data() + i * PS).neg().store(o + i * PS);
    return out;
  }, py::arg("p"));
  m.def((p + "_mul").c_str(), [](py::object a, py::object s) {
    Buf A(a, "p"), S(s, "scalar");
    size_t n = S.count(32, "32-byte plain scalars");
    size_t np_ = A.count(PS, "points");
    if (np_ != n && np_ != 1)
      throw py::value_error("p: expected 1 or " + std::to_string(n) + " points, got " + std::to_string(np_));
    auto out = new_u64_1d(n * PL);
    uint8_t* o = (uint8_t*)out.mutable_data();
    Computing rel;
    for (size_t i = 0; i < n; i++) {
      u64 k[4];
      std::memcpy(k, S.data() + i * 32, 32);
      Aff pt = Aff::load(A.data() + (np_ == 1 ? 0 : i) * PS);
      scalar_mul(pt, k, 4).to_affine().store(o + i * PS);
    }
    return out;
  }, py::arg("p"), py::arg("scalar"), "p * k for plain 256-bit k (not reduced); p may be one point broadcast");
  m.def((p + "_first_not_on_curve").c_str(), [](py::object a) -> long {
    Buf A(a, "points");
    size_t n = A.count(PS, "points");
    Computing rel;
    for (size_t i = 0; i < n; i++)
      if (!Aff::load(A.data() + i * PS).on_curve()) return (long)i;
    return -1;
  }, py::arg("points"), "Index of the first point off the curve or with a coordinate >= q; -1 if none");
}

template <class Cfg, class Fr>
py::array_t<uint64_t> do_msm(py::object bases, py::object scalars, long threads) {
  using Aff = Affine<Cfg>;
  Buf Bs(bases, "bases"), Sc(scalars, "scalars");
  size_t n = Sc.count(32, "32-byte plain scalars");
  if (Bs.len() / sizeof(Aff) < n)
    throw py::value_error("bases: holds " + std::to_string(Bs.len() / sizeof(Aff)) + " points (" +
                          std::to_string(Bs.len()) + " bytes) but scalars has " + std::to_string(n));
  unsigned T = resolve_threads(threads);
  auto out = new_u64_1d(sizeof(Aff) / 8);
  uint8_t* o = (uint8_t*)out.mutable_data();
  {
    Computing rel;
    msm<Cfg, Fr>(Bs.data(), Sc.data(), n, T).store(o);
  }
  return out;
}

// A blinding scalar given as 32 little-endian bytes, below the group order r (groth16_blind).
template <class Fr>
std::array<u64, 4> scalar_below_r(py::bytes b, const char* name) {
  std::string v = b;
  if (v.size() != 32) throw py::value_error(std::string(name) + ": 32 bytes expected");
  std::array<u64, 4> x;
  std::memcpy(x.data(), v.data(), 32);
  if (!Fr::lt_mod(x.data())) throw py::value_error(std::string(name) + ": not below r");
  return x;
}

// msm_witness: [(bases, start), ...] on G1 and on G2 over one scalar vector.
template <class NS>
py::tuple do_msm_witness(py::object scalars, py::list g1, py::list g2, long threads) {
  using A1 = Affine<typename NS::G1Cfg>;
  using A2 = Affine<typename NS::G2Cfg>;
  Buf Sc(scalars, "scalars");
  size_t ns = Sc.count(32, "32-byte plain scalars");
  std::vector<std::unique_ptr<Buf>> keep;
  auto jobs = [&](py::list lst, size_t ps, const char* what) {
    std::vector<MsmJob> out;
    for (size_t k = 0; k < lst.size(); k++) {
      py::tuple t = lst[k].cast<py::tuple>();
      if (t.size() != 2) throw py::value_error(std::string(what) + ": each job is (bases, start)");
      keep.push_back(std::make_unique<Buf>(t[0], what));
      size_t start = t[1].cast<size_t>();
      size_t n = keep.back()->count(ps, "points");
      if (start > ns) throw py::value_error(std::string(what) + ": start " + std::to_string(start) + " is past the " + std::to_string(ns) + " scalars");
      if (n > ns - start)
        throw py::value_error(std::string(what) + ": " + std::to_string(n) + " points from scalar " + std::to_string(start) +
                              " but only " + std::to_string(ns) + " scalars");
      out.push_back({keep.back()->data(), start, n});
    }
    return out;
  };
  std::vector<MsmJob> j1 = jobs(g1, sizeof(A1), "g1 bases"), j2 = jobs(g2, sizeof(A2), "g2 bases");
  std::vector<A1> o1;
  std::vector<A2> o2;
  unsigned T = resolve_threads(threads);
  {
    Computing rel;
    WitnessMsm<typename NS::G1Cfg, typename NS::G2Cfg, typename NS::Fr>::run(Sc.data(), ns, j1, j2, T, o1, o2);
  }
  py::list r1, r2;
  for (auto& p : o1) { auto a = new_u64_1d(sizeof(A1) / 8); p.store(a.mutable_data()); r1.append(a); }
  for (auto& p : o2) { auto a = new_u64_1d(sizeof(A2) / 8); p.store(a.mutable_data()); r2.append(a); }
  return py::make_tuple(r1, r2);
}

// The prepared sidecar's CSR blocks (dict of buffers rows_a, vrows_a, ent_a, val_a and _b),
// checked for consistency; views stay alive in `keep`.
template <class Fr>
struct CsrViews {
  const uint32_t* rows[2];
  const uint32_t* vrows[2];
  const uint32_t* ent[2];
  const Fr* val[2];
};
template <class Fr>
CsrViews<Fr> csr_views(py::dict d, size_t domain, size_t n_vars, std::vector<std::unique_ptr<Buf>>& keep) {
  CsrViews<Fr> v{};
  const char* sfx[2] = {"_a", "_b"};
  for (int k = 0; k < 2; k++) {
    auto get = [&](const char* base, size_t unit) {
      std::string name = std::string(base) + sfx[k];
      if (!d.contains(name.c_str())) throw py::value_error("prepared: block " + name + " is missing");
      keep.push_back(std::make_unique<Buf>(d[name.c_str()], "prepared block"));
      if (keep.back()->len() % unit) throw py::value_error("prepared: block " + name + " has a partial element");
      return keep.back().get();
    };
    Buf* rows = get("rows", 4);
    Buf* vrows = get("vrows", 4);
    Buf* ent = get("ent", 4);
    Buf* val = get("val", sizeof(Fr));
    if (rows->len() != 4 * (domain + 1) || vrows->len() != 4 * (domain + 1))
      throw py::value_error(std::string("prepared: row offsets of matrix ") + (k ? "B" : "A") + " do not match the domain");
    if (((uintptr_t)rows->data() | (uintptr_t)vrows->data() | (uintptr_t)ent->data() | (uintptr_t)val->data()) & 7)
      throw py::value_error("prepared: blocks must be 8-byte aligned");
    v.rows[k] = (const uint32_t*)rows->data();
    v.vrows[k] = (const uint32_t*)vrows->data();
    v.ent[k] = (const uint32_t*)ent->data();
    v.val[k] = (const Fr*)val->data();
    std::string e = csr_error(v.rows[k], v.vrows[k], v.ent[k], ent->len() / 4, val->len() / sizeof(Fr), domain, n_vars);
    if (!e.empty()) throw py::value_error(std::string("prepared: matrix ") + (k ? "B" : "A") + ": " + e);
  }
  return v;
}

unsigned log2_exact(size_t n, const char* name, unsigned maxlog) {
  if (n == 0 || (n & (n - 1)))
    throw py::value_error(std::string(name) + ": length " + std::to_string(n) + " is not a power of two");
  unsigned l = 0;
  while (((size_t)1 << l) < n) l++;
  if (l > maxlog) throw py::value_error(std::string(name) + ": size 2^" + std::to_string(l) + " exceeds 2^" + std::to_string(maxlog));
  return l;
}

// Run f(Fr* data) on a writable buffer; copies through an aligned temporary
// only if the buffer is not 8-byte aligned.
template <class Fr, class Fn>
void with_fr_inplace(Buf& B, size_t n, Fn&& f) {
  if (((uintptr_t)B.wdata() & 7) == 0) {
    f((Fr*)B.wdata());
  } else {
    std::vector<Fr> tmp(n);
    std::memcpy(tmp.data(), B.wdata(), n * sizeof(Fr));
    f(tmp.data());
    std::memcpy(B.wdata(), tmp.data(), n * sizeof(Fr));
  }
}

// The endomorphism of Cfg (ec/glv.hpp) and its scalar split, for tests and checks
template <class Cfg, class Fr>
void bind_endo(py::module_& m, const char* lam_name, const char* split_name, const char* endo_name) {
  using GC = typename GlvOf<Cfg>::C;
  using A = Affine<Cfg>;
  m.attr(lam_name) = limbs_to_int(GC::LAMBDA, 4);
  m.def(split_name, [](py::object scalars) {
    Buf S(scalars, "scalars");
    size_t n = S.count(32, "32-byte plain scalars");
    auto k1 = new_u64(n, 4), k2 = new_u64(n, 4);
    auto n1 = py::array_t<uint8_t>((py::ssize_t)n), n2 = py::array_t<uint8_t>((py::ssize_t)n);
    u64 *o1 = (u64*)k1.mutable_data(), *o2 = (u64*)k2.mutable_data();
    uint8_t *s1 = n1.mutable_data(), *s2 = n2.mutable_data();
    {
      Computing rel;
      for (size_t i = 0; i < n; i++) {
        u64 k[4];
        std::memcpy(k, S.data() + i * 32, 32);
        Fr::reduce_raw(k);
        bool a, b;
        glv_split<GC>(k, o1 + 4 * i, a, o2 + 4 * i, b);
        s1[i] = a;
        s2[i] = b;
      }
    }
    return py::make_tuple(k1, n1, k2, n2);
  }, py::arg("scalars"), (std::string("k = k1 + ") + lam_name + " k2 (mod r) per 32-byte plain scalar: (|k1| (n, 4), k1 < 0, |k2|, k2 < 0)").c_str());
  m.def(endo_name, [](py::object points) {
    Buf P(points, "points");
    size_t n = P.count(sizeof(A), "points");
    auto out = new_u64_1d(n * sizeof(A) / 8);
    uint8_t* o = (uint8_t*)out.mutable_data();
    Computing rel;
    for (size_t i = 0; i < n; i++) glv_phi<Cfg>(A::load(P.data() + i * sizeof(A))).store(o + i * sizeof(A));
    return out;
  }, py::arg("points"), (std::string("the endomorphism per point (= ") + lam_name + " * P on the subgroup)").c_str());
}

// The quadratic extension's product (G2's coordinates), for tests against Python integers:
// a b, or a conj(b) with conj (the batch-affine flush's form); alias 0 writes a fresh value,
// 1 the product over a, 2 over b (Fp2::mul_to and mul_conj_to may alias either).
#if defined(SNARKD_SIMD52)
template <class F2>
SNARKD_SIMD52_TARGET void fq2_eight(int op, const F2* a, const F2* b, F2* out) {
  using VC = simd52::VecCoord<F2>;
  typename VC::T x = VC::insert(a), y = VC::insert(b), r;
  if (op == 0) r = VC::mul(x, y);
  else if (op == 1) r = VC::mul_conj(x, y);
  else if (op == 2) r = VC::sqr(x);
  else r = {VC::norm(x), VC::one().c1};
  VC::extract(r, out);
}
#endif

template <class F2>
void bind_fp2(py::module_& m) {
  m.def("fq2_mul", [](py::object a, py::object b, int alias, bool conj, long t) {
    if (alias < 0 || alias > 2) throw py::value_error("alias: 0, 1 or 2");
    return elementwise2<F2>(a, b, t, [alias, conj](F2 x, F2 y) {
      F2& o = alias == 1 ? x : y;
      F2 r;
      F2& out = alias == 0 ? r : o;
      if (conj) F2::mul_conj_to(out, x, y);
      else F2::mul_to(out, x, y);
      return out;
    });
  }, py::arg("a"), py::arg("b"), py::arg("alias") = 0, py::arg("conj") = false, py::arg("threads") = 0,
     "Testing: elementwise Fq2 product a b (or a conj(b)), Montgomery in/out, c0 then c1 per element -> uint64[n, 2L]");
#if defined(SNARKD_SIMD52)
  // The 8-lane (IFMA) forms of G2's coordinate products, on words as given (each component
  // below 2p, as the flush feeds them), results made canonical.
  m.def("fq2_lanes", [](py::object a, py::object b, const std::string& op) {
    constexpr size_t W = sizeof(F2) / 8;
    if (!detect_simd52()) throw py::value_error("fq2_lanes: this CPU has no AVX-512 IFMA");
    int k = op == "mul" ? 0 : op == "mul_conj" ? 1 : op == "sqr" ? 2 : op == "norm" ? 3 : -1;
    if (k < 0) throw py::value_error("op: mul, mul_conj, sqr or norm");
    Buf A(a, "a"), B(b, "b");
    size_t n = A.count(8 * W, "Fq2 elements");
    if (B.count(8 * W, "Fq2 elements") != n || n % 8) throw py::value_error("a, b: the same count, a multiple of 8");
    auto out = new_u64_1d(n * W);
    F2* o = (F2*)out.mutable_data();
    for (size_t i = 0; i < n; i += 8) fq2_eight<F2>(k, (const F2*)A.data() + i, (const F2*)B.data() + i, o + i);
    return out;
  }, py::arg("a"), py::arg("b"), py::arg("op"),
     "Testing: the 8-lane Fq2 op (mul, mul_conj, sqr; norm: c1 = 0) per element, words in (components < 2p, "
     "Montgomery), canonical words out -> uint64[n * 2L]");
#endif
}

template <class NS>
void bind_curve(py::module_& m) {
  using Fq = typename NS::Fq;
  using Fr = typename NS::Fr;
  using G1 = typename NS::G1Cfg;
  using G2 = typename NS::G2Cfg;
  using N = Ntt<typename NS::FrTr>;
  constexpr unsigned S = NS::FrTr::S;
  auto T = py::arg("threads") = 0;

  bind_field<Fr>(m, "fr");
  bind_field<Fq>(m, "fq");
  bind_fp2<typename G2::F>(m);
  bind_group<G1>(m, "g1");
  bind_group<G2>(m, "g2");

  m.attr("FQ_MODULUS") = limbs_to_int(Fq::modulus().v, Fq::N);
  m.attr("FR_MODULUS") = limbs_to_int(Fr::modulus().v, Fr::N);
  m.attr("FQ_LIMBS") = (int)Fq::N;
  m.attr("TWO_ADICITY") = (int)S;

  m.def("msm_g1", &do_msm<G1, Fr>, py::arg("bases"), py::arg("scalars"), T,
        "G1 MSM: bases affine Montgomery (>= n points), scalars n x 32-byte plain Fr (>= r reduced mod r)");
  m.def("msm_g2", &do_msm<G2, Fr>, py::arg("bases"), py::arg("scalars"), T);
  // the G1 endomorphism (ec/glv.hpp), for tests and `snarkd doctor`-style checks
  bind_endo<G1, Fr>(m, "GLV_LAMBDA", "glv_split", "g1_endo");
  // the G2 endomorphism (GLS: psi on BN254, psi^2 on BLS12-381)
  bind_endo<G2, Fr>(m, "GLS_LAMBDA", "gls_split", "g2_endo");
  m.def("msm_witness", &do_msm_witness<NS>, py::arg("scalars"), py::arg("g1"), py::arg("g2"), T,
        "Several MSMs over one scalar vector: g1, g2 lists of (bases, start); job k is "
        "sum_i scalars[start + i] * bases[i]. Scalars classified once (zeros skipped, ones summed, "
        "signed digits shared). Returns (list of G1 points, list of G2 points)");

  m.def("root_of_unity", [](unsigned log_n) {
    if (log_n > S) throw py::value_error("log_n: must be <= " + std::to_string(S));
    auto out = new_u64_1d(4);
    N::root_of_unity(log_n).store(out.mutable_data());
    return out;
  }, py::arg("log_n"));

  m.def("ntt", [](py::object values, bool inverse, long threads) {
    Buf B(values, "values", true);
    size_t n = B.count(32, "Fr elements");
    unsigned l = log2_exact(n, "values", S);
    unsigned TT = resolve_threads(threads);
    Computing rel;
    with_fr_inplace<Fr>(B, n, [&](Fr* a) { N::transform(a, l, inverse, TT); });
  }, py::arg("values"), py::arg("inverse") = false, T, "In-place NTT (natural order, Montgomery); inverse includes 1/n");

  m.def("coset_shift_evals", [](py::object values, long threads) {
    Buf B(values, "values", true);
    size_t n = B.count(32, "Fr elements");
    unsigned l = log2_exact(n, "values", S);
    unsigned TT = resolve_threads(threads);
    Computing rel;
    with_fr_inplace<Fr>(B, n, [&](Fr* a) { N::coset_shift(a, l, TT); });
  }, py::arg("values"), T, "In place: evaluations on <w_n> -> evaluations on w_2n * <w_n>");

  m.def("spmv_ab", [](py::object coefs, py::object witness, size_t domain, long threads) {
    Buf C(coefs, "coefs_section"), W(witness, "witness");
    size_t nw = W.count(32, "32-byte plain Fr witness values");
    FrVector a(domain, false), b(domain, false);  // spmv_ab writes every row
    std::string err;
    {
      Computing rel;
      err = spmv_ab<Fr>(C.data(), C.len(), W.data(), nw, domain, (Fr*)a.data(), (Fr*)b.data(), resolve_threads(threads));
    }
    if (!err.empty()) throw py::value_error(err);
    return py::make_tuple(py::cast(std::move(a)), py::cast(std::move(b)));
  }, py::arg("coefs_section"), py::arg("witness"), py::arg("domain_size"), T,
     "(a, b) = (A.w, B.w) on the domain, Montgomery: FrVector (domain, 4) uint64 each");

  m.def("h_from_coset", [](py::object a, py::object b, py::object c, long threads) {
    Buf A(a, "a"), B(b, "b"), Cc(c, "c");
    size_t n = A.count(32, "Fr elements");
    if (B.count(32, "Fr elements") != n) throw py::value_error("b: length differs from a");
    if (Cc.count(32, "Fr elements") != n) throw py::value_error("c: length differs from a");
    auto out = new_u64(n, 4);
    uint8_t* o = (uint8_t*)out.mutable_data();
    unsigned TT = resolve_threads(threads);
    {
      Computing rel;
      parallel_for(n, TT, [&](size_t s, size_t e, unsigned) {
        for (size_t i = s; i < e; i++)
          (Fr::load(A.data() + 32 * i) * Fr::load(B.data() + 32 * i) - Fr::load(Cc.data() + 32 * i))
              .from_mont().store(o + 32 * i);
      }, 4096);
    }
    return out;
  }, py::arg("a"), py::arg("b"), py::arg("c"), T, "(a*b - c) pointwise, Montgomery in, plain out");

  m.def("qap_h", [](py::object a, py::object b, long threads, bool release) {
    FrVector *va = nullptr, *vb = nullptr;
    if (release) {
      if (!py::isinstance<FrVector>(a) || !py::isinstance<FrVector>(b))
        throw py::value_error("release: a and b must be FrVector (spmv_ab's, spmv_prepared's)");
      va = a.cast<FrVector*>();
      vb = b.cast<FrVector*>();
    }
    Buf A(a, "a"), B(b, "b");
    size_t n = A.count(32, "Fr elements");
    if (B.count(32, "Fr elements") != n) throw py::value_error("b: length differs from a");
    unsigned l = log2_exact(n, "a", S);
    FrVector out(0, false);
    unsigned TT = resolve_threads(threads);
    double h_ms = 0;
    {
      Computing rel;  // the path settled (a switch waits for this call) before it is read
#if defined(SNARKD_SIMD52)
      // The IFMA path reads a whole (into its own arrays) before the first H is written: with release, H goes
      // over a's storage, already faulted in, where a fresh vector was 4 MiB of new pages at 2^17 (the scalar
      // path transforms in a itself: it needs its own H)
      const bool h_in_a = release && g_use_simd52 && l >= 4;
#else
      const bool h_in_a = false;
#endif
      if (h_in_a) {
        out = std::move(*va);
        va->n = 0;
      } else {
        out = FrVector(n, false);
      }
      struct Inputs { FrVector *a, *b; } in{va, vb};
      qap_h<typename NS::FrTr>((const Fr*)A.data(), (const Fr*)B.data(), (Fr*)out.data(), l, TT, &h_ms,
                               release ? +[](void* c) {  // read once: freed before the transforms
                                 auto* p = (Inputs*)c;
                                 p->a->release();
                                 p->b->release();
                               } : nullptr, &in);
#if defined(SNARKD_SIMD52)
      if (release) NttSimd<typename NS::FrTr>::clear_tables();  // one proof: their memory back before the MSMs
#endif
    }
    return py::make_tuple(py::cast(std::move(out)), h_ms);
  }, py::arg("a"), py::arg("b"), T, py::arg("release") = false,
     "(h, h_ms): H values of the QAP step, (a b - c) on the odd coset with c = a o b, plain out, an FrVector (a, b: "
     "A.w, B.w on the domain, Montgomery); h_ms: milliseconds of the last step (H from the coset values). release "
     "(a one-shot proof): a and b are FrVectors freed once read (on the IFMA path H is written over a's storage, "
     "which h then owns), and the transforms' tables are given back after");

  // The checks and sums of a proof's steps (prover/groth16.py sequences them; groth16/checks.hpp):
  // numpy-free, their results plain values and bytes.
  m.def("first_noncanonical_point", [](py::object points, bool g2, long threads) -> py::object {
    Buf P(points, "points");
    const size_t coords = g2 ? 4 : 2;
    size_t n = P.count(coords * sizeof(Fq), "affine points");
    unsigned TT = resolve_threads(threads);
    long bad, coord = 0;
    {
      Computing rel;
      bad = first_noncanonical<Fq>(P.data(), n, coords, TT, &coord);
    }
    if (bad < 0) return py::none();
    return py::make_tuple(bad, coord);
  }, py::arg("points"), py::arg("g2") = false, T,
     "None, or (point, coordinate) of the first coordinate not below q among affine points as the zkey stores them "
     "(coordinate: 0 x, 1 y; G2: 0 x.c0, 1 x.c1, 2 y.c0, 3 y.c1)");
  m.def("coefs_error", [](py::object coefs, size_t domain, size_t n_vars, long threads) -> py::object {
    Buf C(coefs, "coefs");
    uint32_t count = 0;
    if (C.len() >= 4) std::memcpy(&count, C.data(), 4);
    if (C.len() < 4 || (C.len() - 4) / 44 < count) throw py::value_error("coefs: shorter than its entry count");
    long bad = -1;
    std::string e;
    {
      Computing rel;
      e = coefs_error<Fr>(C.data(), domain, n_vars, &bad, resolve_threads(threads));
    }
    if (e.empty()) return py::none();
    return py::make_tuple(bad, e);
  }, py::arg("coefs"), py::arg("domain_size"), py::arg("n_vars"), T,
     "None, or (entry, message) of zkey section 4's first bad entry (its u32 count first), as snarkd.formats.zkey says it");
  m.def("msm_h", [](py::object bases, py::object h, long threads) {
    Buf Bs(bases, "bases"), H(h, "h");
    size_t n = H.count(32, "32-byte plain scalars");
    if (Bs.len() != n * sizeof(Affine<G1>))
      throw py::value_error("bases: " + std::to_string(Bs.len()) + " bytes, expected " + std::to_string(n) + " G1 points");
    unsigned TT = resolve_threads(threads);
    Affine<G1> sum;
    {
      Computing rel;
      sum = msm<G1, Fr>(Bs.data(), H.data(), n, TT);
    }
    return py::bytes((const char*)&sum, sizeof(sum));
  }, py::arg("bases"), py::arg("h"), T, "Σ h_j H_j (G1) as affine Montgomery bytes: a proof's H sum");
  m.def("msm_w", [](py::object bases, py::object witness, size_t start, bool g2, long threads) {
    Buf Bs(bases, "bases"), W(witness, "witness");
    size_t nw = W.count(32, "32-byte plain Fr witness values");
    size_t n = Bs.count(g2 ? sizeof(Affine<G2>) : sizeof(Affine<G1>), "points");
    if (start > nw || n > nw - start)
      throw py::value_error("bases: " + std::to_string(n) + " points from value " + std::to_string(start) + " but " +
                            std::to_string(nw) + " witness values");
    unsigned TT = resolve_threads(threads);
    std::vector<Affine<G1>> o1;
    std::vector<Affine<G2>> o2;
    {
      Computing rel;
      // a proof's four calls share the witness's classes and digits (msm/witness_cache.hpp)
      WitnessPrepCache<G1, G2, Fr>::run(W.data(), nw, MsmJob{Bs.data(), start, n}, g2, TT, o1, o2);
    }
    return g2 ? py::bytes((const char*)&o2[0], sizeof(o2[0])) : py::bytes((const char*)&o1[0], sizeof(o1[0]));
  }, py::arg("bases"), py::arg("witness"), py::arg("start") = 0, py::arg("g2") = false, T,
     "Σ_i w[start + i] bases_i (G1, or G2 with g2) as affine Montgomery bytes: a proof's witness sums (zeros skipped, "
     "ones summed directly)");
  m.def("msm_w_beside", [](py::list jobs, py::object witness, bool drop, py::object check) {
    auto s = std::make_unique<BesideSums>();
    s->bufs.push_back(std::make_unique<Buf>(witness, "witness"));
    const uint8_t* w = s->bufs[0]->data();
    const size_t nw = s->bufs[0]->count(32, "32-byte plain Fr witness values");
    struct Job {
      MsmJob job;
      bool g2;
    };
    std::vector<Job> js;
    std::vector<bool> checks;  // per job: its points' coordinates checked in its task, before its sum
    if (!check.is_none())
      for (py::handle c : check) checks.push_back(c.cast<bool>());
    if (!checks.empty() && checks.size() != py::len(jobs)) throw py::value_error("check: one flag per job");
    checks.resize(py::len(jobs), false);
    for (py::handle item : jobs) {
      py::tuple t = py::reinterpret_borrow<py::object>(item).cast<py::tuple>();
      if (t.size() != 3) throw py::value_error("jobs: (bases, start, g2) tuples");
      const size_t start = t[1].cast<size_t>();
      const bool g2 = t[2].cast<bool>();
      s->bufs.push_back(std::make_unique<Buf>(t[0], "bases"));
      size_t n = s->bufs.back()->count(g2 ? sizeof(Affine<G2>) : sizeof(Affine<G1>), "points");
      if (start > nw || n > nw - start)
        throw py::value_error("bases: " + std::to_string(n) + " points from value " + std::to_string(start) +
                              " but " + std::to_string(nw) + " witness values");
      js.push_back(Job{MsmJob{s->bufs.back()->data(), start, n}, g2});
    }
    s->out.resize(js.size());
    s->bad.assign(js.size(), -1);
    s->bad_coord.assign(js.size(), 0);
    std::string* out = s->out.data();
    long* bad = s->bad.data();
    long* bad_coord = s->bad_coord.data();
    {
      py::gil_scoped_release rel;  // a switch waiting for the gate may need the GIL to finish
      path_gate().acquire();
      s->gate.held = true;
    }
    s->tasks = std::make_unique<BesideTasks>(js.size(), [js, w, nw, out, drop, checks, bad, bad_coord](size_t i) {
      if (checks[i]) {
        // the section's check beside the caller's work too (one thread: the task's), before its points are read
        bad[i] = first_noncanonical<Fq>(js[i].job.bases, js[i].job.n, js[i].g2 ? 4 : 2, 1, &bad_coord[i]);
        if (bad[i] >= 0) return;  // not summed: the caller raises the check's error at finish
      }
      std::vector<Affine<G1>> o1;  // the batch holds the path gate (BesideSums::gate)
      std::vector<Affine<G2>> o2;
      // one thread each (their plans for T = 1, one witness cache entry for all four)
      WitnessPrepCache<G1, G2, Fr>::run(w, nw, js[i].job, js[i].g2, 1, o1, o2);
      out[i] = js[i].g2 ? std::string((const char*)&o2[0], sizeof(o2[0])) : std::string((const char*)&o1[0], sizeof(o1[0]));
      // a one-shot key's section given back as soon as its sum is done, as key.done would after msm_w: the four
      // sections are otherwise resident together beside the QAP step (+30 MiB peak RSS at SHA-256 2^17)
      if (drop) drop_pages(js[i].job.bases, js[i].job.n * (js[i].g2 ? sizeof(Affine<G2>) : sizeof(Affine<G1>)));
    });
    return s;
  }, py::arg("jobs"), py::arg("witness"), py::arg("drop") = false, py::arg("check") = py::none(),
     "msm_w's sums for jobs [(bases, start, g2), ...], started at once beside the caller's other work: a helper "
     "thread below the caller's priority takes them in order, one thread each; .finish() takes the rest on the "
     "caller and returns ([sum bytes, ...], [each task's wall ms], tasks the helper ran). drop: each job's bases' "
     "whole pages released once its sum is done (drop_pages: read-only file mappings, a one-shot key's). check: "
     "a flag per job: its points' coordinates checked in its task first (first_noncanonical_point's check; "
     ".checks() gives None or (point, coordinate) per job, and a job that fails is not summed)");
  m.def("_witness_prep_counts", [] {
    using WC = WitnessPrepCache<G1, G2, Fr>;
    return py::make_tuple(WC::hits().load(), WC::builds().load());
  }, "Testing aid: (calls of msm_w that reused the last witness's classes and digits, entries built)");

  m.def("groth16_blind", [](py::dict sums, py::dict header, py::bytes r, py::bytes s, py::bytes rs) {
    using GB = Groth16Blind<G1, G2>;
    using A1 = Affine<G1>;
    using A2 = Affine<G2>;
    std::vector<std::unique_ptr<Buf>> keep;
    auto view = [&](py::dict d, const char* name, size_t need) -> const uint8_t* {
      if (!d.contains(name)) throw py::value_error(std::string(name) + ": missing");
      keep.push_back(std::make_unique<Buf>(d[name], name));
      if (keep.back()->len() != need)
        throw py::value_error(std::string(name) + ": " + std::to_string(keep.back()->len()) + " bytes, expected " +
                              std::to_string(need));
      return keep.back()->data();
    };
    A1 a = A1::load(view(sums, "a", sizeof(A1))), b1 = A1::load(view(sums, "b1", sizeof(A1)));
    A1 c = A1::load(view(sums, "c", sizeof(A1))), h = A1::load(view(sums, "h", sizeof(A1)));
    A2 b2 = A2::load(view(sums, "b2", sizeof(A2)));
    typename GB::Header k;
    k.alpha1 = view(header, "alpha1", sizeof(A1));
    k.beta1 = view(header, "beta1", sizeof(A1));
    k.delta1 = view(header, "delta1", sizeof(A1));
    k.beta2 = view(header, "beta2", sizeof(A2));
    k.delta2 = view(header, "delta2", sizeof(A2));
    auto rr = scalar_below_r<Fr>(r, "r"), ss = scalar_below_r<Fr>(s, "s"), rss = scalar_below_r<Fr>(rs, "rs");
    // the GIL released (and the path gate held) as around every computation here: an engine's finalize workers
    // blind proofs while its device workers need the GIL to launch the next proofs' kernels
    auto pf = [&] {
      Computing rel;
      return GB::blind(a, b1, c, h, b2, k, rr.data(), ss.data(), rss.data());
    }();
    return py::make_tuple(py::bytes((const char*)&pf.pi_a, sizeof(pf.pi_a)), py::bytes((const char*)&pf.pi_b, sizeof(pf.pi_b)),
                          py::bytes((const char*)&pf.pi_c, sizeof(pf.pi_c)));
  }, py::arg("sums"), py::arg("header"), py::arg("r"), py::arg("s"), py::arg("rs"),
     "(pi_a, pi_b, pi_c) as affine Montgomery bytes: the blinding and assembly of a proof (groth16/blind.hpp, the "
     "one place a proof is blinded) from its MSM sums (dict a, b1, c, h, b2) and the key's header points (dict "
     "alpha1, beta1, delta1, beta2, delta2), as the zkey stores points. r, s, rs = r*s mod r: 32-byte LE.");

  m.def("prepare_csr", [](py::object coefs, size_t domain, size_t n_vars) {
    Buf C(coefs, "coefs");
    if (C.len() < 4) throw py::value_error("coefs: too short");
    uint32_t count;
    std::memcpy(&count, C.data(), 4);
    if ((C.len() - 4) / 44 != count || (C.len() - 4) % 44) throw py::value_error("coefs: size does not match the entry count");
    if (n_vars >= CSR_SIGNAL) throw py::value_error("n_vars: too many signals for the prepared layout");
    CsrMatrix<Fr> m[2];
    std::string err;
    long bad = -1;
    {
      Computing rel;
      err = coefs_error<Fr>(C.data(), domain, n_vars, &bad, hardware_threads());
      if (err.empty()) build_csr<Fr>(C.data(), domain, m);
    }
    py::dict out;
    if (!err.empty()) {
      out["error"] = py::make_tuple(bad, err);
      return out;
    }
    out["error"] = py::none();
    const char* sfx[2] = {"_a", "_b"};
    for (int q = 0; q < 2; q++) {
      auto bytes = [](const void* p, size_t n) { return py::bytes((const char*)p, n); };
      out[(std::string("rows") + sfx[q]).c_str()] = bytes(m[q].rows.data(), 4 * m[q].rows.size());
      out[(std::string("vrows") + sfx[q]).c_str()] = bytes(m[q].vrows.data(), 4 * m[q].vrows.size());
      out[(std::string("ent") + sfx[q]).c_str()] = bytes(m[q].ent.data(), 4 * m[q].ent.size());
      out[(std::string("val") + sfx[q]).c_str()] = bytes(m[q].val.data(), sizeof(Fr) * m[q].val.size());
    }
    return out;
  }, py::arg("coefs"), py::arg("domain_size"), py::arg("n_vars"),
     "The prepared sidecar's CSR blocks from zkey section 4 (checked like read_zkey): {'error': None or "
     "(entry, message), 'rows_a', 'vrows_a', 'ent_a', 'val_a', 'rows_b', ...: bytes}");

  m.def("spmv_prepared", [](py::dict prepared, py::object witness, size_t domain, long threads) {
    Buf W(witness, "witness");
    size_t nw = W.count(32, "32-byte plain Fr witness values");
    std::vector<std::unique_ptr<Buf>> keep;
    auto v = csr_views<Fr>(prepared, domain, nw, keep);
    FrVector a(domain, false), b(domain, false);
    {
      Computing rel;
      spmv_csr<Fr>(v.rows, v.vrows, v.ent, v.val, W.data(), nw, domain, (Fr*)a.data(), (Fr*)b.data(),
                   resolve_threads(threads));
    }
    return py::make_tuple(py::cast(std::move(a)), py::cast(std::move(b)));
  }, py::arg("prepared"), py::arg("witness"), py::arg("domain_size"), T,
     "(a, b) = (A.w, B.w) from the prepared sidecar's CSR blocks (witness values canonical): FrVector each");

  m.def("drop_pages", [](py::object buffer) {
    Buf B(buffer, "buffer");
    drop_pages(B.data(), B.len());
  }, py::arg("buffer"), "Release the whole pages of a read-only file mapping's buffer (read again from the page cache "
     "if touched): a one-shot proof's section after its last use");
  m.def("hold_paths", [] { return PathHold(); },
        "A context holding this module's path gate (path_gate.hpp) on this thread: a path switch asked for meanwhile "
        "waits for its end (from this thread it raises), so a proof made of several native calls runs on one path");
  m.def("fr_mul_pointwise", [](py::object a, py::object b, long t) {
    return elementwise2<Fr>(a, b, t, [](const Fr& x, const Fr& y) { return x * y; });
  }, py::arg("a"), py::arg("b"), T);
}

struct BN {
  using Fq = bn254::Fq; using Fr = bn254::Fr;
  using G1Cfg = bn254::G1Cfg; using G2Cfg = bn254::G2Cfg;
  struct FrTr {
    using Fr = bn254::Fr;
    static constexpr unsigned S = bn254::TWO_ADICITY;
    static Fr root_s() { return Fr::from_limbs(bn254::ROOT_MONT); }
    static Fr shift() { return Fr::from_limbs(bn254::SHIFT_MONT); }
  };
};
struct BLS {
  using Fq = bls12_381::Fq; using Fr = bls12_381::Fr;
  using G1Cfg = bls12_381::G1Cfg; using G2Cfg = bls12_381::G2Cfg;
  struct FrTr {
    using Fr = bls12_381::Fr;
    static constexpr unsigned S = bls12_381::TWO_ADICITY;
    static Fr root_s() { return Fr::from_limbs(bls12_381::ROOT_MONT); }
    static Fr shift() { return Fr::from_limbs(bls12_381::SHIFT_MONT); }
  };
};

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "snarkd native CPU core (Montgomery fields, G1/G2, Pippenger MSM, NTT, Groth16 pieces)";
  py::class_<PathHold>(m, "PathHold")
      .def("__enter__", [](PathHold& h) {
        if (!h.held) {
          py::gil_scoped_release rel;  // a switch waiting for the gate may need the GIL to finish
          path_gate().enter();
          h.held = true;
        }
      })
      .def("__exit__", [](PathHold& h, py::args) {
        if (h.held) {
          path_gate().leave();
          h.held = false;
        }
      });
  py::class_<FrVector>(m, "FrVector", py::buffer_protocol(),
                       "A domain vector of a proof's steps: (n, 4) uint64 rows through the buffer protocol")
      .def_buffer([](FrVector& v) {
        return py::buffer_info(v.data(), sizeof(u64), py::format_descriptor<uint64_t>::format(), 2,
                               {(py::ssize_t)v.n, (py::ssize_t)4}, {(py::ssize_t)32, (py::ssize_t)8});
      })
      .def("__len__", [](const FrVector& v) { return v.n; })
      .def_property_readonly("nbytes", [](const FrVector& v) { return 32 * v.n; });
  py::class_<BesideSums>(m, "BesideSums", "witness MSMs running beside the caller's work (msm_w_beside)")
      .def("finish", [](BesideSums& s) {
        if (!s.finished) {
          py::gil_scoped_release rel;  // the batch holds the path gate (BesideSums::gate) until its tasks end
          struct Release {
            BesideSums& s;
            ~Release() { s.gate.release(); }
          } release{s};
          s.tasks->finish();
          s.finished = true;
        }
        py::list sums, ms;
        for (const std::string& o : s.out) sums.append(py::bytes(o));
        for (long long v : s.tasks->task_ns()) ms.append(v * 1e-6);
        return py::make_tuple(sums, ms, s.tasks->helper_tasks());
      })
      .def("checks", [](const BesideSums& s) {
        // read after finish(): the tasks write them
        if (!s.finished) throw py::value_error("checks: before finish()");
        py::list r;
        for (size_t i = 0; i < s.bad.size(); i++)
          r.append(s.bad[i] < 0 ? py::object(py::none()) : py::object(py::make_tuple(s.bad[i], s.bad_coord[i])));
        return r;
      }, "each job's check: None (canonical, or not checked), or (point, coordinate) of its first bad coordinate");
  m.def("hardware_threads", &hardware_threads);
  m.def("cpu_has_adx", &detect_adx, "True if the CPU has BMI2+ADX (4-limb mul then uses the mulx/adcx/adox path)");
  // The path switches: each waits for this module's running computations and changes its
  // setting between them (path_gate.hpp), so a call never mixes paths.
  m.def("_set_adx", [](bool on) {
    return switch_paths([on] {
      bool prev = g_use_adx;
      g_use_adx = on && detect_adx();
      return prev;
    });
  }, py::arg("on"), "Testing aid: enable/disable the BMI2/ADX multiplication path (waits for running native calls); "
                    "returns the previous setting");
  m.def("uses_adx", [] { return g_use_adx; }, "True while the BMI2/ADX multiplication path is in use");
  // How this core was built (snarkd doctor): setup.py passes SNARKD_NATIVE_MARCH ("" = portable flags).
#ifndef SNARKD_BUILD_MARCH
#define SNARKD_BUILD_MARCH ""
#endif
  m.attr("build_march") = SNARKD_BUILD_MARCH;
  m.def("crc32c", [](py::object data) {
    Buf B(data, "data");
    uint32_t c;
    {
      Computing rel;
      c = crc32c(B.data(), B.len());
    }
    return c;
  }, py::arg("data"), "CRC-32C of a buffer (SSE4.2 crc32 where available)");
  m.def("cpu_has_simd52", &detect_simd52, "True if the CPU has AVX-512 IFMA (8-lane field arithmetic in the MSM and NTT)");
  auto set_ifma = [](bool on) {
    return switch_paths([on] {
      bool prev = g_use_simd52;
      g_use_simd52 = on && detect_simd52();
      return prev;
    });
  };
  m.def("set_ifma", set_ifma, py::arg("on"),
        "[cpu] ifma's switch (snarkd.native.apply_ifma): the AVX-512 IFMA kernels where the CPU has them (True) or "
        "never (False). Waits for running native calls, so none mixes paths; returns the previous setting");
  m.def("_set_simd52", set_ifma, py::arg("on"), "set_ifma's former name (bench scripts and tests); the same switch");
  m.def("uses_simd52", [] { return g_use_simd52; }, "True while the AVX-512 IFMA kernels are in use");
  // [cpu] huge_pages (big_buffer.hpp): advice only, so no path gate: a running computation's buffers are
  // correct advised or not, and the next ones it maps take the new setting.
  m.def("set_huge_pages", [](bool on) {
    return g_huge_pages.exchange(on);
  }, py::arg("on"),
        "[cpu] huge_pages's switch (snarkd.native.apply_huge_pages): the proof's large buffers advised "
        "MADV_HUGEPAGE (True) or left to 4 KiB pages (False); returns the previous setting");
  m.def("uses_huge_pages", [] { return g_huge_pages.load(); }, "True while large buffers are advised MADV_HUGEPAGE");
  // Testing: one big_buffer.hpp block, its address, length and kind (heap, or huge = mapped on its own and
  // advised), readable and writable through the buffer protocol while it lives.
  struct BigProbe {
    BigArray<uint8_t> mem;
  };
  py::class_<BigProbe>(m, "_BigBuffer", py::buffer_protocol(), "Testing: a big_buffer.hpp block of `nbytes` bytes")
      .def(py::init([](size_t nbytes, bool zero) { return new BigProbe{BigArray<uint8_t>(nbytes, zero)}; }),
           py::arg("nbytes"), py::arg("zero") = false)
      .def_buffer([](BigProbe& b) {
        return py::buffer_info(b.mem.get(), 1, py::format_descriptor<uint8_t>::format(), 1,
                               {(py::ssize_t)b.mem.size()}, {(py::ssize_t)1});
      })
      .def_property_readonly("address", [](const BigProbe& b) { return (uintptr_t)b.mem.get(); })
      .def_property_readonly("nbytes", [](const BigProbe& b) { return b.mem.size(); })
      .def_property_readonly("kind", [](const BigProbe& b) {
        switch (b.mem.kind()) {
          case BigKind::heap: return "heap";
          case BigKind::huge: return "huge";
          default: return "none";
        }
      });
  // The AVX2 lanes (ff/simd29.hpp, msm/bucket_simd29.hpp): G1's batch-affine additions four at a time
  // where IFMA is off, BN254 and BLS12-381 each on by default where the CPU has AVX2 + BMI2/ADX and its
  // model's row in ff/simd29_rule.hpp says on, or, on a CPU without a row, a calibration at first use
  // (simd29_pays, per field) measured its lane product at least 1.25x the scalar one. G2 on the lanes
  // (Simd29G2Add) likewise, per curve (the rule, or a calibration of the G2 flush itself: simd29_g2_pays).
  auto simd29_bls = [](const std::string& curve) {
    if (curve == "bn254" || curve == "bn128") return false;
    if (curve == "bls12_381" || curve == "bls12-381") return true;
    throw py::value_error("curve: bn254 or bls12_381");
  };
  auto simd29_get = [simd29_bls](const std::string& curve, bool g2) -> bool {  // what the MSMs read (the default until set)
    if (simd29_bls(curve)) return g2 ? simd29_on<bls12_381::G2Cfg>() : simd29_on<bls12_381::G1Cfg>();
    return g2 ? simd29_on<bn254::G2Cfg>() : simd29_on<bn254::G1Cfg>();
  };
  auto simd29_set = [simd29_bls](const std::string& curve, bool g2, bool on) {
    const bool bls = simd29_bls(curve);
    if (!g2) (bls ? g_use_simd29_bls : g_use_simd29) = on ? 1 : 0;
    else (bls ? g_use_simd29_g2_bls : g_use_simd29_g2) = on ? 1 : 0;
  };
  m.def("cpu_model", [] {
    const CpuModel c = cpu_model();
    return py::make_tuple(c.vendor, c.family, c.model);
  }, "(vendor, family, model) of this CPU by CPUID: the input of the AVX2 lanes' rule (ff/simd29_rule.hpp)");
  m.def("simd29_rule", [simd29_bls](const std::string& vendor, unsigned family, unsigned model, const std::string& curve,
                                    bool g2) {
    CpuModel c;
    c.vendor = vendor, c.family = family, c.model = model;
    return std::string(lane_rule_name(simd29_rule(c, simd29_bls(curve), g2)));
  }, py::arg("vendor"), py::arg("family"), py::arg("model"), py::arg("curve") = "bn254", py::arg("g2") = false,
        "The AVX2 lanes' default rule for a CPU model (ff/simd29_rule.hpp): 'on', 'off', or 'calibrate' (a "
        "calibration in the process decides); this CPU's is simd29_rule(*cpu_model(), curve, g2)");
  m.def("cpu_has_simd29", &detect_simd29, "True if the CPU has AVX2 + BMI2/ADX (the 4-lane adders can run)");
  m.def("simd29_default", [simd29_bls](const std::string& curve, bool g2) {
    if (simd29_bls(curve)) return g2 ? simd29_g2_default_bls() : simd29_default_bls();
    return g2 ? simd29_g2_default() : simd29_default();
  }, py::arg("curve") = "bn254", py::arg("g2") = false,
        "True if the 4-lane AVX2 adder is on by default here for that curve's G1 (g2: its G2) (the CPU has it and "
        "its model's rule says on, or, where the rule says 'calibrate', its calibration, run at the first ask, "
        "found it faster)");
  m.def("_set_simd29", [simd29_get, simd29_set](bool on, py::object curve, py::object g2) {
    const bool set_g1 = g2.is_none() || !g2.cast<bool>();
    const bool set_g2 = g2.is_none() || g2.cast<bool>();
    return switch_paths([&] {
      const std::string c0 = curve.is_none() ? std::string("bn254") : curve.cast<std::string>();
      const bool prev = simd29_get(c0, !set_g1);
      for (const std::string& c : curve.is_none() ? std::vector<std::string>{"bn254", "bls12_381"} : std::vector<std::string>{c0}) {
        if (set_g1) simd29_set(c, false, on && detect_simd29());
        if (set_g2) simd29_set(c, true, on && detect_simd29());
      }
      return prev;
    });
  }, py::arg("on"), py::arg("curve") = py::none(), py::arg("g2") = py::none(),
     "Testing aid: the 4-lane AVX2 adders (used where IFMA is off) on or off, whatever the calibration said: for "
     "one curve ('bn254', 'bls12_381') or, without curve, both; g2 None: G1 and G2, False: G1 only, True: G2 "
     "only. Waits for running native calls; returns the previous setting (BN254's G1 without curve and g2, "
     "G2's with g2=True)");
  m.def("uses_simd29", [simd29_get](const std::string& curve, bool g2) { return simd29_get(curve, g2); },
        py::arg("curve") = "bn254", py::arg("g2") = false,
        "True while that curve's G1 (g2: G2) MSMs use the 4-lane AVX2 adder (where IFMA is off)");
#if defined(SNARKD_SIMD29)
  m.def("_simd29_mul", [](py::bytes a, py::bytes b, const std::string& curve) {
    const bool bls = curve == "bls12_381" || curve == "bls12-381";
    if (!bls && curve != "bn254" && curve != "bn128") throw py::value_error("curve: bn254 or bls12_381");
    const size_t fb = bls ? 48 : 32;
    std::string sa = a, sb = b;
    if (sa.size() != sb.size() || sa.size() % (4 * fb))
      throw py::value_error("a, b: the same length, a multiple of 4 elements of the field's size");
    if (!detect_simd29()) throw py::value_error("the CPU has no AVX2 + BMI2/ADX");
    std::string o(sa.size(), '\0');
    if (bls)
      simd29::mul_rows<bls12_381::FqP>((u64*)o.data(), (const u64*)sa.data(), (const u64*)sb.data(), sa.size() / fb);
    else
      simd29::mul_rows<bn254::FqP>((u64*)o.data(), (const u64*)sa.data(), (const u64*)sb.data(), sa.size() / fb);
    return py::bytes(o);
  }, py::arg("a"), py::arg("b"), py::arg("curve") = "bn254",
     "Testing aid: the 4-lane AVX2 product a b / R mod p (Fq of bn254, R = 2^256, 32-byte words; or of bls12_381, "
     "R = 2^384, 48-byte words; little-endian, inputs below 2p), canonical");
#endif
  // the MSM's testing modes (0 off, 1 where the cost model says it pays, 2 always): each setter
  // returns the previous mode
  auto def_mode = [&m](const char* name, int& (*knob)(), const char* doc) {
    m.def(name, [knob](int mode) {
      if (mode < 0 || mode > 2) throw py::value_error("mode: 0 (off), 1 (where the cost model says it pays) or 2 (always)");
      return switch_paths([mode, knob] {
        int prev = knob();
        knob() = mode;
        return prev;
      });
    }, py::arg("mode"), doc);
  };
  def_mode("_set_glv", msm_glv_mode,
           "Testing aid: the G1 MSMs' endomorphism split (0 off, 1 by the cost model, 2 always); returns the previous mode");
  def_mode("_set_gls", msm_gls_mode,
           "Testing aid: the G2 MSMs' endomorphism split (GLS; 0 off, 1 by the cost model, 2 always); returns the previous mode");
  def_mode("_set_msm_mixed", msm_mixed_mode,
           "Testing aid: mixed window widths on the scalar path (0 off, 1 where they count fewer additions, 2 wherever "
           "the plain plan's top window can be dropped: with a forced window c too); returns the previous mode");
  m.def("_set_msm_window", [](unsigned c) {
    if (c == 1 || c > 24) throw py::value_error("c: 0 (the cost model) or a window of 2 to 24 bits");
    return switch_paths([c] {
      unsigned prev = msm_force_c();
      msm_force_c() = c;
      return prev;
    });
  }, py::arg("c"), "Testing aid: every MSM's window size in bits (0: chosen by the cost model); returns the previous one");
  m.def("_parallel_stats", [](bool on) {
    ParallelStats& st = parallel_stats();
    py::dict d;
    d["regions"] = st.regions.load();
    d["busy_ms"] = st.busy_ns.load() / 1e6;
    d["caller_ms"] = st.caller_ns.load() / 1e6;
    d["idle_ms"] = st.idle_ns.load() / 1e6;
    st.regions = 0;
    st.busy_ns = st.caller_ns = st.idle_ns = 0;
    st.on = on;
    return d;
  }, py::arg("on"),
     "Benchmark aid (bench/phase_cpu.py): the parallel regions' counters since the last call (regions; busy_ms: "
     "all threads' CPU in them; caller_ms: the calling thread's share; idle_ms: T x the busiest share - busy, the "
     "CPU time threads that finished early could have used), reset, and the counting switched on or off");
  m.def("_msm_plan", [](size_t n, long threads, unsigned bits) {
    const MsmPlan p = msm_plan_run(n, resolve_threads(threads), bits, false);
    return py::make_tuple(p.c, p.nw, p.k, p.wide);
  }, py::arg("n"), py::arg("threads"), py::arg("bits") = 254,
     "Testing aid: (c, windows, chunks, wide) of the plan an MSM of n full scalars of `bits` bits runs on the "
     "current path: windows 0 .. wide - 1 of c + 1 bits, the rest of c");
  auto bn = m.def_submodule("bn254", "BN254 (bn128)");
  bind_curve<BN>(bn);
  auto bls = m.def_submodule("bls12_381", "BLS12-381");
  bind_curve<BLS>(bls);
}
