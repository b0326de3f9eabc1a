"""daemon/parallel_io: files read in parts by several threads give back exactly their bytes, at every size around
the part boundaries, and a file that shrank is reported short."""

from __future__ import annotations

import os

import numpy as np
import pytest

from snarkd.daemon import parallel_io
from snarkd.daemon.parallel_io import read_into


@pytest.mark.parametrize("size", [1, 4095, parallel_io.PART - 1, parallel_io.PART, parallel_io.PART + 1,
                                  3 * parallel_io.PART + 12345])
def test_round_trip(tmp_path, size):
    data = np.random.default_rng(size).integers(0, 256, size, dtype=np.uint8)
    path = tmp_path / "w"
    path.write_bytes(data.tobytes())
    back = np.zeros(size, dtype=np.uint8)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert read_into(fd, memoryview(back), size) == size
    finally:
        os.close(fd)
    assert np.array_equal(back, data)


def test_a_file_shorter_than_asked_reads_short(tmp_path):
    size = 2 * parallel_io.PART + 10
    path = tmp_path / "w"
    path.write_bytes(b"\x01" * (size - parallel_io.PART))  # as if it shrank after its size was taken
    back = np.zeros(size, dtype=np.uint8)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert read_into(fd, memoryview(back), size) == size - parallel_io.PART
    finally:
        os.close(fd)


def test_an_urgent_read_does_not_queue_behind_the_shared_pool(tmp_path):
    """Lanes above priority 0 read by a pool of their own: with every thread of the shared pool held, an urgent
    read of a file in several parts still finishes, with its bytes, on the urgent pool's threads."""
    import threading

    size = 3 * parallel_io.PART + 7
    data = np.random.default_rng(3).integers(0, 256, size, dtype=np.uint8)
    path = tmp_path / "w"
    path.write_bytes(data.tobytes())
    fd = os.open(path, os.O_RDONLY)
    release = threading.Event()
    held = []
    try:
        read_into(fd, memoryview(np.zeros(size, dtype=np.uint8)), size)  # the shared pool exists
        shared = parallel_io._pools[False]
        held = [shared.submit(release.wait, 60) for _ in range(parallel_io.THREADS)]
        readers: set[str] = set()
        real = os.preadv

        def preadv(*args):
            readers.add(threading.current_thread().name)
            return real(*args)

        back = np.zeros(size, dtype=np.uint8)
        os.preadv = preadv
        try:
            done = threading.Thread(target=lambda: read_into(fd, memoryview(back), size, urgent=True))
            done.start()
            done.join(20)
        finally:
            os.preadv = real
        assert not done.is_alive(), "the urgent read waited for the shared pool"
        assert np.array_equal(back, data)
        assert readers and all(n.startswith("witness-io-urgent") for n in readers), readers
    finally:
        release.set()
        for f in held:
            f.result(60)
        os.close(fd)
