"""The cluster is opt-in: a single daemon never loads Ray, and [cluster] address is checked like any setting."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from clirun import env

from snarkd.config import Config, ConfigError
from snarkd.daemon.netcheck import free_tcp_port as free_port


pytestmark = pytest.mark.slow  # daemons in subprocesses: the slow tier (pytest -m "not slow" leaves it out)


def test_single_daemon_start_leaves_ray_unimported(tmp_path, chain_circuit):
    addr = f"127.0.0.1:{free_port()}"
    cfg = tmp_path / "snarkd.toml"
    cfg.write_text(textwrap.dedent(f"""\
        [daemon]
        listen = "{addr}"
        pid_file = "{tmp_path}/snarkd.pid"
        log_file = "{tmp_path}/snarkd.log"
        [transport]
        witness_spool = "{tmp_path}/spool"
        [synthesis]
        workers = 1
        [keys.preload]
        chain = "{chain_circuit.zkey}"
        """))
    program = textwrap.dedent(f"""\
        import sys, threading
        import snarkd.daemon.server as server
        from snarkd.config import Config
        from snarkd.daemon.client import Client
        after_import = "ray" in sys.modules
        srv = server.Server(Config.load({str(cfg)!r}), log_to_stderr=False)

        def check():
            with Client({addr!r}, timeout=60) as c:
                c.wait_serving(60)
                c.prove("chain", open({str(chain_circuit.wtns)!r}, "rb").read())
            print("ray after import:", after_import, "after serving a proof:", "ray" in sys.modules, flush=True)
            srv.should_exit.set()

        threading.Thread(target=check, daemon=True).start()
        sys.exit(srv.run())
        """)
    r = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, env=env())
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ray after import: False after serving a proof: False" in r.stdout


@pytest.mark.parametrize("value, effective", [
    ("", ""), ("local", "local"), ("AUTO", "auto"), ("10.0.0.5:6379", "10.0.0.5:6379"),
    ("ray://head.example:10001", "ray://head.example:10001"), ("[::1]:6379", "[::1]:6379")])
def test_cluster_address_forms(tmp_path, value, effective):
    cfg = Config.from_text(f'[cluster]\naddress = "{value}"\n', str(tmp_path / "c.toml"), tmp_path, env={})
    assert cfg.cluster.address == effective
    assert (cfg.cluster.min_actors, cfg.cluster.key_placement, cfg.cluster.max_attempts) == (1, "auto", 3)


@pytest.mark.parametrize("text, message", [
    ('address = "head"', '[cluster] address = "head": expected "" (off), "local", "auto", "HOST:PORT"'),
    ('address = "ray://head:99999"', "ray://HOST:PORT"),
    ('key_placement = "nfs"', 'expected "auto", "path" or "ship"'),
    ('max_attempts = 0', "must be at least 1"),
    ('witness_budget = "lots"', 'a size like "64GiB"'),
    ('adress = "auto"', "unknown key (did you mean address?)"),
])
def test_bad_cluster_settings_name_the_key_and_line(tmp_path, text, message):
    with pytest.raises(ConfigError) as exc:
        Config.from_text(f"[cluster]\n{text}\n", str(tmp_path / "c.toml"), tmp_path, env={})
    assert message in str(exc.value) and "c.toml:2" in str(exc.value)


def test_cluster_address_from_the_environment(tmp_path):
    cfg = Config.from_text("", str(tmp_path / "c.toml"), tmp_path, env={"SNARKD_CLUSTER_ADDRESS": "auto"})
    assert cfg.cluster.address == "auto" and "cluster.address" in cfg.overrides
