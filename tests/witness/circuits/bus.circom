pragma circom 2.2.0;

// circom 2.2 bus inputs: qualified names p.x, ps[0].x, ... (snarkjs's circom_runtime
// cannot set these; circom's own generated witness_calculator.js can).
bus Point() {
    signal x;
    signal y;
}

template Bus() {
    input Point() p;
    input Point() ps[2];
    signal input k;
    signal output out;
    signal t[2];
    t[0] <== ps[0].x * ps[1].y;
    t[1] <== p.x * p.y;
    out <== t[0] + t[1] + k;
}

component main = Bus();
