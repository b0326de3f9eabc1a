pragma circom 2.0.0;

// s[i+1] = s[i]^2 + k + i: full-size field values after a few steps.
template Chain(N) {
    signal input x;
    signal input k;
    signal output out;
    signal s[N+1];
    s[0] <== x;
    for (var i = 0; i < N; i++) {
        s[i+1] <== s[i]*s[i] + k + i;
    }
    out <== s[N];
}

component main {public [k]} = Chain(100);
