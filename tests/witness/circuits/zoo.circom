pragma circom 2.0.0;

include "circomlib/poseidon.circom";
include "circomlib/mimc.circom";
include "circomlib/mimcsponge.circom";
include "circomlib/comparators.circom";
include "circomlib/bitify.circom";
include "circomlib/mux1.circom";
include "circomlib/mux3.circom";

// circomlib's hashes, comparators, bit decompositions and multiplexers on shared inputs.
template Zoo() {
    signal input x;
    signal input y;
    signal input small;       // < 2^32
    signal input sel[3];      // bits
    signal input c[8];
    signal output poseidon;
    signal output mimc7;
    signal output sponge;
    signal output lt;
    signal output ge;
    signal output eq;
    signal output zero;
    signal output back;
    signal output mux1;
    signal output mux3;

    component p = Poseidon(3);
    p.inputs[0] <== x;
    p.inputs[1] <== y;
    p.inputs[2] <== small;
    poseidon <== p.out;

    component m = MiMC7(91);
    m.x_in <== x;
    m.k <== y;
    mimc7 <== m.out;

    component s = MiMCSponge(2, 220, 1);
    s.ins[0] <== x;
    s.ins[1] <== y;
    s.k <== 0;
    sponge <== s.outs[0];

    component a = LessThan(32);
    a.in[0] <== small;
    a.in[1] <== 1000;
    lt <== a.out;
    component b = GreaterEqThan(32);
    b.in[0] <== small;
    b.in[1] <== 77;
    ge <== b.out;
    component e = IsEqual();
    e.in[0] <== x;
    e.in[1] <== y;
    eq <== e.out;
    component z = IsZero();
    z.in <== small;
    zero <== z.out;

    component bits = Num2Bits(32);
    bits.in <== small;
    component num = Bits2Num(32);
    for (var i = 0; i < 32; i++) num.in[i] <== bits.out[i];
    back <== num.out;

    component m1 = Mux1();
    m1.c[0] <== x;
    m1.c[1] <== y;
    m1.s <== sel[0];
    mux1 <== m1.out;
    component m3 = Mux3();
    for (var i = 0; i < 8; i++) m3.c[i] <== c[i];
    for (var i = 0; i < 3; i++) m3.s[i] <== sel[i];
    mux3 <== m3.out;
}

component main = Zoo();
