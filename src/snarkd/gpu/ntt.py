"""NTTs over Fr and the whole H computation on the device.

Roots are snarkjs's: w_{2^s} = 5^t (r - 1 = 2^s t), smaller domains by
squaring; the coset shift is w_{2n} (25 = 5^2 when n = 2^s), as the CPU core.

Transforms are radix-2 stages grouped into shared-memory passes of up to 10
stages (ntt_pass_r* in kernels.cu, RADIX_LOG stages at a time in registers):
Gentleman-Sande (DIF, natural -> bit-reversed) for the inverse transforms of the
H computation, Cooley-Tukey (DIT, bit-reversed -> natural) for the forward ones,
so that no bit-reversal pass is needed there; the coset shift and 1/n ride on
the DIT's first pass, and so does the bit reversal of a natural-order NTT
(ntt()).
"""

from __future__ import annotations

import numpy as np

from snarkd.gpu.memory import pinned_bytes
from snarkd.gpu.module import CURVES, function, launch

TILE_LOG = 10  # elements per shared-memory tile: 2^10 x 32 B = 32 KiB
UPPER_K = 8  # stages per pass above the first
# Radix-2 stages taken together in registers between two barriers (kernels.cu
# ntt_pass_r1 / ntt_pass_r2): NttDomain's radix_log; bench/gpu.py --ntt-radix times both side by side.
RADIX_LOG = 2
RADIX_LOGS = (1, 2)


def mont_words(x: int, r: int) -> np.ndarray:
    return np.frombuffer((x * (1 << 256) % r).to_bytes(32, "little"), dtype=np.uint32).copy()


def plan_passes(log_n: int) -> list[tuple[int, int, int]]:
    """(s0, k, g) per pass, bottom bits first."""
    if log_n == 0:
        return []
    k0 = min(TILE_LOG, log_n)
    passes = [(0, k0, 0)]
    rest = log_n - k0
    if rest:
        p = -(-rest // UPPER_K)
        k = -(-rest // p)
        s0 = k0
        while s0 < log_n:
            kk = min(k, log_n - s0)
            passes.append((s0, kk, min(TILE_LOG - kk, s0)))
            s0 += kk
    return passes


FULL_TABLES_SHARE = 64  # full tables where each (n elements) takes at most 1/64 of the device budget


def shift_split(log_n: int, full: bool = False) -> int:
    """The coset shift g^i / n as (g^lo / n) (g^(2^s))^hi, i = hi 2^s + lo: s, the low table's bits
    (full: s = log_n, one table of n elements and one multiply per element instead of two)."""
    return log_n if full else (log_n + 1) // 2


def full_tables_fit(log_n: int, budget: int) -> bool:
    """Whether a resident key's domain takes the full tables (a coset-shift table and an inverse stage table,
    n elements each): each one's 32 n bytes a small share of the budget. Without them (bench/ntt_tables.py
    against the three-table NTT, H200): the split shift's second multiply costs H ~2.5%, the inverse's twiddle
    sign taken in the butterfly ~4% of each inverse NTT. A streamed key's plan counts on the small tables
    (stream.KeyShape.tables_bytes)."""
    return (32 << log_n) * FULL_TABLES_SHARE <= budget


def domain_bytes(log_n: int, full: bool = False) -> int:
    """Device bytes an NttDomain holds: the stage table (n elements), the coset-shift tables and, full, the
    inverse stage table (n elements)."""
    s = shift_split(log_n, full)
    inverse = (1 << log_n) if full else 0
    return 32 * ((1 << log_n) + inverse + (1 << s) + (1 << (log_n - s)) + 5)


class NttDomain:
    """Twiddles for one (curve, log_n) on one device: one stage table T[m + j] = w_{2m}^j (n elements) for
    the forward and the inverse transforms, and the coset shift g^i / n from two tables of ~sqrt(n)
    elements (domain_bytes: about 32 n bytes, where separate forward, inverse and shift tables took 96 n).
    full_tables, for budgets with room: the shift from one table of n elements (one multiply less per
    element) and an inverse stage table Tinv[m + j] = w_{2m}^-j (the inverse passes then run the forward
    kernels on it, with no sign to take in the butterfly). Built on the device once, then kept by its
    GpuDevice (device.py)."""

    def __init__(self, mod, curve: str, log_n: int, radix_log: int = RADIX_LOG, full_tables: bool = False):
        import cupy

        if radix_log not in RADIX_LOGS:
            raise ValueError(f"radix_log {radix_log}: kernels.cu has ntt_pass_r1 and ntt_pass_r2 only")
        self.radix_log = radix_log
        self.curve = CURVES[curve]
        self.name = curve
        self.log_n = log_n
        self.n = 1 << log_n
        s = self.curve.two_adicity
        if log_n > s:
            raise ValueError(f"domain 2^{log_n} exceeds the field's two-adicity 2^{s}")
        r = self.curve.r
        root_s = pow(self.curve.nqr, (r - 1) >> s, r)
        w = pow(root_s, 1 << (s - log_n), r)
        winv = pow(w, -1, r)
        g = self.curve.nqr**2 % r if log_n == s else pow(root_s, 1 << (s - log_n - 1), r)
        ninv = pow(self.n, -1, r)
        self.full_tables = full_tables
        self.shift_lo = shift_split(log_n, full_tables)
        g_hi = pow(g, 1 << self.shift_lo, r)
        self.mod = mod
        self.consts = cupy.asarray(np.stack([mont_words(x, r) for x in (w, winv, g, ninv, g_hi)]))
        n = self.n
        self.tw = cupy.empty(n * 8, dtype=cupy.uint32)
        launch(self.mod, "fr_stage_twiddles", n, (self.tw, self.consts[0], np.int32(log_n)))
        self.tw_inv = None
        if full_tables:
            self.tw_inv = cupy.empty(n * 8, dtype=cupy.uint32)
            launch(self.mod, "fr_stage_twiddles", n, (self.tw_inv, self.consts[1], np.int32(log_n)))
        lo, hi = 1 << self.shift_lo, 1 << (log_n - self.shift_lo)
        self.shift = cupy.empty((lo + hi) * 8, dtype=cupy.uint32)
        launch(self.mod, "fr_powers", lo, (self.shift, self.consts[2], self.consts[3], np.uint64(lo)))
        launch(self.mod, "fr_powers", hi, (self.shift[8 * lo :], self.consts[4], np.intp(0), np.uint64(hi)))
        self.passes = plan_passes(log_n)

    @property
    def nbytes(self) -> int:
        inverse = self.tw_inv.nbytes if self.tw_inv is not None else 0
        return int(self.consts.nbytes + self.shift.nbytes + self.tw.nbytes + inverse)

    # -- transforms (in place on a flat uint32 device array of n*8 words) --------

    def _pass(self, data, inverse: bool, dif: bool, s0: int, k: int, g: int, shift=None, src=None, scale=None) -> None:
        tile = 1 << (k + g)
        threads = min(512, max(32, tile >> self.radix_log))
        blocks = self.n >> (k + g)
        full = shift is not None and self.full_tables  # the first DIT pass of a coset shift from the full table
        tw = self.tw
        if inverse and self.tw_inv is not None:  # w^-j from a table of its own: the forward kernels
            tw, inverse = self.tw_inv, False
        fn = function(self.mod, f"ntt_pass_r{self.radix_log}{'_inv' if inverse else ''}{'_fs' if full else ''}")
        null = np.intp(0)
        fn((blocks,), (threads,), (data, tw, shift if shift is not None else null,
                                   np.int32(self.shift_lo), np.int32(self.log_n), np.int32(s0), np.int32(k), np.int32(g), np.int32(1 if dif else 0),
                                   src if src is not None else null, scale if scale is not None else null),
           shared_mem=tile * 32)

    def dif(self, data, inverse: bool) -> None:
        """natural -> bit-reversed order (unscaled)."""
        for s0, k, g in reversed(self.passes):
            self._pass(data, inverse, True, s0, k, g)

    def dit(self, data, inverse: bool, shift: bool = False) -> None:
        """bit-reversed -> natural order (unscaled); shift: first multiply
        element p by g^bitrev(p) / n."""
        for i, (s0, k, g) in enumerate(self.passes):
            self._pass(data, inverse, False, s0, k, g, self.shift if (shift and i == 0) else None)

    def ntt(self, data, inverse: bool = False, out=None):
        """Natural-order NTT (inverse includes 1/n), like the CPU core's ntt.
        Returns out (a new array unless given)."""
        import cupy

        out = cupy.empty_like(data) if out is None else out
        if not self.passes:  # n = 1: the identity (1/n = 1)
            out[...] = data
            return out
        scale = self.consts[3] if inverse else None
        for i, (s0, k, g) in enumerate(self.passes):  # the first pass loads data in bit-reversed order
            self._pass(out, inverse, False, s0, k, g, src=data if i == 0 else None, scale=scale if i == 0 else None)
        return out

    def coset_shift_evals(self, data) -> None:
        """In place: evaluations on <w_n> -> evaluations on w_2n <w_n>."""
        self.dif(data, True)
        self.dit(data, False, shift=True)

    def h_values(self, a, b, mode: str = "in-place"):
        """a, b (Montgomery, n*8 words, consumed) -> plain scalars of a*b - c on the odd coset (c = a*b on the
        domain). mode (H_MODES, device bytes beside the twiddles: h_bytes): "in-place" holds a, b, c and writes
        H over c; "parked" holds two vectors and parks c, then a's coset values, in page-locked host memory,
        for keys whose domain does not fit three times beside the tables."""
        return self.h_from([a, b], mode)

    def h_from(self, vecs: list, mode: str = "in-place"):
        """h_values of vecs = [a, b], emptied here: the caller keeps no reference, so "parked" frees a's
        memory once its coset values are on the host."""
        if mode == "parked":
            return self._h_values_parked(vecs)
        a, b = vecs
        vecs.clear()
        if mode not in H_MODES:
            raise ValueError(f"H mode {mode!r} is not one of {', '.join(H_MODES)}")
        import cupy

        n = self.n
        c = cupy.empty_like(a)
        launch(self.mod, "fr_mul", n, (a, b, c, np.uint64(n)))
        for v in (a, b, c):
            self.coset_shift_evals(v)
        launch(self.mod, "h_final", n, (a, b, c, c, np.uint64(n)))  # element-wise: H over c
        return c

    def _h_values_parked(self, vecs: list):
        """c = a*b and A (a's coset values) wait in page-locked host memory while the device holds two vectors."""
        import cupy

        a, b = vecs
        vecs.clear()
        n, step = self.n, min(self.n, PARK_CHUNK)
        stream = cupy.cuda.get_current_stream()
        c_host = pinned_bytes(32 * n)
        a_host = pinned_bytes(32 * n)
        tmp = cupy.empty(8 * step, dtype=cupy.uint32)
        for lo in range(0, n, step):  # c = a*b, chunk by chunk, to the host
            m = min(step, n - lo)
            launch(self.mod, "fr_mul", m, (a[8 * lo :], b[8 * lo :], tmp, np.uint64(m)))
            tmp.data.copy_to_host_async(c_host.ctypes.data + 32 * lo, 32 * m, stream)
        self.coset_shift_evals(a)
        a.data.copy_to_host_async(a_host.ctypes.data, 32 * n, stream)
        stream.synchronize()  # c and A are on the host: a's memory may go (vecs held the only other reference)
        del a
        c = cupy.empty(8 * n, dtype=cupy.uint32)
        c.data.copy_from_host_async(c_host.ctypes.data, 32 * n, stream)
        self.coset_shift_evals(c)
        self.coset_shift_evals(b)
        for lo in range(0, n, step):  # H = A*B - C over C, A's chunks sent back up
            m = min(step, n - lo)
            tmp.data.copy_from_host_async(a_host.ctypes.data + 32 * lo, 32 * m, stream)
            launch(self.mod, "h_final", m, (tmp, b[8 * lo :], c[8 * lo :], c[8 * lo :], np.uint64(m)))
        stream.synchronize()  # the host buffers go back to CuPy's pinned pool
        return c


H_MODES = ("in-place", "parked")
PARK_CHUNK = 1 << 22  # elements per chunk of the parked H computation (128 MiB)


def h_bytes(mode: str, n: int) -> int:
    """Device bytes h_values(mode) holds at its peak beyond the domain's tables (a and b included)."""
    if mode == "parked":
        return 2 * 32 * n + 32 * min(n, PARK_CHUNK)
    return 3 * 32 * n

