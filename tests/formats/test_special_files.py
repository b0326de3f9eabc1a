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


def test_a_fifo_or_device_as_a_circuit_wasm_or_srs_is_refused_at_once(tmp_path):
    """Issue 33, finding 5: the wasm and the aggregation SRS were read with a plain open(): a FIFO hung the
    caller (and a daemon's LoadKey or Aggregate for every client), /dev/zero was read without end."""
    import time

    from snarkd.aggregate.srs import read_srs
    from snarkd.errors import InputError
    from snarkd.witness.inputs import read_wasm, sized_input_names

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    t = time.monotonic()
    for p in (fifo, "/dev/zero"):
        for read in (lambda: read_wasm(p, None, None), lambda: read_srs(p),
                     lambda: sized_input_names(p, lambda name_hash: -1)):  # the .sym found beside a wasm
            with pytest.raises(InputError, match="not a regular file") as exc:
                read()
            assert str(p) in str(exc.value)
    assert time.monotonic() - t < 5


def test_dev_zero_as_a_config_is_refused_not_read_whole():
    from snarkd.config import Config
    from snarkd.config.loader import ConfigError

    with pytest.raises(ConfigError, match="more than 16 MiB"):
        Config.load("/dev/zero")
