// snarkd.native._aggregate: the batch kernels of SnarkPack aggregation
// (snarkd.aggregate), submodules bn254 and bls12_381. Points are bytes in the
// zkey layout (affine, little-endian Montgomery, all zeros = infinity), Fp12
// values as in snarkd.native._pairing, scalars plain little-endian 32 bytes.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "aggregate/fold.hpp"
#include "aggregate/gt.hpp"
#include "aggregate/pair_products.hpp"
#include "py_buffer.hpp"

namespace py = pybind11;
using namespace snarkd;
using namespace snarkd::aggregate;

namespace {

template <class T>
py::bytes to_bytes(const T& v) { return py::bytes((const char*)&v, sizeof(T)); }

template <class T>
T from_buf(py::handle obj, const char* name) {
  Buf b(obj, name);
  if (b.len() != sizeof(T))
    throw py::value_error(std::string(name) + ": expected " + std::to_string(sizeof(T)) + " bytes, got " + std::to_string(b.len()));
  T v;
  std::memcpy(&v, b.data(), sizeof(T));
  return v;
}

py::bytes new_bytes(size_t n, uint8_t*& data) {
  PyObject* o = PyBytes_FromStringAndSize(nullptr, (Py_ssize_t)n);
  if (!o) throw py::error_already_set();
  data = (uint8_t*)PyBytes_AsString(o);
  return py::reinterpret_steal<py::bytes>(o);
}

template <class Cfg, class PCfg>
void bind_fold(py::module_& m, const char* suffix) {
  using Fr = typename PCfg::Fr;
  using FoldT = Fold<Cfg, Fr>;
  constexpr size_t PS = sizeof(Affine<Cfg>);
  m.def((std::string("fold_") + suffix).c_str(), [](py::object l, py::object r, py::object x, long threads) {
    Buf L(l, "left"), R(r, "right"), X(x, "x");
    size_t n = L.count(PS, "points");
    if (R.len() != L.len()) throw py::value_error("right: expected as many points as left");
    if (X.len() != 32) throw py::value_error("x: expected 32 bytes");
    uint8_t* o;
    py::bytes out = new_bytes(n * PS, o);
    unsigned T = resolve_threads(threads);
    py::gil_scoped_release rel;
    FoldT::fold(L.data(), R.data(), n, X.data(), o, T);
    return out;
  }, py::arg("left"), py::arg("right"), py::arg("x"), py::arg("threads") = 0, "left[i] + x * right[i], affine");
  m.def((std::string("scale_") + suffix).c_str(), [](py::object p, py::object s, long threads) {
    Buf P(p, "points"), S(s, "scalars");
    size_t n = P.count(PS, "points");
    if (S.len() != 32 * n) throw py::value_error("scalars: expected 32 bytes per point");
    uint8_t* o;
    py::bytes out = new_bytes(n * PS, o);
    unsigned T = resolve_threads(threads);
    py::gil_scoped_release rel;
    FoldT::scale(P.data(), S.data(), n, o, T);
    return out;
  }, py::arg("points"), py::arg("scalars"), py::arg("threads") = 0, "scalars[i] * points[i], affine");
  m.def((std::string("lincomb_") + suffix).c_str(), [](py::object p, py::object s) {
    Buf P(p, "points"), S(s, "scalars");
    size_t n = P.count(PS, "points");
    if (S.len() != 32 * n) throw py::value_error("scalars: expected 32 bytes per point");
    Affine<Cfg> r;
    {
      py::gil_scoped_release rel;
      r = FoldT::lincomb(P.data(), S.data(), n);
    }
    return py::bytes((const char*)&r, sizeof(Affine<Cfg>));
  }, py::arg("points"), py::arg("scalars"), "sum scalars[i] * points[i] for a few points (one thread), affine");
}

template <class Cfg>
void define(py::module_& m) {
  using F12 = typename Cfg::Fq12;
  using G1 = typename Cfg::G1;
  using G2 = typename Cfg::G2;
  using PP = PairProducts<Cfg>;
  using GtT = Gt<Cfg>;
  m.attr("G1_BYTES") = sizeof(G1);
  m.attr("G2_BYTES") = sizeof(G2);
  m.attr("FP12_BYTES") = sizeof(F12);
  m.attr("GT_BYTES") = GtT::BYTES;

  m.def("miller_products", [](py::object q, std::vector<py::object> ps, long threads) {
    Buf Q(q, "q");
    size_t n = Q.count(sizeof(G2), "G2 points");
    std::vector<std::unique_ptr<Buf>> bufs;
    std::vector<const G1*> P;
    for (auto& p : ps) {
      bufs.emplace_back(new Buf(p, "p"));
      if (bufs.back()->len() != n * sizeof(G1)) throw py::value_error("p: expected as many G1 points as q has G2 points");
      P.push_back((const G1*)bufs.back()->data());
    }
    std::vector<F12> out(P.size());
    unsigned T = resolve_threads(threads);
    {
      py::gil_scoped_release rel;
      PP::run((const G2*)Q.data(), n, P.data(), P.size(), T, out.data());
    }
    std::vector<py::bytes> res;
    for (auto& f : out) res.push_back(to_bytes(f));
    return res;
  }, py::arg("q"), py::arg("ps"), py::arg("threads") = 0,
     "[prod_i f_{Q_i}(P_k[i]) for each P_k]: Miller values sharing the G2 points, no final exponentiation");

  m.def("final_product", [](std::vector<py::object> fs) {
    F12 acc = F12::one();
    for (auto& f : fs) acc = acc * from_buf<F12>(f, "f");
    return to_bytes(pairing::FinalExp<Cfg>::apply(acc));
  }, py::arg("fs"), "final exponentiation of the product of Miller values");

  m.def("gt_mul", [](py::object a, py::object b) { return to_bytes(from_buf<F12>(a, "a") * from_buf<F12>(b, "b")); });
  m.def("gt_eq", [](py::object a, py::object b) { return from_buf<F12>(a, "a") == from_buf<F12>(b, "b"); });
  m.def("gt_compress", [](py::object f) {
    F12 v = from_buf<F12>(f, "f");
    uint8_t o[GtT::BYTES];
    if (!GtT::compress(v, o)) throw py::value_error("f: not a GT element with a compressed encoding");
    return py::bytes((const char*)o, GtT::BYTES);
  }, py::arg("f"));
  m.def("gt_decompress", [](py::object g) -> py::object {
    Buf B(g, "g");
    if (B.len() != GtT::BYTES) throw py::value_error("g: expected " + std::to_string(GtT::BYTES) + " bytes");
    F12 f;
    if (!GtT::decompress(B.data(), f)) return py::none();
    return to_bytes(f);
  }, py::arg("g"), "the Fp12 value of a compressed GT encoding, None if it is not a canonical cyclotomic one");
  m.def("gt_in_cyclotomic", [](py::object f) { return GtT::in_cyclotomic(from_buf<F12>(f, "f")); });
  m.def("gt_multi_exp", [](std::vector<py::object> bases, py::object exps, long threads) {
    Buf E(exps, "exps");
    if (E.len() != 32 * bases.size()) throw py::value_error("exps: expected 32 bytes per base");
    std::vector<F12> B;
    for (auto& b : bases) B.push_back(from_buf<F12>(b, "base"));
    F12 r;
    {
      py::gil_scoped_release rel;
      r = GtT::multi_exp(B.data(), E.data(), B.size(), resolve_threads(threads));
    }
    return to_bytes(r);
  }, py::arg("bases"), py::arg("exps"), py::arg("threads") = 0, "prod base[i]^exps[i] (bases in the cyclotomic subgroup)");

  m.def("fr_horner", [](py::object values, size_t width, py::object x) {
    // out[j] = sum_i x^i values[i][j] (mod r): the verifier's pass over the public inputs
    using Fr = typename Cfg::Fr;
    Buf V(values, "values"), X(x, "x");
    if (X.len() != 32) throw py::value_error("x: expected 32 bytes");
    if (width == 0) return py::bytes();
    if (V.len() % (32 * width)) throw py::value_error("values: expected rows of width 32-byte scalars");
    size_t rows = V.len() / (32 * width);
    std::vector<Fr> acc(width, Fr::zero());
    {
      py::gil_scoped_release rel;
      u64 l[4];
      std::memcpy(l, X.data(), 32);
      Fr::reduce_raw(l);
      Fr xm = Fr::from_limbs(l).to_mont();
      for (size_t i = rows; i-- > 0;)
        for (size_t j = 0; j < width; j++) {
          std::memcpy(l, V.data() + (i * width + j) * 32, 32);
          Fr::reduce_raw(l);
          acc[j] = acc[j] * xm + Fr::from_limbs(l).to_mont();
        }
      for (auto& a : acc) a = a.from_mont();
    }
    return py::bytes((const char*)acc.data(), 32 * width);
  }, py::arg("values"), py::arg("width"), py::arg("x"), "[sum_i x^i values[i][j] mod r for each column j]");

  bind_fold<typename Cfg::G1Curve, Cfg>(m, "g1");
  bind_fold<typename Cfg::G2Curve, Cfg>(m, "g2");
}

}  // namespace

PYBIND11_MODULE(_aggregate, m) {
  m.doc() = "SnarkPack aggregation kernels: shared-G2 Miller products, GT encoding, batch point rescaling";
  auto bn = m.def_submodule("bn254", "BN254 (bn128)");
  define<pairing::BN254Pairing>(bn);
  auto bls = m.def_submodule("bls12_381", "BLS12-381");
  define<pairing::BLS12_381Pairing>(bls);
}
