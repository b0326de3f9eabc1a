// Generated constants for bls12_381 (see why: Montgomery R = 2^(64*N)).
#pragma once
#include "ff/mont.hpp"
#include "ff/fp2.hpp"
namespace snarkd { namespace bls12_381 {
struct FqP {
  static constexpr size_t N = 6;
  static constexpr size_t BITS = 381;
  static constexpr u64 MOD[N] = {0xb9feffffffffaaabULL, 0x1eabfffeb153ffffULL, 0x6730d2a0f6b0f624ULL, 0x64774b84f38512bfULL, 0x4b1ba7b6434bacd7ULL, 0x1a0111ea397fe69aULL};
  static constexpr u64 R2[N] = {0xf4df1f341c341746ULL, 0x0a76e6a609d104f1ULL, 0x8de5476c4c95b6d5ULL, 0x67eb88a9939d83c0ULL, 0x9a793e85b519952dULL, 0x11988fe592cae3aaULL};
  static constexpr u64 ONE[N] = {0x760900000002fffdULL, 0xebf4000bc40c0002ULL, 0x5f48985753c758baULL, 0x77ce585370525745ULL, 0x5c071a97a256ec6dULL, 0x15f65ec3fa80e493ULL};
  static constexpr u64 INV = 0x89f3fffcfffcfffdULL;
};

struct FrP {
  static constexpr size_t N = 4;
  static constexpr size_t BITS = 255;
  static constexpr u64 MOD[N] = {0xffffffff00000001ULL, 0x53bda402fffe5bfeULL, 0x3339d80809a1d805ULL, 0x73eda753299d7d48ULL};
  static constexpr u64 R2[N] = {0xc999e990f3f29c6dULL, 0x2b6cedcb87925c23ULL, 0x05d314967254398fULL, 0x0748d9d99f59ff11ULL};
  static constexpr u64 ONE[N] = {0x00000001fffffffeULL, 0x5884b7fa00034802ULL, 0x998c4fefecbc4ff5ULL, 0x1824b159acc5056fULL};
  static constexpr u64 INV = 0xfffffffeffffffffULL;
};

using Fq = Mont<FqP>;
using Fr = Mont<FrP>;
using Fq2 = Fp2<Fq, -1>;
static constexpr unsigned TWO_ADICITY = 32;
// omega_{2^s} = 5^t, Montgomery form (snarkjs/ffjavascript: nqr = 5)
static constexpr u64 ROOT_MONT[4] = {0x9cab6d5c0c17f47cULL, 0x1ce1e93dfd4b71e5ULL, 0x0d6db230471dd505ULL, 0x3f0ee990743a3b6aULL};
// Fr.shift = nqr^2 = 25 (used by snarkjs when the domain is 2^s)
static constexpr u64 SHIFT_MONT[4] = {0x00000036ffffffc9ULL, 0x0241c35b005a3c37ULL, 0xfe929645ee3a96dbULL, 0x17f10d220f2a157cULL};
static constexpr u64 G1_B[6] = {0xaa270000000cfff3ULL, 0x53cc0032fc34000aULL, 0x478fe97a6b0a807fULL, 0xb1d37ebee6ba24d7ULL, 0x8ec9733bbf78ab2fULL, 0x09d645513d83de7eULL};
static constexpr u64 G2_B0[6] = {0xaa270000000cfff3ULL, 0x53cc0032fc34000aULL, 0x478fe97a6b0a807fULL, 0xb1d37ebee6ba24d7ULL, 0x8ec9733bbf78ab2fULL, 0x09d645513d83de7eULL};
static constexpr u64 G2_B1[6] = {0xaa270000000cfff3ULL, 0x53cc0032fc34000aULL, 0x478fe97a6b0a807fULL, 0xb1d37ebee6ba24d7ULL, 0x8ec9733bbf78ab2fULL, 0x09d645513d83de7eULL};
} }
