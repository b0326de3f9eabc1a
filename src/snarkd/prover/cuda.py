"""The CUDA backend: the device stage on one GPU (snarkd.gpu), keys resident.

The key's bases, the CSR form of its coefs section and (when they fit) its MSM
window tables are uploaded once per (key, device) and shared by every worker on
that device (snarkd.gpu.device.GpuDevice.resident). `device_stage` then uploads
one witness (and a, b when synthesis computed them on the CPU), asks the device
for the sparse products, the H computation and the MSMs, and returns the same
G1Sums as the CPU backend: identical points, so identical proofs for the same r, s.
The GPU work, its memory needs and its kernel timing are GpuDevice's; this file
says what a proof asks of it.

A key whose bases do not fit beside one proof's work (stream_bases "auto"), or any key with
"on", keeps its bases on the host: only the CSR is uploaded and every MSM streams them
through in chunks (GpuDevice.msm_streamed), slower by the transfers but not failing.
"""

from __future__ import annotations

from contextlib import ExitStack

from snarkd.gpu import device as gdevice
from snarkd.gpu.memory import GpuUnavailable
from snarkd.gpu.resident import TABLE_MODES
from snarkd.prover.types import G1Sums, Synthesized
from snarkd.units import parse_size

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
            streamed = self.bases_streamed(key)
            stack.enter_context(mem.reserve(self.dev.proof_bytes(key.zkey, self.msm_c, streamed), what="proof"))
            self.dev.resident(key.zkey, self.msm_tables, self.msm_c, streamed)
            self.dev.synchronize()
        return True

    def bases_streamed(self, key) -> bool:
        """Whether the key's bases stay on the host: mode "on"; "auto" when they and the CSR would not fit
        in the device budget beside what the device holds and one proof's work (or as the key is resident)."""
        r = self.dev.residency(key.zkey)
        if r is not None:
            return r.streamed
        if self.stream_bases != "auto":
            return self.stream_bases == "on"
        return not self.dev.fits(key.zkey, self.msm_c)

    def work_bytes(self, key) -> int:
        """Device memory one proof needs beyond the resident key (an upper estimate)."""
        return self.dev.proof_bytes(key.zkey, self.msm_c, self.bases_streamed(key))

    def device_stage(self, key, synth: Synthesized, timer, threads: int = 0, with_g2: bool = False) -> G1Sums:
        zk, native, dev, c = key.zkey, key.native, self.dev, self.msm_c
        curve = key.curve.native
        a_host, b_host = synth.a, synth.b
        synth.a = synth.b = None
        mem = dev.memory
        streamed = self.bases_streamed(key)
        with mem.guard("a proof"), mem.reserve(dev.proof_bytes(zk, c, streamed), what="proof"):
            # guard made this device current for the thread: allocations and launches below land on it,
            # on the thread's own stream; only this proof's work is waited for
            rk = dev.resident(zk, self.msm_tables, c, streamed)
            kernels = dev.clock.brackets()
            with timer.phase("upload"):
                w = mem.upload(synth.witness)
                a = b = None
                if a_host is not None:
                    a, b = mem.upload(a_host), mem.upload(b_host)
            del a_host, b_host
            if a is None:
                with timer.phase("spmv"), kernels():
                    a, b = dev.spmv(rk, w)
            with timer.phase("ntt"), kernels():
                h = dev.h_values(curve, zk.domain_power, a, b)
                del a, b
            # one digit sort of w serves A, B1, C (w[n_public+1:]) and B2 when their window modes agree
            sorts, nv = {}, zk.n_vars

            def msm(name: str, g2: bool, scalars, n: int, offset: int = 0, tag: str = ""):
                with timer.phase(f"msm_{name}"), kernels():
                    if rk.streamed:
                        return dev.msm_streamed(curve, g2, rk.host[name], scalars, n, native, c, offset=offset)
                    return dev.msm(curve, g2, getattr(rk, name), scalars, n, native, c, table=rk.tables.get(name),
                                   offset=offset, sorts=sorts if tag else None, tag=tag)

            res_h = msm("h", False, h, zk.domain_size)
            del h
            sums = G1Sums(h=res_h, a=msm("a", False, w, nv, tag="w"), b1=msm("b1", False, w, nv, tag="w"),
                          c=msm("c", False, w, nv, offset=zk.n_public + 1, tag="w"))
            if with_g2:
                sums.b2 = msm("b2", True, w, nv, tag="w")
            del sorts
            dev.sync_stream()
            timer.record("kernels", kernels.count() * 1e3)
        return sums
