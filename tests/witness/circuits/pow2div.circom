pragma circom 2.1.0;

// Integer division and remainder by powers of two (circom_field.hpp's power_of_two path: zk-email's `x \ (1 << n)`,
// `x % (1 << n)`), by every shift the test draws, and by one-limb and wider divisors that are not powers of two,
// for the control-flow run's differential test against the wasm; each quotient also tested for truth and compared
// (a comparison, then Fr_isTrue of what it wrote: the interpreter's fused test).
template Pow2Div() {
    signal input a;
    signal input k;   // 0 <= k < bitlen(p)
    signal output o[8];
    var d = 1 << k;
    o[0] <-- a \ d;
    o[1] <-- a % d;
    o[2] <-- a \ (d + 1);
    o[3] <-- a % (d + 3);
    o[4] <-- a \ (1 << 121);
    o[5] <-- a % (1 << 121);
    var n = 0;
    for (var i = 0; i < 4; i++) {
        if (a \ (d * (i + 1)) > i) { n += 1; }
    }
    o[6] <-- n;
    o[7] <-- (a \ d) != 0 ? 1 : 2;
}

component main = Pow2Div();
