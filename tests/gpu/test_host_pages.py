"""hostbases.file_pages (runs without a GPU): host memory is registered in place only where its pages belong to a
file's mapping (a shared anonymous mapping is one, of /dev/zero); heap pages are shared with other allocations, and a registration's page-rounded
extent over them broke a later device-to-host copy into a neighbour (cudaErrorInvalidValue)."""
import mmap

import numpy as np

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
