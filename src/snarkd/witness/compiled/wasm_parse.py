"""A small reader of the wasm binary format: just what circom's modules use (types, imports, functions, table,
memory, globals, exports, elements, code, data, the name section). Written for the round-26 prototype
(bench/wasm_compile); not a validator."""
import struct


class Reader:
    def __init__(self, b, pos=0, end=None):
        self.b, self.pos, self.end = b, pos, len(b) if end is None else end

    def byte(self):
        v = self.b[self.pos]
        self.pos += 1
        return v

    def _leb(self):
        """(the LEB128's bits, how many, its last byte): the unsigned and signed forms read alike."""
        r = s = 0
        while True:
            x = self.byte()
            r |= (x & 0x7F) << s
            s += 7
            if x < 0x80:
                return r, s, x

    def u32(self):
        return self._leb()[0]

    def sleb(self, bits):
        r, s, x = self._leb()
        if s < 70 and (x & 0x40):
            r -= 1 << s
        # wrap to bits (two's complement)
        r &= (1 << bits) - 1
        if r >> (bits - 1):
            r -= 1 << bits
        return r

    def bytes(self, n):
        v = self.b[self.pos:self.pos + n]
        self.pos += n
        return v

    def name(self):
        return self.bytes(self.u32()).decode("utf-8")

    def limits(self):
        flag = self.byte()
        mn = self.u32()
        mx = self.u32() if flag & 1 else None
        return mn, mx

    def const_expr(self):
        op = self.byte()
        if op == 0x41:
            v = ("i32", self.sleb(32))
        elif op == 0x42:
            v = ("i64", self.sleb(64))
        elif op == 0x23:
            v = ("global", self.u32())
        else:
            raise ValueError("const expr op %x" % op)
        assert self.byte() == 0x0B
        return v


VT = {0x7F: "i32", 0x7E: "i64", 0x7D: "f32", 0x7C: "f64"}


class Module:
    def __init__(self, data):
        assert data[:4] == b"\0asm"
        r = Reader(data, 8)
        self.types, self.imports, self.funcs, self.globals = [], [], [], []
        self.exports, self.elems, self.codes, self.data = [], [], [], []
        self.memory = None
        self.table = None
        self.names = {}
        self.start = None
        while r.pos < len(data):
            sid = r.byte()
            size = r.u32()
            s = Reader(data, r.pos, r.pos + size)
            r.pos += size
            if sid == 1:
                for _ in range(s.u32()):
                    assert s.byte() == 0x60
                    params = [VT[s.byte()] for _ in range(s.u32())]
                    results = [VT[s.byte()] for _ in range(s.u32())]
                    self.types.append((params, results))
            elif sid == 2:
                for _ in range(s.u32()):
                    mod, nm = s.name(), s.name()
                    kind = s.byte()
                    if kind == 0:
                        self.imports.append(("func", mod, nm, s.u32()))
                    elif kind == 2:
                        self.memory = s.limits()
                        self.imports.append(("memory", mod, nm, None))
                    elif kind == 1:
                        s.byte()
                        self.table = s.limits()
                        self.imports.append(("table", mod, nm, None))
                    elif kind == 3:
                        t = VT[s.byte()]
                        mut = s.byte()
                        self.imports.append(("global", mod, nm, (t, mut)))
                    else:
                        raise ValueError(kind)
            elif sid == 3:
                self.funcs = [s.u32() for _ in range(s.u32())]
            elif sid == 4:
                for _ in range(s.u32()):
                    s.byte()
                    self.table = s.limits()
            elif sid == 5:
                for _ in range(s.u32()):
                    self.memory = s.limits()
            elif sid == 6:
                for _ in range(s.u32()):
                    t = VT[s.byte()]
                    mut = s.byte()
                    self.globals.append((t, mut, s.const_expr()))
            elif sid == 7:
                for _ in range(s.u32()):
                    nm = s.name()
                    kind = s.byte()
                    self.exports.append((nm, kind, s.u32()))
            elif sid == 8:
                self.start = s.u32()
            elif sid == 9:
                for _ in range(s.u32()):
                    flag = s.u32()
                    assert flag == 0, "element segment form %d" % flag
                    off = s.const_expr()
                    self.elems.append((off, [s.u32() for _ in range(s.u32())]))
            elif sid == 10:
                for _ in range(s.u32()):
                    sz = s.u32()
                    body = Reader(data, s.pos, s.pos + sz)
                    s.pos += sz
                    locs = []
                    for _ in range(body.u32()):
                        n = body.u32()
                        locs += [VT[body.byte()]] * n
                    self.codes.append((locs, body.pos, body.end))
            elif sid == 11:
                for _ in range(s.u32()):
                    flag = s.u32()
                    assert flag == 0, "data segment form %d" % flag
                    off = s.const_expr()
                    self.data.append((off, s.bytes(s.u32())))
            elif sid == 0:
                nm = s.name()
                if nm == "name":
                    while s.pos < s.end:
                        sub = s.byte()
                        ssz = s.u32()
                        e = s.pos + ssz
                        if sub == 1:
                            for _ in range(s.u32()):
                                i = s.u32()
                                self.names[i] = s.name()
                        s.pos = e
        self.bytes = data
        self.n_imported_funcs = sum(1 for i in self.imports if i[0] == "func")

    def func_type(self, fi):
        if fi < self.n_imported_funcs:
            return self.types[[i for i in self.imports if i[0] == "func"][fi][3]]
        return self.types[self.funcs[fi - self.n_imported_funcs]]
