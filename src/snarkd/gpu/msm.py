"""Pippenger MSM on the device, G1 and G2, bases resident.

1-2. DigitSort: each scalar (reduced mod r) -> nw signed c-bit digits, sorted
   by bucket key (w * 2^(c-1) + |d| - 1): msm_digits (digits and a histogram,
   warp-aggregated atomics), a scan, msm_scatter (a counting sort). A
   DigitSort depends only on the scalars, n, c and the table mode, so one sort
   of the witness serves the A, B1, B2 and C MSMs of a proof (C reads w[off:]
   by skipping i < off). (A three-pass partition sort measured 2x slower on the
   H200 -- BN254 G1 2^24: 22.6 vs 10.6 ms, bench/gpu-notes.md round 2 -- and is gone.)
3. Segmented accumulation: every thread sums L consecutive sorted points (mixed
   XYZZ adds from the affine bases), crossing bucket boundaries, one partial sum
   per bucket piece (kernels.cu accum_range: no lane waits for a longer bucket of
   its warp, as one thread per bucket item did); further rounds sum the partial sums
   of buckets that had several pieces, each cut into items of Plan.round2_l. A skewed
   scalar set (many equal digits) so costs log_L(bucket) rounds instead of one
   thread walking millions of points.
4. Window reduction in parallel: thread t takes L2 buckets of a window and
   returns their running-sum contribution plus lo * (their sum); fan-in sums
   then leave one XYZZ point per window.
5. The nw window sums come back to the host (a few KB) and are combined by the
   CPU core as an MSM of nw points with scalars 2^(c w).

With a WindowTable (2^(c w) P_i precomputed for every window, resident with
the key) digits index table rows instead, all windows share one set of
2^(c-1) buckets, step 4 runs once and step 5 is a single point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snarkd.curves.encoding import fq_from_mont_factor
from snarkd.curves.params import Curve
from snarkd.gpu.module import CURVES, function, launch

FR_BITS = {"bn254": 254, "bls12_381": 255}


@dataclass(frozen=True)
class Plan:
    """How an MSM is cut into threads (measured on the H200: bench/gpu-notes.md). A benchmark passes a
    variant (bench/gpu.py --variants "name=SEG_L2=8"); everything else uses PLAN."""

    target_items: int = 1 << 18  # first-round threads (about)
    # ... twice as many from large_digits digits up (2^24 points): -2 % at 2^24, +2 to +5 % at 2^20 (round 3)
    large_target_items: int = 1 << 19
    large_digits: int = 1 << 27
    round2_l: int = 16  # later rounds: partial sums per thread
    seg_l2: int = 16  # window reduction: buckets per thread
    fan: int = 16  # ... and the fan-in of the sums after it
    # A reduction of at most small_buckets buckets in all (a window table at 2^20: one set of 2^15) has
    # too few threads for its latency-bound chains: 4 buckets per thread and fan-in 4 there (round 3:
    # reduction -40 %, BN254 G2 2^20 with tables 13.1 -> 12.4 ms; with more buckets 4 was slower).
    small_buckets: int = 1 << 17
    small_seg_l2: int = 4
    small_fan: int = 4

    def first_round_items(self, n: int, nw: int) -> int:
        """About how many threads the first accumulation round uses for n scalars of nw windows."""
        return self.large_target_items if n * nw >= self.large_digits else self.target_items


PLAN = Plan()


def window_bits(n: int, c: int = 0) -> int:
    """The window width for n points; c > 0 forces it ([gpus] msm_window_bits)."""
    if c:
        return int(c)
    lg = max(1, int(n).bit_length() - 1)
    return max(4, min(16, lg - 4))


def n_windows(curve_name: str, c: int) -> int:
    """Signed c-bit windows of a scalar (one more than the bits need, for the last carry)."""
    return FR_BITS[curve_name] // c + 1


def table_window_bits(n: int, c: int = 0) -> int:
    """c for a window table: as window_bits, but 20 from 2^22 points up, where
    a table's buckets are shared by all windows (their reduction runs once),
    so fewer, larger windows pay: BN254 G1 2^24 67 ms at c = 20 vs 76 ms at
    c = 16 on the H200, and 13 windows of memory instead of 16."""
    if c or n < (1 << 22):
        return window_bits(n, c)
    return 20


def coord_words(curve: Curve, g2: bool) -> int:
    """u32 words per Fq (or Fq2) coordinate."""
    return (curve.n8q // 4) * (2 if g2 else 1)


class WindowTable:
    """2^(c w) * P_i for every window w and base i, affine on the device
    (table[w * n + i]): with it all windows share one set of 2^(c-1) buckets,
    so the window reduction runs once instead of nw times and no host-side
    combine of window sums is needed. Costs nw times the bases' memory."""

    def __init__(self, mod, curve_name: str, g2: bool, bases, n: int, c: int = 0):
        import cupy

        curve = CURVES[curve_name]
        self.curve_name, self.g2, self.n = curve_name, g2, int(n)
        self.c = table_window_bits(n, c)
        self.nw = n_windows(curve_name, self.c)
        if self.nw * self.n >= 1 << 31:
            raise ValueError(f"window table of {self.nw} x {n} points is too large (indices are 31-bit)")
        aw = 2 * coord_words(curve, g2)
        self.table = cupy.empty(self.nw * self.n * aw, dtype=cupy.uint32)
        device_copy(self.table, bases, self.n * aw)
        fn = function(mod, ("g2" if g2 else "g1") + "_window_table")
        blk = 128
        for w in range(1, self.nw):
            prev = self.table[(w - 1) * self.n * aw : w * self.n * aw]
            fn(((self.n + blk - 1) // blk,), (blk,), (prev, self.table[w * self.n * aw :], np.uint32(self.n), np.int32(self.c)))

    @property
    def nbytes(self) -> int:
        return int(self.table.nbytes)

    @staticmethod
    def indexable(curve_name: str, n: int, c: int = 0) -> bool:
        """Whether every row of the table has a 31-bit index (sorted entries keep bit 31 for the sign)."""
        return n_windows(curve_name, table_window_bits(n, c)) * int(n) < 1 << 31

    @staticmethod
    def bytes_for(curve_name: str, g2: bool, n: int, c: int = 0) -> int:
        c = table_window_bits(n, c)
        return n_windows(curve_name, c) * int(n) * 2 * coord_words(CURVES[curve_name], g2) * 4


def scratch_bytes(curve_name: str, g2: bool, n: int, c: int = 0, table: bool = False, plan: Plan = PLAN) -> int:
    """Device memory msm_window_sums allocates for n points, an upper estimate from the
    same sizes it uses: the digit sort (12 bytes per digit, nw per point: its stored digit and
    sorted entry, with the 4 bytes the partition sort's 8-byte entries took left as room; four
    bucket-sized arrays) and two accumulation rounds of partial sums alive at once."""
    c = table_window_bits(n, c) if table else window_bits(n, c)
    nw = n_windows(curve_name, c)
    nseg = (1 if table else nw) << (c - 1)
    point_bytes = 4 * coord_words(CURVES[curve_name], g2) * 4
    items = plan.first_round_items(n, nw) + nseg
    return 12 * nw * n + 4 * (nseg + 1) * 4 + 2 * items * (point_bytes + 4)


def sort_bytes(curve_name: str, n: int, c: int = 0, plan: Plan = PLAN) -> int:
    """Device memory a kept DigitSort of n scalars holds (sorted entries, counts,
    starts), the larger of the plain and table window modes; its accumulation plan
    (about plan.first_round_items words per round) is in scratch_bytes's allowance."""
    out = 0
    for c1, nwin1 in ((window_bits(n, c), None), (table_window_bits(n, c), 1)):
        nw = n_windows(curve_name, c1)
        nseg = (nwin1 or nw) << (c1 - 1)
        out = max(out, 4 * nw * n + 4 * (4 * nseg + 2) + 8 * plan.first_round_items(n, nw))
    return out


class DigitSort:
    """The signed c-bit digits of n scalars, sorted by bucket: `srt` holds each
    digit's entry (kernels.cu digit_entry: the scalar index, or with window
    tables the digit index w * n + i; sign in bit 31), bucket s owning
    srt[seg_start[s] : seg_start[s + 1]] (counts[s] entries). Built once per
    scalar vector and window mode; `rounds()` plans the segmented accumulation
    once too, so MSMs that reuse a sort launch without host round trips."""

    def __init__(self, mod, curve_name: str, scalars, n: int, c: int, shared: bool, mark=None, plan: Plan = PLAN):
        """mark(name): called after each pass (CUDA events for per-pass timings), when given."""
        import cupy

        mark = mark or (lambda name: None)

        self.n, self.c, self.shared = int(n), int(c), bool(shared)
        self.nw = n_windows(curve_name, c)
        self.nseg = (1 if shared else self.nw) << (c - 1)
        self._mod, self.plan = mod, plan
        self._rounds = None
        nseg, nw, n = self.nseg, self.nw, self.n
        args = (scalars, np.uint32(n), np.int32(c), np.int32(nw), np.int32(shared))
        self.seg_start = cupy.empty(nseg + 1, dtype=cupy.uint32)
        self.srt = cupy.empty(max(nw * n, 1), dtype=cupy.uint32)
        self.counts = cupy.zeros(nseg, dtype=cupy.uint32)
        digits = cupy.empty(nw * n, dtype=cupy.uint32)
        launch(mod, "msm_digits", n, (*args, digits, self.counts))
        exclusive_scan(mod, self.counts, self.seg_start)
        cursor = cupy.empty(nseg, dtype=cupy.uint32)
        device_copy(cursor, self.seg_start, nseg)
        mark("sort_digits")
        launch(mod, "msm_scatter", nw * n, (digits, np.uint32(n), np.uint64(nw * n), np.int32(shared), cursor, self.srt))
        mark("sort_scatter")

    def matches(self, n: int, c: int, shared: bool) -> bool:
        return (self.n, self.c, self.shared) == (int(n), int(c), bool(shared))

    def rounds(self) -> list[tuple]:
        """(L, seg_start, item_start, item_seg, nitems, nthreads) per accumulation round.
        Round 1: nthreads threads take L sorted entries each across bucket boundaries, one
        partial sum per bucket piece (item_seg unused). Each later round sums the partial
        sums of buckets that had several: every bucket cut into items of at most plan.round2_l,
        one thread each."""
        import cupy

        if self._rounds is not None:
            return self._rounds
        rounds = []
        counts, seg_start = self.counts, self.seg_start
        L = max(8, -(-(self.n * self.nw) // self.plan.first_round_items(self.n, self.nw)))
        ranges = True
        while True:
            info = cupy.zeros(2, dtype=cupy.uint32)  # [items in all, most items of one bucket]
            items_per = cupy.empty(self.nseg, dtype=cupy.uint32)
            if ranges:
                launch(self._mod, "pieces_per_bucket", self.nseg, (seg_start, np.uint32(self.nseg), np.uint32(L), items_per, info))
            else:
                launch(self._mod, "items_per_bucket", self.nseg, (counts, np.uint32(self.nseg), np.uint32(L), items_per, info))
            item_start = cupy.empty(self.nseg + 1, dtype=cupy.uint32)
            exclusive_scan(self._mod, items_per, item_start)
            device_copy(info, item_start[self.nseg:], 1)
            nitems, maxi = (int(x) for x in info.get())
            item_seg, nthreads = None, 0
            if ranges:
                nthreads = -(-(self.n * self.nw) // L)  # entries <= n * nw; threads past the last one return
            else:
                item_seg = cupy.empty(max(nitems, 1), dtype=cupy.uint32)
                launch(self._mod, "items_fill", nitems, (item_start, np.uint32(self.nseg), item_seg, np.uint32(nitems)))
            rounds.append((L, seg_start, item_start, item_seg, nitems, nthreads))
            if maxi <= 1:
                break
            counts, seg_start, L, ranges = items_per, item_start, self.plan.round2_l, False
        self._rounds = rounds
        return rounds


SCAN_TILE = 1024  # kernels.cu scan_tiles


def exclusive_scan(mod, counts, out) -> None:
    """out[0] = 0, out[i + 1] = counts[0] + ... + counts[i] (u32, on the current stream), with our kernels:
    CuPy's cumsum and elementwise kernels are compiled on first use in every process (0.3-0.9 s)."""
    import cupy

    n = int(counts.size)
    ntiles = max(1, -(-n // SCAN_TILE))
    sums = cupy.empty(ntiles, dtype=cupy.uint32)
    function(mod, "scan_tiles")((ntiles,), (SCAN_TILE,), (counts, out, np.uint32(n), sums))
    if ntiles > 1:
        function(mod, "scan_tile_sums")((1,), (SCAN_TILE,), (sums, np.uint32(ntiles)))
        launch(mod, "scan_add", n, (out, np.uint32(n), sums))


def device_copy(dst, src, count: int) -> None:
    """The first `count` elements of src into dst: a copy on the current stream, not a CuPy kernel."""
    if count > 0:
        dst.data.copy_from_device_async(src.data, count * src.itemsize)


def msm_window_sums(mod, curve_name: str, g2: bool, bases, scalars, n: int, c: int = 0, stats: dict | None = None,
                    table: WindowTable | None = None, *, offset: int = 0, sorts: dict | None = None, tag: str = "",
                    plan: Plan = PLAN, on_device: bool = False, between=None):
    """Device part of sum_{offset <= i < n} scalars[i] * bases[i - offset]: returns (host
    uint32 array of nw XYZZ points, c); with a window table, one point (the whole sum) and c.
    sorts: a dict kept by the caller for one set of scalars (tag names them): the digit
    sort is made once per (tag, n, c, table mode) and reused by later MSMs. plan: a benchmark's variant.
    on_device: the window sums stay a device array (no host sync; the streamed pass gathers them).
    between: called after each phase's kernels are queued (the sort, each accumulation round), before the next's
    (a device stage's yield point: while a higher lane's stage holds the device, this MSM queues no more kernels,
    so the urgent kernels share the GPU with one phase of it, not with the rest of the MSM)."""
    import cupy

    curve = CURVES[curve_name]
    grp = "g2" if g2 else "g1"
    F = coord_words(curve, g2)
    XW = 4 * F
    npts = n - offset
    if table is not None:
        if table.n < npts or table.g2 != g2 or table.curve_name != curve_name:
            raise ValueError("window table does not match the MSM (curve, group or size)")
        c, bases = table.c, table.table
    c = c or window_bits(npts)
    nw = n_windows(curve_name, c)
    nb = 1 << (c - 1)
    shared = table is not None
    nwin = 1 if shared else nw  # windows that own buckets
    marks = []

    def mark(name):
        # CUDA events between phases, read only when stats are asked for
        if stats is not None:
            ev = cupy.cuda.Event()
            ev.record()
            marks.append((name, ev))

    mark("start")
    key = (tag, n, c, shared)
    sort = sorts.get(key) if sorts is not None else None
    reused = sort is not None
    if sort is None:
        sort = DigitSort(mod, curve_name, scalars, n, c, shared, mark if stats is not None else None, plan)
        if sorts is not None:
            sorts[key] = sort
    mark("sort")
    if between is not None:
        between()

    points = None
    rounds = sort.rounds()
    stride = np.uint32(table.n if shared else 0)
    for L, seg_start, item_start, item_seg, nitems, nthreads in rounds:
        out = cupy.empty(max(nitems, 1) * XW, dtype=cupy.uint32)
        if points is None:
            launch(mod, f"{grp}_accum_range", nthreads, (bases, sort.srt, seg_start, np.uint32(sort.nseg), item_start,
                                                         np.uint32(L), np.uint32(nthreads), out, np.uint32(n), stride,
                                                         np.uint32(offset)), 128)
        else:
            launch(mod, f"{grp}_accum_xyzz", nitems, (points, seg_start, item_start, item_seg, np.uint32(L),
                                                      np.uint32(nitems), out), 128)
        points = out
        if between is not None:
            between()
    fin = rounds[-1][2]
    mark("accumulate")

    seg_l2, fan = (plan.small_seg_l2, plan.small_fan) if nwin * nb <= plan.small_buckets else (plan.seg_l2, plan.fan)
    L2 = min(seg_l2, nb)
    per = nb // L2
    segs = cupy.empty(nwin * per * XW, dtype=cupy.uint32)
    launch(mod, f"{grp}_bucket_segments", nwin * per, (points, fin, np.uint32(nb), np.uint32(L2), np.uint32(nwin * per), segs), 64)
    cnt = per
    while cnt > 1:
        nxt = -(-cnt // fan)
        out = cupy.empty(nwin * nxt * XW, dtype=cupy.uint32)
        launch(mod, f"{grp}_sum_groups", nwin * nxt, (segs, np.uint32(cnt), np.uint32(fan), np.uint32(nwin), out), 64)
        segs, cnt = out, nxt
    sums = segs if on_device else segs.get()
    mark("reduce")
    if stats is not None:
        marks[-1][1].synchronize()
        phases = {name: round(cupy.cuda.get_elapsed_time(marks[i][1], ev), 3) for i, (name, ev) in enumerate(marks[1:])}
        stats.update(c=c, nw=nw, rounds=len(rounds), L=rounds[0][0], table=shared, sort_reused=reused, phases_ms=phases)
    return sums, c


# -- host side: the window sums -> one affine point (CPU core) -------------------


def xyzz_to_affine_words(curve: Curve, g2: bool, words: np.ndarray) -> np.ndarray:
    """XYZZ points (Montgomery, u32 words) -> affine Montgomery u64 limbs (zeros = infinity).
    A few points per MSM (the window sums), in plain Python ints: the bytes read and written whole, and one modular
    inversion for all the points' ZZ and ZZZ (Montgomery's trick; for G2 of their norms, u^2 = -1 on both curves).
    A GPU worker holds the GIL meanwhile: two inversions and eight numpy round trips per point were ~5% of the
    time the daemon's threads held it at j = 32 (bench/results/h200-round14)."""
    q, n8 = curve.q, curve.n8q
    per = 8 if g2 else 4  # base-field values per point: X, Y, ZZ, ZZZ
    raw = np.ascontiguousarray(words).tobytes()
    n = len(raw) // (per * n8)
    from_mont = fq_from_mont_factor(curve)
    v = [int.from_bytes(raw[i : i + n8], "little") * from_mont % q for i in range(0, n * per * n8, n8)]
    pts = [v[p * per : (p + 1) * per] for p in range(n)]  # per point: X, Y, ZZ, ZZZ (G2: two values each)
    w = per // 4  # values per coordinate
    live = [p for p in range(n) if any(pts[p][2 * w : 3 * w])]  # ZZ != 0 (else infinity: zeros)
    dens = []  # per live point: ZZ and ZZZ (G2: their norms), each inverted below
    for p in live:
        zz, zzz = pts[p][2 * w : 3 * w], pts[p][3 * w :]
        dens += [(zz[0] * zz[0] + zz[1] * zz[1]) % q, (zzz[0] * zzz[0] + zzz[1] * zzz[1]) % q] if g2 else [zz[0], zzz[0]]
    invs = _batch_inverse(dens, q)
    rq = curve.rq % q
    out = bytearray(n * 2 * w * n8)
    for k, p in enumerate(live):
        x, y, zz, zzz = (pts[p][i * w : (i + 1) * w] for i in range(4))
        if g2:
            coords = []
            for xy, z, t in ((x, zz, invs[2 * k]), (y, zzz, invs[2 * k + 1])):
                z0, z1 = z[0] * t % q, -z[1] * t % q  # 1/Z = conj(Z) / norm(Z)
                coords += [(xy[0] * z0 - xy[1] * z1) % q, (xy[0] * z1 + xy[1] * z0) % q]
        else:
            coords = [x[0] * invs[2 * k] % q, y[0] * invs[2 * k + 1] % q]
        at = p * 2 * w * n8
        out[at : at + len(coords) * n8] = b"".join((c * rq % q).to_bytes(n8, "little") for c in coords)
    return np.frombuffer(bytes(out), dtype="<u8").reshape(n, 2 * w * n8 // 8).copy()


def _batch_inverse(values: list[int], q: int) -> list[int]:
    """1/v mod q of every value with one pow(): prefix products, the inverse of the last, then back. A zero value
    raises as pow(0, -1, q) does (never for the points of an MSM: ZZ = 0 is infinity, skipped)."""
    prefix, acc = [], 1
    for x in values:
        if x == 0:
            raise ValueError("base is not invertible for the given modulus")
        prefix.append(acc)
        acc = acc * x % q
    inv = pow(acc, -1, q) if values else 1
    out = [0] * len(values)
    for i in range(len(values) - 1, -1, -1):
        out[i] = inv * prefix[i] % q
        inv = inv * values[i] % q
    return out


def combine_windows(curve_name: str, g2: bool, sums: np.ndarray, c: int, native) -> np.ndarray:
    curve = CURVES[curve_name]
    pts = xyzz_to_affine_words(curve, g2, sums)
    nw = pts.shape[0]
    sc = b"".join((pow(2, c * w, curve.r)).to_bytes(32, "little") for w in range(nw))
    scal = np.frombuffer(sc, dtype="<u8").reshape(nw, 4).copy()
    fn = native.msm_g2 if g2 else native.msm_g1
    return fn(pts, scal, 1)


def msm(mod, curve_name: str, g2: bool, bases, scalars, n: int, native, c: int = 0, stats: dict | None = None,
        table: WindowTable | None = None, *, offset: int = 0, sorts: dict | None = None, tag: str = "",
        between=None) -> np.ndarray:
    """sum_{offset <= i < n} scalars[i] * bases[i - offset]: bases and scalars device
    uint32 arrays (zkey layout; scalars plain Fr). Returns the affine Montgomery
    point as the CPU core's msm_g1/msm_g2 does. With a window table for these
    bases, the table's windows are used (bases is then not read). sorts/tag: see
    msm_window_sums (one digit sort per scalar vector, shared by its MSMs)."""
    curve = CURVES[curve_name]
    if n - offset <= 0:
        return np.zeros((4 if g2 else 2) * curve.n8q // 8, dtype=np.uint64)
    sums, c = msm_window_sums(mod, curve_name, g2, bases, scalars, n, c, stats, table, offset=offset, sorts=sorts, tag=tag,
                              between=between)
    if table is not None:
        return xyzz_to_affine_words(curve, g2, sums)[0]
    return combine_windows(curve_name, g2, sums, c, native)
