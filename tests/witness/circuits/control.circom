pragma circom 2.1.0;

include "circomlib/comparators.circom";

// Control flow that depends on input values: a while whose trip count depends on an input,
// ternaries on signals, \ and %, an array index computed from an input, assert and log.
function steps_to_one(n) {
    var steps = 0;
    var x = n;
    while (x != 1 && steps < 200) {
        if (x % 2 == 0) { x = x \ 2; } else { x = 3 * x + 1; }
        steps++;
    }
    return steps;
}

function pick(i) {
    var table[4] = [11, 22, 33, 44];
    return table[i % 4];
}

template Control() {
    signal input a;
    signal input b;
    signal output steps;
    signal output q;
    signal output r;
    signal output inv;
    signal output diff;
    signal output picked;
    signal output same;
    steps <-- steps_to_one(a);
    q <-- a \ (b + 1);
    r <-- a % (b + 1);
    inv <-- b != 0 ? 1 / b : 0;
    diff <-- a > b ? a - b : b - a;
    log("a", a, "b", b, "steps", steps);
    assert(a < 1000000);
    picked <-- pick(a);
    component eq = IsEqual();
    eq.in[0] <== a;
    eq.in[1] <== b;
    same <== eq.out;
}

component main = Control();
