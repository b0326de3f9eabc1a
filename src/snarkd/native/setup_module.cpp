// snarkd.native._setup: kernels of `snarkd setup` (single-party Groth16 dev setup).
// Submodules bn254 and bls12_381, each with:
//   qap_eval(...)            -> dict of plain-scalar arrays (a, b, ic, c, h), O(n + nnz)
//   FixedBaseG1 / FixedBaseG2(base, window, threads).mul(scalars, out, threads)
//                            fixed-base scalar multiplication, batch-affine, writes
//                            affine Montgomery points straight into `out` (zkey layout)
//   coef_values(plain)       -> coef * R^2 mod r (the zkey section-4 representation)
//   root_of_unity(log_n), coset_generator(log_n)   (Montgomery limbs, snarkjs's roots)
// The GIL is released around all computation.
#include <pybind11/pybind11.h>
#include <pybind11/numpy.h>

#include <string>
#include <vector>

#include "curves/groups.hpp"
#include "parallel.hpp"
#include "py_buffer.hpp"
#include "setup/fixed_base.hpp"
#include "setup/qap_eval.hpp"

namespace py = pybind11;
using namespace snarkd;

namespace {


template <class Fr>
py::array_t<uint64_t> to_array(const std::vector<Fr>& v) {
  py::array_t<uint64_t> out(std::vector<py::ssize_t>{(py::ssize_t)v.size(), (py::ssize_t)Fr::N});
  if (!v.empty()) std::memcpy(out.mutable_data(), v.data(), v.size() * sizeof(Fr));
  return out;
}

template <class Fr>
Fr fr_plain_to_mont(py::handle obj, const char* name) {
  Buf b(obj, name);
  if (b.len() != 32) throw py::value_error(std::string(name) + ": expected 32 bytes");
  Fr x = Fr::load(b.data());
  Fr::reduce_raw(x.v);
  return x.to_mont();
}

template <class Tr>
typename Tr::Fr root_of_unity(unsigned log_n) {
  typename Tr::Fr w = Tr::root_s();
  for (unsigned i = log_n; i < Tr::S; i++) w = w.sqr();
  return w;
}

template <class Tr>
typename Tr::Fr coset_gen(unsigned log_n) {
  return log_n == Tr::S ? Tr::shift() : root_of_unity<Tr>(log_n + 1);
}

template <class Cfg, class Fr>
void bind_fixed_base(py::module_& m, const char* name) {
  using FB = setup::FixedBase<Cfg, Fr>;
  using Aff = Affine<Cfg>;
  constexpr size_t PS = sizeof(Aff);
  py::class_<FB>(m, name)
      .def(py::init([](py::object base, unsigned window, long threads) {
             if (window < 2 || window > 20) throw py::value_error("window: must be in 2..20");
             Buf B(base, "base");
             if (B.len() != PS) throw py::value_error("base: expected " + std::to_string(PS) + " bytes (affine Montgomery point)");
             Aff a = Aff::load(B.data());
             if (!a.on_curve()) throw py::value_error("base: point is not on the curve");
             unsigned T = resolve_threads(threads);
             py::gil_scoped_release rel;
             return new FB(a, window, T);
           }),
           py::arg("base"), py::arg("window") = 12, py::arg("threads") = 0)
      .def_property_readonly("window", &FB::window)
      .def_property_readonly("windows", &FB::windows)
      .def_property_readonly("table_points", &FB::table_points)
      .def_property_readonly_static("point_bytes", [](py::object) { return PS; })
      .def("mul", [](const FB& fb, py::object scalars, py::object out, long threads, size_t batch) {
             Buf S(scalars, "scalars"), O(out, "out", true);
             size_t n = S.count(32, "32-byte plain scalars");
             if (O.len() != n * PS)
               throw py::value_error("out: expected " + std::to_string(n * PS) + " bytes for " + std::to_string(n) +
                                     " points, got " + std::to_string(O.len()));
             if (batch < 1) throw py::value_error("batch: must be >= 1");
             unsigned T = resolve_threads(threads);
             py::gil_scoped_release rel;
             fb.mul(S.data(), n, O.wdata(), T, batch);
           },
           py::arg("scalars"), py::arg("out"), py::arg("threads") = 0, py::arg("batch") = 1024,
           "out[i] = scalars[i] * base (affine, Montgomery, zkey layout; infinity = zeros)");
}

template <class NS>
void bind_curve(py::module_& m) {
  using Fr = typename NS::Fr;
  using Tr = typename NS::FrTr;
  constexpr unsigned S = Tr::S;
  m.attr("TWO_ADICITY") = (int)S;
  m.attr("G1_BYTES") = (int)sizeof(Affine<typename NS::G1Cfg>);
  m.attr("G2_BYTES") = (int)sizeof(Affine<typename NS::G2Cfg>);

  bind_fixed_base<typename NS::G1Cfg, Fr>(m, "FixedBaseG1");
  bind_fixed_base<typename NS::G2Cfg, Fr>(m, "FixedBaseG2");

  m.def("root_of_unity", [](unsigned log_n) {
    if (log_n > S) throw py::value_error("log_n: must be <= " + std::to_string(S));
    return to_array(std::vector<Fr>{root_of_unity<Tr>(log_n)});
  }, py::arg("log_n"), "omega_(2^log_n) (snarkjs's roots, nqr 5), Montgomery limbs (1, 4)");
  m.def("coset_generator", [](unsigned log_n) {
    if (log_n > S) throw py::value_error("log_n: must be <= " + std::to_string(S));
    return to_array(std::vector<Fr>{coset_gen<Tr>(log_n)});
  }, py::arg("log_n"), "the prover's coset shift for domain 2^log_n, Montgomery limbs (1, 4)");

  m.def("coef_values", [](py::object plain, long threads) {
    Buf P(plain, "plain");
    size_t n = P.count(32, "32-byte plain Fr values");
    py::array_t<uint64_t> out(std::vector<py::ssize_t>{(py::ssize_t)n, 4});
    uint8_t* o = (uint8_t*)out.mutable_data();
    unsigned T = resolve_threads(threads);
    {
      py::gil_scoped_release rel;
      parallel_for(n, T, [&](size_t b, size_t e, unsigned) {
        for (size_t i = b; i < e; i++) {
          Fr x = Fr::load(P.data() + 32 * i);
          Fr::reduce_raw(x.v);
          x.to_mont().to_mont().store(o + 32 * i);  // x R^2 mod r as a plain integer
        }
      }, 4096);
    }
    return out;
  }, py::arg("plain"), py::arg("threads") = 0, "coef -> coef * R^2 mod r (zkey section 4 values)");

  m.def("qap_eval", [](py::object tau, py::object alpha, py::object beta, py::object delta, unsigned log_n,
                       size_t n_vars, size_t n_public, size_t m_constraints, py::tuple a, py::tuple b, py::tuple c,
                       long threads) {
    if (log_n > S) throw py::value_error("log_n: must be <= " + std::to_string(S));
    Fr t = fr_plain_to_mont<Fr>(tau, "tau"), al = fr_plain_to_mont<Fr>(alpha, "alpha");
    Fr be = fr_plain_to_mont<Fr>(beta, "beta"), de = fr_plain_to_mont<Fr>(delta, "delta");
    py::tuple mats_in[3] = {a, b, c};
    std::vector<std::unique_ptr<Buf>> keep;
    setup::Csr mats[3];
    const char* names[3] = {"A", "B", "C"};
    for (int k = 0; k < 3; k++) {
      if (mats_in[k].size() != 3) throw py::value_error(std::string(names[k]) + ": expected (row_ptr, wires, coefs)");
      keep.emplace_back(new Buf(mats_in[k][0], "row_ptr"));
      keep.emplace_back(new Buf(mats_in[k][1], "wires"));
      keep.emplace_back(new Buf(mats_in[k][2], "coefs"));
      Buf& rp = *keep[keep.size() - 3];
      Buf& wi = *keep[keep.size() - 2];
      Buf& co = *keep[keep.size() - 1];
      if (rp.count(8, "int64") != m_constraints + 1)
        throw py::value_error(std::string(names[k]) + ": row_ptr must have m + 1 entries");
      size_t nnz = wi.count(4, "uint32");
      if (co.count(32, "32-byte coefficients") != nnz)
        throw py::value_error(std::string(names[k]) + ": coefs and wires differ in length");
      const int64_t* rpp = (const int64_t*)rp.data();
      if (rpp[0] != 0 || rpp[m_constraints] != (int64_t)nnz)
        throw py::value_error(std::string(names[k]) + ": row_ptr does not span the terms");
      for (size_t i = 0; i < m_constraints; i++)
        if (rpp[i + 1] < rpp[i]) throw py::value_error(std::string(names[k]) + ": row_ptr is not monotone");
      const uint32_t* wp = (const uint32_t*)wi.data();
      for (size_t i = 0; i < nnz; i++)
        if (wp[i] >= n_vars) throw py::value_error(std::string(names[k]) + ": wire " + std::to_string(wp[i]) + " >= nVars");
      mats[k] = {rpp, wp, co.data()};
    }
    unsigned T = resolve_threads(threads);
    setup::QapOut<Fr> out;
    std::string err;
    {
      py::gil_scoped_release rel;
      err = setup::qap_eval<Fr>(t, al, be, de, root_of_unity<Tr>(log_n), coset_gen<Tr>(log_n), log_n, n_vars,
                                n_public, m_constraints, mats, T, out);
    }
    if (!err.empty()) throw py::value_error(err);
    py::dict d;
    d["a"] = to_array(out.a);
    d["b"] = to_array(out.b);
    d["ic"] = to_array(out.ic);
    d["c"] = to_array(out.c);
    d["h"] = to_array(out.h);
    return d;
  }, py::arg("tau"), py::arg("alpha"), py::arg("beta"), py::arg("delta"), py::arg("log_n"), py::arg("n_vars"),
     py::arg("n_public"), py::arg("m"), py::arg("a"), py::arg("b"), py::arg("c"), py::arg("threads") = 0,
     "Plain scalars of the query points: dict a, b (nVars), ic (nPublic+1), c (nVars-nPublic-1), h (2^log_n)");
}

struct BN {
  using Fr = bn254::Fr;
  using G1Cfg = bn254::G1Cfg;
  using G2Cfg = bn254::G2Cfg;
  struct FrTr {
    using Fr = bn254::Fr;
    static constexpr unsigned S = bn254::TWO_ADICITY;
    static Fr root_s() { return Fr::from_limbs(bn254::ROOT_MONT); }
    static Fr shift() { return Fr::from_limbs(bn254::SHIFT_MONT); }
  };
};
struct BLS {
  using Fr = bls12_381::Fr;
  using G1Cfg = bls12_381::G1Cfg;
  using G2Cfg = bls12_381::G2Cfg;
  struct FrTr {
    using Fr = bls12_381::Fr;
    static constexpr unsigned S = bls12_381::TWO_ADICITY;
    static Fr root_s() { return Fr::from_limbs(bls12_381::ROOT_MONT); }
    static Fr shift() { return Fr::from_limbs(bls12_381::SHIFT_MONT); }
  };
};

}  // namespace

PYBIND11_MODULE(_setup, m) {
  m.doc() = "snarkd setup kernels (QAP evaluation at tau, fixed-base batch-affine scalar multiplication)";
  m.def("hardware_threads", &hardware_threads);
  auto bn = m.def_submodule("bn254", "BN254 (bn128)");
  bind_curve<BN>(bn);
  auto bls = m.def_submodule("bls12_381", "BLS12-381");
  bind_curve<BLS>(bls);
}
