pragma circom 2.0.0;

include "circomlib/babyjub.circom";
include "circomlib/poseidon.circom";

// Test helper: the pieces of an EdDSA-Poseidon signature of M by the key s with nonce r
// (A = s*B8, R8 = r*B8, h = Poseidon(R8, A, M)); the test finishes S = r + 8*h*s mod l.
template Signer() {
    signal input s;
    signal input r;
    signal input M;
    signal output Ax;
    signal output Ay;
    signal output R8x;
    signal output R8y;
    signal output h;
    component a = BabyPbk();
    a.in <== s;
    Ax <== a.Ax;
    Ay <== a.Ay;
    component rr = BabyPbk();
    rr.in <== r;
    R8x <== rr.Ax;
    R8y <== rr.Ay;
    component p = Poseidon(5);
    p.inputs[0] <== R8x;
    p.inputs[1] <== R8y;
    p.inputs[2] <== Ax;
    p.inputs[3] <== Ay;
    p.inputs[4] <== M;
    h <== p.out;
}

component main = Signer();
