pragma circom 2.1.0;

// Every circom operator on two inputs, as the witness computes it (<-- : no constraint on the
// results), for the native engine's differential test against the wasm.
template Ops() {
    signal input a;
    signal input b;
    signal input k;   // a shift amount (any field value: negative shifts the other way)
    signal output o[33];
    o[0] <-- a + b;
    o[1] <-- a - b;
    o[2] <-- a * b;
    o[3] <-- a / b;            // b = 0 gives 0 (the inverse of 0 is 0)
    o[4] <-- a ** b;
    o[5] <-- -a;
    o[6] <-- a \ (b * b + 1);  // never by 0 unless b * b = -1
    o[7] <-- a % (b * b + 1);
    o[8] <-- a < b;
    o[9] <-- a > b;
    o[10] <-- a <= b;
    o[11] <-- a >= b;
    o[12] <-- a == b;
    o[13] <-- a != b;
    o[14] <-- a && b;
    o[15] <-- a || b;
    o[16] <-- !a;
    o[17] <-- a & b;
    o[18] <-- a | b;
    o[19] <-- a ^ b;
    o[20] <-- ~a;
    o[21] <-- a << k;
    o[22] <-- a >> k;
    o[23] <-- (a >> 3) & 1;
    o[24] <-- a << 200;
    o[25] <-- a >> 253;
    o[26] <-- a != 0 ? 1 / a : 0;
    o[27] <-- a > b ? a - b : b - a;
    o[28] <-- a * a;
    o[29] <-- (a & 255) * b;
    var x = a;
    if (b == 1) { x = x * 2; } else { x = x + 7; }
    o[30] <-- x;
    o[31] <-- (b == 2) ? (a \ 3) : 5;  // a partial op in one arm: a guard, not a select
    o[32] <-- a * b + b;
    signal c;
    c <== a * b;
}

component main = Ops();
