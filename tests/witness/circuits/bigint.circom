pragma circom 2.0.0;

// A small analogue of zk-email's RSAVerifier65537 witness code (circom-ecdsa / zk-email bigint_func style, written
// here from scratch): k-limb big integers of n-bit limbs, schoolbook products, and a long division whose quotient
// digits come from a normalised two-limb estimate corrected in a loop, all in circom functions whose loops, branches
// and array indices depend on the values: every signature takes the wasm another way.
// Parameters: N (limb bits), K (limbs).

// a + b over k limbs (k + 1 limbs out)
function long_add(n, k, a, b) {
    var out[20];
    var carry = 0;
    for (var i = 0; i < k; i++) {
        var s = a[i] + b[i] + carry;
        out[i] = s % (1 << n);
        carry = s \ (1 << n);
    }
    out[k] = carry;
    return out;
}

// a - b over k limbs, a >= b
function long_sub(n, k, a, b) {
    var out[20];
    var borrow = 0;
    for (var i = 0; i < k; i++) {
        if (a[i] >= b[i] + borrow) {
            out[i] = a[i] - b[i] - borrow;
            borrow = 0;
        } else {
            out[i] = a[i] + (1 << n) - b[i] - borrow;
            borrow = 1;
        }
    }
    return out;
}

// a (k limbs) * scalar s (< 2^n): k + 1 limbs
function long_scalar_mult(n, k, s, a) {
    var out[20];
    for (var i = 0; i <= k; i++) out[i] = 0;
    for (var i = 0; i < k; i++) {
        var t = out[i] + s * a[i];
        out[i] = t % (1 << n);
        out[i + 1] = out[i + 1] + t \ (1 << n);
    }
    return out;
}

// a * b, k limbs each: 2k limbs
function long_mul(n, k, a, b) {
    var out[20];
    for (var i = 0; i < 2 * k; i++) out[i] = 0;
    for (var i = 0; i < k; i++) {
        var carry = 0;
        for (var j = 0; j < k; j++) {
            var t = out[i + j] + a[i] * b[j] + carry;
            out[i + j] = t % (1 << n);
            carry = t \ (1 << n);
        }
        var at = i + k;
        while (carry > 0) {  // value-dependent trip count
            var t = out[at] + carry;
            out[at] = t % (1 << n);
            carry = t \ (1 << n);
            at++;
        }
    }
    return out;
}

// 1 if a > b (k limbs), from the top limb down: returns from inside the loop
function long_gt(n, k, a, b) {
    for (var i = k - 1; i >= 0; i--) {
        if (a[i] > b[i]) return 1;
        if (a[i] < b[i]) return 0;
    }
    return 0;
}

// the number of leading zero bits of x in an n-bit limb (a while loop as long as the value makes it)
function lead_zeros(n, x) {
    var z = 0;
    var y = x;
    if (y == 0) return n;
    while (y < (1 << (n - 1))) {
        y = y << 1;
        z++;
    }
    return z;
}

// a << s over k limbs (s < n): k + 1 limbs
function long_shl(n, k, a, s) {
    var out[20];
    var carry = 0;
    for (var i = 0; i < k; i++) {
        var t = (a[i] << s) + carry;
        out[i] = t % (1 << n);
        carry = t \ (1 << n);
    }
    out[k] = carry;
    return out;
}

// one quotient digit of a (k + 1 limbs) / b (k limbs, normalised: top bit set), a < b * 2^n
function short_div(n, k, a, b) {
    var qhat = (a[k] * (1 << n) + a[k - 1]) \ b[k - 1];
    if (qhat > (1 << n) - 1) qhat = (1 << n) - 1;
    var mult[20] = long_scalar_mult(n, k, qhat, b);
    var bb[20];
    for (var i = 0; i <= k; i++) bb[i] = i < k ? b[i] : 0;
    var over = long_gt(n, k + 1, mult, a);
    while (over == 1) {  // at most twice, as the values say
        qhat = qhat - 1;
        mult = long_sub(n, k + 1, mult, bb);
        over = long_gt(n, k + 1, mult, a);
    }
    return qhat;
}

// [quotient (m + 1 limbs), remainder (k limbs)] of a (m + k limbs) / b (k limbs), normalising b by its leading zeros
function long_div(n, k, m, a, b) {
    var out[2][20];
    var s = lead_zeros(n, b[k - 1]);
    var nb[20] = long_shl(n, k, b, s);
    var na[20] = long_shl(n, m + k, a, s);
    var rem[20];
    for (var i = 0; i <= m + k; i++) rem[i] = na[i];
    for (var i = m; i >= 0; i--) {
        var part[20];
        for (var j = 0; j <= k; j++) part[j] = rem[i + j];
        var q = short_div(n, k, part, nb);
        out[0][i] = q;
        var sub[20] = long_scalar_mult(n, k, q, nb);
        var res[20] = long_sub(n, k + 1, part, sub);
        for (var j = 0; j <= k; j++) rem[i + j] = res[j];
    }
    // the remainder, shifted back by s (bit by bit: a loop as long as the normalisation was)
    for (var t = 0; t < s; t++) {
        for (var j = 0; j < k; j++) {
            var low = rem[j + 1] % 2;
            rem[j] = (rem[j] \ 2) + low * (1 << (n - 1));
        }
        rem[k] = rem[k] \ 2;
    }
    for (var j = 0; j < k; j++) out[1][j] = rem[j];
    return out;
}

// a * b mod p (k limbs each)
function mul_mod(n, k, a, b, p) {
    var prod[20] = long_mul(n, k, a, b);
    var qr[2][20] = long_div(n, k, k, prod, p);
    var out[20];
    for (var i = 0; i < k; i++) out[i] = qr[1][i];
    return out;
}

// base^65537 mod p: sixteen squarings and a product
function pow65537(n, k, base, p) {
    var x[20];
    for (var i = 0; i < k; i++) x[i] = base[i];
    for (var r = 0; r < 16; r++) x = mul_mod(n, k, x, x, p);
    x = mul_mod(n, k, x, base, p);
    return x;
}

template BigModExp(n, k) {
    signal input signature[k];
    signal input modulus[k];
    signal input message[k];
    signal output out[k];
    signal output matches;
    signal output quotient[k + 1];

    var pw[20] = pow65537(n, k, signature, modulus);
    for (var i = 0; i < k; i++) out[i] <-- pw[i];
    // the long division's quotient of signature * message by the modulus, as a witness too
    var prod[20] = long_mul(n, k, signature, message);
    var qr[2][20] = long_div(n, k, k, prod, modulus);
    for (var i = 0; i <= k; i++) quotient[i] <-- qr[0][i];
    var eq = 1;
    for (var i = 0; i < k; i++) eq = eq * (pw[i] == message[i] ? 1 : 0);
    matches <-- eq;
    matches * (matches - 1) === 0;
}

component main = BigModExp({{N}}, {{K}});
