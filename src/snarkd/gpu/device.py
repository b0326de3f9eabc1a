"""One object per GPU (sppark's gpu_t): it owns the device's memory pool and budget, its
copy stream, the compiled kernel modules, the NTT domains and the resident keys, and it is
where the prover asks for GPU work (spmv, h_values, msm, the streamed pass, proof_bytes, the
kernel and copy clocks): nothing above gpu/ launches a kernel or sizes one.

    dev = snarkd.gpu.device.get(0)       # the one GpuDevice of CUDA device 0
    with dev.memory.guard("a proof"):    # current device + out-of-memory -> GpuMemoryError
        dev.msm("bn254", False, bases, scalars, n, native)

This module is the only registry of device state: everything cached per device
lives on its GpuDevice, under its lock. Nothing here imports CuPy at import time.
"""

from __future__ import annotations

import logging
import threading
import weakref

import numpy as np

from snarkd.gpu import module as gmodule
from snarkd.gpu import msm as gmsm
from snarkd.gpu import pairing as gpairing
from snarkd.gpu import resident as gresident
from snarkd.gpu import stream as gstream
from snarkd.gpu.busy import KernelClock
from snarkd.gpu.memory import DeviceMemory, GpuUnavailable, cupy_module, pinned_bytes, pinned_or_pageable
from snarkd.gpu.ntt import NttDomain, full_tables_fit
from snarkd.gpu.resident import Residency, ResidentKey

log = logging.getLogger("snarkd.gpu")
PRIORITY_PAST_RANGE = -1000  # stream priorities: lower is more urgent; CUDA clamps this to the device's greatest


def device_count() -> int:
    """CUDA devices CuPy sees (0 without CuPy or a driver)."""
    try:
        return cupy_module().cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001 - no CuPy, no driver: no devices
        return 0


def available() -> tuple[bool, str]:
    """(True, "") when CuPy imports and sees a CUDA device, else (False, why)."""
    try:
        cupy = cupy_module()
    except GpuUnavailable as e:
        return False, str(e)
    try:
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # noqa: BLE001
        return False, f"CuPy sees no CUDA device ({type(e).__name__}: {e})"
    return (True, "") if n > 0 else (False, "CuPy sees no CUDA device")


class GpuDevice:
    def __init__(self, index: int, budget: int | None = None, cubin_dir: str = "", defines: tuple[str, ...] = ()):
        self.index = index
        self.cubin_dir = cubin_dir
        self.defines = tuple(defines)  # a benchmark's kernel variant (module.load); none in production
        self.cupy = cupy_module()
        self.memory = DeviceMemory(index, budget)
        with self.cupy.cuda.Device(index) as d:
            self.compute_capability = d.compute_capability
        self.clock = KernelClock(self.cupy, index)  # kernel-busy seconds (busy.py)
        self.copy_clock = KernelClock(self.cupy, index)  # seconds the copy engine sent streamed bases
        self.streamed = {"bytes": 0, "chunks": 0, "proofs": 0, "passes": 0}  # streamed bases sent, in all
        self._lock = threading.RLock()  # resident() builds tables, which load the module under it
        self._local = threading.local()
        self._modules: dict[str, object] = {}
        self._domains: dict[tuple[str, int], NttDomain] = {}
        self._keys: dict[int, ResidentKey] = {}  # id(zkey) -> its arrays here (dropped with the key)

    def __repr__(self) -> str:
        return f"GpuDevice({self.index})"

    def use(self, own_stream: bool = False) -> None:
        """Make this device current for the calling thread (CuPy's current device is per thread);
        own_stream: and give the thread a stream of its own, so that several workers' proofs overlap
        on the GPU (each waits only on its own work)."""
        self.cupy.cuda.Device(self.index).use()
        if own_stream:
            self._local.stream = self.cupy.cuda.Stream(non_blocking=True)  # kept alive with its thread
            self._local.stream.use()

    @staticmethod
    def host_buffer(nbytes: int):
        """nbytes of page-locked host memory (CuPy's pinned pool, reused once freed), for a witness an urgent lane
        reads at admission: its upload (DeviceMemory.upload) is then one DMA with no staging copy, which under bulk
        load waited for CPU time (an urgent proof's upload: 3-4 ms idle, 15-21 ms in the slowest at j = 32). Where
        the host refuses page-locked memory, pageable memory (memory.pinned_or_pageable): the job still runs."""
        return pinned_or_pageable(nbytes)

    def urgent_stream(self):
        """The calling thread's stream of the device's highest priority (made on first use, kept with the thread),
        to be entered with `with`: kernels queued inside go on it, and the GPU gives SMs that come free to its
        waiting blocks before other streams' (copies are not prioritised; nothing running is preempted). The
        device stages of lanes above priority 0 run on it (engine: Backend.urgent)."""
        s = getattr(self._local, "urgent", None)
        if s is None:
            s = self._local.urgent = self._priority_stream()
        return s

    def _priority_stream(self):
        """A non-blocking stream of the device's greatest priority: through CuPy where it takes a priority
        (CUDA clamps one past the range to its end), else made by the CUDA runtime (cuda-python) and wrapped."""
        cupy = self.cupy
        try:
            return cupy.cuda.Stream(non_blocking=True, priority=PRIORITY_PAST_RANGE)
        except TypeError:
            pass
        try:
            from cuda.bindings import runtime as cudart

            err, _, greatest = cudart.cudaDeviceGetStreamPriorityRange()
            if err == cudart.cudaError_t.cudaSuccess:
                err, handle = cudart.cudaStreamCreateWithPriority(cudart.cudaStreamNonBlocking, greatest)
            if err == cudart.cudaError_t.cudaSuccess:
                return cupy.cuda.ExternalStream(int(handle))  # kept with its thread, never destroyed
            why = f"the CUDA runtime answered {err}"
        except ImportError as e:
            why = f"this CuPy takes no stream priority and cuda-python is missing ({e})"
        log.warning("GPU %d: no high-priority stream (%s): urgent lanes' kernels share the GPU equally", self.index, why)
        return cupy.cuda.Stream(non_blocking=True)

    def sync_stream(self) -> None:
        """Wait for the work this thread queued (its current stream)."""
        self.cupy.cuda.get_current_stream().synchronize()

    def synchronize(self) -> None:
        self.cupy.cuda.Device(self.index).synchronize()

    def module(self, curve: str):
        """The compiled kernels for `curve` on this device (loaded once)."""
        with self._lock:
            mod = self._modules.get(curve)
            if mod is None:
                with self.cupy.cuda.Device(self.index):
                    mod = gmodule.load(curve, self.compute_capability, self.cubin_dir, self.defines)
                self._modules[curve] = mod
            return mod

    def ntt_domain(self, curve: str, log_n: int, full_tables: bool = False) -> NttDomain:
        """Twiddles of the 2^log_n domain of `curve` on this device (built once; full_tables: with the coset
        shift's full table and the inverse's own stage table, see full_tables)."""
        mod = self.module(curve)
        with self._lock:
            dom = self._domains.get((curve, log_n, full_tables))
            if dom is None:
                with self.cupy.cuda.Device(self.index):
                    dom = NttDomain(mod, curve, log_n, full_tables=full_tables)
                    self.synchronize()  # built on this thread's stream; others use it on theirs
                self._domains[(curve, log_n, full_tables)] = dom
            return dom

    def full_tables(self, log_n: int) -> bool:
        """Whether proofs with resident bases take the 2^log_n domain with the full tables (ntt.full_tables_fit:
        room in this device's budget); streamed keys' plans count on the split tables."""
        return full_tables_fit(log_n, self.memory.budget)

    def resident(self, zkey, tables: str = "auto", msm_window_bits: int = 0, stream: bool = False,
                 csr: str = "device") -> ResidentKey:
        """The key's arrays on this device, uploaded (and its window tables built) on first use;
        stream: its bases stay on the host (resident.py); csr: "device" (uploaded), "streamed" (page-locked on
        the host, sent block by block: spmv_streamed) or "host" (A·w, B·w are the CPU's)."""
        with self._lock:
            rk = self._keys.get(id(zkey))
            if rk is None:
                rk = ResidentKey(self, zkey, tables, msm_window_bits, stream, csr)
                self._keys[id(zkey)] = rk
                weakref.finalize(zkey, self._forget, id(zkey))
            return rk

    def _forget(self, key_id: int) -> None:
        with self._lock:
            rk = self._keys.pop(key_id, None)
        if rk is not None:
            rk.close()

    def residency(self, zkey) -> Residency | None:
        """What of the key is here, or None when it is not resident."""
        with self._lock:
            rk = self._keys.get(id(zkey))
            return None if rk is None else rk.residency()

    def held_bytes(self, but=None) -> int:
        """Device bytes held for good here: the resident keys (but `but`) and the NTT domains' tables."""
        with self._lock:
            keys = sum(int(rk.nbytes) for k, rk in self._keys.items() if but is None or k != id(but))
            return keys + sum(d.nbytes for d in self._domains.values())

    def release(self, zkey) -> None:
        """Drop the key's arrays (and unlock its host bases if it streamed) and give the pool's cached blocks
        back to the driver."""
        with self._lock:
            rk = self._keys.pop(id(zkey), None)
        if rk is not None:
            rk.close()
        with self.cupy.cuda.Device(self.index):  # the default pool frees the current device's blocks
            self.memory.pool.free_all_blocks()

    # -- the device stage's work (prover/cuda.py), on the calling thread's current stream ----------

    def proof_bytes(self, zkey, c: int = 0) -> int:
        """Device memory one proof of `zkey` with resident bases needs beyond its resident arrays (resident.proof_bytes)."""
        return gresident.proof_bytes(zkey, c)

    def fits(self, zkey, c: int = 0) -> bool:
        """Whether the key's bases and CSR fit in the budget beside what is held here and one proof."""
        need = gresident.base_bytes(zkey) + gresident.csr_bytes(zkey) + self.proof_bytes(zkey, c)
        return need <= self.memory.budget - self.held_bytes()

    def spmv(self, rk: ResidentKey, w):
        """A·w and B·w (Montgomery, domain-size words) from the key's resident CSR."""
        import cupy

        d = rk.domain_size
        mod = self.module(rk.curve)
        out = []
        for rp, cols, vals in rk.csr:
            ab = cupy.empty(d * 8, dtype=cupy.uint32)
            gmodule.launch(mod, "spmv_csr", d, (rp, cols, vals, w, ab, np.uint32(d)), block=128)
            out.append(ab)
        return out

    def spmv_streamed(self, rk: ResidentKey, m: int, w):
        """A·w (m = 0) or B·w (m = 1) from the key's page-locked host CSR, block by block: each block's row
        pointers, columns and values go up (pinned: a DMA) on a copy stream into one of two buffer sets while
        the kernel reads the other, through pointers shifted by the block's first entry, so the row pointers
        stay as the key has them; events order the two streams (no host wait per block)."""
        import cupy

        hc = rk.host_csr
        d = rk.domain_size
        mod = self.module(rk.curve)
        rp, cols, vals = hc.mats[m]
        blocks = hc.blocks[m]
        out = cupy.zeros(d * 8, dtype=cupy.uint32)  # rows past the last block (none in a key) stay zero
        sets = [(cupy.empty(hc.max_rows + 1, dtype=cupy.uint32), cupy.empty(max(hc.max_entries, 1), dtype=cupy.uint32),
                 cupy.empty(max(hc.max_entries, 1) * 8, dtype=cupy.uint32)) for _ in range(min(2, len(blocks)))]
        stream = cupy.cuda.get_current_stream()
        copy = cupy.cuda.Stream(non_blocking=True)
        copy.wait_event(stream.record())  # w and out are written on the compute stream first
        freed: list = [None] * len(sets)

        def send(i: int):
            g = i % len(sets)
            if freed[g] is not None:
                copy.wait_event(freed[g])
            rp_d, col_d, val_d = sets[g]
            r0, r1, e0, e1 = blocks[i]
            rp_d.data.copy_from_host_async(rp.ctypes.data + 4 * r0, 4 * (r1 - r0 + 1), copy)
            if e1 > e0:
                col_d.data.copy_from_host_async(cols.ctypes.data + 4 * e0, 4 * (e1 - e0), copy)
                val_d.data.copy_from_host_async(vals.ctypes.data + 32 * e0, 32 * (e1 - e0), copy)
            return copy.record()

        pending = {i: send(i) for i in range(len(sets))}
        for i, (r0, r1, e0, _) in enumerate(blocks):
            g = i % len(sets)
            stream.wait_event(pending.pop(i))
            rp_d, col_d, val_d = sets[g]
            gmodule.launch(mod, "spmv_csr", r1 - r0, (rp_d, np.uint64(col_d.data.ptr - 4 * e0),
                                                      np.uint64(val_d.data.ptr - 32 * e0), w, out[8 * r0 :],
                                                      np.uint32(r1 - r0)), block=128)
            freed[g] = stream.record()
            if i + len(sets) < len(blocks):
                pending[i + len(sets)] = send(i + len(sets))
        stream.synchronize()  # the product is complete on return (the caller times it as the spmv phase)
        copy.synchronize()
        return out

    def spmv_streamed_ab(self, rk: ResidentKey, wbox: list, park: bool, keep_w: bool) -> list:
        """[A·w, B·w] from the host CSR (spmv_streamed), w = wbox[0] (emptied unless keep_w: the witness is then
        freed before A·w comes back); park: A·w waits in page-locked host memory while B·w is computed, so the
        device holds w and one product, then the two products (the parked H's budget, stream.peak_bytes)."""
        import cupy

        w = wbox[0]
        if not keep_w:
            wbox.clear()
        a = self.spmv_streamed(rk, 0, w)
        if not park:
            return [a, self.spmv_streamed(rk, 1, w)]
        host = pinned_bytes(a.nbytes)
        stream = cupy.cuda.get_current_stream()
        a.data.copy_to_host_async(host.ctypes.data, a.nbytes, stream)
        stream.synchronize()
        n = a.size
        del a
        b = self.spmv_streamed(rk, 1, w)
        del w
        a = cupy.empty(n, dtype=cupy.uint32)
        a.data.copy_from_host_async(host.ctypes.data, a.nbytes, stream)
        stream.synchronize()  # the pinned buffer goes back to CuPy's pool
        return [a, b]

    def h_values(self, curve: str, log_n: int, vecs: list, mode: str = "in-place", full_tables: bool = False):
        """The H scalars of a proof from vecs = [A·w, B·w] (emptied: consumed) on the 2^log_n domain (ntt.H_MODES)."""
        return self.ntt_domain(curve, log_n, full_tables).h_from(vecs, mode)

    def msm(self, curve: str, g2: bool, bases, scalars, n: int, native, c: int = 0, stats: dict | None = None,
            table=None, **kw):
        """gpu.msm.msm with this device's module (kw: offset, sorts, tag, plan, between)."""
        return gmsm.msm(self.module(curve), curve, g2, bases, scalars, n, native, c, stats, table, **kw)

    def stream_plan(self, zkey, g2: bool = True, batch_max: int = gstream.BATCH_MAX, chunk: int = 0,
                    csr_modes: tuple[str, ...] = gstream.CSR_MODES, expect: int = 0, room: int | None = None):
        """How a streamed stage of `zkey` runs under this device's budget (stream.plan), or None if it cannot.
        room: the device bytes the plan may take in all, instead of the budget less what the other keys hold (a
        stage's plan within its key's plan); expect: stream.plan's."""
        shape = gstream.KeyShape.of(zkey, gresident.csr_bytes(zkey), g2)
        budget, others = (room, 0) if room is not None else (self.memory.budget, self.held_bytes(but=zkey))
        return gstream.plan(shape, budget, others, batch_max, chunk, csr_modes, expect)

    def msm_pass(self, curve: str, host, segments, c: int, native, between=None):
        """stream.msm_pass on this device: every (proof, set) MSM of one pass over the streamed bases (segments:
        [(ranges, tasks_of, vectors)]); the bytes sent and the copy engine's busy time are added to this device's
        counters; between: stream.msm_pass's (called at each chunk boundary). Returns (per proof {set: point},
        {"bytes", "copy_s", "kernel_s", "segment_kernel_s": [...]})."""
        stats = gstream.PassStats()
        ref = self.copy_clock.reference()
        kref = self.clock.reference()
        out = gstream.msm_pass(self, curve, host, segments, c, native, stats, between=between)
        self.sync_stream()
        copy_s = self.copy_clock.add(ref, stats.copy_pairs)
        kernel_s = self.clock.add(kref, [(a, b) for _, a, b in stats.kernel_pairs])
        elapsed = self.cupy.cuda.get_elapsed_time
        per_segment = [0.0] * len(segments)
        for s, a, b in stats.kernel_pairs:
            per_segment[s] += elapsed(a, b) / 1e3
        with self._lock:
            self.streamed["bytes"] += stats.bytes_sent
            self.streamed["chunks"] += stats.chunks
            self.streamed["passes"] += 1
        return out, {"bytes": stats.bytes_sent, "copy_s": copy_s, "kernel_s": kernel_s, "segment_kernel_s": per_segment}

    def count_streamed_proofs(self, k: int) -> None:
        """k more proofs went through streamed passes here (the bench's bytes per proof divide by these)."""
        with self._lock:
            self.streamed["proofs"] += k

    def miller_products(self, curve, jobs) -> list[list[bytes]]:
        """gpu.pairing.miller_products (aggregation's pairing products: jobs of (q, ps)) on this device, its
        memory reserved under the budget beside the proofs'; curve: a Curve."""
        with self.memory.reserve(gpairing.device_bytes(curve, jobs), what="aggregation's Miller loops"), \
                self.memory.guard("Miller loops"):
            return gpairing.miller_products(self.module(curve.native), curve, jobs)

    def window_table(self, curve: str, g2: bool, bases, n: int, c: int = 0) -> gmsm.WindowTable:
        return gmsm.WindowTable(self.module(curve), curve, g2, bases, n, c)


_lock = threading.Lock()
_devices: dict[int, GpuDevice] = {}


def get(index: int = 0, budget: int | None = None, cubin_dir: str = "", defines: tuple[str, ...] = ()) -> GpuDevice:
    """The one GpuDevice of CUDA device `index` (made on first call; budget, cubin_dir and defines
    apply then, and a later budget resets it)."""
    index = int(index)
    with _lock:
        dev = _devices.get(index)
        if dev is None:
            n = device_count()
            if not 0 <= index < n:
                why = available()[1] if n == 0 else f"{n} visible"
                raise GpuUnavailable(f"CUDA device {index} does not exist ({why})")
            dev = GpuDevice(index, budget, cubin_dir, defines)
            _devices[index] = dev
        elif budget is not None:
            dev.memory.set_budget(budget)
        return dev
