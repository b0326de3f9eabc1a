// snarkd.native._pairing: optimal ate pairing and Groth16 verification,
// submodules bn254 and bls12_381. Points are bytes in the zkey layout (affine,
// little-endian Montgomery, all zeros = infinity); Fp12 values are 12 Fp
// elements in Montgomery form, ordered c0.c0.c0, c0.c0.c1, c0.c1.c0, ...,
// c1.c2.c1 (tower Fp2[u]/(u^2+1), Fp6 = Fp2[v]/(v^3 - xi), Fp12 = Fp6[w]/(w^2 - v)).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "pairing/batch_verify.hpp"

namespace py = pybind11;
using namespace snarkd;
using namespace snarkd::pairing;

namespace {

struct Buf {
  Py_buffer view{};
  bool ok = false;
  Buf(py::handle obj, const std::string& name) {
    if (PyObject_GetBuffer(obj.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) {
      PyErr_Clear();
      throw py::type_error(name + ": expected a C-contiguous buffer (bytes, memoryview or numpy array)");
    }
    ok = true;
  }
  ~Buf() { if (ok) PyBuffer_Release(&view); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  const uint8_t* data() const { return (const uint8_t*)view.buf; }
  size_t len() const { return (size_t)view.len; }
  const uint8_t* expect(size_t n, const std::string& name) const {
    if (len() != n) throw py::value_error(name + ": expected " + std::to_string(n) + " bytes, got " + std::to_string(len()));
    return data();
  }
};

template <class T>
py::bytes to_bytes(const T& v) { return py::bytes((const char*)&v, sizeof(T)); }

template <class T>
T from_buf(py::handle obj, const char* name) {
  Buf b(obj, name);
  T v;
  std::memcpy(&v, b.expect(sizeof(T), name), sizeof(T));
  return v;
}

template <class Cfg>
void define(py::module_& m) {
  using Pr = Pairing<Cfg>;
  using G1 = typename Cfg::G1;
  using G2 = typename Cfg::G2;
  using F12 = typename Cfg::Fq12;
  using Fr = typename Cfg::Fr;
  m.attr("G1_BYTES") = sizeof(G1);
  m.attr("G2_BYTES") = sizeof(G2);
  m.attr("FP12_BYTES") = sizeof(F12);
  m.attr("N8R") = sizeof(Fr);
  m.attr("GLV_LAMBDA") = py::bytes((const char*)Glv<Cfg>::LAMBDA, sizeof(Glv<Cfg>::LAMBDA));

  m.def("pairing", [](py::object p, py::object q) {
    G1 P = from_buf<G1>(p, "p");
    G2 Q = from_buf<G2>(q, "q");
    F12 r;
    { py::gil_scoped_release rel; r = Pr::multi_pairing(&P, &Q, 1); }
    return to_bytes(r);
  }, py::arg("p"), py::arg("q"), "e(P, Q) as Fp12 bytes (no curve or subgroup checks)");

  m.def("multi_pairing", [](std::vector<py::object> ps, std::vector<py::object> qs) {
    if (ps.size() != qs.size()) throw py::value_error("multi_pairing: as many G1 as G2 points are needed");
    std::vector<G1> P;
    std::vector<G2> Q;
    for (auto& p : ps) P.push_back(from_buf<G1>(p, "p"));
    for (auto& q : qs) Q.push_back(from_buf<G2>(q, "q"));
    F12 r;
    { py::gil_scoped_release rel; r = Pr::multi_pairing(P.data(), Q.data(), P.size()); }
    return to_bytes(r);
  }, py::arg("ps"), py::arg("qs"), "prod e(P_i, Q_i) with one final exponentiation");

  m.def("multi_miller_loop", [](std::vector<py::object> ps, std::vector<py::object> qs, bool affine) {
    if (ps.size() != qs.size()) throw py::value_error("multi_miller_loop: as many G1 as G2 points are needed");
    std::vector<G1> P;
    std::vector<G2> Q;
    for (auto& p : ps) P.push_back(from_buf<G1>(p, "p"));
    for (auto& q : qs) Q.push_back(from_buf<G2>(q, "q"));
    F12 r;
    {
      py::gil_scoped_release rel;
      if (affine) {
        typename AffineMillerLoop<Cfg>::Scratch s;
        r = AffineMillerLoop<Cfg>::multi(P.data(), Q.data(), P.size(), s);
      } else {
        std::vector<typename MillerLoop<Cfg>::Proj> T;
        std::vector<typename MillerLoop<Cfg>::Eval> ev;
        std::vector<size_t> live;
        r = MillerLoop<Cfg>::multi_unprepared(P.data(), Q.data(), P.size(), T, ev, live);
      }
    }
    return to_bytes(r);
  }, py::arg("ps"), py::arg("qs"), py::arg("affine"),
     "prod f_(loop, Q_i)(P_i), no final exponentiation: batch verification's affine loop (AffineMillerLoop) "
     "or the projective one (MillerLoop::multi_unprepared); equal after the final exponentiation");
  m.def("affine_loop_in_g2", [](std::vector<py::object> ps, std::vector<py::object> qs) {
    if (ps.size() != qs.size()) throw py::value_error("affine_loop_in_g2: as many G1 as G2 points are needed");
    std::vector<G1> P;
    std::vector<G2> Q;
    for (auto& p : ps) P.push_back(from_buf<G1>(p, "p"));
    for (auto& q : qs) Q.push_back(from_buf<G2>(q, "q"));
    std::vector<uint8_t> in_g2(P.size());
    {
      py::gil_scoped_release rel;
      typename AffineMillerLoop<Cfg>::Scratch s;
      AffineMillerLoop<Cfg>::multi(P.data(), Q.data(), P.size(), s, in_g2.data());
    }
    return py::bytes((const char*)in_g2.data(), in_g2.size());
  }, py::arg("ps"), py::arg("qs"), "the affine loop's G2 flags (AffineMillerLoop::multi's in_g2), a byte per pair");

  m.def("miller_loop", [](py::object p, py::object q) {
    G1 P = from_buf<G1>(p, "p");
    G2 Q = from_buf<G2>(q, "q");
    auto prep = MillerLoop<Cfg>::prepare(Q);
    const G2Prepared<Cfg>* ptr = &prep;
    return to_bytes(MillerLoop<Cfg>::multi(&P, &ptr, 1));
  }, py::arg("p"), py::arg("q"));
  m.def("final_exp", [](py::object f) { return to_bytes(FinalExp<Cfg>::apply(from_buf<F12>(f, "f"))); }, py::arg("f"));
  m.def("fp12_mul", [](py::object a, py::object b) { return to_bytes(from_buf<F12>(a, "a") * from_buf<F12>(b, "b")); });
  m.def("fp12_sqr", [](py::object a) { return to_bytes(from_buf<F12>(a, "a").sqr()); });
  m.def("fp12_cyclotomic_sqr", [](py::object a) { return to_bytes(from_buf<F12>(a, "a").cyclotomic_sqr()); });
  m.def("fp12_inv", [](py::object a) { return to_bytes(from_buf<F12>(a, "a").inv()); });
  m.def("fp12_frobenius", [](py::object a, int n) {
    F12 x = from_buf<F12>(a, "a");
    if (n == 1) return to_bytes(x.template frobenius<1>());
    if (n == 2) return to_bytes(x.template frobenius<2>());
    if (n == 3) return to_bytes(x.template frobenius<3>());
    throw py::value_error("n must be 1, 2 or 3");
  });
  m.def("fp12_pow", [](py::object a, py::object e) {
    Buf eb(e, "e");
    if (eb.len() % 8) throw py::value_error("e: length must be a multiple of 8");
    std::vector<u64> limbs(eb.len() / 8);
    std::memcpy(limbs.data(), eb.data(), eb.len());
    return to_bytes(pow_limbs(from_buf<F12>(a, "a"), limbs.data(), limbs.size()));
  }, py::arg("a"), py::arg("e"), "a^e, e as little-endian bytes (multiple of 8)");
  m.def("fp12_one", []() { return to_bytes(F12::one()); });

  m.def("g1_on_curve", [](py::object p) { return from_buf<G1>(p, "p").on_curve(); });
  m.def("g2_on_curve", [](py::object q) { return from_buf<G2>(q, "q").on_curve(); });
  m.def("g1_in_subgroup", [](py::object p) { G1 P = from_buf<G1>(p, "p"); return P.on_curve() && Pr::g1_in_subgroup(P); });
  m.def("g2_in_subgroup", [](py::object q) { G2 Q = from_buf<G2>(q, "q"); return Q.on_curve() && Pr::g2_in_subgroup(Q); });
  m.def("g1_in_subgroup_naive", [](py::object p) { G1 P = from_buf<G1>(p, "p"); return P.on_curve() && Pr::in_subgroup_naive(P); });
  m.def("g2_in_subgroup_naive", [](py::object q) { G2 Q = from_buf<G2>(q, "q"); return Q.on_curve() && Pr::in_subgroup_naive(Q); });

  m.def("g2_psi", [](py::object q) { return to_bytes(Pr::psi(from_buf<G2>(q, "q"))); });

  using PVK = typename Pr::PreparedVK;
  py::class_<PVK>(m, "PreparedVK", "A Groth16 verification key checked and prepared once (G2 lines)")
      .def(py::init([](py::object alpha1, py::object beta2, py::object gamma2, py::object delta2, py::object ic) {
             Buf A1(alpha1, "alpha1"), B2(beta2, "beta2"), C2(gamma2, "gamma2"), D2(delta2, "delta2"), IC(ic, "ic");
             if (IC.len() % sizeof(G1) || IC.len() == 0) throw py::value_error("ic: expected (n_public + 1) G1 points");
             const uint8_t *al = A1.expect(sizeof(G1), "alpha1"), *be = B2.expect(sizeof(G2), "beta2"),
                           *ga = C2.expect(sizeof(G2), "gamma2"), *de = D2.expect(sizeof(G2), "delta2");
             size_t n_ic = IC.len() / sizeof(G1);
             py::gil_scoped_release rel;
             return new PVK(Pr::prepare_vk(al, be, ga, de, IC.data(), n_ic));
           }),
           py::arg("alpha1"), py::arg("beta2"), py::arg("gamma2"), py::arg("delta2"), py::arg("ic"))
      .def_property_readonly("valid", [](const PVK& v) { return v.valid; })
      .def_property_readonly("n_public", [](const PVK& v) { return v.ic.empty() ? 0 : v.ic.size() - 1; })
      .def("verify", [](const PVK& v, py::object publics, py::object a, py::object b, py::object c) {
             Buf PUB(publics, "publics"), PA(a, "a"), PB(b, "b"), PC(c, "c");
             size_t n_public = v.ic.empty() ? 0 : v.ic.size() - 1;
             const uint8_t* pubs = PUB.expect(n_public * sizeof(Fr), "publics");
             const uint8_t *pa = PA.expect(sizeof(G1), "a"), *pb = PB.expect(sizeof(G2), "b"), *pc = PC.expect(sizeof(G1), "c");
             py::gil_scoped_release rel;
             return Pr::verify_prepared(v, pubs, pa, pb, pc);
           },
           py::arg("publics"), py::arg("a"), py::arg("b"), py::arg("c"), "status as groth16_verify")
      .def("batch", [](const PVK& v, py::object publics, py::object a, py::object b, py::object c, py::object coeffs,
                       long threads) {
             if (!v.valid) throw py::value_error("vk: a key point is off its curve");
             Buf PUB(publics, "publics"), PA(a, "a"), PB(b, "b"), PC(c, "c"), CO(coeffs, "coeffs");
             if (PA.len() % sizeof(G1)) throw py::value_error("a: expected whole G1 points");
             size_t n = PA.len() / sizeof(G1), n_public = v.ic.size() - 1;
             const uint8_t* pubs = PUB.expect(n * n_public * sizeof(Fr), "publics");
             const uint8_t *pb = PB.expect(n * sizeof(G2), "b"), *pc = PC.expect(n * sizeof(G1), "c");
             const uint8_t* co = CO.expect(n * BatchVerify<Cfg>::COEFF_BYTES, "coeffs");
             const uint8_t* pa = PA.data();
             py::gil_scoped_release rel;
             return new typename BatchVerify<Cfg>::Batch(BatchVerify<Cfg>::prepare(v, pubs, pa, pb, pc, co, n, resolve_threads(threads)));
           },
           py::arg("publics"), py::arg("a"), py::arg("b"), py::arg("c"), py::arg("coeffs"), py::arg("threads") = 0,
           "n proofs (points concatenated, publics n * n_public scalars, coeffs n 16-byte secret random values) "
           "checked and randomized for ProofBatch.check")
      .def("batch_text", [](const PVK& v, py::bytes text, size_t n, py::object coeffs, long threads) {
             if (!v.valid) throw py::value_error("vk: a key point is off its curve");
             Buf CO(coeffs, "coeffs");
             const uint8_t* co = CO.expect(n * BatchVerify<Cfg>::COEFF_BYTES, "coeffs");
             char* data;
             Py_ssize_t len;
             if (PyBytes_AsStringAndSize(text.ptr(), &data, &len) != 0) throw py::error_already_set();
             py::gil_scoped_release rel;
             try {
               return new typename BatchVerify<Cfg>::Batch(BatchVerify<Cfg>::prepare_text(v, data, (size_t)len, n, co, resolve_threads(threads)));
             } catch (const std::invalid_argument& e) {
               py::gil_scoped_acquire acq;
               throw py::value_error(e.what());
             }
           },
           py::arg("text"), py::arg("n"), py::arg("coeffs"), py::arg("threads") = 0,
           "as batch, the proofs given as text: one line per proof of comma-separated decimal strings "
           "(ax, ay, az, bx0, bx1, by0, by1, bz0, bz1, cx, cy, cz, publics...); a line not of that form "
           "gets the status NOT_PARSED");

  using BV = BatchVerify<Cfg>;
  using Batch = typename BV::Batch;
  py::class_<Batch>(m, "ProofBatch", "Proofs of one PreparedVK checked and randomized once (PreparedVK.batch) for RLC checks")
      .def_property_readonly("n", [](const Batch& b) { return b.n; })
      .def_property_readonly("status", [](const Batch& b) { return py::bytes((const char*)b.status.data(), b.status.size()); },
                             "one status byte per proof: 0 usable in a check, else the single verifier's reason (2, 3, 4); a B "
                             "outside G2 is found by the first check (which is then false) and its proof's status set")
      .def("check", [](Batch& bt, const PVK& vk, py::object indices, long threads) {
             Buf IX(indices, "indices");
             if (IX.len() % 4) throw py::value_error("indices: expected uint32 values");
             size_t m = IX.len() / 4;
             const uint32_t* idx = (const uint32_t*)IX.data();
             for (size_t k = 0; k < m; k++)  // (a proof whose status is not VERIFY_OK makes the check false)
               if (idx[k] >= bt.n) throw py::index_error("indices: proof index out of range");
             if (!vk.valid || vk.ic.size() != bt.n_public + 1) throw py::value_error("vk: not the key this batch was prepared with");
             py::gil_scoped_release rel;
             return BV::check(vk, bt, idx, m, resolve_threads(threads));
           },
           py::arg("vk"), py::arg("indices"), py::arg("threads") = 0,
           "True iff the random linear combination of the proofs at these indices (uint32) holds");

  m.def("groth16_verify", [](py::object alpha1, py::object beta2, py::object gamma2, py::object delta2, py::object ic,
                             py::object publics, py::object a, py::object b, py::object c) {
    Buf A1(alpha1, "alpha1"), B2(beta2, "beta2"), C2(gamma2, "gamma2"), D2(delta2, "delta2"), IC(ic, "ic"),
        PUB(publics, "publics"), PA(a, "a"), PB(b, "b"), PC(c, "c");
    if (IC.len() % sizeof(G1) || IC.len() == 0) throw py::value_error("ic: expected (n_public + 1) G1 points");
    size_t n_public = IC.len() / sizeof(G1) - 1;
    const uint8_t* pubs = PUB.expect(n_public * sizeof(Fr), "publics");
    const uint8_t *pa = PA.expect(sizeof(G1), "a"), *pb = PB.expect(sizeof(G2), "b"), *pc = PC.expect(sizeof(G1), "c");
    const uint8_t *al = A1.expect(sizeof(G1), "alpha1"), *be = B2.expect(sizeof(G2), "beta2"),
                  *ga = C2.expect(sizeof(G2), "gamma2"), *de = D2.expect(sizeof(G2), "delta2");
    int st;
    {
      py::gil_scoped_release rel;
      st = Pr::groth16_verify(al, be, ga, de, IC.data(), n_public, pubs, pa, pb, pc);
    }
    return st;
  }, py::arg("alpha1"), py::arg("beta2"), py::arg("gamma2"), py::arg("delta2"), py::arg("ic"), py::arg("publics"),
     py::arg("a"), py::arg("b"), py::arg("c"),
     "Groth16 check; returns a status: 0 valid, 1 pairing check failed, 2 proof point off curve, "
     "3 proof point outside the subgroup, 4 public value >= r, 5 key point off curve");
}

}  // namespace

PYBIND11_MODULE(_pairing, m) {
  m.doc() = "snarkd native optimal ate pairing and Groth16 verification (BN254, BLS12-381)";
  m.attr("VERIFY_OK") = (int)VERIFY_OK;
  m.attr("VERIFY_FAILED") = (int)VERIFY_FAILED;
  m.attr("PROOF_NOT_ON_CURVE") = (int)PROOF_NOT_ON_CURVE;
  m.attr("PROOF_NOT_IN_SUBGROUP") = (int)PROOF_NOT_IN_SUBGROUP;
  m.attr("PUBLIC_OUT_OF_RANGE") = (int)PUBLIC_OUT_OF_RANGE;
  m.attr("VK_NOT_ON_CURVE") = (int)VK_NOT_ON_CURVE;
  m.attr("BATCH_NOT_PARSED") = (int)BatchVerify<BN254Pairing>::NOT_PARSED;
  m.attr("BATCH_CHUNK") = (int)BatchVerify<BN254Pairing>::CHUNK;
  auto bn = m.def_submodule("bn254", "BN254 (bn128)");
  define<BN254Pairing>(bn);
  auto bls = m.def_submodule("bls12_381", "BLS12-381");
  define<BLS12_381Pairing>(bls);
}
