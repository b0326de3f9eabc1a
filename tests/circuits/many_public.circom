pragma circom 2.0.0;

// N public inputs and 4 outputs (nPublic = N + 4), plus one private input.
template ManyPublic(N) {
    signal input in[N];
    signal input secret;
    signal output sum;
    signal output prod;
    signal output sq;
    signal output mixed;
    signal p[N];
    var acc = 0;
    p[0] <== in[0] * secret;
    acc += in[0];
    for (var i = 1; i < N; i++) {
        p[i] <== p[i - 1] * in[i];
        acc += in[i];
    }
    prod <== p[N - 1];
    sum <== acc + secret;
    sq <== secret * secret;
    mixed <== sq * in[N - 1] - 3 * in[0] + 5;
}

component main {public [in]} = ManyPublic({{N}});
