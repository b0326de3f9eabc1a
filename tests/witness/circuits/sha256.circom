pragma circom 2.0.0;

include "circomlib/sha256/sha256.circom";

// circomlib's SHA-256 of a 64-bit message (one block): bit-level work, Num2Bits everywhere.
template Sha256Of(N) {
    signal input in[N];
    signal output out[256];
    component h = Sha256(N);
    for (var i = 0; i < N; i++) h.in[i] <== in[i];
    for (var i = 0; i < 256; i++) out[i] <== h.out[i];
}

component main = Sha256Of(64);
