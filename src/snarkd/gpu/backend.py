"""The CUDA backend: the prover's device stage on one GPU, keys resident.

`ResidentKey` uploads a key's bases (A, B1, C, H in G1; B2 in G2) and the CSR
form of its coefs section once per (key, device); every worker on that device
shares it. It also builds each base set's MSM window table (2^(c w) P for
every window w, see snarkd.gpu.msm.WindowTable) when they fit: tables cost
about 16x the bases' memory and make every MSM of the key cheaper (one set of
buckets for all windows). [gpus] msm_tables (or $SNARKD_GPU_MSM_TABLES for
backends made outside the engine): "auto" (default: build them when they take at most half
the device budget left after the key), "on", or "off".

`CudaBackend.device_stage` then streams in one witness (and a, b
when synthesis computed them on the CPU), runs spmv (when a, b are absent),
the H computation and the MSMs on the device, and returns the same G1Sums as
the CPU path: identical points, so identical proofs for the same r and s.
"""

from __future__ import annotations

import logging
import os
import threading
import weakref

import numpy as np

from snarkd.gpu import memory as gmem
from snarkd.gpu.module import get_module
from snarkd.gpu.msm import CURVES, coord_words

log = logging.getLogger("snarkd.gpu")
TABLE_MODES = ("auto", "on", "off")


def _csr(zkey, matrix: int):
    e = zkey.coef_entries
    sel = e[e["matrix"] == matrix]
    bad = e[(e["matrix"] > 1)]
    if len(bad):
        raise ValueError(f"coefs_section: matrix {int(bad['matrix'][0])} is not 0 (A) or 1 (B)")
    rows = sel["constraint"]
    if len(rows) and int(rows.max()) >= zkey.domain_size:
        raise ValueError(f"coefs_section: constraint {int(rows.max())} >= domain_size {zkey.domain_size}")
    if len(sel) and int(sel["signal"].max()) >= zkey.n_vars:
        raise ValueError(f"coefs_section: signal {int(sel['signal'].max())} >= witness length {zkey.n_vars}")
    order = np.argsort(rows, kind="stable")
    row_ptr = np.zeros(zkey.domain_size + 1, dtype=np.uint32)
    np.cumsum(np.bincount(rows, minlength=zkey.domain_size), out=row_ptr[1:])
    cols = np.ascontiguousarray(sel["signal"][order], dtype=np.uint32)
    vals = np.ascontiguousarray(sel["value"][order], dtype=np.uint64)
    return row_ptr, cols, vals


class ResidentKey:
    """A proving key's device-side arrays (uint32 words, zkey layout)."""

    def __init__(self, key, dm: gmem.DeviceMemory, tables: str = "auto"):
        zk = key.zkey
        self.curve = key.curve.native
        self.device_id = dm.device_id
        with dm.guard("uploading the proving key"):
            up = dm.upload
            self.a, self.b1, self.c, self.h, self.b2 = (up(x) for x in (zk.a, zk.b1, zk.c, zk.h, zk.b2))
            self.csr = []
            for m in (0, 1):
                rp, cols, vals = _csr(zk, m)
                self.csr.append((up(rp), up(cols), up(vals)))
        self.nbytes = sum(int(x.nbytes) for x in (self.a, self.b1, self.c, self.h, self.b2))
        self.nbytes += sum(int(x.nbytes) for t in self.csr for x in t)
        self.tables: dict[str, object] = {}
        self._build_tables(dm, tables)

    def _sets(self):
        """(name, g2, device bases, point count) of each base set."""
        aw1 = 2 * coord_words(CURVES[self.curve], False)
        aw2 = 2 * coord_words(CURVES[self.curve], True)
        return [("a", False, self.a, self.a.size // aw1), ("b1", False, self.b1, self.b1.size // aw1),
                ("c", False, self.c, self.c.size // aw1), ("h", False, self.h, self.h.size // aw1),
                ("b2", True, self.b2, self.b2.size // aw2)]

    def _build_tables(self, dm: gmem.DeviceMemory, mode: str) -> None:
        from snarkd.gpu.msm import WindowTable

        sets = [s for s in self._sets() if s[3] > 0]
        need = sum(WindowTable.bytes_for(self.curve, g2, n) for _, g2, _, n in sets)
        room = dm.budget - dm.used
        if mode == "off" or (mode == "auto" and need > room // 2):
            if mode == "auto":
                log.info("device %d: MSM window tables need %.2f GiB, more than half of the %.2f GiB left: not built",
                         self.device_id, need / gmem.GiB, room / gmem.GiB)
            return
        try:
            with dm.guard("building MSM window tables"):
                for name, g2, bases, n in sets:
                    self.tables[name] = WindowTable(self.curve, g2, bases, n)
                import cupy

                cupy.cuda.Device(self.device_id).synchronize()
        except (gmem.GpuMemoryError, ValueError) as e:  # ValueError: a table too large to index
            if mode == "on":
                raise
            log.warning("device %d: MSM window tables dropped: %s", self.device_id, e)
            self.tables.clear()
            dm.pool.free_all_blocks()
            return
        self.nbytes += sum(t.nbytes for t in self.tables.values())


class CudaBackend:
    name = "cuda"

    def __init__(self, device_id: int = 0, budget: int | None = None, tables: str | None = None):
        ok, why = gmem.available()
        if not ok:
            raise gmem.GpuUnavailable(why)
        self.set_tables(tables or os.environ.get("SNARKD_GPU_MSM_TABLES") or "auto")
        self.device_id = device_id
        self.dm = gmem.for_device(device_id, budget)
        self._keys: dict[int, ResidentKey] = {}  # id(key) -> resident arrays (dropped with the key)
        self._lock = threading.Lock()

    def set_tables(self, mode: str) -> None:
        """Window tables for keys made resident from now on: auto | on | off."""
        mode = str(mode).lower()
        if mode not in TABLE_MODES:
            raise ValueError(f"MSM window tables: {mode!r} is not one of {', '.join(TABLE_MODES)}")
        self.tables = mode

    def __repr__(self) -> str:
        return f"CudaBackend(device={self.device_id})"

    def resident(self, key) -> ResidentKey:
        with self._lock:
            rk = self._keys.get(id(key))
            if rk is None:
                rk = ResidentKey(key, self.dm, self.tables)
                self._keys[id(key)] = rk
                weakref.finalize(key, self._keys.pop, id(key), None)
            return rk

    def pin(self) -> None:
        """Make this backend's GPU the current CuPy device of the calling thread.

        The engine's device workers call it once, before their first job; every
        device call below also enters `cupy.cuda.Device(self.device_id)` itself,
        so work never lands on another GPU even from an unpinned thread."""
        import cupy

        cupy.cuda.Device(self.device_id).use()

    def release(self, key) -> None:
        import cupy

        with self._lock:
            self._keys.pop(id(key), None)
        with cupy.cuda.Device(self.device_id):  # the default pool frees the current device's blocks
            self.dm.pool.free_all_blocks()

    def work_bytes(self, key) -> int:
        """Device memory one proof needs beyond the resident key (an upper estimate)."""
        from snarkd.gpu.msm import n_windows, window_bits

        zk = key.zkey
        n, d = zk.n_vars, zk.domain_size
        big = max(n, d)
        nw = n_windows(key.curve.native, window_bits(big))
        msm = 2 * nw * big * 4 + (1 << 18) * 4 * 4 * key.curve.n8q * 2 + nw * (1 << 16) * 4 * 4
        return 32 * n + 6 * 32 * d + msm + (64 << 20)

    def device_stage(self, key, synth, timer, threads: int = 0, with_g2: bool = False):
        import cupy

        from snarkd.gpu import msm as gmsm
        from snarkd.gpu import ntt as gntt
        from snarkd.prover.groth16 import G1Sums

        zk, native = key.zkey, key.native
        curve = key.curve.native
        dm = self.dm
        a_host, b_host = synth.a, synth.b
        synth.a = synth.b = None
        with dm.guard("a proof"), dm.reserve(self.work_bytes(key), what="proof"):
            # dm.guard made self.device_id current for this thread; everything below
            # (allocations, the module and NTT-domain caches, launches) keys on it
            assert cupy.cuda.Device().id == self.device_id, (cupy.cuda.Device().id, self.device_id)
            rk = self.resident(key)
            sync = cupy.cuda.Device(self.device_id).synchronize
            with timer.phase("upload"):
                w = dm.upload(synth.witness)
                if a_host is not None:
                    a, b = dm.upload(a_host), dm.upload(b_host)
                else:
                    a = b = None
            del a_host, b_host
            d = zk.domain_size
            if a is None:
                with timer.phase("spmv"):
                    mod = get_module(curve)
                    a = cupy.empty(d * 8, dtype=cupy.uint32)
                    b = cupy.empty(d * 8, dtype=cupy.uint32)
                    for (rp, cols, vals), out in zip(rk.csr, (a, b)):
                        mod.get_function("spmv_csr")(((d + 127) // 128,), (128,), (rp, cols, vals, w, out, np.uint32(d)))
                    sync()
            with timer.phase("ntt"):
                dom = gntt.domain(curve, zk.domain_power)
                h = dom.h_values(a, b)
                del a, b
                sync()
            tab = rk.tables.get
            with timer.phase("msm_h"):
                res_h = gmsm.msm(curve, False, rk.h, h, d, native, table=tab("h"))
            del h
            with timer.phase("msm_a"):
                sum_a = gmsm.msm(curve, False, rk.a, w, zk.n_vars, native, table=tab("a"))
            with timer.phase("msm_b1"):
                sum_b1 = gmsm.msm(curve, False, rk.b1, w, zk.n_vars, native, table=tab("b1"))
            with timer.phase("msm_c"):
                off = (zk.n_public + 1) * 8
                sum_c = gmsm.msm(curve, False, rk.c, w[off:], zk.n_vars - zk.n_public - 1, native, table=tab("c"))
            sums = G1Sums(h=res_h, a=sum_a, b1=sum_b1, c=sum_c)
            if with_g2:
                with timer.phase("msm_b2"):
                    sums.b2 = gmsm.msm(curve, True, rk.b2, w, zk.n_vars, native, table=tab("b2"))
        return sums


# -- the engine's hook (snarkd.engine.devices): device_count(), backend(index) --------------

_backends_lock = threading.Lock()
_backends: dict[int, CudaBackend] = {}


def device_count() -> int:
    """CUDA devices CuPy sees (0 without CuPy or a driver)."""
    return gmem.device_count()


def backend(index: int, msm_tables: str | None = None) -> CudaBackend:
    """The one CudaBackend of device `index` (shared with snarkd.prover.backend's
    cache, so a key is resident once per device). $SNARKD_GPU_BUDGET (bytes)
    caps its device memory; default: free memory minus a margin. msm_tables
    ("auto", "on", "off"; [gpus] msm_tables) applies to keys made resident
    from then on."""
    import os

    index = int(index)
    with _backends_lock:
        be = _backends.get(index)
        if be is None:
            n = device_count()
            if not 0 <= index < n:
                raise gmem.GpuUnavailable(f"CUDA device {index} does not exist ({n} visible)")
            from snarkd.prover.backend import cuda_backend

            env = os.environ.get("SNARKD_GPU_BUDGET")
            be = cuda_backend(index, int(env) if env else None)
            _backends[index] = be
        if msm_tables is not None:
            be.set_tables(msm_tables)
        return be
