pragma circom 2.0.0;

// s[0] = x (private), s[i+1] = s[i]^2 + k + i, out = s[N].
// Constraints: N (the s[0] and out assignments are signal-to-signal and are
// removed by circom's default --O1). Public signals: out, k (nPublic = 2).
template Chain(N) {
    signal input k;
    signal input x;
    signal output out;
    signal s[N + 1];
    s[0] <== x;
    for (var i = 0; i < N; i++) {
        s[i + 1] <== s[i] * s[i] + k + i;
    }
    out <== s[N];
}

component main {public [k]} = Chain({{N}});
