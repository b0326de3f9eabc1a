pragma circom 2.0.0;

// Control flow and operators whose course depends on input values, in the syntax every circom 2
// compiler takes (2.0.0 on), for the native engine's compiler matrix: loops bounded by values,
// recursion as deep as the inputs make it, \ and %, shifts by input amounts, bit operations,
// ternaries on signals, indices computed from values, assert and log.

function collatz(n) {
    var steps = 0;
    var x = n;
    while (x != 1 && steps < 300) {
        if (x % 2 == 0) { x = x \ 2; } else { x = 3 * x + 1; }
        steps++;
    }
    return steps;
}

function gcd(a, b) {
    if (b == 0) { return a; }
    return gcd(b, a % b);
}

function sum_to(n) {
    if (n == 0) { return 0; }
    return n + sum_to(n - 1);
}

function popcount(x, bits) {
    var c = 0;
    for (var i = 0; i < bits; i++) { c += (x >> i) & 1; }
    return c;
}

function digits(x) {
    var n = 0;
    var y = x;
    while (y > 0) { y = y \ 10; n++; }
    return n;
}

function pick(i) {
    var table[8] = [3, 1, 4, 1, 5, 9, 2, 6];
    return table[i % 8];
}

// bigint-style: x mod m by shift-and-subtract, bit by bit (a loop bounded by x's length)
function slow_mod(x, m) {
    var bits = 0;
    var y = x;
    while (y > 0) { y = y >> 1; bits++; }
    var r = 0;
    for (var i = bits; i > 0; i--) {
        r = (r << 1) + ((x >> (i - 1)) & 1);
        if (r >= m) { r = r - m; }
    }
    return r;
}

template Torture() {
    signal input a;
    signal input b;
    signal input s;
    signal input v[4];
    signal output out[18];

    out[0] <-- collatz(a % 1000 + 1);
    out[1] <-- gcd(a % 100000, b % 100000);
    out[2] <-- a \ (b + 1);
    out[3] <-- a % (b + 1);
    out[4] <-- a << (s % 300);
    out[5] <-- a >> s;
    out[6] <-- (a & b) ^ (a | s);
    out[7] <-- ~b;
    out[8] <-- a != 0 ? 1 / a : 0;
    out[9] <-- a > b ? a - b : b - a;
    out[10] <-- pick(a) * pick(b + 3);
    out[11] <-- popcount(a, 64);
    out[12] <-- digits(b % 1000000007);
    var acc = 0;
    for (var i = 0; i < 4; i++) {
        if (v[i] > 10) { acc += v[i] * i; } else { acc -= v[i]; }
    }
    out[13] <-- acc;
    out[14] <-- a ** 3 + b ** 2 - s;
    out[15] <-- sum_to(s % 64);
    out[16] <-- slow_mod(a, b % 1000 + 1);
    assert(s < 4294967296);
    log("a", a, "s", s);
    signal prod;
    prod <== a * b;
    out[17] <== prod + 1;
}

component main = Torture();
