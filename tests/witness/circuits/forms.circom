pragma circom 2.1.0;

// The control-flow run keeps each value in the form the operation that made it left it in (plain_forms.hpp):
// inputs arrive in Montgomery form, `\ 1` gives the same value in plain form. Every operator on each pairing of
// forms (plain x plain, Montgomery x plain, plain x Montgomery), for the differential test against the wasm.
template Forms() {
    signal input a;
    signal input b;
    signal output o[3][18];
    var x[3] = [a \ 1, a, a \ 1];
    var y[3] = [b \ 1, b \ 1, b];
    for (var i = 0; i < 3; i++) {
        o[i][0] <-- x[i] + y[i];
        o[i][1] <-- x[i] - y[i];
        o[i][2] <-- x[i] * y[i];
        o[i][3] <-- x[i] / y[i];
        o[i][4] <-- x[i] == y[i];
        o[i][5] <-- x[i] != y[i];
        o[i][6] <-- x[i] < y[i];
        o[i][7] <-- x[i] \ ((y[i] & 65535) + 1);      // never by 0
        o[i][8] <-- x[i] % ((y[i] >> 200) + 1);
        o[i][9] <-- x[i] & y[i];
        o[i][10] <-- -x[i] + y[i];
        o[i][11] <-- x[i] * x[i];
        o[i][12] <-- (x[i] & 65535) * y[i];           // a one-limb operand: integers or the field
        o[i][13] <-- (x[i] >> 130) * (y[i] >> 130);   // below 2^124 each: the integer product
        o[i][14] <-- (x[i] >> 126) * (y[i] >> 126);   // up to 2^256: past p, the field's
        o[i][15] <-- (x[i] & 255) ** (y[i] & 127);     // small powers in integers, or past 2^128 in the field
        o[i][16] <-- 1 / x[i] + y[i] * (x[i] \ 1);
        o[i][17] <-- (x[i] * y[i] + x[i]) \ 1;
    }
    signal c;
    c <== a * b;
}

component main = Forms();
