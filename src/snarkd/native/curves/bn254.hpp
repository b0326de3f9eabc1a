// Generated constants for bn254 (see why: Montgomery R = 2^(64*N)).
#pragma once
#include "ff/mont.hpp"
#include "ff/fp2.hpp"
namespace snarkd { namespace bn254 {
struct FqP {
  static constexpr size_t N = 4;
  static constexpr size_t BITS = 254;
  static constexpr u64 MOD[N] = {0x3c208c16d87cfd47ULL, 0x97816a916871ca8dULL, 0xb85045b68181585dULL, 0x30644e72e131a029ULL};
  static constexpr u64 R2[N] = {0xf32cfc5b538afa89ULL, 0xb5e71911d44501fbULL, 0x47ab1eff0a417ff6ULL, 0x06d89f71cab8351fULL};
  static constexpr u64 ONE[N] = {0xd35d438dc58f0d9dULL, 0x0a78eb28f5c70b3dULL, 0x666ea36f7879462cULL, 0x0e0a77c19a07df2fULL};
  static constexpr u64 INV = 0x87d20782e4866389ULL;
};

struct FrP {
  static constexpr size_t N = 4;
  static constexpr size_t BITS = 254;
  static constexpr u64 MOD[N] = {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL, 0xb85045b68181585dULL, 0x30644e72e131a029ULL};
  static constexpr u64 R2[N] = {0x1bb8e645ae216da7ULL, 0x53fe3ab1e35c59e3ULL, 0x8c49833d53bb8085ULL, 0x0216d0b17f4e44a5ULL};
  static constexpr u64 ONE[N] = {0xac96341c4ffffffbULL, 0x36fc76959f60cd29ULL, 0x666ea36f7879462eULL, 0x0e0a77c19a07df2fULL};
  static constexpr u64 INV = 0xc2e1f593efffffffULL;
};

using Fq = Mont<FqP>;
using Fr = Mont<FrP>;
using Fq2 = Fp2<Fq, -1>;
static constexpr unsigned TWO_ADICITY = 28;
// omega_{2^s} = 5^t, Montgomery form (snarkjs/ffjavascript: nqr = 5)
static constexpr u64 ROOT_MONT[4] = {0x636e735580d13d9cULL, 0xa22bf3742445ffd6ULL, 0x56452ac01eb203d8ULL, 0x1860ef942963f9e7ULL};
// Fr.shift = nqr^2 = 25 (used by snarkjs when the domain is 2^s)
static constexpr u64 SHIFT_MONT[4] = {0xff7d5fb83fffff7cULL, 0x453c3aa13c61f518ULL, 0xf69c0de5394e6ff7ULL, 0x0c478cc3e2696a7cULL};
static constexpr u64 G1_B[4] = {0x7a17caa950ad28d7ULL, 0x1f6ac17ae15521b9ULL, 0x334bea4e696bd284ULL, 0x2a1f6744ce179d8eULL};
static constexpr u64 G2_B0[4] = {0x3bf938e377b802a8ULL, 0x020b1b273633535dULL, 0x26b7edf049755260ULL, 0x2514c6324384a86dULL};
static constexpr u64 G2_B1[4] = {0x38e7ecccd1dcff67ULL, 0x65f0b37d93ce0d3eULL, 0xd749d0dd22ac00aaULL, 0x0141b9ce4a688d4dULL};
} }
