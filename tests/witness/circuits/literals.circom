pragma circom 2.1.0;

// The control-flow run marks a circom short literal once it has checked its bytes (record.hpp's LITERAL: the next
// read takes its short value without the checks) and keeps the inverses it computed (`/`). Literals here are read
// again and again in loops (0, 1, the bounds, 1023, the largest marked, and 1024 and past, which are not marked;
// negative ones), copied into vars that are then overwritten, and divided by: the same constant every iteration
// (zk-email's `in[i] / (1 << n)`), a divisor per iteration, and powers of two whose inverses recur.
template Literals(n) {
    signal input a;
    signal input b;
    signal output o[n][9];
    var acc = 0;
    var neg = -1;
    for (var i = 0; i < n; i++) {
        var x = a + i;
        o[i][0] <-- x / (1 << 121) + 1023 * i;
        o[i][1] <-- (x * 1024 + 1) / (b + i + 1);
        o[i][2] <-- (x & 1023) + (x >> 3) - 1 - neg;
        o[i][3] <-- (x & 65535) < 1000 ? 7 : -7;
        var c = 0;
        for (var j = 0; j < 5; j++) {
            c += 3;
            c = c * 2 - 1;
        }
        o[i][4] <-- c + (x % 1021) - 1023;
        acc = acc * 17 + i - 5;
        o[i][5] <-- acc;
        o[i][6] <-- 0 - x + 100000;
        o[i][7] <-- 1 / (1 << (i % 3)) + 1 / (b \ 1 + 1);
        var y = 1024;
        y = y - 1;
        o[i][8] <-- y * 1023 - 1022;
    }
    signal c2;
    c2 <== a * b;
}

component main = Literals(6);
