"""Seeded mutators for the fuzz harness: binfileutils containers (.zkey, .wtns,
.r1cs) and snarkjs JSON (proof, vk, public, input.json).

Every mutation is a pure function of (seed bytes, random.Random): a case is
reproduced from its target, seed and index alone, so a crash that kills the
process can be replayed. Each mutator returns the new data and a short name of
what it did (the fuzz report counts outcomes per mutation kind).

Binary mutations know the container layout (magic, version, section headers)
so that many mutants get past the first checks and reach the section parsers:
integer fields at structural offsets get boundary values, sections are dropped,
duplicated, reordered or resized, and field elements get q, r, q - 1, 2^256 - 1.
"""

from __future__ import annotations

import copy
import json
import random
import struct

Q = {
    32: 21888242871839275222246405745257275088696311157297823662689037894645226208583,
    48: 0x1A0111EA397FE69A4B1BA7B6434BACD764774B84F38512BF6730D2A0F6B0F6241EABFFFEB153FFFFB9FEFFFFFFFFAAAB,
}
R_BN = 21888242871839275222246405745257275088548364400416034343698204186575808495617
R_BLS = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001

INTERESTING_U32 = [0, 1, 2, 3, 4, 7, 8, 12, 16, 31, 32, 33, 47, 48, 64, 255, 256, 0x7FFF, 0xFFFF, 0x10000,
                   0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]
INTERESTING_U64 = INTERESTING_U32 + [1 << 32, (1 << 32) + 1, 1 << 40, 1 << 62, 1 << 63, (1 << 64) - 1]


# -- container layout ----------------------------------------------------------


def sections(data: bytes) -> list[tuple[int, int, int]]:
    """[(id, header offset, payload size)] as far as the container parses."""
    out = []
    if len(data) < 12:
        return out
    n = struct.unpack_from("<I", data, 8)[0]
    pos = 12
    for _ in range(min(n, 64)):
        if pos + 12 > len(data):
            break
        sid, size = struct.unpack_from("<IQ", data, pos)
        out.append((sid, pos, size))
        if size > len(data):
            break
        pos += 12 + size
    return out


def split(data: bytes):
    """(header 12 bytes, [(id, payload)]) of a well-formed container."""
    secs = []
    for sid, off, size in sections(data):
        secs.append((sid, data[off + 12 : off + 12 + size]))
    return data[:12], secs


def join(head: bytes, secs, n_sections: int | None = None) -> bytes:
    n = len(secs) if n_sections is None else n_sections
    parts = [head[:8] + struct.pack("<I", n)]
    for sid, payload in secs:
        parts.append(struct.pack("<IQ", sid, len(payload)))
        parts.append(bytes(payload))
    return b"".join(parts)


def _structural_offsets(data: bytes) -> list[tuple[int, int]]:
    """(offset, width) of integer fields worth hitting: container and section
    headers, and the first words of every payload (the format headers)."""
    offs = [(4, 4), (8, 4)]
    for _, off, size in sections(data):
        offs += [(off, 4), (off + 4, 8)]
        for k in range(0, min(size, 96), 4):
            offs.append((off + 12 + k, 4))
        for k in range(0, min(size, 64), 8):
            offs.append((off + 12 + k, 8))
    return [(o, w) for o, w in offs if o + w <= len(data)]


# -- binary mutations ------------------------------------------------------------


def _flip_bits(d: bytearray, rng: random.Random) -> str:
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(d))
        d[i] ^= 1 << rng.randrange(8)
    return "flip_bits"


def _set_bytes(d: bytearray, rng: random.Random) -> str:
    i = rng.randrange(len(d))
    n = rng.randint(1, 8)
    v = rng.choice([0x00, 0xFF, 0x7F, 0x80, 0x01])
    d[i : i + n] = bytes([v]) * len(d[i : i + n])
    return "set_bytes"


def _int_field(d: bytearray, rng: random.Random) -> str:
    offs = _structural_offsets(bytes(d))
    if not offs:
        return _flip_bits(d, rng)
    off, w = rng.choice(offs)
    old = int.from_bytes(d[off : off + w], "little")
    pool = INTERESTING_U32 if w == 4 else INTERESTING_U64
    v = rng.choice(pool + [old + 1, old - 1, old * 2, old // 2, len(d), len(d) - off])
    d[off : off + w] = (v % (1 << (8 * w))).to_bytes(w, "little")
    return "int_field"


def _field_element(d: bytearray, rng: random.Random, n8: int) -> str:
    """Overwrite an aligned n8-byte word inside a payload with a boundary value."""
    secs = [(off, size) for _, off, size in sections(bytes(d)) if size >= n8]
    if not secs:
        return _flip_bits(d, rng)
    off, size = rng.choice(secs)
    pos = off + 12 + rng.randrange(size // n8) * n8
    q = Q.get(n8, (1 << (8 * n8)) - 1)
    r = R_BN if rng.random() < 0.5 else R_BLS
    v = rng.choice([0, 1, q, q - 1, q + 1, r, r - 1, r + 1, (1 << (8 * n8)) - 1, 1 << (8 * n8 - 1)])
    v %= 1 << (8 * n8)
    if pos + n8 <= len(d):
        d[pos : pos + n8] = v.to_bytes(n8, "little")
    return "field_element"


def _truncate(d: bytearray, rng: random.Random) -> str:
    cut = rng.choice([rng.randrange(len(d)), len(d) - rng.randint(1, 16), rng.randint(0, 40)])
    del d[max(cut, 0) :]
    return "truncate"


def _extend(d: bytearray, rng: random.Random) -> str:
    d.extend(rng.randbytes(rng.choice([1, 4, 12, 100])) if rng.random() < 0.5 else bytes(rng.choice([1, 8, 64])))
    return "extend"


def _delete_range(d: bytearray, rng: random.Random) -> str:
    i = rng.randrange(len(d))
    del d[i : i + rng.choice([1, 4, 8, 32, 64, 256])]
    return "delete_range"


def _duplicate_range(d: bytearray, rng: random.Random) -> str:
    i = rng.randrange(len(d))
    n = rng.choice([4, 8, 32, 64])
    d[i:i] = d[i : i + n]
    return "duplicate_range"


def _section_op(d: bytearray, rng: random.Random) -> str:
    head, secs = split(bytes(d))
    if not secs:
        return _flip_bits(d, rng)
    op = rng.choice(["drop", "dup", "swap_order", "swap_payload", "resize", "renumber", "n_sections", "empty"])
    i = rng.randrange(len(secs))
    j = rng.randrange(len(secs))
    n_override = None
    if op == "drop":
        del secs[i]
    elif op == "dup":
        secs.insert(j, secs[i])
    elif op == "swap_order":
        secs[i], secs[j] = secs[j], secs[i]
    elif op == "swap_payload":
        secs[i], secs[j] = (secs[i][0], secs[j][1]), (secs[j][0], secs[i][1])
    elif op == "resize":
        sid, p = secs[i]
        k = rng.choice([1, 4, 8, 32, 64, 96])
        secs[i] = (sid, p[:-k] if rng.random() < 0.5 and len(p) >= k else p + bytes(k))
    elif op == "renumber":
        secs[i] = (rng.choice([0, 11, 99, 0xFFFFFFFF, secs[j][0]]), secs[i][1])
    elif op == "n_sections":
        n_override = rng.choice([0, len(secs) - 1, len(secs) + 1, 0xFFFFFFFF])
    else:
        secs[i] = (secs[i][0], b"")
    d[:] = join(head, secs, n_override)
    return f"section_{op}"


def _splice(d: bytearray, rng: random.Random, others: list[bytes]) -> str:
    """A section payload taken from another seed (another circuit or curve)."""
    if not others:
        return _flip_bits(d, rng)
    head, secs = split(bytes(d))
    _, osecs = split(rng.choice(others))
    if not secs or not osecs:
        return _flip_bits(d, rng)
    sid, payload = rng.choice(osecs)
    secs = [(s, payload if s == sid else p) for s, p in secs]
    d[:] = join(head, secs)
    return "splice"


def mutate_binary(data: bytes, rng: random.Random, n8: int = 32, others: list[bytes] | None = None) -> tuple[bytes, str]:
    """One to three stacked mutations of a container."""
    d = bytearray(data)
    names = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if not d:
            d.extend(rng.randbytes(rng.randint(1, 64)))
            names.append("refill")
            continue
        kind = rng.choices(
            ["flip", "set", "int", "fe", "trunc", "ext", "del", "dup", "sec", "splice"],
            weights=[18, 6, 22, 12, 8, 3, 4, 3, 18, 6],
        )[0]
        if kind == "flip":
            names.append(_flip_bits(d, rng))
        elif kind == "set":
            names.append(_set_bytes(d, rng))
        elif kind == "int":
            names.append(_int_field(d, rng))
        elif kind == "fe":
            names.append(_field_element(d, rng, n8))
        elif kind == "trunc":
            names.append(_truncate(d, rng))
        elif kind == "ext":
            names.append(_extend(d, rng))
        elif kind == "del":
            names.append(_delete_range(d, rng))
        elif kind == "dup":
            names.append(_duplicate_range(d, rng))
        elif kind == "sec":
            names.append(_section_op(d, rng))
        else:
            names.append(_splice(d, rng, others or []))
    return bytes(d), "+".join(names)


# -- structure-aware key and witness damage (files that still parse) -------------


def _section_payload(data: bytes, sid: int) -> tuple[int, int] | None:
    for s, off, size in sections(data):
        if s == sid:
            return off + 12, size
    return None


def damage_zkey(data: bytes, rng: random.Random, n8q: int) -> tuple[bytes, str]:
    """Damage that a parser cannot see or only a point check sees: bits flipped
    in coordinates, points swapped or zeroed, coefficients changed."""
    d = bytearray(data)
    g1, g2 = 2 * n8q, 4 * n8q
    sid = rng.choice([2, 3, 4, 5, 6, 7, 8, 9])
    loc = _section_payload(data, sid)
    if loc is None or loc[1] == 0:
        return mutate_binary(data, rng, n8q)
    off, size = loc
    if sid == 4:  # coefs: u32 count, then (u32 matrix, u32 constraint, u32 signal, 32-byte value)
        n = (size - 4) // 44
        if n == 0:
            return mutate_binary(data, rng, n8q)
        e = off + 4 + 44 * rng.randrange(n)
        what = rng.choice(["matrix", "constraint", "signal", "value_bit", "value_swap"])
        if what == "matrix":
            d[e] ^= 1
        elif what == "constraint":
            struct.pack_into("<I", d, e + 4, struct.unpack_from("<I", d, e + 4)[0] ^ 1)
        elif what == "signal":
            struct.pack_into("<I", d, e + 8, struct.unpack_from("<I", d, e + 8)[0] ^ 1)
        elif what == "value_bit":
            d[e + 12 + rng.randrange(31)] ^= 1 << rng.randrange(8)
        else:
            f = off + 4 + 44 * rng.randrange(n)
            d[e + 12 : e + 44], d[f + 12 : f + 44] = d[f + 12 : f + 44], d[e + 12 : e + 44]
        return bytes(d), f"zkey_coef_{what}"
    if sid == 2:  # header: damage one of the six points
        n8r = 32
        start = off + 4 + n8q + 4 + n8r + 12
        widths = [g1, g1, g2, g2, g1, g2]
        k = rng.randrange(6)
        p = start + sum(widths[:k])
        what = rng.choice(["bit", "zero", "swap"])
        if what == "bit":
            d[p + rng.randrange(widths[k] - 1)] ^= 1 << rng.randrange(8)
        elif what == "zero":
            d[p : p + widths[k]] = bytes(widths[k])
        else:  # alpha1 <-> beta1, or delta1 -> alpha1, beta2 <-> gamma2 ...
            same = [j for j in range(6) if widths[j] == widths[k] and j != k]
            j = rng.choice(same)
            pj = start + sum(widths[:j])
            d[p : p + widths[k]], d[pj : pj + widths[k]] = d[pj : pj + widths[k]], d[p : p + widths[k]]
        return bytes(d), f"zkey_header_{what}"
    w = g2 if sid == 7 else g1
    n = size // w
    if n == 0:
        return mutate_binary(data, rng, n8q)
    i = rng.randrange(n)
    p = off + i * w
    what = rng.choice(["bit", "bit", "zero", "swap", "copy", "low_byte"])
    if what == "bit":
        d[p + rng.randrange(w - 1)] ^= 1 << rng.randrange(8)
    elif what == "low_byte":
        d[p] ^= rng.randint(1, 255)
    elif what == "zero":
        d[p : p + w] = bytes(w)
    else:
        j = rng.randrange(n)
        pj = off + j * w
        if what == "swap":
            d[p : p + w], d[pj : pj + w] = d[pj : pj + w], d[p : p + w]
        else:
            d[p : p + w] = d[pj : pj + w]
    return bytes(d), f"zkey_points_{sid}_{what}"


def damage_wtns(data: bytes, rng: random.Random, prime: int, other: bytes | None = None) -> tuple[bytes, str]:
    """A witness that still parses: values changed, swapped, or taken from another witness."""
    loc = _section_payload(data, 2)
    if loc is None or loc[1] < 64:
        return mutate_binary(data, rng, 32)
    off, size = loc
    n = size // 32
    d = bytearray(data)
    i = rng.randrange(1, n)
    p = off + 32 * i
    what = rng.choice(["bit", "add1", "zero", "r_minus_1", "swap", "other", "one"])
    if what == "bit":
        d[p + rng.randrange(31)] ^= 1 << rng.randrange(8)
    elif what == "add1":
        v = (int.from_bytes(d[p : p + 32], "little") + 1) % prime
        d[p : p + 32] = v.to_bytes(32, "little")
    elif what == "zero":
        d[p : p + 32] = bytes(32)
    elif what == "r_minus_1":
        d[p : p + 32] = (prime - 1).to_bytes(32, "little")
    elif what == "swap":
        j = rng.randrange(1, n)
        pj = off + 32 * j
        d[p : p + 32], d[pj : pj + 32] = d[pj : pj + 32], d[p : p + 32]
    elif what == "one":
        d[off : off + 32] = (2).to_bytes(32, "little")  # w[0] must be 1
    else:
        oloc = _section_payload(other, 2) if other else None
        if oloc is None or oloc[1] != size:
            d[p : p + 32] = bytes(32)
        else:  # the tail of another (valid) witness of the same circuit: a mixed-up witness
            k = rng.randrange(1, n)
            d[off + 32 * k : off + size] = other[oloc[0] + 32 * k : oloc[0] + size]
    return bytes(d), f"wtns_{what}"


# -- JSON mutations ----------------------------------------------------------------


def _paths(obj, prefix=()):
    """Every path (tuple of keys/indices) in a JSON value, the root included."""
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, prefix + (i,))


def _get(obj, path):
    for k in path:
        obj = obj[k]
    return obj


def _set(obj, path, value):
    if not path:
        return value
    _get(obj, path[:-1])[path[-1]] = value
    return obj


def _number_variants(s: str, rng: random.Random, q: int, r: int) -> list:
    try:
        x = int(s)
    except (TypeError, ValueError):
        x = rng.randrange(q)
    return [
        "0", "1", str(q), str(q - 1), str(q + 1), str(x + q), str(r), str(r - 1), str(r + 1), str(x + r),
        "-1", "-" + str(x), str(q - x) if x else "0", " " + str(x), str(x) + " ", "+" + str(x), "0x" + format(x, "x"),
        "0X" + format(x, "X"), "", "abc", "1.5", "1e3", str(x) + "0", str(x)[:-1] or "0", "0" + str(x),
        str(x ^ (1 << rng.randrange(max(x.bit_length(), 1)))), str(x + 1), str(max(x - 1, 0)), "9" * 2000,
        x, x % (1 << 53), -x, float(x % 1000), None, True, [], {}, [str(x)], str(x) + "\u0000",
        "١٢٣",  # Arabic-Indic digits: str.isdigit() is True, the regexes say no
    ]


def mutate_json(obj, rng: random.Random, q: int, r: int) -> tuple[object, str]:
    """Structure-aware mutation of a parsed JSON value (proof, vk, public, inputs)."""
    obj = copy.deepcopy(obj)
    paths = list(_paths(obj))
    path = rng.choice(paths)
    node = _get(obj, path)
    ops = ["number", "number", "number", "delete", "insert_key", "dup_elem", "drop_elem", "swap_elem",
           "retype", "string_field", "deep", "wrap", "projective", "negate", "infinity"]
    op = rng.choice(ops)
    if op == "number":
        leaves = [p for p in paths if isinstance(_get(obj, p), (str, int)) and not isinstance(_get(obj, p), bool)]
        if leaves:
            path = rng.choice(leaves)
            obj = _set(obj, path, rng.choice(_number_variants(_get(obj, path), rng, q, r)))
    elif op == "delete" and path:
        parent = _get(obj, path[:-1])
        del parent[path[-1]]
    elif op == "insert_key" and isinstance(node, dict):
        node[rng.choice(["extra", "protocol", "curve", "nPublic", "pi_a", ""])] = rng.choice(["x", 1, None, [], "groth16"])
    elif op == "dup_elem" and isinstance(node, list) and node:
        node.insert(rng.randrange(len(node) + 1), copy.deepcopy(rng.choice(node)))
    elif op == "drop_elem" and isinstance(node, list) and node:
        del node[rng.randrange(len(node))]
    elif op == "swap_elem" and isinstance(node, list) and len(node) > 1:
        i, j = rng.sample(range(len(node)), 2)
        node[i], node[j] = node[j], node[i]
    elif op == "retype":
        obj = _set(obj, path, rng.choice([None, 0, "0", [], {}, [node], {"x": node}, True, 1.5]))
    elif op == "string_field" and isinstance(obj, dict):
        key = rng.choice(["protocol", "curve"])
        obj[key] = rng.choice(["groth16", "plonk", "fflonk", "Groth16", "GROTH16", "groth16 ", "", None, 16,
                               "bn128", "bn254", "BN128", "alt_bn128", "alt-bn128", "bls12381", "bls12-381",
                               "BLS12_381", "secp256k1", "bn 128", "bn128\n"])
    elif op == "deep":
        # a placeholder that dumps() turns into text nested this deep (no Python recursion here)
        obj = _set(obj, path, f"{_DEEP}{rng.choice([50, 1000, 100000])}")
    elif op == "wrap":
        obj = _set(obj, path, [node])
    elif op in ("projective", "negate", "infinity"):
        pts = [p for p in paths if _is_point(_get(obj, p))]
        if pts:
            path = rng.choice(pts)
            obj = _set(obj, path, _point_op(op, _get(obj, path), rng, q))
    else:
        op = "noop"
    return obj, f"json_{op}"


def _is_point(v) -> bool:
    if not isinstance(v, list) or len(v) != 3:
        return False
    if all(isinstance(c, str) for c in v):
        return True
    return all(isinstance(c, list) and len(c) == 2 and all(isinstance(e, str) for e in c) for c in v)


def _f2mul(a, b, q):
    return ((a[0] * b[0] - a[1] * b[1]) % q, (a[0] * b[1] + a[1] * b[0]) % q)


def _point_op(op: str, pt, rng: random.Random, q: int):
    """Same point in other Jacobian coordinates, its negative, or an infinity encoding."""
    try:
        g2 = isinstance(pt[0], list)
        if g2:
            x, y, z = ([int(c) for c in e] for e in pt)
        else:
            x, y, z = (int(c) for c in pt)
    except ValueError:
        return pt
    if op == "infinity":
        if g2:
            return rng.choice([[["0", "0"], ["1", "0"], ["0", "0"]], [["0", "0"], ["0", "0"], ["1", "0"]], [pt[0], pt[1], ["0", "0"]]])
        return rng.choice([["0", "1", "0"], ["0", "0", "1"], ["1", "1", "0"], [pt[0], pt[1], "0"], ["0", "0", "0"]])
    if op == "negate":
        if g2:
            return [pt[0], [str((-y[0]) % q), str((-y[1]) % q)], pt[2]]
        return [pt[0], str((-y) % q), pt[2]]
    # projective: (x z^2, y z^3, z) for a random z (same point if z was 1)
    if g2:
        if (z[0], z[1]) != (1, 0):
            return pt
        zz = (rng.randrange(1, q), rng.randrange(q))
        z2 = _f2mul(zz, zz, q)
        z3 = _f2mul(z2, zz, q)
        return [[str(v) for v in _f2mul(x, z2, q)], [str(v) for v in _f2mul(y, z3, q)], [str(v) for v in zz]]
    if z != 1:
        return pt
    zz = rng.randrange(1, q)
    return [str(x * zz * zz % q), str(y * zz * zz * zz % q), str(zz)]


def mutate_text(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Byte-level damage to JSON text (what a truncated or corrupted file looks like)."""
    b = bytearray(data)
    op = rng.choice(["flip", "truncate", "insert", "delete", "bom", "nul", "deep", "bignum", "dupkey"])
    if op == "flip" and b:
        b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
    elif op == "truncate":
        del b[rng.randrange(len(b) + 1) :]
    elif op == "insert":
        i = rng.randrange(len(b) + 1)
        b[i:i] = rng.choice([b",", b"]", b"}", b"{", b"[", b'"', b"\\", b"\xff", b" ", b"NaN", b"-", b"1e999", b'"x": NaN, '])
    elif op == "delete" and b:
        i = rng.randrange(len(b))
        del b[i : i + rng.randint(1, 8)]
    elif op == "bom":
        b[0:0] = b"\xef\xbb\xbf"
    elif op == "nul":
        i = rng.randrange(len(b) + 1)
        b[i:i] = b"\x00"
    elif op == "deep":
        n = rng.choice([1000, 100000])
        b = bytearray(b"[" * n + b"]" * n)
    elif op == "bignum":
        b = bytearray(bytes(b).replace(b'"', b"", 2))  # the first string becomes a bare (maybe huge) number
    else:
        b = bytearray(bytes(b).replace(b"{", b'{"pi_a": 1, "protocol": "x", ', 1))
    return bytes(b), f"text_{op}"


_DEEP = "\x00deep:"


def dumps(obj, kind: str = "") -> str:
    """JSON text of a mutated object, with any deep-nesting placeholder expanded."""
    text = json.dumps(obj)
    i = text.find('"\\u0000deep:')
    if i < 0:
        return text
    j = text.index('"', i + 1)
    depth = int(text[i + len('"\\u0000deep:') : j])
    return text[:i] + "[" * depth + "0" + "]" * depth + text[j + 1 :]
