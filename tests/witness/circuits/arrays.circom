pragma circom 2.0.0;

// 2-D array input, a public input, an assert and a log(); c = a^2 + sum b[i][0]*b[i][1].
template Arrays(N) {
    signal input a;
    signal input b[N][2];
    signal output c;
    signal p[N];
    for (var i = 0; i < N; i++) {
        p[i] <== b[i][0] * b[i][1];
    }
    var s = 0;
    for (var i = 0; i < N; i++) {
        s += p[i];
    }
    assert(a != 7);
    c <== a * a + s;
    log("c is", c);
}

component main {public [a]} = Arrays({{N}});
