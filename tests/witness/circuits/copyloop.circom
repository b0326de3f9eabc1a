pragma circom 2.1.0;

// Arrays copied element by element (circom's copy loop: the count tested, Fr_copy of two pushes, both pointers and
// the count stepped, br back: interp.hpp runs its iterations in LA_SET3's handler), of lengths 1 to 8, through
// function arguments and results and into a signal array, for the control-flow run's differential test.
function rev(n, a) {
    var r[8];
    for (var i = 0; i < n; i++) { r[i] = a[n - 1 - i]; }
    return r;
}

function scale(a, k) {
    var r[8] = a;
    for (var i = 0; i < 8; i++) { r[i] = r[i] * k + i; }
    return r;
}

template CopyLoop() {
    signal input a[8];
    signal input k;
    signal output o[21];
    var x[8] = a;
    var y[8] = rev(8, x);
    var z[8] = scale(y, k);
    var one[1] = [a[3]];
    var two[2][3];
    for (var i = 0; i < 2; i++) { for (var j = 0; j < 3; j++) { two[i][j] = a[i * 3 + j] + k; } }
    var t[3] = two[1];
    signal s[8];
    s <-- z;
    for (var i = 0; i < 8; i++) { o[i] <-- s[i] + x[i]; }
    for (var i = 0; i < 8; i++) { o[8 + i] <-- y[i]; }
    o[16] <-- one[0];
    o[17] <-- t[0];
    o[18] <-- t[1];
    o[19] <-- t[2];
    o[20] <-- z[7];
}

component main = CopyLoop();
