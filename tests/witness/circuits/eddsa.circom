pragma circom 2.0.0;

include "circomlib/eddsaposeidon.circom";

// circomlib's EdDSA (Poseidon) verifier on BabyJubjub: scalar multiplications, CompConstant, IsZero
// in ForceEqualIfEnabled.
component main = EdDSAPoseidonVerifier();
