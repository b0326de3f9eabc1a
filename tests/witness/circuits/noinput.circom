pragma circom 2.0.0;

// A circuit without inputs: every value is a constant.
template NoInput() {
    signal output out;
    signal t;
    t <-- 6;
    out <== t * 7;
}

component main = NoInput();
