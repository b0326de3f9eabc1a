"""Device memory under a budget.

Every device allocation of the CUDA backend goes through CuPy's memory pool,
capped at a budget: the configured one, or the device's free memory at start
minus a safety margin (max(1 GiB, 5 %)). A request that would pass the budget
raises GpuMemoryError (a SnarkdError with a message naming the request and the
budget) instead of a raw CUDA out-of-memory, after the pool has dropped its
cached blocks and retried once; the daemon turns it into a failed proof, never
a crash. `reserve()` lets a caller wait for room (several workers on one
device) or fail fast.

Host buffers reach the device in chunks through two pinned staging buffers, on the
calling thread's stream (`upload`).
"""

from __future__ import annotations

import contextlib
import logging
import threading

import numpy as np

from snarkd.errors import EXIT_INTERNAL, EXIT_USAGE, BackendUnavailable, SnarkdError

log = logging.getLogger("snarkd")
GiB = 1 << 30
UPLOAD_CHUNK = 16 << 20  # bytes per pinned staging buffer (two per upload)
# Threads that copy a chunk into pinned memory (numpy releases the GIL for the copy): one thread
# moves ~7 GB/s, so a 512 MiB witness spent ~70 ms there while the link takes ~50 GB/s.
UPLOAD_COPY_THREADS = 4
UPLOAD_COPY_MIN = 1 << 20  # smaller pieces are copied on the calling thread
_copy_pool = None
_copy_pool_lock = threading.Lock()


def parallel_copy(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[:] = src (uint8, same length), in UPLOAD_COPY_THREADS page-aligned pieces."""
    global _copy_pool
    n = src.nbytes
    if n < 2 * UPLOAD_COPY_MIN or UPLOAD_COPY_THREADS <= 1:
        dst[:n] = src
        return
    if _copy_pool is None:
        with _copy_pool_lock:
            if _copy_pool is None:
                from concurrent.futures import ThreadPoolExecutor

                _copy_pool = ThreadPoolExecutor(UPLOAD_COPY_THREADS, thread_name_prefix="snarkd-upload")
    step = max(UPLOAD_COPY_MIN, (-(-n // UPLOAD_COPY_THREADS) + 4095) & ~4095)
    pieces = [_copy_pool.submit(np.copyto, dst[o : min(o + step, n)], src[o : min(o + step, n)])
              for o in range(0, n, step)]
    for f in pieces:
        f.result()


def pinned_bytes(nbytes: int) -> np.ndarray:
    """nbytes of page-locked host memory from CuPy's pinned pool (back to the pool when the array goes)."""
    import cupy

    return np.frombuffer(cupy.cuda.alloc_pinned_memory(nbytes), dtype=np.uint8, count=nbytes)


def pinned_or_pageable(nbytes: int) -> np.ndarray:
    """pinned_bytes, or where the host gives no more page-locked memory (RAM, a container's or RLIMIT_MEMLOCK's
    limit) pageable memory instead, said in the log: for bytes that are only read from (a witness read at
    admission), whose upload then goes through the staging buffers as any other's does. Never for the staging
    buffers themselves: an asynchronous copy from them must be from page-locked memory."""
    import cupy

    try:
        return pinned_bytes(nbytes)
    except (MemoryError, cupy.cuda.runtime.CUDARuntimeError) as exc:
        log.warning("gpu: %d bytes of page-locked host memory refused (%s): pageable memory instead, uploaded "
                    "through the staging buffers", nbytes, exc)
        return np.empty(nbytes, dtype=np.uint8)


def page_locked(cupy, host: np.ndarray) -> bool:
    """Whether host's bytes lie in page-locked memory the GPU can read directly (CuPy's pinned pool, or
    registered): the CUDA runtime's own answer for the first byte (an array lies within one allocation)."""
    runtime = cupy.cuda.runtime
    try:
        attrs = runtime.pointerGetAttributes(host.ctypes.data)
    except Exception:  # noqa: BLE001 - older runtimes refuse pageable pointers: not page-locked
        return False
    return getattr(attrs, "type", None) == getattr(runtime, "memoryTypeHost", 1)


class GpuError(SnarkdError):
    exit_code = EXIT_INTERNAL


class GpuUnavailable(GpuError, BackendUnavailable):
    """No CuPy or no CUDA device: the cuda backend cannot run here (asked for
    on a machine without one: a usage error, exit code 2)."""

    exit_code = EXIT_USAGE


class GpuMemoryError(GpuError):
    """The work does not fit the device-memory budget (the daemon stays up)."""


def cupy_module():
    """CuPy, or GpuUnavailable naming why it cannot be imported."""
    try:
        import cupy
    except Exception as e:  # ImportError, or a broken CUDA install
        raise GpuUnavailable(f"the cuda backend needs CuPy (pip install 'snarkd[gpu]'): {e}") from e
    return cupy


class DeviceMemory:
    """One device's pool, budget and copy stream (owned by its snarkd.gpu.device.GpuDevice)."""

    def __init__(self, device_id: int, budget: int | None = None, margin: int | None = None):
        cupy = cupy_module()
        self.cupy = cupy
        self.device_id = device_id
        self._lock = threading.Condition()
        with cupy.cuda.Device(device_id):
            self.pool = cupy.get_default_memory_pool()
            self.pinned_pool = cupy.get_default_pinned_memory_pool()
            free, total = cupy.cuda.runtime.memGetInfo()
            self.total = total
            if budget is None:
                margin = margin if margin is not None else max(GiB, total // 20)
                budget = max(0, free + self.pool.total_bytes() - margin)
            self.budget = int(budget)
            self.pool.set_limit(size=self.budget)
        self.reserved = 0

    # -- budget ---------------------------------------------------------------

    def set_budget(self, budget: int) -> None:
        with self.cupy.cuda.Device(self.device_id):
            self.budget = int(budget)
            self.pool.set_limit(size=self.budget)

    @property
    def used(self) -> int:
        return self.pool.used_bytes()

    @contextlib.contextmanager
    def reserve(self, nbytes: int, wait: bool = True, timeout: float | None = None, what: str = "proof"):
        """Hold `nbytes` of the budget for a piece of work. Waits while others
        hold it (wait=True), fails at once if it could never fit."""
        nbytes = int(nbytes)
        if nbytes > self.budget:
            raise GpuMemoryError(
                f"device {self.device_id}: the {what} needs about {nbytes / GiB:.2f} GiB of device memory "
                f"but the budget is {self.budget / GiB:.2f} GiB ([memory] budget, or free memory minus a margin)"
            )
        with self._lock:
            if not wait and self.reserved + nbytes > self.budget:
                raise GpuMemoryError(f"device {self.device_id}: busy ({self.reserved / GiB:.2f} GiB reserved), {what} not started")
            ok = self._lock.wait_for(lambda: self.reserved + nbytes <= self.budget, timeout=timeout)
            if not ok:
                raise GpuMemoryError(f"device {self.device_id}: timed out waiting for {nbytes / GiB:.2f} GiB of device memory")
            self.reserved += nbytes
        try:
            yield
        finally:
            with self._lock:
                self.reserved -= nbytes
                self._lock.notify_all()

    @contextlib.contextmanager
    def guard(self, what: str = "work"):
        """Run device work; an out-of-memory becomes GpuMemoryError."""
        cupy = self.cupy
        try:
            with cupy.cuda.Device(self.device_id):
                yield
        except cupy.cuda.memory.OutOfMemoryError as e:
            self.pool.free_all_blocks()
            raise GpuMemoryError(
                f"device {self.device_id}: out of device memory during {what} "
                f"(budget {self.budget / GiB:.2f} GiB, in use {self.used / GiB:.2f} GiB): {e}"
            ) from None
        except cupy.cuda.runtime.CUDARuntimeError as e:
            if "memory" in str(e).lower():
                self.pool.free_all_blocks()
                raise GpuMemoryError(f"device {self.device_id}: {e} during {what}") from None
            raise

    # -- transfers --------------------------------------------------------------

    def upload(self, host: np.ndarray, dtype=np.uint32, out=None, stream=None):
        """Host array -> device array (as `dtype` words): chunks through two pinned staging buffers, so the
        copy of one chunk into pinned memory (on UPLOAD_COPY_THREADS threads) overlaps the transfer of the
        other, and a 6 GiB key upload pins 2 x UPLOAD_CHUNK, not 6 GiB. out: a device array to fill (its
        bytes, host's size); stream: where the transfers go (default the calling thread's: another stream
        lets this stream's kernels run meanwhile; the caller then orders its use of `out` by an event).
        Returns once the transfers are done (the staging buffers go back to the pool). A host array in page-locked
        memory is sent as it is, with one transfer."""
        cupy = self.cupy
        src = np.ascontiguousarray(host).view(np.uint8).reshape(-1)
        nbytes = src.nbytes
        dst = cupy.empty(nbytes // np.dtype(dtype).itemsize, dtype=dtype) if out is None else out
        if dst.nbytes != nbytes:
            raise ValueError(f"upload: {nbytes} bytes into a device array of {dst.nbytes}")
        if nbytes == 0:
            return dst
        stream = cupy.cuda.get_current_stream() if stream is None else stream
        if page_locked(cupy, src):  # an urgent lane's witness (GpuDevice.host_buffer): one DMA, no staging
            dst.data.copy_from_host_async(src.ctypes.data, nbytes, stream=stream)
            stream.synchronize()
            return dst
        chunk = min(UPLOAD_CHUNK, nbytes)
        stages = [pinned_bytes(chunk) for _ in range(2 if nbytes > chunk else 1)]
        sent = [None] * len(stages)  # per buffer: an event after its last transfer
        for k, off in enumerate(range(0, nbytes, chunk)):
            b, m = k % len(stages), min(chunk, nbytes - off)
            if sent[b] is not None:
                sent[b].synchronize()  # the buffer's previous chunk has left it
            parallel_copy(stages[b][:m], src[off : off + m])
            (dst.data + off).copy_from_host_async(stages[b].ctypes.data, m, stream=stream)
            sent[b] = cupy.cuda.Event()
            sent[b].record(stream)
        for ev in sent:
            ev.synchronize()
        return dst
