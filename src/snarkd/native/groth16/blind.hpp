// A Groth16 proof from its five MSM sums: the blinding with r, s and the assembly (snarkjs's
// groth16_prove.js formulas), written once: prover/groth16.finalize calls it through `groth16_blind`
// for every path (the one-shot `snarkd prove`, the engine, fullprove, the GPU):
//
//   pi_a = A + alpha1 + r delta1
//   pi_b = B2 + beta2 + s delta2                                   (G2)
//   pi_c = C + H + s pi_a + r (B1 + beta1 + s delta1) - r s delta1
//
// A, B1, C, H, B2: sum w_i A_i, sum w_i B1_i, sum_{i>l} w_i C_i, sum h_j H_j, sum w_i B2_i.
#pragma once
#include <cstdint>

#include "ec/point.hpp"

namespace snarkd {

template <class G1, class G2>
struct Groth16Blind {
  using A1 = Affine<G1>;
  using A2 = Affine<G2>;

  struct Header {  // the key's header points, as the zkey stores them (affine, Montgomery; zeros = infinity)
    const uint8_t *alpha1 = nullptr, *beta1 = nullptr, *delta1 = nullptr, *beta2 = nullptr, *delta2 = nullptr;
  };
  struct Proof {
    A1 pi_a, pi_c;
    A2 pi_b;
  };

  // r, s, rs = r s mod the group order: plain 4-word scalars
  static Proof blind(const A1& a, const A1& b1, const A1& c, const A1& h, const A2& b2, const Header& k, const u64* r,
                     const u64* s, const u64* rs) {
    auto mul1 = [&](const uint8_t* p, const u64* e) { return scalar_mul(A1::load(p), e, 4); };
    XYZZ<G1> pa = XYZZ<G1>::from_affine(a);
    pa.add_affine_checked(A1::load(k.alpha1));
    pa.add(mul1(k.delta1, r));
    Proof out;
    out.pi_a = pa.to_affine();
    XYZZ<G1> pb1 = XYZZ<G1>::from_affine(b1);
    pb1.add_affine_checked(A1::load(k.beta1));
    pb1.add(mul1(k.delta1, s));
    XYZZ<G2> pb = XYZZ<G2>::from_affine(b2);
    pb.add_affine_checked(A2::load(k.beta2));
    pb.add(scalar_mul(A2::load(k.delta2), s, 4));
    XYZZ<G1> pc = XYZZ<G1>::from_affine(c);
    pc.add(XYZZ<G1>::from_affine(h));
    pc.add(scalar_mul(out.pi_a, s, 4));
    pc.add(scalar_mul(pb1.to_affine(), r, 4));
    XYZZ<G1> rsd = mul1(k.delta1, rs);
    pc.add(rsd.neg());
    out.pi_b = pb.to_affine();
    out.pi_c = pc.to_affine();
    return out;
  }
};

}  // namespace snarkd
