"""A streamed key's bases in page-locked host memory, once per process: the source of every chunk DMA.

A chunk copied from pageable memory goes through the driver's own staging at ~7 GB/s on the H200 host and
holds the CPU; from page-locked memory it is a DMA at the link's rate (54 GB/s measured) that the CPU only
queues. The zkey's point sections (A, B1, B2, C, H: sections 5-9, contiguous in the file) are made
page-locked the cheapest way the host allows, in this order:

    registered   the file's own mapping registered with the driver (cudaHostRegister, read-only, portable):
                 no copy, the pages stay file-backed (page cache, counted as RssFile, shared with every
                 process mapping the key) and locked while the key streams here
    pinned-copy  one page-locked allocation (cudaHostAlloc, portable) the sections are copied into at load:
                 anonymous memory the size of the bases, once per key (never per proof)
    pageable     neither worked: chunks are sent from the mapping as it is (slow, but correct)

One HostBases per key serves every device (portable), kept while any device streams the key and released
(unregistered or freed) with the last (acquire/release). Rule for the key's pages: they are locked exactly
while the key is resident on some device as a streamed key; unloading or evicting it unlocks them.
"""

from __future__ import annotations

import logging
import threading
import time

import numpy as np

from snarkd.gpu.memory import parallel_copy

log = logging.getLogger("snarkd.gpu")
SECTIONS = ("a", "b1", "b2", "c", "h")  # the zkey's point sections, in file order
HOST_REGISTER_PORTABLE, HOST_REGISTER_READ_ONLY = 0x01, 0x08  # cudaHostRegister flags
HOST_ALLOC_PORTABLE = 0x01  # cudaHostAlloc flag
MEMORY_TYPE_HOST = 1  # cudaMemoryTypeHost (cudaPointerGetAttributes)
PAGE = 4096
MODES = ("registered", "pinned-copy", "pageable")


class HostBases:
    """The key's point sections as host arrays (rows as in the zkey) that chunks are copied from."""

    def __init__(self, zkey, cupy, allow: tuple[str, ...] = MODES):
        self.cupy = cupy
        self.path = str(getattr(zkey, "path", ""))
        src = {name: getattr(zkey, name) for name in SECTIONS}
        self.nbytes = sum(int(a.nbytes) for a in src.values())
        self.arrays: dict[str, np.ndarray] = {}
        self.mode, self.why, self._reg, self._alloc = "pageable", "", None, None
        t0 = time.perf_counter()
        errors = []
        if "registered" in allow:
            try:
                self._register(src)
            except Exception as e:  # noqa: BLE001 - the driver or the host refuses: try the next way
                errors.append(f"register: {e}")
        if self.mode == "pageable" and "pinned-copy" in allow:
            try:
                self._pinned_copy(src)
            except Exception as e:  # noqa: BLE001
                errors.append(f"pinned copy: {e}")
        if self.mode == "pageable":
            self.arrays = src
        self.why = "; ".join(errors) or ("" if self.pinned else "not asked for")  # why not the first way
        self.seconds = time.perf_counter() - t0
        log.info("streamed key %s: %.2f GiB of bases %s in %.2f s%s", self.path, self.nbytes / 2**30, self.mode,
                 self.seconds, f" ({self.why})" if self.why else "")

    @property
    def pinned(self) -> bool:
        return self.mode != "pageable"

    def rows(self, name: str, lo: int, hi: int) -> tuple[int, int]:
        """(host address, bytes) of rows lo..hi of section `name`."""
        row = self.row_bytes(name)
        return self.arrays[name].ctypes.data + lo * row, (hi - lo) * row

    def row_bytes(self, name: str) -> int:
        a = self.arrays[name]
        return a.strides[0] if a.ndim == 2 else a.itemsize

    def _register(self, src: dict) -> None:
        """Page-lock the sections where they are (read-only: the key's mapping is), or raise."""
        self._reg = register_arrays(self.cupy, list(src.values()), read_only=True)
        self.arrays = src  # the mapping's own views, now page-locked
        self.mode = "registered"

    def _unregister(self) -> None:
        unregister(self.cupy, self._reg)
        self._reg = None

    def _pinned_copy(self, src: dict) -> None:
        self._alloc, views = pinned_copy(self.cupy, list(src.values()))
        self.arrays = dict(zip(src, views))
        self.mode = "pinned-copy"

    def close(self) -> None:
        self._unregister()
        self.arrays = {}
        free_host(self.cupy, self._alloc)
        self._alloc = None


def pinned_copy(cupy, arrays: list) -> tuple[int, list]:
    """The arrays copied into one page-locked allocation of their own (cudaHostAlloc, portable; each at a
    256-byte boundary): (its address, for free_host; the copies, same shapes and dtypes)."""
    offs, total = [], 0
    for a in arrays:
        offs.append(total)
        total += -(-int(a.nbytes) // 256) * 256
    ptr = cupy.cuda.runtime.hostAlloc(max(total, 1), HOST_ALLOC_PORTABLE)
    try:
        buf = np.ctypeslib.as_array((np.ctypeslib.ctypes.c_uint8 * max(total, 1)).from_address(ptr))
        views = []
        for a, off in zip(arrays, offs):
            view = buf[off : off + a.nbytes].view(a.dtype).reshape(a.shape)
            parallel_copy(view.reshape(-1).view(np.uint8), np.ascontiguousarray(a).reshape(-1).view(np.uint8))
            views.append(view)
    except BaseException:  # the callers fall back to pageable memory: the allocation would be left locked
        views = buf = None
        free_host(cupy, ptr)
        raise
    return ptr, views


def free_host(cupy, ptr) -> None:
    if ptr is not None:
        try:
            cupy.cuda.runtime.freeHost(ptr)
        except Exception:  # noqa: BLE001 - the context is gone at exit: nothing left to free
            pass


def file_mappings(maps: str = "/proc/self/maps") -> list[tuple[int, int, str, str]] | None:
    """The process's file mappings, sorted: (start, end, device, inode); None when `maps` cannot be read."""
    spans = []
    try:
        with open(maps) as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[4] != "0" and parts[5].startswith("/"):
                    a, b = parts[0].split("-")
                    spans.append((int(a, 16), int(b, 16), parts[3], parts[4]))
    except OSError:
        return None
    return sorted(spans)


def file_pages(lo: int, hi: int, maps: str = "/proc/self/maps", mappings: list | None = None) -> bool:
    """Whether the host pages [lo, hi) all belong to one file's mapping (a mapped key; a shared anonymous mapping
    is one too, of /dev/zero): pages no allocator hands to anything else. Heap pages are shared with whatever
    malloc puts beside an array; registered, the driver takes them for page-locked memory of the registration's
    extent, and a later copy into a new allocation that starts inside them and runs past the registration's end
    fails (cudaErrorInvalidValue). mappings: file_mappings() read once for several ranges (else `maps` is read)."""
    spans = file_mappings(maps) if mappings is None else mappings
    if spans is None:
        return False
    cur, file = lo, None
    for a, b, dev, inode in spans:
        if a <= cur < b and file in (None, (dev, inode)):
            cur, file = b, (dev, inode)
            if cur >= hi:
                return True
    return lo >= hi


def register_arrays(cupy, arrays: list, read_only: bool) -> list[int]:
    """Page-lock host arrays of a mapped file where they are: their page-rounded ranges, merged where they share
    pages (a zkey's point sections are adjacent: one range), each registered once (read_only: the arrays may be
    a read-only mapping, registered read-only when a writable registration is refused). Arrays not in a file's
    mapping (file_pages) are refused before anything is registered; every array is then checked to be host
    memory to the driver, else all is undone and the error raised (the caller falls back to a copy).
    Returns the registered starts (for unregister)."""
    spans = sorted((a.ctypes.data & ~(PAGE - 1), -(-(a.ctypes.data + a.nbytes) // PAGE) * PAGE) for a in arrays if a.size)
    merged: list[list[int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    rt = cupy.cuda.runtime
    done: list[int] = []
    # A read-only mapping (a mapped key file: its arrays are not writeable) is registered read-only, as the driver
    # requires; a writable one writable. (Trying writable first on a read-only mapping failed both ways on the
    # H200 host: the key fell back to a 24 GiB pinned copy.)
    flags = HOST_REGISTER_PORTABLE
    if read_only and not any(a.flags.writeable for a in arrays if a.size):
        flags |= HOST_REGISTER_READ_ONLY
    mappings = file_mappings()  # read once for all the arrays (the maps of a process with a big key run long)
    for lo, hi in spans:  # each array's pages in one file's mapping (several arrays' mappings may adjoin)
        if not file_pages(lo, hi, mappings=mappings or []):
            raise RuntimeError(f"host range {lo:#x}+{hi - lo} is not pages of a mapped file (heap or anonymous "
                               "memory shares its pages with other allocations): not registered")
    try:
        for lo, hi in merged:
            rt.hostRegister(lo, hi - lo, flags)
            done.append(lo)
        for a in arrays:
            if a.size and rt.pointerGetAttributes(a.ctypes.data).type != MEMORY_TYPE_HOST:
                raise RuntimeError("a registered array is not page-locked host memory to the driver")
    except Exception:
        unregister(cupy, done)
        raise
    return done


def unregister(cupy, starts) -> None:
    for lo in starts or ():
        try:
            cupy.cuda.runtime.hostUnregister(lo)
        except Exception:  # noqa: BLE001 - the context is gone at exit: nothing left to unlock
            pass


class HostCsr:
    """A streamed key's CSR (resident.csr: row pointers, columns, values of A and B) in page-locked host memory,
    for A·w and B·w on the device block by block (GpuDevice.spmv_streamed) when the CSR does not fit beside the
    rest: its rows cross PCIe once per proof instead of the CPU computing the products (3.0 s at 2^26 on 16
    cores). blocks[m]: (r0, r1, e0, e1) row ranges of at most BLOCK_ROWS rows and BLOCK_ENTRIES entries."""

    BLOCK_ROWS = 1 << 22
    BLOCK_ENTRIES = 1 << 23

    def __init__(self, mats: list, cupy):
        self.cupy = cupy
        arrays = [x for m in mats for x in m]
        self.nbytes = sum(int(x.nbytes) for x in arrays)
        # copied into page-locked memory of its own: the CSR is built on the heap, whose pages it shares with other
        # allocations (registering them in place broke later copies into those neighbours: file_pages)
        try:
            self._alloc, views = pinned_copy(cupy, arrays)
            self.mats, self.pinned = [tuple(views[3 * i : 3 * i + 3]) for i in range(len(mats))], True
        except Exception as e:  # noqa: BLE001 - sent from pageable memory: slower, still right
            self._alloc, self.mats, self.pinned = None, mats, False
            log.warning("the CSR of a streamed key stays pageable (%s)", e)
        self.blocks = [self._blocks(rp) for rp, _, _ in self.mats]
        self.max_rows = max((r1 - r0 for bl in self.blocks for r0, r1, _, _ in bl), default=0)
        self.max_entries = max((e1 - e0 for bl in self.blocks for _, _, e0, e1 in bl), default=0)

    def _blocks(self, rp) -> list[tuple[int, int, int, int]]:
        out, r0, n = [], 0, len(rp) - 1
        while r0 < n:
            r1 = min(n, r0 + self.BLOCK_ROWS)
            if int(rp[r1]) - int(rp[r0]) > self.BLOCK_ENTRIES:  # fewer rows: at most BLOCK_ENTRIES (one row at least)
                r1 = max(r0 + 1, int(np.searchsorted(rp, int(rp[r0]) + self.BLOCK_ENTRIES, side="right")) - 1)
            out.append((r0, r1, int(rp[r0]), int(rp[r1])))
            r0 = r1
        return out

    @staticmethod
    def device_bytes(domain: int, entries: int) -> int:
        """Device bytes of the block buffers (two sets: one filled while the other is read; an upper estimate)."""
        return 2 * (4 * (min(domain, HostCsr.BLOCK_ROWS) + 1) + 36 * min(entries, HostCsr.BLOCK_ENTRIES))

    def close(self) -> None:
        self.mats = []
        free_host(self.cupy, self._alloc)
        self._alloc = None


_lock = threading.Lock()
_held: dict[int, list] = {}  # id(zkey) -> [HostBases, holders]


def acquire(zkey, cupy) -> HostBases:
    """The key's HostBases (made on first use), one more holder."""
    with _lock:
        e = _held.get(id(zkey))
        if e is None:
            e = _held[id(zkey)] = [HostBases(zkey, cupy), 0]
        e[1] += 1
        return e[0]


def release(key_id: int) -> None:
    """One holder less of the key whose id() is key_id; the last unlocks the pages."""
    with _lock:
        e = _held.get(key_id)
        if e is None:
            return
        e[1] -= 1
        if e[1] > 0:
            return
        del _held[key_id]
    e[0].close()


def held() -> list[HostBases]:
    with _lock:
        return [e[0] for e in _held.values()]
