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
