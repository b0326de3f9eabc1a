pragma circom 2.0.0;

// One template, several instances that differ only in their parameters: circom writes a _run function per
// instance, the same code but for the constants (the compiled translator's shared bodies, round 30). A value-
// dependent loop (a count of the set bits, by shifting) keeps the compiled library on the path. The outputs are
// hints only (<--): no constraint is the point here, the witness is.
template Scale(k, c) {
    signal input in[3];
    signal output out[3];
    var bits = 0;
    var x = in[0] + k;
    for (var i = 0; i < 40; i++) {
        if ((x >> i) & 1 == 1) {
            bits += 1;
        }
    }
    for (var i = 0; i < 3; i++) {
        out[i] <-- in[i] * k + c + bits;
    }
}

template Main() {
    signal input a[3];
    signal output b[3];
    component s1 = Scale(3, 11);
    component s2 = Scale(5, 1000003);
    component s3 = Scale(77, 2);
    s1.in <== a;
    s2.in <== s1.out;
    s3.in <== s2.out;
    b <== s3.out;
}

component main = Main();
