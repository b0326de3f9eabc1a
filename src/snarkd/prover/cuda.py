"""The CUDA backend: the device stage on one GPU (snarkd.gpu), keys resident.

The key's bases, the CSR form of its coefs section and (when they fit) its MSM
window tables are uploaded once per (key, device) and shared by every worker on
that device (snarkd.gpu.device.GpuDevice.resident). `device_stage` then uploads
one witness (and a, b when synthesis computed them on the CPU), runs the sparse
products, the H computation and the MSMs on the device, and returns the same
G1Sums as the CPU backend: identical points, so identical proofs for the same r, s.
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager

import numpy as np

from snarkd.gpu import device as gdevice
from snarkd.gpu import msm as gmsm
from snarkd.gpu.memory import GpuUnavailable
from snarkd.gpu.resident import TABLE_MODES
from snarkd.prover.types import G1Sums, Synthesized
from snarkd.units import parse_size

SLACK = 64 << 20  # per proof: CuPy's rounding, small arrays, NTT scratch


class CudaBackend:
    spmv_on_device = True  # A·w, B·w from the resident CSR: synthesis only checks the witness
    g2_on_device = True  # the G2 MSM takes ~15 ms here at 2^20, ~1 s on a CPU
    max_concurrent = 0  # every device worker at once, each on its own stream (memory reservations bound them)

    def __init__(self, device: int = 0, *, memory_budget: int | str = "auto", msm_tables: str = "auto",
                 msm_window_bits: int = 0, cubin_dir: str = ""):
        if msm_tables not in TABLE_MODES:
            raise ValueError(f"MSM window tables: {msm_tables!r} is not one of {', '.join(TABLE_MODES)}")
        ok, why = gdevice.available()
        if not ok:
            raise GpuUnavailable(f"the cuda backend cannot run here: {why}")
        budget = parse_size(memory_budget)
        self.dev = gdevice.get(device, None if budget == "auto" else budget, cubin_dir)
        self.name = f"cuda:{self.dev.index}"
        self.msm_tables = msm_tables
        self.msm_c = int(msm_window_bits)

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

    def residency(self, key) -> dict | None:
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
            stack.enter_context(mem.reserve(self.work_bytes(key), what="proof"))
            self.dev.resident(key.zkey, self.msm_tables, self.msm_c)
            self.dev.synchronize()
        return True

    def work_bytes(self, key) -> int:
        """Device memory one proof needs beyond the resident key (an upper estimate):
        the witness, a, b, c and H on the domain, and the largest MSM's scratch."""
        zk = key.zkey
        curve = key.curve.native
        big = max(zk.n_vars, zk.domain_size)
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
        with mem.guard("a proof"), mem.reserve(self.work_bytes(key), what="proof"):
            # guard made this device current for the thread: allocations and launches below land on it,
            # on the thread's own stream; only this proof's work is waited for
            rk = dev.resident(zk, self.msm_tables, c)
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
            tab = rk.tables.get
            with timer.phase("msm_h"), kernels():
                res_h = gmsm.msm(mod, curve, False, rk.h, h, d, native, c, table=tab("h"))
            del h
            # one digit sort of w serves A, B1, C (w[n_public+1:]) and B2 when their window modes agree
            sorts, nv = {}, zk.n_vars
            with timer.phase("msm_a"), kernels():
                sum_a = gmsm.msm(mod, curve, False, rk.a, w, nv, native, c, table=tab("a"), sorts=sorts, tag="w")
            with timer.phase("msm_b1"), kernels():
                sum_b1 = gmsm.msm(mod, curve, False, rk.b1, w, nv, native, c, table=tab("b1"), sorts=sorts, tag="w")
            with timer.phase("msm_c"), kernels():
                sum_c = gmsm.msm(mod, curve, False, rk.c, w, nv, native, c, table=tab("c"), offset=zk.n_public + 1,
                                 sorts=sorts, tag="w")
            sums = G1Sums(h=res_h, a=sum_a, b1=sum_b1, c=sum_c)
            if with_g2:
                with timer.phase("msm_b2"), kernels():
                    sums.b2 = gmsm.msm(mod, curve, True, rk.b2, w, nv, native, c, table=tab("b2"), sorts=sorts, tag="w")
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
