"""The daemon's startup steps in process (fast tier): what a step sets for the whole process."""

from __future__ import annotations

import logging
import sys

import pytest

from snarkd.config import Config
from snarkd.daemon.server import Server


def test_announce_sets_the_switch_interval_and_logs_it(tmp_path, caplog):
    """[daemon] switch_interval becomes the process's sys.setswitchinterval (Python's default is 5 ms): an urgent
    job's device stage waits less for the GIL between the bulk jobs' Python work; the log line says what it is."""
    cfg = Config.from_text('[daemon]\nswitch_interval = "0.3ms"\n', str(tmp_path / "c.toml"), tmp_path, env={})
    server = Server(cfg)
    server.log = logging.getLogger("snarkd")
    before = sys.getswitchinterval()
    try:
        with caplog.at_level("INFO", logger="snarkd"):
            server._announce()
        assert sys.getswitchinterval() == pytest.approx(0.0003)
        assert "switch_interval=0.0003s" in caplog.text
    finally:
        sys.setswitchinterval(before)
