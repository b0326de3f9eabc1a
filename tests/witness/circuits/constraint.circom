pragma circom 2.0.0;

// A failing === (not assert): out must equal a * b and also equal c.
template Check() {
    signal input a;
    signal input b;
    signal input c;
    signal output out;
    out <== a * b;
    out === c;
}

component main = Check();
