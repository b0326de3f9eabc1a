"""The CUDA backend: the device stage on one GPU (snarkd.gpu), keys resident.

The key's bases, the CSR form of its coefs section and (when they fit) its MSM
window tables are uploaded once per (key, device) and shared by every worker on
that device (snarkd.gpu.device.GpuDevice.resident). `device_stage` then uploads
one witness (and a, b when synthesis computed them on the CPU), runs the sparse
products, the H computation and the MSMs on the device, and returns the same
G1Sums as the CPU backend: identical points, so identical proofs for the same r, s.

A key whose bases do not fit beside one proof's work (stream_bases "auto"), or any key with
"on", keeps its bases on the host: only the CSR is uploaded and every MSM streams STREAM_CHUNK
points at a time (snarkd.gpu.msm.msm_streamed), slower by the transfers but not failing.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager

import numpy as np

from snarkd.gpu import device as gdevice
from snarkd.gpu import msm as gmsm
from snarkd.gpu.memory import GpuUnavailable
from snarkd.gpu.resident import TABLE_MODES, csr_bytes
from snarkd.prover.types import G1Sums, Synthesized
from snarkd.units import parse_size

SLACK = 64 << 20  # per proof: CuPy's rounding, small arrays, NTT scratch
STREAM_CHUNK = 1 << 22  # points per chunk when a key's bases are streamed from the host
STREAM_MODES = ("auto", "on", "off")


class CudaBackend:
    spmv_on_device = True  # A·w, B·w from the resident CSR: synthesis only checks the witness
    g2_on_device = True  # the G2 MSM takes ~15 ms here at 2^20, ~1 s on a CPU
    max_concurrent = 0  # every device worker at once, each on its own stream (memory reservations bound them)

    def __init__(self, device: int = 0, *, memory_budget: int | str = "auto", msm_tables: str = "auto",
                 msm_window_bits: int = 0, cubin_dir: str = "", stream_bases: str = "auto"):
        if msm_tables not in TABLE_MODES:
            raise ValueError(f"MSM window tables: {msm_tables!r} is not one of {', '.join(TABLE_MODES)}")
        if stream_bases not in STREAM_MODES:
            raise ValueError(f"stream_bases: {stream_bases!r} is not one of {', '.join(STREAM_MODES)}")
        ok, why = gdevice.available()
        if not ok:
            raise GpuUnavailable(f"the cuda backend cannot run here: {why}")
        budget = parse_size(memory_budget)
        self.dev = gdevice.get(device, None if budget == "auto" else budget, cubin_dir)
        self.name = f"cuda:{self.dev.index}"
        self.msm_tables = msm_tables
        self.msm_c = int(msm_window_bits)
        self.stream_bases = stream_bases

    def __repr__(self) -> str:
        return f"CudaBackend(device={self.dev.index}, msm_tables={self.msm_tables!r})"

    def pin(self) -> None:
        """Make this GPU the calling thread's current device, with a stream of its own (a device
        worker's proofs then overlap with its siblings' on the GPU). Every call below also enters the
        device itself, so work never lands on another GPU."""
        self.dev.use(own_stream=True)

    def kernel_seconds(self) -> float:
        """Seconds the GPU ran this device's kernels so far (gpu/busy.py)."""
        return self.dev.clock.seconds()

    def release(self, key) -> None:
        self.dev.release(key.zkey)

    def residency(self, key):
        return self.dev.residency(key.zkey)

    def make_resident(self, key, timer=None) -> bool:
        """Upload the key (and build its tables) as device_stage would, under a proof's reservation,
        so that the tables' "auto" decision leaves the same room for the proof's own work."""
        if self.dev.residency(key.zkey) is not None:
            return False
        mem = self.dev.memory
        with ExitStack() as stack:
            if timer is not None:
                stack.enter_context(timer.phase("key_upload"))
            stack.enter_context(mem.guard("uploading the proving key"))
            streamed = self.streams(key)
            stack.enter_context(mem.reserve(self._work_bytes(key, streamed), what="proof"))
            self.dev.resident(key.zkey, self.msm_tables, self.msm_c, streamed)
            self.dev.synchronize()
        return True

    def streams(self, key) -> bool:
        """Whether the key's bases stay on the host: mode "on"; "auto" when the bases and the
        CSR would not fit in the device budget beside what the device holds (resident keys, NTT
        tables) and one proof's work (or as the key is resident already)."""
        r = self.dev.residency(key.zkey)
        if r is not None:
            return r.streamed
        if self.stream_bases != "auto":
            return self.stream_bases == "on"
        zk = key.zkey
        bases = sum(int(x.nbytes) for x in (zk.a, zk.b1, zk.c, zk.h, zk.b2))
        return bases + csr_bytes(zk) + self._work_bytes(key, streamed=False) > self.dev.memory.budget - self.dev.held_bytes()

    def work_bytes(self, key) -> int:
        """Device memory one proof needs beyond the resident key (an upper estimate):
        the witness, a, b, c and H on the domain, and the largest MSM's scratch."""
        return self._work_bytes(key, self.streams(key))

    def _work_bytes(self, key, streamed: bool) -> int:
        zk = key.zkey
        curve = key.curve.native
        big = max(zk.n_vars, zk.domain_size)
        if streamed:  # one chunk's scratch and bases (G2's, the larger); no sorts kept across MSMs
            n = min(big, STREAM_CHUNK)
            msm = gmsm.scratch_bytes(curve, True, n, self.msm_c) + 4 * n * 2 * gmsm.coord_words(gmsm.CURVES[curve], True)
            kept = 0
        else:
            msm = max(gmsm.scratch_bytes(curve, False, big, self.msm_c), gmsm.scratch_bytes(curve, True, zk.n_vars, self.msm_c))
            kept = 2 * gmsm.sort_bytes(curve, zk.n_vars, self.msm_c)  # w's digit sorts, kept for its MSMs (table and plain)
        return 32 * zk.n_vars + 4 * 32 * zk.domain_size + msm + kept + SLACK

    def device_stage(self, key, synth: Synthesized, timer, threads: int = 0, with_g2: bool = False) -> G1Sums:
        import cupy

        zk, native, dev, c = key.zkey, key.native, self.dev, self.msm_c
        curve = key.curve.native
        a_host, b_host = synth.a, synth.b
        synth.a = synth.b = None
        mem = dev.memory
        streamed = self.streams(key)
        with mem.guard("a proof"), mem.reserve(self._work_bytes(key, streamed), what="proof"):
            # guard made this device current for the thread: allocations and launches below land on it,
            # on the thread's own stream; only this proof's work is waited for
            rk = dev.resident(zk, self.msm_tables, c, streamed)
            mod = dev.module(curve)
            kernels = _Brackets(dev, cupy)
            with timer.phase("upload"):
                w = mem.upload(synth.witness)
                a = b = None
                if a_host is not None:
                    a, b = mem.upload(a_host), mem.upload(b_host)
            del a_host, b_host
            d = zk.domain_size
            if a is None:
                with timer.phase("spmv"), kernels():
                    a = cupy.empty(d * 8, dtype=cupy.uint32)
                    b = cupy.empty(d * 8, dtype=cupy.uint32)
                    for (rp, cols, vals), out in zip(rk.csr, (a, b)):
                        mod.get_function("spmv_csr")(((d + 127) // 128,), (128,), (rp, cols, vals, w, out, np.uint32(d)))
            with timer.phase("ntt"), kernels():
                h = dev.ntt_domain(curve, zk.domain_power).h_values(a, b)
                del a, b
            # one digit sort of w serves A, B1, C (w[n_public+1:]) and B2 when their window modes agree
            sorts, nv = {}, zk.n_vars

            def msm(name: str, g2: bool, scalars, n: int, offset: int = 0, tag: str = ""):
                with timer.phase(f"msm_{name}"), kernels():
                    if rk.streamed:
                        return gmsm.msm_streamed(mod, curve, g2, rk.host[name], scalars, n, native, c, offset=offset,
                                                 chunk=STREAM_CHUNK, upload=mem.upload)
                    return gmsm.msm(mod, curve, g2, getattr(rk, name), scalars, n, native, c, table=rk.tables.get(name),
                                    offset=offset, sorts=sorts if tag else None, tag=tag)

            res_h = msm("h", False, h, d)
            del h
            sums = G1Sums(h=res_h, a=msm("a", False, w, nv, tag="w"), b1=msm("b1", False, w, nv, tag="w"),
                          c=msm("c", False, w, nv, offset=zk.n_public + 1, tag="w"))
            if with_g2:
                sums.b2 = msm("b2", True, w, nv, tag="w")
            del sorts
            dev.sync_stream()
            timer.record("kernels", kernels.count() * 1e3)
        return sums


class _Brackets:
    """CUDA events around each group of kernels of one device stage, for the device's kernel-busy clock."""

    def __init__(self, dev, cupy):
        self.dev, self.cupy = dev, cupy
        self.ref = dev.clock.reference()
        self.pairs: list = []

    @contextmanager
    def __call__(self):
        start = self.cupy.cuda.Event()
        start.record()
        yield
        end = self.cupy.cuda.Event()
        end.record()
        self.pairs.append((start, end))

    def count(self) -> float:
        """Add the (complete) intervals to the device's clock; their GPU seconds."""
        return self.dev.clock.add(self.ref, self.pairs)
