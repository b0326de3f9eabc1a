pragma circom 2.0.0;

include "circomlib/comparators.circom";
include "circomlib/bitify.circom";

// circomlib: out = (a < b) for 16-bit a, b; bits of a exposed as a number check.
template CmpBits() {
    signal input a;
    signal input b;
    signal output lt;
    signal output a_low;
    component lessThan = LessThan(16);
    lessThan.in[0] <== a;
    lessThan.in[1] <== b;
    lt <== lessThan.out;
    component bits = Num2Bits(16);
    bits.in <== a;
    a_low <== bits.out[0] + 2 * bits.out[1];
}

component main {public [b]} = CmpBits();
