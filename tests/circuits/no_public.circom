pragma circom 2.0.0;

// Zero public signals: no outputs and no public inputs (nPublic = 0).
template NoPublic() {
    signal input a;
    signal input b;
    signal c;
    signal d;
    signal e;
    c <== a * b;
    d <== c * a + 7;
    e <== d * d - b;
}

component main = NoPublic();
