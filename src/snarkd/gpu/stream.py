"""Keys larger than the GPU: how a streamed device stage is sized (StreamPlan) and the MSM pass itself.

The bases of a streamed key stay on the host, page-locked once (hostbases.py). A device stage proves a
batch of proofs of the key together and makes one pass over the bases for all of them:

    copy stream     H[0] H[1] ... H[r]  | A B1 C B2 [0] | A B1 C B2 [1] | ...        cudaMemcpyAsync (DMA)
    compute stream  MSMs of every proof | sort w_p[0]; A, B1, C, B2 MSMs of every proof p | ...

A pass is a list of segments (the H bases, then A, B1, C, B2): a "merged" plan runs both in one pass, so
the W segment's first chunks cross while the H segment's last chunks are summed (each pass's first chunk
is the only transfer the MSMs cannot hide); otherwise the two run as passes of their own, each with only
its own buffers on the device (the H pass's slots hold H rows only).

`groups` slot groups on the device take the chunks in turn; events order the two streams (a group is
refilled once the MSMs that read it are queued as done), so the next chunks cross PCIe while this one's
MSMs run and the host never waits per chunk. One digit sort of w_p's chunk serves A, B1, C and B2. Each
MSM's per-chunk window sums are gathered on the device ([window][chunk], a 2-D copy) and reduced once at
the end, so only nw points per MSM come back. Every chunk crosses once per batch: k proofs, one transfer.

plan() picks the chunk, the batch, where A·w and B·w are computed (the CSR on the device, or page-locked
on the host and sent by blocks, or the CPU in synthesis), and how H is computed (ntt.py: in place, or with one vector parked on the host),
from the device budget: pure arithmetic, tested without a GPU (tests/gpu/test_stream_plan.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from snarkd.gpu.hostbases import HostCsr
from snarkd.gpu.module import CURVES, launch
from snarkd.gpu.msm import coord_words, combine_windows, msm_window_sums, n_windows, scratch_bytes, window_bits
from snarkd.gpu.ntt import H_MODES, domain_bytes, h_bytes

FR = 32  # bytes per scalar-field element
MIN_CHUNK = 1 << 16  # below this the per-chunk bucket reduction costs more than the MSM: refuse instead
MAX_CHUNK = 1 << 23  # larger chunks save little (4 reductions per set at 2^25) and cost double buffers
GROUPS = 2  # slot groups in flight: one being read by MSMs, one being filled
BATCH_MAX = 16  # proofs per streamed device stage
DEVICE_SLACK = 64 << 20  # CuPy's rounding, small arrays, events, the accumulators (as resident.SLACK)
UPLOAD_GBPS = 9.0  # a witness from pageable host memory (memory.upload's staged copy): 2 GiB in 215-240 ms at 2^26
LINK_GBPS = 50.0  # host -> device from page-locked memory (54.3 GB/s measured on the H200 host: notes)
REDUCE_S = 3.3e-3  # one chunk's extra cost (its bucket reduction, c = 16) on the H200: 2^24 BN254 msm_w 417 ms over 16 chunks vs 364 resident
HOST_SPMV_S = 3.0 / (1 << 26)  # A·w, B·w on the CPU per domain row: 3.0 s at 2^26 on the H200 host's 16 cores
CSR_MODES = ("device", "streamed", "host")
CSR_ENTRY_BYTES = 36  # resident.csr_bytes: a column and a value per entry (row pointers apart)


@dataclass(frozen=True)
class KeyShape:
    """What sizes a streamed proof: the key's dimensions and bytes (no arrays)."""

    curve: str  # "bn254" | "bls12_381"
    n_vars: int
    domain: int
    csr_bytes: int
    g2: bool = True  # the G2 MSM in the device stage

    @classmethod
    def of(cls, zkey, csr_bytes: int, g2: bool = True) -> "KeyShape":
        return cls(zkey.curve.native, int(zkey.n_vars), int(zkey.domain_size), int(csr_bytes), g2)

    @property
    def g1_point(self) -> int:
        return 2 * coord_words(CURVES[self.curve], False) * 4

    @property
    def g2_point(self) -> int:
        return 2 * coord_words(CURVES[self.curve], True) * 4

    @property
    def range_point_bytes(self) -> int:
        """Bytes of one index's bases in a W range: A, B1, C (G1) and B2 (G2)."""
        return 3 * self.g1_point + (self.g2_point if self.g2 else 0)

    @property
    def base_bytes(self) -> int:
        return (3 * self.n_vars + self.domain) * self.g1_point + (self.n_vars * self.g2_point if self.g2 else 0)

    def tables_bytes(self) -> int:
        """The NTT domain's twiddles and coset shifts, held by the device (ntt.NttDomain: about n elements)."""
        return domain_bytes(max(self.domain - 1, 0).bit_length())


@dataclass(frozen=True)
class StreamPlan:
    """How one device stage of a streamed key runs (device bytes are upper estimates)."""

    chunk: int  # points per range
    batch: int  # proofs per device stage, at most
    csr: str  # CSR_MODES: A·w, B·w from the CSR on the device, from the host CSR sent by blocks, or on the CPU
    h_mode: str  # ntt.H_MODES: "in-place" (a, b, c on the device) or "parked" (one coset vector on the host)
    keep_w: bool  # each proof's witness stays on the device from the NTT to the W pass (else sent again)
    peak: int  # device bytes at the stage's peak, held arrays included
    held: int  # device bytes held for the key whatever runs: CSR (if on the device) and the NTT domain
    merged: bool = False  # H and W in one pass (needs keep_w): the W pass's first transfer hides behind H's MSMs
    parts: dict = field(default_factory=dict, compare=False)  # the peak's terms, for doctor and the bench

    @property
    def c(self) -> int:
        return window_bits(self.chunk)

    def ranges(self, n: int) -> list[tuple[int, int]]:
        return [(lo, min(n, lo + self.chunk)) for lo in range(0, n, self.chunk)]

    def describe(self) -> str:
        how = {"device": "CSR on the device", "streamed": "CSR streamed", "host": "A·w, B·w on the CPU"}[self.csr]
        return (f"chunk 2^{self.chunk.bit_length() - 1} points, batch <= {self.batch}, {how}, H {self.h_mode}, "
                f"{'one pass' if self.merged else 'two passes'}, peak {self.peak / 2**30:.2f} GiB")


def _msm_scratch(shape: KeyShape, chunk: int, g2: bool) -> int:
    """One chunk's MSM work: the larger group's scratch (its digit sort included) and the kept sort."""
    c = window_bits(chunk)
    sort = 4 * n_windows(shape.curve, c) * chunk + 16 * (n_windows(shape.curve, c) << (c - 1))
    return scratch_bytes(shape.curve, g2, chunk) + sort


def peak_bytes(shape: KeyShape, chunk: int, batch: int, csr: str, h_mode: str, keep_w: bool,
               merged: bool = False) -> dict:
    """The device bytes of a stage's three steps (upper estimates), by term: A·w, B·w and H of the last proof
    (earlier proofs' h and kept w held), the H pass (its slots hold H rows: G1 points), the W pass (A, B1, C,
    B2 rows). merged: one pass, so the H part already has the W part's slots and scratch. csr "streamed": one
    block's buffers beside w and b while A·w waits on the host when H is parked (a's own memory is then free)."""
    m, n = shape.n_vars, shape.domain
    held = shape.tables_bytes() + (shape.csr_bytes if csr == "device" else 0)
    w, h = FR * m, FR * n
    kept = h + (w if keep_w else 0)
    w_slots = GROUPS * chunk * shape.range_point_bytes
    w_msm = _msm_scratch(shape, chunk, shape.g2)
    spmv = 0
    if csr == "streamed":
        entries = max(0, shape.csr_bytes - 8 * (n + 1)) // CSR_ENTRY_BYTES
        spmv = w + (1 if h_mode == "parked" else 2) * h + HostCsr.device_bytes(n, entries)
    ntt = (batch - 1) * kept + max(spmv, (w if (csr == "device" or keep_w) else 0) + h_bytes(h_mode, n))
    if merged:
        h_pass = batch * kept + w_slots + w_msm
    else:
        h_pass = batch * kept + GROUPS * chunk * shape.g1_point + _msm_scratch(shape, chunk, False)
    w_pass = batch * w + w_slots + w_msm
    return {"held": held, "ntt": ntt, "h_pass": h_pass, "w_pass": w_pass,
            "peak": held + max(ntt, h_pass, w_pass) + DEVICE_SLACK}


def _fill_s(shape: KeyShape, chunk: int, merged: bool) -> float:
    """A stage's transfer that no MSM hides: each pass's first slot group crosses before its first MSM can
    start (merged: the W part's first group goes up while the H part's last chunks are summed)."""
    h = min(chunk, shape.domain) * shape.g1_point
    w = 0 if merged else min(chunk, shape.n_vars) * shape.range_point_bytes
    return (h + w) / (LINK_GBPS * 1e9)


def _cost_s(shape: KeyShape, chunk: int, csr: str, h_mode: str, keep_w: bool) -> float:
    """A lone proof's extra seconds over bases resident (what the options change): bucket reductions per
    chunk, vectors and the CSR sent again, and A·w, B·w on the CPU (measured on the H200 host)."""
    m, n = shape.n_vars, shape.domain
    c = window_bits(chunk)
    sets = 5 if shape.g2 else 4
    reductions = sets * -(-max(m, n) // chunk) * REDUCE_S * 2.0 ** (c - 16) * n_windows(shape.curve, c) / 17
    resend = 0.0 if keep_w else FR * m / (UPLOAD_GBPS * 1e9)
    sent = 4 * FR * n if h_mode == "parked" else 0
    if csr == "streamed":
        sent += shape.csr_bytes + (2 * FR * n if h_mode == "parked" else 0)
    elif csr == "host":
        sent += 2 * FR * n
    return reductions + resend + sent / (LINK_GBPS * 1e9) + (HOST_SPMV_S * n if csr == "host" else 0.0)


def plan(shape: KeyShape, budget: int, other_held: int = 0, batch_max: int = BATCH_MAX,
         chunk: int = 0, csr_modes: tuple[str, ...] = CSR_MODES, expect: int = 0) -> StreamPlan | None:
    """The cheapest StreamPlan whose peak fits `budget` beside `other_held` device bytes (other keys),
    or None when none does (the key cannot be proved on this device). chunk > 0 forces the chunk size
    (a power of two); csr_modes limits where A·w, B·w may be computed (a benchmark's side by side).
    Each option gets the largest batch that fits and is scored per proof for a stage of `expect` proofs
    (0: as many as fit): its extra seconds for a lone proof (_cost_s) plus, shared by the stage's proofs,
    the first chunks' transfer (_fill_s) and a quarter of the bases' transfer (the part that the MSMs do
    not hide at chunk boundaries). expect > 0 also keeps only options whose batch takes `expect` proofs:
    the key's plan (expect 0) sets how many a stage takes; each stage then runs the plan best for the
    number it got (prover/cuda.py), so a lone proof and a 10-partition job each get theirs."""
    room = budget - other_held
    top = min(MAX_CHUNK, 1 << (max(shape.n_vars, shape.domain, 2) - 1).bit_length())  # no chunk past the sets
    low = min(MIN_CHUNK, top)
    chunks = [chunk] if chunk else [1 << k for k in range(top.bit_length() - 1, low.bit_length() - 2, -1)]
    best = None
    for ch in chunks:
        for csr in csr_modes:
            for h_mode in H_MODES:
                for keep_w, merged in ((True, True), (True, False), (False, False)):
                    fits = lambda k: peak_bytes(shape, ch, k, csr, h_mode, keep_w, merged)["peak"] <= room  # noqa: E731
                    if not fits(max(1, expect)):
                        continue
                    k = max(1, expect)
                    while k < batch_max and fits(k + 1):
                        k += 1
                    score = _cost_s(shape, ch, csr, h_mode, keep_w) + \
                        (_fill_s(shape, ch, merged) + 0.25 * shape.base_bytes / (LINK_GBPS * 1e9)) / (expect or k)
                    if best is None or score < best[0]:
                        best = (score, ch, k, csr, h_mode, keep_w, merged)
    if best is None:
        return None
    _, ch, k, csr, h_mode, keep_w, merged = best
    t = peak_bytes(shape, ch, k, csr, h_mode, keep_w, merged)
    return StreamPlan(ch, k, csr, h_mode, keep_w, t["peak"], t["held"], merged, t)


def largest_power(curve: str, budget: int, g2: bool = True, csr_per_row: float = 80.0) -> dict:
    """The largest 2^k domain (n_vars = 2^k) a streamed proof fits in `budget`, with the reason:
    {"power": k, "plan": ..., "peak_gib": ..., "next": what the next power would need}. csr_per_row: CSR bytes
    per domain row (80: two matrix entries a row and its pointer, as the chain circuit; the plan may keep the
    CSR on the host anyway, so it moves the answer little)."""
    best = {"power": 0}
    for k in range(10, CURVES[curve].two_adicity + 1):
        n = 1 << k
        shape = KeyShape(curve, n, n, int(csr_per_row * n), g2)
        p = plan(shape, budget, batch_max=1)
        if p is None:
            lowest = min(peak_bytes(shape, MIN_CHUNK, 1, "host", hm, False)["peak"] for hm in H_MODES)
            best["next"] = (f"2^{k} needs at least {lowest / 2**30:.2f} GiB (NTT tables {shape.tables_bytes() / 2**30:.2f}"
                            f" GiB held, w and h {2 * FR * n / 2**30:.2f} GiB, chunk buffers) > {budget / 2**30:.2f} GiB")
            break
        best = {"power": k, "plan": p.describe(), "peak_gib": round(p.peak / 2**30, 2)}
    return best


# -- the pass ------------------------------------------------------------------------------------------


@dataclass
class PassStats:
    """What one pass sent and how long the copy engine and the kernels were busy (CUDA events)."""

    bytes_sent: int = 0
    chunks: int = 0
    copy_pairs: list = field(default_factory=list)  # (start, end) events on the copy stream
    kernel_pairs: list = field(default_factory=list)  # (segment, start, end) events on the compute stream


@dataclass(frozen=True)
class Task:
    """One set's chunk in a range: host rows [r0, r1) of section `name`, read by MSMs that skip scalar
    indices below `offset` (C's rows start at n_public + 1)."""

    name: str
    g2: bool
    r0: int
    r1: int
    offset: int


def w_tasks(lo: int, hi: int, n_public: int, g2: bool) -> list[Task]:
    """The W range [lo, hi)'s chunks: A, B1, C (rows shifted by n_public + 1), B2."""
    np1 = n_public + 1
    out = [Task("a", False, lo, hi, 0), Task("b1", False, lo, hi, 0)]
    if hi > np1:
        out.append(Task("c", False, max(lo, np1) - np1, hi - np1, max(0, np1 - lo)))
    if g2:
        out.append(Task("b2", True, lo, hi, 0))
    return out


def h_tasks(lo: int, hi: int) -> list[Task]:
    return [Task("h", False, lo, hi, 0)]


def msm_pass(dev, curve: str, host, segments: list, c: int, native, stats: PassStats, groups: int = GROUPS,
             between=None) -> list[dict]:
    """Σ scalars·bases for every (proof, set) of the pass. segments: [(ranges, tasks_of, vectors)], run in order
    over one set of slot groups: ranges [(lo, hi)] of the scalar index, tasks_of(lo, hi) -> [Task], vectors[p]
    proof p's scalars on the device (u32 words, 8 per element); every segment has one vector per proof and
    its own set names. Returns per proof {set name: affine point} as GpuDevice.msm does. Queued on the calling
    thread's current stream; the chunks go up on a copy stream of the pass's own. stats.kernel_pairs gets
    (segment, start, end) per range (per proof's part of it with `between`). between: None, or called at the pass's
    boundaries: between two proofs' MSMs of a range, and after each range but the last once its MSMs are queued
    (the engine's yield point, which may run other device work there; the pass's buffers, sums and queued copies
    are left as they are, and its kernel brackets leave the time out)."""
    import cupy

    mod = dev.module(curve)
    cur = CURVES[curve]
    compute = cupy.cuda.get_current_stream()
    copy = cupy.cuda.Stream(non_blocking=True)
    steps = [(s, j, lo, hi, tasks_of(lo, hi)) for s, (ranges, tasks_of, _) in enumerate(segments)
             for j, (lo, hi) in enumerate(ranges)]
    if not steps:
        return [{} for _ in (segments[0][2] if segments else ())]
    words = max(sum((t.r1 - t.r0) * host.row_bytes(t.name) for t in st[4]) for st in steps) // 4
    bufs = [cupy.empty(max(words, 1), dtype=cupy.uint32) for _ in range(min(groups, len(steps)))]
    freed: list = [None] * len(bufs)

    def send(k: int):
        """Queue step k's chunks into its slot group; returns ({set: (device view, task)}, loaded event)."""
        g = k % len(bufs)
        if freed[g] is not None:
            copy.wait_event(freed[g])
        start = cupy.cuda.Event()
        start.record(copy)
        views, off = {}, 0
        for t in steps[k][4]:
            ptr, nbytes = host.rows(t.name, t.r0, t.r1)
            dst = bufs[g][off // 4 : (off + nbytes) // 4]
            if nbytes:
                dst.data.copy_from_host_async(ptr, nbytes, stream=copy)
            views[t.name] = (dst, t)
            off += nbytes
            stats.bytes_sent += nbytes
        end = cupy.cuda.Event()
        end.record(copy)
        stats.copy_pairs.append((start, end))
        stats.chunks += len(steps[k][4])
        return views, end

    nw = n_windows(curve, c)
    acc: dict[tuple[int, str], tuple] = {}  # (proof, set) -> (window sums [window][range], ranges of its segment)
    pending = {k: send(k) for k in range(len(bufs))}
    for k, (s, j, lo, hi, _) in enumerate(steps):
        views, loaded = pending.pop(k)
        compute.wait_event(loaded)
        t0 = cupy.cuda.Event()
        t0.record(compute)
        nr = len(segments[s][0])
        for p, vec in enumerate(segments[s][2]):
            if p and between is not None:  # between two proofs' MSMs of the range: its bracket closes around it
                t1 = cupy.cuda.Event()
                t1.record(compute)
                stats.kernel_pairs.append((s, t0, t1))
                between()
                t0 = cupy.cuda.Event()
                t0.record(compute)
            scal = vec[8 * lo : 8 * hi]
            sorts: dict = {}  # one digit sort of this chunk of the proof's scalars serves every set
            for name, (bases, t) in views.items():
                segs, _ = msm_window_sums(mod, curve, t.g2, bases, scal, hi - lo, c, offset=t.offset, sorts=sorts,
                                          tag="chunk", on_device=True)
                xw = 4 * coord_words(cur, t.g2)
                if (p, name) not in acc:
                    acc[(p, name)] = (cupy.zeros(nw * nr * xw, dtype=cupy.uint32), nr)  # zeros: infinity (ZZ = 0)
                a = acc[(p, name)][0]
                cupy.cuda.runtime.memcpy2DAsync(a.data.ptr + j * xw * 4, nr * xw * 4, segs.data.ptr, xw * 4, xw * 4,
                                                nw, cupy.cuda.runtime.memcpyDeviceToDevice, compute.ptr)
            del sorts
        t1 = cupy.cuda.Event()
        t1.record(compute)
        stats.kernel_pairs.append((s, t0, t1))
        freed[k % len(bufs)] = t1
        if k + len(bufs) < len(steps):
            pending[k + len(bufs)] = send(k + len(bufs))
        if between is not None and k + 1 < len(steps):
            between()
    out: list[dict] = [{} for _ in segments[0][2]]
    for (p, name), (a, nr) in acc.items():
        g2 = name == "b2"
        xw = 4 * coord_words(cur, g2)
        if nr > 1:
            s = cupy.empty(nw * xw, dtype=cupy.uint32)
            launch(mod, f"{'g2' if g2 else 'g1'}_sum_groups", nw, (a, np.uint32(nr), np.uint32(nr), np.uint32(nw), s), 64)
            a = s
        out[p][name] = combine_windows(curve, g2, a.get(), c, native)
    copy.synchronize()
    return out


__all__ = ["KeyShape", "StreamPlan", "CSR_MODES", "PassStats", "Task", "plan", "peak_bytes", "largest_power", "msm_pass",
           "w_tasks", "h_tasks"]
