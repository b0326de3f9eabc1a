"""The chain circuit of tests/circuits/chain.circom, emitted directly as circom
would compile it (no circom run: compiling 2^20 constraints takes a long time).

    template Chain(N) { signal input k; signal input x; signal output out;
                        s[0] <== x; s[i+1] <== s[i]*s[i] + k + i; out <== s[N]; }
    component main {public [k]} = Chain(N);

circom 2 (default --O1) writes, byte for byte (checked against circom2 in
tests/setup/test_chain_circuit.py):
  sections in the order 2 (constraints), 1 (header), 3 (wire -> label map);
  wires: 0 ONE, 1 out, 2 k, 3 x, 3+j = s[j] for 1 <= j < N (s[N] is out);
  constraint i:  A = [(s_i, -1)],  B = [(s_i, 1)],
                 C = [(ONE, i)] (only for i > 0), (k, 1), (s_{i+1}, -1), sorted by wire
                 (so the last constraint has out = wire 1 before k = wire 2);
  labels: 0 ONE, 1 out, 2 k, 3 x, 4 + j = s[j]  (nLabels = N + 5; wire w >= 4 -> label w + 1).
Witness (wtns v2): 1, out, k, x, s[1..N-1] with s[0] = x, s[i+1] = s[i]^2 + k + i.
"""

from __future__ import annotations

import struct

import numpy as np

from snarkd.curves.params import Curve


def _fe(x: int) -> np.ndarray:
    return np.frombuffer(x.to_bytes(32, "little"), dtype="<u4")


def _s_wire(j: int, n: int) -> int:
    if j == 0:
        return 3
    if j == n:
        return 1
    return 3 + j


def chain_r1cs_bytes(n: int, curve: Curve) -> bytes:
    """The .r1cs of Chain(n) on `curve`, as circom2 writes it."""
    if n < 1:
        raise ValueError("n must be >= 1")
    r = curve.r
    minus1, one = _fe(r - 1), _fe(1)
    # constraint i >= 1: fixed 192-byte record of 48 u32 words
    rec = np.dtype([
        ("na", "<u4"), ("wa", "<u4"), ("ca", "<u4", 8),
        ("nb", "<u4"), ("wb", "<u4"), ("cb", "<u4", 8),
        ("nc", "<u4"), ("w0", "<u4"), ("c0", "<u4", 8), ("wk", "<u4"), ("ck", "<u4", 8), ("wn", "<u4"), ("cn", "<u4", 8),
    ])
    assert rec.itemsize == 192
    parts = []
    # constraint 0 (no ONE term in C)
    cterms = sorted([(2, list(one)), (_s_wire(1, n), list(minus1))])
    c0 = [1, _s_wire(0, n), *minus1, 1, _s_wire(0, n), *one, 2] + [v for w, c in cterms for v in [w, *c]]
    parts.append(np.array(c0, dtype="<u4").tobytes())
    if n > 2:
        i = np.arange(1, n - 1, dtype=np.int64)
        a = np.zeros(n - 2, dtype=rec)
        si = 3 + i
        nxt = 4 + i
        a["na"] = 1
        a["wa"] = si
        a["ca"] = minus1
        a["nb"] = 1
        a["wb"] = si
        a["cb"] = one
        a["nc"] = 3
        a["w0"] = 0
        a["c0"][:, 0] = i & 0xFFFFFFFF
        a["c0"][:, 1] = i >> 32
        a["wk"] = 2
        a["ck"] = one
        a["wn"] = nxt
        a["cn"] = minus1
        parts.append(a.tobytes())
    if n > 1:  # the last constraint: C = ONE*(n-1), out*(-1), k
        i = n - 1
        last = [1, _s_wire(i, n), *minus1, 1, _s_wire(i, n), *one, 3, 0, *_fe(i), 1, *minus1, 2, *one]
        parts.append(np.array(last, dtype="<u4").tobytes())
    constraints = b"".join(parts)
    n_wires = n + 3
    n_labels = n + 5
    header = struct.pack("<I", 32) + r.to_bytes(32, "little") + struct.pack("<IIIIQI", n_wires, 1, 1, 1, n_labels, n)
    labels = np.arange(n_wires, dtype="<u8")
    labels[4:] += 1
    out = bytearray(b"r1cs" + struct.pack("<II", 1, 3))
    for sid, payload in ((2, constraints), (1, header), (3, labels.tobytes())):
        out += struct.pack("<IQ", sid, len(payload)) + payload
    return bytes(out)


def chain_witness(n: int, curve: Curve, k: int = 3, x: int = 2) -> list[int]:
    r = curve.r
    s = [x % r]
    for i in range(n):
        s.append((s[i] * s[i] + k + i) % r)
    return [1, s[n], k % r, x % r] + s[1:n]


def wtns_bytes(values: list[int], curve: Curve) -> bytes:
    """wtns version 2: §1 n8, prime, count; §2 the plain values."""
    r = curve.r
    body = b"".join(v.to_bytes(32, "little") for v in values)
    hdr = struct.pack("<I", 32) + r.to_bytes(32, "little") + struct.pack("<I", len(values))
    out = bytearray(b"wtns" + struct.pack("<II", 2, 2))
    out += struct.pack("<IQ", 1, len(hdr)) + hdr
    out += struct.pack("<IQ", 2, len(body)) + body
    return bytes(out)
