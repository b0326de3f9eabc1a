"""A bit-exact Python model of the device field code (src/snarkd/gpu/field.cuh).

Each function mirrors its CUDA counterpart PTX instruction by PTX instruction
(32-bit words, one carry flag), so that a wrong carry, a missed word or an
overflow of the E/O accumulators shows here, on the CPU, before any device time.
test_field_model.py checks it against Python integers.
"""
from __future__ import annotations

M32 = 0xFFFFFFFF


class Carry:
    """The PTX condition-code carry flag and the instructions that use it."""

    def __init__(self) -> None:
        self.cf = 0

    def add_cc(self, a: int, b: int, cin: bool = False) -> int:
        s = a + b + (self.cf if cin else 0)
        self.cf = s >> 32
        return s & M32

    def addc(self, a: int, b: int) -> int:  # addc.u32 (no flag out)
        return (a + b + self.cf) & M32

    def sub_cc(self, a: int, b: int, cin: bool = False) -> int:
        d = a - b - (self.cf if cin else 0)
        self.cf = 1 if d < 0 else 0
        return d & M32

    def subc(self, a: int, b: int) -> int:  # subc.u32 (no flag out)
        return (a - b - self.cf) & M32

    def mad_cc(self, x: int, y: int, acc: int, hi: bool, cin: bool) -> int:
        p = x * y
        part = (p >> 32) if hi else (p & M32)
        s = part + acc + (self.cf if cin else 0)
        self.cf = s >> 32
        return s & M32


class Field:
    """One prime on N 32-bit words, as FqP/FrP in params.cuh."""

    def __init__(self, p: int, n: int):
        self.p, self.N = p, n
        self.mod = [(p >> (32 * i)) & M32 for i in range(n)]
        self.INV = (-pow(p, -1, 1 << 32)) % (1 << 32)
        self.R = 1 << (32 * n)

    # -- helpers ---------------------------------------------------------------
    def words(self, x: int, n: int | None = None) -> list[int]:
        return [(x >> (32 * i)) & M32 for i in range(n or self.N)]

    @staticmethod
    def value(w: list[int]) -> int:
        return sum(v << (32 * i) for i, v in enumerate(w))

    # -- field.cuh -------------------------------------------------------------
    def final_sub(self, x: list[int], top: int) -> list[int]:
        c = Carry()
        t = [c.sub_cc(x[0], self.mod[0])]
        for i in range(1, self.N):
            t.append(c.sub_cc(x[i], self.mod[i], True))
        borrow = c.subc(top, 0)
        keep = borrow == M32
        return list(x[: self.N]) if keep else t

    def mad_row(self, A: list[int], x: list[int], y: int, i: int, parity: int, j0: int = 0) -> None:
        """mad_row / mad_row_from: products x[j]*y (j >= j0) at positions q = i + j of one parity."""
        c = Carry()
        last = -1
        for j in range(j0, len(x)):
            q = i + j
            if (q & 1) != parity:
                continue
            A[q] = c.mad_cc(x[j], y, A[q], False, last >= 0)
            A[q + 1] = c.mad_cc(x[j], y, A[q + 1], True, True)
            last = q
        if last >= 0:
            A[last + 2] = c.addc(A[last + 2], 0)

    def mont_mul(self, a: list[int], b: list[int]) -> list[int]:
        N = self.N
        E, O = [0] * (2 * N + 2), [0] * (2 * N + 2)
        c = 0
        for i in range(N):
            self.mad_row(E, a, b[i], i, 0)
            self.mad_row(O, a, b[i], i, 1)
            m = ((E[i] + O[i] + c) & M32) * self.INV & M32
            self.mad_row(E, self.mod, m, i, 0)
            self.mad_row(O, self.mod, m, i, 1)
            c = self._word_carry(E[i], O[i], c)
        return self._high_half(E, O, c, None)

    def _word_carry(self, e: int, o: int, c: int) -> int:
        k = Carry()
        s = k.add_cc(e, o)
        c1 = k.addc(0, 0)
        k.add_cc(s, c)
        c2 = k.addc(0, 0)
        return c1 + c2

    def _high_half(self, E, O, c, hi) -> list[int]:
        """t = E[N..2N] + O[N..2N] + c (+ hi, N words, when given); final_sub."""
        N = self.N
        k = Carry()
        t = [k.add_cc(E[N], O[N])]
        for j in range(1, N + 1):
            t.append(k.add_cc(E[N + j], O[N + j], True))
        t[0] = k.add_cc(t[0], c)
        for j in range(1, N + 1):
            t[j] = k.add_cc(t[j], 0, True)
        if hi is not None:
            t[0] = k.add_cc(t[0], hi[0])
            for j in range(1, N):
                t[j] = k.add_cc(t[j], hi[j], True)
            t[N] = k.add_cc(t[N], 0, True)
        return self.final_sub(t, t[N])

    def wide_mul(self, a: list[int], b: list[int]) -> list[int]:
        """2N-word a*b (any N-word a, b)."""
        N = self.N
        E, O = [0] * (2 * N + 2), [0] * (2 * N + 2)
        for i in range(N):
            self.mad_row(E, a, b[i], i, 0)
            self.mad_row(O, a, b[i], i, 1)
        return self._sum_eo(E, O)

    def _sum_eo(self, E, O) -> list[int]:
        k = Carry()
        T = [k.add_cc(E[0], O[0])]
        for j in range(1, 2 * self.N):
            T.append(k.add_cc(E[j], O[j], True))
        return T

    def wide_sqr(self, a: list[int]) -> list[int]:
        """2N-word a^2: off-diagonal products once, doubled, plus the diagonal."""
        N = self.N
        E, O = [0] * (2 * N + 2), [0] * (2 * N + 2)
        for i in range(N - 1):
            self.mad_row(E, a, a[i], i, 0, i + 1)
            self.mad_row(O, a, a[i], i, 1, i + 1)
        T = self._sum_eo(E, O)
        # double: T <<= 1 (the off-diagonal sum is < 2^(64N - 1))
        for j in range(2 * N - 1, 0, -1):
            T[j] = ((T[j] << 1) | (T[j - 1] >> 31)) & M32
        T[0] = (T[0] << 1) & M32
        k = Carry()
        for i in range(N):
            T[2 * i] = k.mad_cc(a[i], a[i], T[2 * i], False, i > 0)
            T[2 * i + 1] = k.mad_cc(a[i], a[i], T[2 * i + 1], True, True)
        return T

    def redc(self, T: list[int]) -> list[int]:
        """T * R^-1 mod p for a 2N-word T < p R (canonical result)."""
        N = self.N
        E, O = list(T[:N]) + [0] * (N + 2), [0] * (2 * N + 2)
        c = 0
        for i in range(N):
            m = ((E[i] + O[i] + c) & M32) * self.INV & M32
            self.mad_row(E, self.mod, m, i, 0)
            self.mad_row(O, self.mod, m, i, 1)
            c = self._word_carry(E[i], O[i], c)
        return self._high_half(E, O, c, T[N:])

    def mont_sqr(self, a: list[int]) -> list[int]:
        return self.redc(self.wide_sqr(a))

    # -- Fp2 = F[u]/(u^2+1), lazy reduction: 3 wide products, 2 REDCs ------------
    def add_nored(self, a: list[int], b: list[int]) -> list[int]:
        """a + b without reduction (both < p, and 2p < 2^(32N))."""
        k = Carry()
        r = [k.add_cc(a[0], b[0])]
        for i in range(1, self.N):
            r.append(k.add_cc(a[i], b[i], True))
        return r

    def sub_wide(self, a: list[int], b: list[int]) -> tuple[list[int], int]:
        k = Carry()
        r = [k.sub_cc(a[0], b[0])]
        for i in range(1, 2 * self.N):
            r.append(k.sub_cc(a[i], b[i], True))
        return r, k.subc(0, 0)

    def fp2_mul(self, a0, a1, b0, b1):
        N = self.N
        t0 = self.wide_mul(a0, b0)
        t1 = self.wide_mul(a1, b1)
        d, borrow = self.sub_wide(t0, t1)  # a0 b0 - a1 b1, + p R when negative
        k = Carry()
        d[N] = k.add_cc(d[N], self.mod[0] & borrow)
        for i in range(1, N):
            d[N + i] = k.add_cc(d[N + i], self.mod[i] & borrow, True)
        c0 = self.redc(d)
        t2 = self.wide_mul(self.add_nored(a0, a1), self.add_nored(b0, b1))
        s, _ = self.sub_wide(t2, t0)
        s, _ = self.sub_wide(s, t1)  # a0 b1 + a1 b0 >= 0
        c1 = self.redc(s)
        return c0, c1
