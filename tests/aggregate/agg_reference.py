"""Reference SnarkPack verifier on py_ecc (pure Python, seconds per aggregate): the test oracle for
snarkd.aggregate.verifier, for small n. Written from the protocol as documented in
snarkd/aggregate (transcript.py, gipa.py, kzg.py, proof_format.py), sharing no code with it: it
decodes the aggregate's bytes itself (Montgomery integers, GT decompression in py_ecc's FQ12),
replays the transcript with its own hashing, folds the GT values one round at a time and checks
every equation separately, each with py_ecc's own pairing.

py_ecc's pairing is e' = e^c for snarkd's native e (c = 1 on BN254, -3 on BLS12-381), so a GT value
from the aggregate is compared with a py_ecc product raised to c.
"""

from __future__ import annotations

import hashlib

import py_ecc.optimized_bls12_381 as _bls
import py_ecc.optimized_bn128 as _bn
from py_ecc.optimized_bls12_381 import optimized_pairing as _bls_pairing
from py_ecc.optimized_bn128 import optimized_pairing as _bn_pairing


class Reference:
    def __init__(self, curve):
        self.curve = curve
        self.q, self.r, self.n8 = curve.q, curve.r, curve.n8q
        if curve.name == "bn128":
            self.ecc, self.fe, self.xi, self.c = _bn, _bn_pairing.final_exponentiate, 9, 1
        else:
            self.ecc, self.fe, self.xi, self.c = _bls, _bls_pairing.final_exponentiate, 1, -3

    # ---- decoding (zkey layout: little-endian Montgomery)
    def fq(self, b: bytes) -> int:
        return int.from_bytes(b, "little") * pow(1 << (8 * self.n8), -1, self.q) % self.q

    def coords(self, b: bytes) -> list[int] | None:
        raw = [int.from_bytes(b[i : i + self.n8], "little") for i in range(0, len(b), self.n8)]
        if any(v >= self.q for v in raw):
            return None
        return [v * pow(1 << (8 * self.n8), -1, self.q) % self.q for v in raw]

    def g1(self, b: bytes):
        c = self.coords(b)
        if c is None:
            return None
        e = self.ecc
        if c == [0, 0]:
            return e.Z1
        p = (e.FQ(c[0]), e.FQ(c[1]), e.FQ.one())
        if not e.is_on_curve(p, e.b) or not e.is_inf(e.multiply(p, self.r)):
            return None
        return p

    def g2(self, b: bytes):
        c = self.coords(b)
        if c is None:
            return None
        e = self.ecc
        if c == [0, 0, 0, 0]:
            return e.Z2
        p = (e.FQ2([c[0], c[1]]), e.FQ2([c[2], c[3]]), e.FQ2.one())
        if not e.is_on_curve(p, e.b2) or not e.is_inf(e.multiply(p, self.r)):
            return None
        return p

    def fp12_from_tower(self, c: list[int]):
        """Tower coefficients (c0.c0.c0, c0.c0.c1, c0.c1.c0, ...) to py_ecc's FQ12 (w^6 = xi = XI + u)."""
        out = [0] * 12
        for half in range(2):
            for j in range(3):
                a, b = c[half * 6 + 2 * j], c[half * 6 + 2 * j + 1]
                e = half + 2 * j
                out[e] = (out[e] + a - self.xi * b) % self.q
                out[e + 6] = (out[e + 6] + b) % self.q
        return self.ecc.FQ12(out)

    def gt(self, b: bytes):
        """Decompress: all zeros is 1, else f = (g + w) / (g - w) for g in Fp6 (coordinates as Fp2 pairs)."""
        c = self.coords(b)
        if c is None:
            return None
        F12 = self.ecc.FQ12
        if not any(c):
            return F12.one()
        g = self.fp12_from_tower(c + [0] * 6)  # g sits in c0 (even powers of w)
        w = F12([0, 1] + [0] * 10)
        den = g - w
        f = (g + w) / den
        # in GT: f^r == 1 (the reference checks full membership)
        if f ** self.r != F12.one():
            return None
        return f

    # ---- transcript (transcript.py's rules)
    def transcript(self):
        ref = self

        class T:
            def __init__(self):
                self.s = hashlib.sha256(b"snarkd/snarkpack/v1").digest()

            def add(self, label: str, data: bytes):
                tag = label.encode()
                self.s = hashlib.sha256(self.s + len(tag).to_bytes(4, "little") + tag + len(data).to_bytes(8, "little") + data).digest()

            def draw(self, label: str, ctr: int) -> bytes:
                return hashlib.sha512(self.s + b"challenge" + label.encode() + ctr.to_bytes(4, "little")).digest()

            def scalar(self, label: str) -> int:
                ctr = 0
                while (c := int.from_bytes(self.draw(label, ctr), "little") % ref.r) <= 1:
                    ctr += 1
                self.add(label, c.to_bytes(32, "little"))
                return c

            def short(self, label: str) -> int:
                ctr = 0
                while (c := int.from_bytes(self.draw(label, ctr)[:16], "little")) == 0:
                    ctr += 1
                self.add(label, c.to_bytes(16, "little"))
                return c

        return T()

    # ---- the check
    def mont(self, v: int) -> bytes:
        return (v * (1 << (8 * self.n8)) % self.q).to_bytes(self.n8, "little")

    def pairing_product(self, pairs):
        F12 = self.ecc.FQ12
        acc = F12.one()
        for p, q in pairs:
            acc = acc * self.ecc.pairing(q, p, final_exponentiate=False)
        return self.fe(acc)

    def verify(self, srs_points: list[bytes], vk: dict, public: list[list[int]], n: int, raw: bytes) -> bool:
        """srs_points: (g, h, [a]_1, [b]_1, [a]_2, [b]_2) bytes; vk: alpha, beta, gamma, delta (bytes), ic (list of bytes)."""
        e, r = self.ecc, self.r
        k = n.bit_length() - 1
        tb, g1b, g2b = 6 * self.n8, 2 * self.n8, 4 * self.n8
        pos = 0

        def take(size):
            nonlocal pos
            out = raw[pos : pos + size]
            pos += size
            return out

        coms = [take(tb) for _ in range(4)]
        ip_raw, aggc_raw = take(tb), take(g1b)
        rounds = [([take(tb) for _ in range(10)], take(g1b), take(g1b)) for _ in range(k)]
        finals_raw = [take(g1b), take(g2b), take(g1b), take(g2b), take(g2b), take(g1b), take(g1b)]
        pis_raw = [take(g2b), take(g2b), take(g1b), take(g1b)]
        if pos != len(raw):
            return False
        # transcript
        t = self.transcript()
        t.add("curve", self.curve.name.encode())
        t.add("srs", hashlib.sha256(b"snarkd/aggregation-srs/v1" + self.curve.name.encode() + b"".join(srs_points)).digest())
        vk_bytes = vk["alpha"] + vk["beta"] + vk["gamma"] + vk["delta"] + b"".join(vk["ic"])
        t.add("vk", hashlib.sha256(b"snarkd/groth16-vk/v1" + self.curve.name.encode() + vk_bytes).digest())
        t.add("n", n.to_bytes(8, "little") + (len(vk["ic"]) - 1).to_bytes(8, "little"))
        t.add("public", b"".join(v.to_bytes(32, "little") for row in public for v in row))
        t.add("commitments", b"".join(coms))
        rr = t.scalar("r")
        t.add("aggregated", ip_raw + aggc_raw)
        xs = []
        for j, (gts, zl, zr) in enumerate(rounds):
            t.add(f"round {j}", b"".join(gts) + zl + zr)
            xs.append(t.short(f"x {j}"))
        t.add("finals", b"".join(finals_raw))
        z = t.scalar("z")
        # decode
        com = [self.gt(b) for b in coms]
        ip = self.gt(ip_raw)
        aggc = self.g1(aggc_raw)
        rds = [([self.gt(b) for b in gts], self.g1(zl), self.g1(zr)) for gts, zl, zr in rounds]
        A, B, C, v1, v2, w1, w2 = (self.g1(finals_raw[0]), self.g2(finals_raw[1]), self.g1(finals_raw[2]),
                                   self.g2(finals_raw[3]), self.g2(finals_raw[4]), self.g1(finals_raw[5]), self.g1(finals_raw[6]))
        piv1, piv2, piw1, piw2 = self.g2(pis_raw[0]), self.g2(pis_raw[1]), self.g1(pis_raw[2]), self.g1(pis_raw[3])
        every = com + [ip, aggc, A, B, C, v1, v2, w1, w2, piv1, piv2, piw1, piw2] + [x for gts, zl, zr in rds for x in gts + [zl, zr]]
        if any(x is None for x in every):
            return False
        # fold, round by round: V <- V^x L^(x^2) R; ZC <- x ZC + x^2 ZC_L + ZC_R
        tab, uab, tc, uc = com
        zab, zc = ip, aggc
        for x, (gts, zl, zr) in zip(xs, rds):
            L, R = gts[:5], gts[5:]
            x2 = x * x % r
            tab = tab ** x * L[0] ** x2 * R[0]
            uab = uab ** x * L[1] ** x2 * R[1]
            tc = tc ** x * L[2] ** x2 * R[2]
            uc = uc ** x * L[3] ** x2 * R[3]
            zab = zab ** x * L[4] ** x2 * R[4]
            zc = e.add(e.add(e.multiply(zc, x), e.multiply(zl, x2)), zr)
        # the folded r^i and the key polynomials
        ms = [n >> (j + 1) for j in range(k)]
        r_star = 1
        fv_z = 1
        fw_z = pow(z, n, r)
        rinv = pow(rr, -1, r)
        for x, m in zip(xs, ms):
            r_star = r_star * (x + pow(rr, m, r)) % r
            fv_z = fv_z * (x + pow(z, m, r)) % r
            fw_z = fw_z * (1 + x * pow(z * rinv % r, m, r)) % r
        if not e.eq(e.multiply(C, r_star), zc):
            return False
        g, h, a1, b1, a2, b2 = (self.g1(srs_points[0]), self.g2(srs_points[1]), self.g1(srs_points[2]), self.g1(srs_points[3]),
                                self.g2(srs_points[4]), self.g2(srs_points[5]))
        c = self.c % r
        one = e.FQ12.one()
        checks = [
            (self.pairing_product([(A, B)]), zab ** 1, True),
            (self.pairing_product([(A, v1), (w1, B)]), tab, True),
            (self.pairing_product([(A, v2), (w2, B)]), uab, True),
            (self.pairing_product([(C, v1)]), tc, True),
            (self.pairing_product([(C, v2)]), uc, True),
        ]
        for got, want, _ in checks:
            if got ** c != want:
                return False
        hz = e.multiply(h, z)
        for key, s1, pi in ((v1, a1, piv1), (v2, b1, piv2)):
            lhs = self.pairing_product([(g, e.add(key, e.neg(e.multiply(h, fv_z))))])
            rhs = self.pairing_product([(e.add(s1, e.neg(e.multiply(g, z))), pi)])
            if lhs != rhs:
                return False
        for key, s2, pi in ((w1, a2, piw1), (w2, b2, piw2)):
            lhs = self.pairing_product([(e.add(key, e.neg(e.multiply(g, fw_z))), h)])
            rhs = self.pairing_product([(pi, e.add(s2, e.neg(hz)))])
            if lhs != rhs:
                return False
        # Groth16 over the random combination
        alpha, beta, gamma, delta = self.g1(vk["alpha"]), self.g2(vk["beta"]), self.g2(vk["gamma"]), self.g2(vk["delta"])
        ic = [self.g1(p) for p in vk["ic"]]
        r_sum, ri = 0, 1
        p_pub = e.Z1
        for row in public:
            r_sum = (r_sum + ri) % r
            s = ic[0]
            for v, pt in zip(row, ic[1:]):
                s = e.add(s, e.multiply(pt, v))
            p_pub = e.add(p_pub, e.multiply(s, ri))
            ri = ri * rr % r
        got = self.pairing_product([(e.multiply(alpha, r_sum), beta), (p_pub, gamma), (aggc, delta)])
        if got ** c != ip:
            return False
        return one == one
