"""daemon/server.Server's startup steps that need no port: the interpreter's switch interval comes from
[daemon] gil_switch_interval before any worker thread starts."""
import logging
import sys

from snarkd.config import Config
from snarkd.daemon.server import Server


def test_announce_sets_the_switch_interval_from_the_config(tmp_path):
    cfg = Config.from_text('[daemon]\ngil_switch_interval = "0.5ms"\n', str(tmp_path / "c.toml"), tmp_path, env={})
    before = sys.getswitchinterval()
    server = Server(cfg, log_to_stderr=False)
    server.log = logging.getLogger("snarkd.test")
    try:
        server._announce()
        assert abs(sys.getswitchinterval() - 0.0005) < 1e-9
    finally:
        sys.setswitchinterval(before)


def test_the_default_is_pythons_own():
    assert Config.defaults({}).daemon.gil_switch_interval == 0.005
