pragma circom 2.1.0;

// Sums and differences assigned to variables (circom's wasm: Fr_add or Fr_sub into a temporary, then Fr_copy of
// one push naming it: interp.hpp writes the copy in the add's handler), literals copied into variables and signals
// (copy_elem's literal path), in both value forms and mixed with products; loops whose exit test (a comparison,
// Fr_isTrue, i32.eqz, br_if: taken in the comparison's handler) depends on the inputs; elements indexed by values
// (Fr_toInt, then the scaled address: taken in Fr_toInt's handler); `===` checked
// (Fr_eq, Fr_isTrue, i32.eqz, if: taken in the comparison's handler); `if`s and `?:` on comparisons. For the
// control-flow run's differential test.
function acc(n, a, k) {
    var s = 0;
    for (var i = 0; i < n; i++) {
        s = s + a[i];
        s = s - k;
        var t = s * k;
        s = s + t;
        s = s - 1;
    }
    return s;
}

template AddCopy() {
    signal input a[8];
    signal input k;
    signal output o[24];
    var x = a[0] + a[1];
    var y = x - k;
    var z[8];
    for (var i = 0; i < 8; i++) { z[i] = a[i] + i; }
    var w = 7;
    var v = w;
    var lit = 0;
    for (var i = 0; i < 8; i++) { lit = lit + 3; }
    var m = a[2] * k;
    var n = m + k;
    var q = 5 - lit;
    o[0] <-- x;
    o[1] <-- y;
    for (var i = 0; i < 8; i++) { o[2 + i] <-- z[i] - w; }
    o[10] <-- acc(8, a, k);
    o[11] <-- v + lit;
    o[12] <-- n - m;
    o[13] <-- q;
    o[14] <-- 0;
    o[15] <-- 1023;
    var b = a[0] % 5;
    var c = 0;
    for (var i = 0; i < b; i++) { c = c + k; }
    var d = 0;
    while (d < b) { d += 2; }
    o[16] <-- c;
    o[17] <-- d;
    o[18] <-- z[b] + acc(b, a, k);
    var e = 0;
    if (b < 3) { e = k; } else { e = k + 1; }
    var f = 0;
    if (b >= 2) { f = 5; }
    if (b != 1) { f = f + 7; }
    o[19] <-- e;
    o[20] <-- f;
    var g = b < 2 ? k : 3;
    var h = 0;
    if (!(b < 4)) { h = 1; }
    var j = 0;
    if (b < 4 && b > 0) { j = 2; }
    if (b == 0 || b == 4) { j = j + 3; }
    o[21] <-- g;
    o[22] <-- h;
    o[23] <-- j;
    // an assertion (Fr_eq, Fr_isTrue, i32.eqz, if): fails where a[0] is 7
    signal sq;
    sq <-- k * k + (a[0] == 7 ? 1 : 0);
    sq === k * k;
}

component main = AddCopy();
