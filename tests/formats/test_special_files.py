"""Readers on paths that are not regular files: a clean FormatError, never a hang."""

from __future__ import annotations

import os

import pytest

from snarkd.errors import FormatError
from snarkd.formats.r1cs import read_r1cs
from snarkd.formats.wtns import read_wtns
from snarkd.formats.zkey import read_zkey


@pytest.mark.parametrize("reader", [read_zkey, read_wtns, read_r1cs])
def test_fifo_is_refused_without_waiting_for_a_writer(reader, tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(FormatError, match="not a regular file") as exc:
        reader(fifo)
    assert str(fifo) in str(exc.value)


def test_character_device_is_refused():
    with pytest.raises(FormatError, match="not a regular file"):
        read_zkey("/dev/zero")
