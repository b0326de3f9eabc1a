pragma circom 2.1.0;

// The control-flow run's comparisons of two plain values and its products are done in the interpreter's handler
// (plain_forms.hpp's binary_direct), the rest by binary_to: every comparison on each pairing of forms, operands
// whose circom order (values above p/2 negative) differs from their integer order, equal operands, and products
// with a literal 0 and 1, for the differential test against the wasm.
template Compare() {
    signal input a;
    signal input b;
    signal output o[3][12];
    var x[3] = [a \ 1, a, a \ 1];
    var y[3] = [b \ 1, b \ 1, b];
    for (var i = 0; i < 3; i++) {
        var n = 0 - x[i];  // circom's -x: above p/2 when x is small
        o[i][0] <-- x[i] < y[i];
        o[i][1] <-- x[i] > y[i];
        o[i][2] <-- x[i] <= y[i];
        o[i][3] <-- x[i] >= y[i];
        o[i][4] <-- x[i] == x[i] \ 1;
        o[i][5] <-- x[i] != y[i];
        o[i][6] <-- n < y[i];
        o[i][7] <-- n >= x[i] \ 1;
        o[i][8] <-- (x[i] \ 1) <= (x[i] \ 1);
        o[i][9] <-- x[i] * 0 + y[i] * 1;
        o[i][10] <-- (x[i] < y[i]) * y[i] + (x[i] > y[i]) * x[i];
        o[i][11] <-- (n > y[i]) + (n <= y[i] \ 1) * 2;
    }
    signal c;
    c <== a * b;
}

component main = Compare();
