"""hostbases.file_pages (runs without a GPU): host memory is registered in place only where its pages belong to a
file's mapping (a shared anonymous mapping is one, of /dev/zero); heap pages are shared with other allocations, and a registration's page-rounded
extent over them broke a later device-to-host copy into a neighbour (cudaErrorInvalidValue)."""
import mmap
from types import SimpleNamespace

import numpy as np
import pytest

from snarkd.gpu import hostbases


def span(a: np.ndarray) -> tuple[int, int]:
    lo = a.ctypes.data & ~(hostbases.PAGE - 1)
    return lo, -(-(a.ctypes.data + a.nbytes) // hostbases.PAGE) * hostbases.PAGE


def test_a_mapped_file_is_file_pages(tmp_path):
    path = tmp_path / "key.bin"
    path.write_bytes(bytes(range(256)) * 100)
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    a = np.frombuffer(mm, dtype=np.uint8, count=5000, offset=3000)
    assert hostbases.file_pages(*span(a))
    whole = np.frombuffer(mm, dtype=np.uint8)
    lo, hi = span(whole)
    assert not hostbases.file_pages(lo, hi + hostbases.PAGE)  # a page past the mapping's end
    del a, whole
    mm.close()


def test_heap_pages_are_not_and_a_mapping_of_its_own_is():
    for n in (3000, 50_000, 1 << 20):  # malloc's heap, and (the largest) a private mapping malloc made
        heap = np.arange(n, dtype=np.uint32)
        assert not hostbases.file_pages(*span(heap)), n
    own = mmap.mmap(-1, 1 << 20)  # shared anonymous: /dev/zero's pages, nobody else's
    a = np.frombuffer(own, dtype=np.uint8)
    assert hostbases.file_pages(*span(a))
    del a
    own.close()


def test_an_unreadable_map_says_no(tmp_path):
    assert not hostbases.file_pages(0x1000, 0x2000, maps=str(tmp_path / "missing"))


class FakeRuntime:
    """cupy.cuda.runtime's page-locking calls, recorded (the host memory is ctypes buffers of this process)."""

    def __init__(self):
        self.calls, self.live = [], {}

    def hostRegister(self, ptr, size, flags):  # noqa: N802 - CUDA's names
        self.calls.append(("register", ptr, size, flags))

    def hostUnregister(self, ptr):  # noqa: N802
        self.calls.append(("unregister", ptr))

    def pointerGetAttributes(self, ptr):  # noqa: N802
        return type("Attrs", (), {"type": hostbases.MEMORY_TYPE_HOST})

    def hostAlloc(self, size, flags):  # noqa: N802
        import ctypes

        buf = (ctypes.c_uint8 * size)()
        self.live[ctypes.addressof(buf)] = buf
        self.calls.append(("alloc", ctypes.addressof(buf), size, flags))
        return ctypes.addressof(buf)

    def freeHost(self, ptr):  # noqa: N802
        self.calls.append(("free", ptr))
        del self.live[ptr]


def fake_cupy():
    return SimpleNamespace(cuda=SimpleNamespace(runtime=FakeRuntime()))


def test_registering_a_keys_sections_reads_the_maps_once(tmp_path, monkeypatch):
    """Five adjacent sections of a mapped file: /proc/self/maps read once (not once per array), one registration
    of their merged pages, read-only as the mapping is."""
    path = tmp_path / "key.bin"
    path.write_bytes(bytes(range(256)) * 400)
    with open(path, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    whole = np.frombuffer(mm, dtype=np.uint8)
    arrays = [whole[i * 20000 : (i + 1) * 20000] for i in range(5)]
    opened = []
    real_open = open

    def counting_open(name, *a, **k):
        opened.append(str(name))
        return real_open(name, *a, **k)

    monkeypatch.setattr(hostbases, "open", counting_open, raising=False)
    cupy = fake_cupy()
    starts = hostbases.register_arrays(cupy, arrays, read_only=True)
    lo, hi = span(whole[: 5 * 20000])
    assert opened == ["/proc/self/maps"]
    assert cupy.cuda.runtime.calls == [("register", lo, hi - lo,
                                        hostbases.HOST_REGISTER_PORTABLE | hostbases.HOST_REGISTER_READ_ONLY)]
    assert starts == [lo]
    hostbases.unregister(cupy, starts)
    assert cupy.cuda.runtime.calls[-1] == ("unregister", lo)
    del arrays, whole
    mm.close()


def test_a_pinned_copy_that_fails_frees_its_allocation(monkeypatch):
    arrays = [np.arange(1000, dtype=np.uint64), np.arange(3000, dtype=np.uint32).reshape(1000, 3)]
    cupy = fake_cupy()
    ptr, views = hostbases.pinned_copy(cupy, arrays)  # the copies first, as they are when all goes well
    assert all(np.array_equal(v, a) and v.shape == a.shape for v, a in zip(views, arrays))
    assert list(cupy.cuda.runtime.live) == [ptr]
    hostbases.free_host(cupy, ptr)
    del views

    real_copy, copies = hostbases.parallel_copy, []

    def failing_copy(dst, src):
        copies.append(len(src))
        if len(copies) == 2:
            raise MemoryError("copy failed")
        real_copy(dst, src)

    monkeypatch.setattr(hostbases, "parallel_copy", failing_copy)
    cupy = fake_cupy()
    with pytest.raises(MemoryError, match="copy failed"):
        hostbases.pinned_copy(cupy, arrays)
    (alloc,) = [c for c in cupy.cuda.runtime.calls if c[0] == "alloc"]
    assert copies == [8000, 12000] and ("free", alloc[1]) in cupy.cuda.runtime.calls
    assert cupy.cuda.runtime.live == {}  # nothing left page-locked

    # a key's bases: the failed copy leaves them pageable, nothing held
    key = SimpleNamespace(path="k.zkey", **{name: np.arange(64, dtype=np.uint64) + i
                                            for i, name in enumerate(hostbases.SECTIONS)})
    copies.clear()
    cupy = fake_cupy()
    host = hostbases.HostBases(key, cupy, allow=("pinned-copy",))
    assert host.mode == "pageable" and "copy failed" in host.why and cupy.cuda.runtime.live == {}
    assert all(host.arrays[n] is getattr(key, n) for n in hostbases.SECTIONS)
