pragma circom 2.0.0;

include "circomlib/poseidon.circom";
include "circomlib/comparators.circom";
include "circomlib/bitify.circom";

// circomlib: Poseidon over a 2-D input, a range check (LessThan), IsZero, IsEqual, Num2Bits.
template PoseidonCmp(N) {
    signal input preimage[N][2];
    signal input x;
    signal input bound;
    signal output hash[N];
    signal output below;
    signal output isZero;
    signal output same;
    component h[N];
    for (var i = 0; i < N; i++) {
        h[i] = Poseidon(2);
        h[i].inputs[0] <== preimage[i][0];
        h[i].inputs[1] <== preimage[i][1];
        hash[i] <== h[i].out;
    }
    component lt = LessThan(64);
    lt.in[0] <== x;
    lt.in[1] <== bound;
    below <== lt.out;
    component z = IsZero();
    z.in <== x;
    isZero <== z.out;
    component eq = IsEqual();
    eq.in[0] <== preimage[0][0];
    eq.in[1] <== x;
    same <== eq.out;
    component bits = Num2Bits(64);
    bits.in <== bound;
}

component main {public [bound]} = PoseidonCmp({{N}});
