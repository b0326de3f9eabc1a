"""Mutations of circom witness-generator .wasm files that reach the native recorder's interpreter: most
land inside the module's structure (function bodies, data segments, the name section, section headers)
so the file still parses often enough to run, with sizes re-encoded where a mutation changes them.

mutate_wasm(data, rng, others) -> (bytes, what, region): region says where the mutation landed
("code:<function index>", "data:<memory address>", "names", "module"; several joined by ","), for the
differential check's classification."""

from __future__ import annotations

import random

OPCODES = [0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x1A, 0x1B, 0x20, 0x21,
           0x22, 0x23, 0x24, 0x28, 0x29, 0x35, 0x36, 0x37, 0x3F, 0x40, 0x41, 0x42, 0x45, 0x46, 0x4B, 0x6A, 0x6B,
           0x6C, 0x6D, 0x6E, 0x71, 0x74, 0x76, 0x7C, 0x7E, 0x80, 0x88, 0xA7, 0xAD, 0xFC]
# opcodes whose first immediate is a LEB128 integer (a constant, an index, a depth, a memarg)
LEB_AFTER = {0x0C, 0x0D, 0x10, 0x20, 0x21, 0x22, 0x23, 0x24, 0x28, 0x29, 0x35, 0x36, 0x37, 0x41, 0x42}
INTERESTING_U32 = [0, 1, 2, 7, 8, 40, 0x7F, 0x80, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFF8, 0xFFFFFFFF]


def uleb(data: bytes, pos: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        b = data[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos


def enc_uleb(v: int) -> bytes:
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def sections(data: bytes) -> list[tuple[int, bytes]] | None:
    """[(id, payload)] of a well-formed module, else None."""
    if data[:8] != b"\0asm\x01\0\0\0":
        return None
    out, pos = [], 8
    try:
        while pos < len(data):
            sid = data[pos]
            size, pos = uleb(data, pos + 1)
            if pos + size > len(data):
                return None
            out.append((sid, data[pos: pos + size]))
            pos += size
    except IndexError:
        return None
    return out


def join(secs: list[tuple[int, bytes]]) -> bytes:
    return b"\0asm\x01\0\0\0" + b"".join(bytes([sid]) + enc_uleb(len(p)) + p for sid, p in secs)


def bodies(payload: bytes) -> list[bytes]:
    n, pos = uleb(payload, 0)
    out = []
    for _ in range(n):
        size, pos = uleb(payload, pos)
        out.append(payload[pos: pos + size])
        pos += size
    return out


def join_bodies(bs: list[bytes]) -> bytes:
    return enc_uleb(len(bs)) + b"".join(enc_uleb(len(b)) + b for b in bs)


def n_imported_funcs(secs) -> int:
    for sid, p in secs:
        if sid == 2:
            n, pos = uleb(p, 0)
            count = 0
            for _ in range(n):
                for _ in range(2):  # module, name
                    ln, pos = uleb(p, pos)
                    pos += ln
                kind = p[pos]
                pos += 1
                if kind == 0:
                    count += 1
                    _, pos = uleb(p, pos)
                else:  # table, memory, global descriptors: not in circom's imports
                    return count
            return count
    return 0


def function_names(data: bytes) -> dict[int, str]:
    """The name section's function names (index -> name)."""
    secs = sections(data) or []
    for sid, p in secs:
        if sid != 0:
            continue
        ln, pos = uleb(p, 0)
        if p[pos: pos + ln] != b"name":
            continue
        pos += ln
        while pos < len(p):
            sub = p[pos]
            size, pos = uleb(p, pos + 1)
            end = pos + size
            if sub == 1:
                n, q = uleb(p, pos)
                names = {}
                for _ in range(n):
                    idx, q = uleb(p, q)
                    ln, q = uleb(p, q)
                    names[idx] = p[q: q + ln].decode("utf-8", "replace")
                    q += ln
                return names
            pos = end
    return {}


def data_segments(payload: bytes) -> list[tuple[int, int, int]]:
    """[(memory address, payload start, length)] of the active segments (offset an i32.const)."""
    out = []
    n, pos = uleb(payload, 0)
    for _ in range(n):
        flags, pos = uleb(payload, pos)
        if flags == 2:
            _, pos = uleb(payload, pos)
        if payload[pos] != 0x41:
            return out
        addr, pos = uleb(payload, pos + 1)
        pos += 1  # end
        ln, pos = uleb(payload, pos)
        out.append((addr, pos, ln))
        pos += ln
    return out


def _mutate_body(body: bytearray, rng: random.Random) -> str:
    # skip the local declarations: the instructions start after them
    n, pos = uleb(body, 0)
    for _ in range(n):
        _, pos = uleb(body, pos)
        pos += 1
    if pos >= len(body) - 1:
        return "body_empty"
    i = rng.randrange(pos, len(body) - 1)  # never the final `end`
    kind = rng.choices(["opcode", "leb", "byte", "insert", "delete"], weights=[30, 35, 10, 15, 10])[0]
    if kind == "opcode":
        body[i] = rng.choice(OPCODES)
    elif kind == "leb":
        starts = [k + 1 for k in range(pos, len(body) - 2) if body[k] in LEB_AFTER]
        if not starts:
            body[i] ^= 1 << rng.randrange(8)
            return "body_flip"
        k = rng.choice(starts)
        body[k] = (body[k] & 0x80) | rng.choice([0, 1, 0x3F, 0x40, 0x7F, rng.randrange(128)])
    elif kind == "byte":
        body[i] ^= 1 << rng.randrange(8)
    elif kind == "insert":
        body[i:i] = bytes(rng.choice(OPCODES) for _ in range(rng.randint(1, 3)))
    else:
        del body[i: i + rng.randint(1, 3)]
    return "body_" + kind


def locate(data: bytes, offset: int) -> str:
    """The region of the module a byte offset lies in (as mutate_wasm names them)."""
    secs = sections(data) or []
    pos = 8
    for sid, p in secs:
        start = pos + 1 + len(enc_uleb(len(p)))
        if offset < start + len(p):
            if offset < start:
                return "module"
            rel = offset - start
            if sid == 0:
                return "names"
            if sid == 10:
                n, q = uleb(p, 0)
                for j in range(n):
                    size, q = uleb(p, q)
                    if rel < q + size:
                        return f"code:{n_imported_funcs(secs) + j}" if rel >= q else "module"
                    q += size
            if sid == 11:
                for addr, at, ln in data_segments(p):
                    if at <= rel < at + ln:
                        return f"data:{addr + rel - at}"
            return "module"
        pos = start + len(p)
    return "module"


def mutate_wasm(data: bytes, rng: random.Random, others: list[bytes] = ()) -> tuple[bytes, str, str]:
    try:
        return _mutate(data, rng, others)
    except (IndexError, ValueError):  # a module an earlier mutation left without its structure: bytes only
        return _flip(data, rng)


def _mutate(data: bytes, rng: random.Random, others) -> tuple[bytes, str, str]:
    secs = sections(data)
    if secs is None:
        return _flip(data, rng)
    kind = rng.choices(["code", "data", "names", "section", "splice", "bytes"], weights=[50, 20, 6, 8, 6, 10])[0]
    ids = [sid for sid, _ in secs]
    if kind in ("code", "splice") and 10 in ids:
        k = ids.index(10)
        bs = bodies(secs[k][1])
        j = rng.randrange(len(bs))
        if kind == "splice" and others:
            osecs = sections(rng.choice(others)) or []
            obodies = next((bodies(p) for sid, p in osecs if sid == 10), [])
            if obodies:
                bs[j] = rng.choice(obodies)
            what = "splice_body"
        else:
            b = bytearray(bs[j])
            what = "+".join(_mutate_body(b, rng) for _ in range(rng.choice([1, 1, 1, 2, 3])))
            bs[j] = bytes(b)
        secs[k] = (10, join_bodies(bs))
        return join(secs), what, f"code:{n_imported_funcs(secs) + j}"
    if kind == "data" and 11 in ids:
        k = ids.index(11)
        p = bytearray(secs[k][1])
        segs = [sg for sg in data_segments(bytes(p)) if sg[2]]
        if not segs:
            return join(secs), "data_none", "module"
        addr, start, ln = rng.choice(segs)
        i = start + rng.randrange(ln)
        addr += i - start
        if rng.random() < 0.5:
            p[i] ^= 1 << rng.randrange(8)
            what = "data_flip"
        else:
            i &= ~3
            p[i: i + 4] = rng.choice(INTERESTING_U32).to_bytes(4, "little")[: len(p) - i]
            what = "data_u32"
        secs[k] = (11, bytes(p))
        return join(secs), what, f"data:{addr}"
    if kind == "names" and 0 in ids:
        k = ids.index(0)
        p = bytearray(secs[k][1])
        i = rng.randrange(len(p))
        p[i] = rng.choice(b"_aAFrz0") if rng.random() < 0.7 else p[i] ^ 1
        secs[k] = (0, bytes(p))
        return join(secs), "names_byte", "names"
    if kind == "section":
        op = rng.choice(["drop", "dup", "swap", "truncate"])
        i, j = rng.randrange(len(secs)), rng.randrange(len(secs))
        if op == "drop":
            del secs[i]
        elif op == "dup":
            secs.insert(j, secs[i])
        elif op == "swap":
            secs[i], secs[j] = secs[j], secs[i]
        else:
            sid, p = secs[i]
            secs[i] = (sid, p[: rng.randrange(len(p) + 1)])
        return join(secs), f"section_{op}", "module"
    return _flip(data, rng)


def _flip(data: bytes, rng: random.Random) -> tuple[bytes, str, str]:
    d = bytearray(data)
    regions = []
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(d))
        d[i] ^= 1 << rng.randrange(8)
        try:
            regions.append(locate(data, i))
        except (IndexError, ValueError):
            regions.append("module")
    if rng.random() < 0.1:
        del d[rng.randrange(len(d)):]
    return bytes(d), "bytes", ",".join(regions)
