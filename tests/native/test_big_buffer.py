"""native/big_buffer.hpp: the proof's large buffers mapped 2 MiB-aligned and advised MADV_HUGEPAGE under
[cpu] huge_pages = "auto" (_core.set_huge_pages), from the heap with it off, as small ones always are. The
kernel's own account (/proc/self/smaps: AnonHugePages of the buffer's mapping) says whether huge pages came.
And the step that now writes H over a's storage (qap_h, release=True, the IFMA path) against the Python model
and against the copying path, with the buffers big enough to be mapped."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from snarkd.native import _core
from helpers import dec_many, native_setting
from test_qap_scalar import _ab_vectors, _h_at, _h_full

MiB = 1 << 20
THP = Path("/sys/kernel/mm/transparent_hugepage/enabled")


def _thp_mode() -> str | None:
    """The bracketed word of THP's `enabled` (always, madvise, never), None without THP."""
    try:
        text = THP.read_text()
    except OSError:
        return None
    return text[text.index("[") + 1 : text.index("]")]


def _anon_huge_kb(address: int) -> int:
    """AnonHugePages (kB) of the mapping that holds address, from /proc/self/smaps."""
    found = False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()[0]
        if "-" in head and not head.endswith(":"):
            lo, hi = (int(x, 16) for x in head.split("-"))
            found = lo <= address < hi
        elif found and head == "AnonHugePages:":
            return int(line.split()[1])
    raise AssertionError(f"no mapping holds {address:#x}")


@pytest.fixture
def huge_on():
    with native_setting(_core.set_huge_pages, True):
        yield


@pytest.mark.parametrize("nbytes", [2 * MiB, 5 * MiB + 4096, 6 * MiB + 100, 16 * MiB])
def test_big_buffers_are_mapped_aligned_and_advised(huge_on, nbytes):
    buf = _core._BigBuffer(nbytes, zero=True)
    view = np.frombuffer(buf, dtype=np.uint8)
    assert buf.nbytes == nbytes == view.size
    thp = _thp_mode()
    assert buf.kind == ("huge" if thp is not None else "heap")  # a kernel without THP: the heap, unadvised
    if thp is None:
        pytest.skip("no transparent huge pages in this kernel")
    assert buf.address % (2 * MiB) == 0
    assert not view.any()  # asked zeroed: a fresh mapping is
    view[:] = 0x5A
    assert (view == 0x5A).all()
    if thp in ("madvise", "always"):
        # every whole 2 MiB of the buffer may be one huge page; at least one must be (the kernel compacts
        # memory for an advised fault under the default defrag setting)
        assert 2048 <= _anon_huge_kb(buf.address) <= nbytes // (2 * MiB) * 2048


def test_off_takes_the_heap_unadvised():
    """Off: every buffer from operator new, as before the advice (a mapping of 4 KiB pages of its own measured
    slower than the heap)."""
    with native_setting(_core.set_huge_pages, False):
        assert not _core.uses_huge_pages()
        buf = _core._BigBuffer(4 * MiB, zero=True)
        assert buf.kind == "heap" and buf.address % 64 == 0
        view = np.frombuffer(buf, dtype=np.uint8)
        assert not view.any()
        view[:] = 1
        if _thp_mode() == "madvise":  # only advised ranges get huge pages
            assert _anon_huge_kb(buf.address) == 0
        assert (view == 1).all()
    assert _core.uses_huge_pages()


@pytest.mark.parametrize("nbytes", [1, 4096, 2 * MiB - 8, 16 * MiB + 1, 40 * MiB])
def test_small_and_very_large_buffers_come_from_the_heap(huge_on, nbytes):
    """Under 2 MiB the advice could not apply; over 16 MiB it measured slower (chain 2^20, cpu-notes round 32)."""
    buf = _core._BigBuffer(nbytes, zero=True)
    assert buf.kind == "heap" and buf.address % 64 == 0 and buf.nbytes == nbytes
    view = np.frombuffer(buf, dtype=np.uint8)
    assert not view.any()
    view[:] = 7
    assert (view == 7).all()


def test_set_huge_pages_returns_the_previous_setting():
    prev = _core.set_huge_pages(False)
    try:
        assert _core.set_huge_pages(True) is False
        assert _core.uses_huge_pages()
    finally:
        _core.set_huge_pages(prev)


# ~4 s a case (the 2^16 inputs built in Python): the proof's own setting (IFMA, huge pages) in the fast tier
@pytest.mark.parametrize("huge, ifma", [
    pytest.param(True, True, id="huge-ifma"),
    pytest.param(False, True, id="off-ifma", marks=pytest.mark.slow),
    pytest.param(True, False, id="huge-scalar", marks=pytest.mark.slow),
    pytest.param(False, False, id="off-scalar", marks=pytest.mark.slow),
])
def test_qap_h_release_over_mapped_buffers(curve, huge, ifma):
    """2^16: a, b and H are 2 MiB FrVectors (mapped), the IFMA arrays one 7.5 MiB block. release=True gives the H of
    the copying path (on the IFMA path written over a's storage) and the model's at spot points; a and b are
    emptied. The same vector as both inputs too."""
    if ifma and not _core.cpu_has_simd52():
        pytest.skip("no AVX-512 IFMA on this CPU")
    rng = random.Random(3235)
    n = 1 << 16
    r = curve.r
    a = [rng.randrange(r) if i < 3 * n // 4 else 0 for i in range(n)]
    b = [rng.randrange(r) for _ in range(n)]
    with native_setting(_core.set_huge_pages, huge), native_setting(_core._set_simd52, ifma):
        va, vb = _ab_vectors(curve, a, b)
        want, _ = curve.mod.qap_h(np.asarray(va).copy(), np.asarray(vb).copy(), 2, False)
        got, _ = curve.mod.qap_h(va, vb, 2, True)
        assert len(va) == len(vb) == 0 and len(got) == n
        assert np.array_equal(np.asarray(got), np.asarray(want))
        hs = dec_many(np.asarray(got)[[0, 1, n // 2 + 3, n - 1]], 4)
        assert hs == [_h_at(curve, a, b, i) for i in (0, 1, n // 2 + 3, n - 1)]
        small = 16
        va, _ = _ab_vectors(curve, a[:small], b[:small])
        got, _ = curve.mod.qap_h(va, va, 2, True)  # one vector as both inputs (H over it on the IFMA path)
        assert len(va) == 0 and dec_many(np.asarray(got), 4) == _h_full(curve, a[:small], a[:small])
