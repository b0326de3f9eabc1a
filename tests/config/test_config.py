"""Config validation: every error names the key and its TOML line; the fingerprint tracks the effective config."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest
from clirun import env, snarkd

from snarkd.config import Config, ConfigError, parse_listen
from snarkd.units import format_duration, parse_duration, parse_size


def load(text: str, tmp_path, environ=None) -> Config:
    return Config.from_text(text, str(tmp_path / "c.toml"), tmp_path, env=environ or {})


@pytest.mark.parametrize(
    "text, line, needle",
    [
        ('[daemon]\nlisten = "127.0.0.1:1"\ndrain_timeout = "sixty"\n', 3, '[daemon] drain_timeout = "sixty": expected a duration'),
        ("[daemon]\n\n[synthesis]\nworkrs = 3\n", 4, "[synthesis] workrs: unknown key (did you mean workers?)"),
        ("[synthesis]\nworkers = 0\n", 2, "[synthesis] workers = 0: must be at least 1"),
        ('[synthesis]\nworkers = "2"\n', 2, "[synthesis] workers = \"2\": expected an integer, got str"),
        ("[daemon]\nlisten = 9820\n", 2, "[daemon] listen = 9820: expected a string"),
        ('[daemon]\nlisten = "localhost"\n', 2, "is not \"HOST:PORT\""),
        ('[daemon]\nlisten = "127.0.0.1:70000"\n', 2, "port 70000 is outside 1-65535"),
        ('# c\n[keys.preload]\nmine = "missing.zkey"\n', 3, "[keys.preload] mine = \"missing.zkey\": no such file"),
        ('[keys]\nparam_cache = "/nonexistent/dir"\n', 2, "[keys] param_cache = \"/nonexistent/dir\": not an existing directory"),
        ("[gpu]\ndevices = []\n", 1, "[gpu]: unknown section (did you mean [gpus]?)"),
        ('[gpus]\ndevices = [0, "x"]\n', 2, "[gpus] devices"),
        ('[gpus]\nmsm_tables = "maybe"\n', 2, '[gpus] msm_tables = "maybe": expected "auto", "on" or "off"'),
        ('[memory]\nbudget = "lots"\n', 2, '[memory] budget = "lots": expected "auto" or a size'),
        ('[daemon]\nlog_level = "loud"\n', 2, "[daemon] log_level"),
        ('[daemon]\npid_file = "/dev/null/x.pid"\n', 2, "[daemon] pid_file"),
        ("[daemon\nlisten = 1\n", 1, "not valid TOML"),
        ('[daemon]\nswitch_interval = "0s"\n', 2, '[daemon] switch_interval = "0s": must be positive'),
    ],
)
def test_errors_name_key_and_line(tmp_path, text, line, needle):
    with pytest.raises(ConfigError) as e:
        load(text, tmp_path)
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'c.toml'}:{line}: "), msg
    assert needle in msg


def test_a_control_socket_path_too_long_is_a_config_error_only_where_one_is_used(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    text = f'[daemon]\npid_file = "{deep}/s.pid"\n'
    assert load(text, tmp_path).daemon.control_socket.endswith("s.ctl")  # no TLS, no tokens: not used
    (tmp_path / "tokens").write_text("me admin " + "t" * 40 + "\n")
    (tmp_path / "tokens").chmod(0o600)
    with pytest.raises(ConfigError, match=r"\[daemon\] control_socket = .*longer than the 107 bytes"):
        load(text + f'token_file = "{tmp_path / "tokens"}"\n', tmp_path)


def test_defaults_paths_and_env_override(tmp_path):
    (tmp_path / "cache").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "cache" / "k.zkey").write_bytes(b"x")
    (tmp_path / "other" / "k.zkey").write_bytes(b"y")
    text = '[daemon]\npid_file = "run/s.pid"\n[keys]\nparam_cache = "cache"\n[keys.preload]\nk = "k.zkey"\n'
    cfg = load(text, tmp_path)
    assert str(cfg.daemon.listen) == "127.0.0.1:9820"
    assert cfg.daemon.pid_file == str(tmp_path / "run" / "s.pid")
    assert cfg.keys.preload == {"k": str(tmp_path / "cache" / "k.zkey")}
    assert cfg.daemon.drain_timeout == 60.0 and cfg.synthesis.workers == 2 and cfg.gpus.workers_per_device == 2
    assert cfg.gpus.msm_tables == "auto" and load('[gpus]\nmsm_tables = "OFF"\n', tmp_path).gpus.msm_tables == "off"
    over = load(text, tmp_path, {"SNARKD_PARAM_CACHE": str(tmp_path / "other")})
    assert over.keys.preload == {"k": str(tmp_path / "other" / "k.zkey")}
    assert over.fingerprint != cfg.fingerprint


def test_fingerprint_tracks_effective_config(tmp_path):
    a = load('[daemon]\nlisten = "127.0.0.1:9000"\n[synthesis]\nworkers = 2\n', tmp_path)
    b = load('# same, spelled differently\n[synthesis]\nworkers = 2\n[daemon]\nlisten = "127.0.0.1:9000"\n', tmp_path)
    c = load('[daemon]\nlisten = "127.0.0.1:9000"\n[synthesis]\nworkers = 3\n', tmp_path)
    d = load('[daemon]\nlisten = "127.0.0.1:9000"\ndrain_timeout = "60s"\n[synthesis]\nworkers = 2\n', tmp_path)
    assert a.fingerprint == b.fingerprint == d.fingerprint  # 60s is the default
    assert a.fingerprint != c.fingerprint
    # the TOML that `config show` prints is itself a valid config with the same fingerprint
    assert load(a.to_toml(), tmp_path).fingerprint == a.fingerprint


def test_value_parsers(tmp_path):
    assert parse_duration("500ms") == 0.5 and parse_duration("2m") == 120 and parse_duration(3) == 3.0
    for seconds in (0.0005, 0.25, 60.0, 0.0001, 1e-7, 0.0003):  # the spelling written back reads back exactly
        assert parse_duration(format_duration(seconds)) == seconds
    assert format_duration(0.0005) == "0.5ms" and format_duration(0.25) == "250ms"
    assert load('[daemon]\nswitch_interval = "0.2ms"\n', tmp_path).daemon.switch_interval == 0.0002
    assert load("", tmp_path).daemon.switch_interval == 0.0005
    assert parse_size("2GiB") == 2 * 2**30 and parse_size("auto") == "auto"
    u = parse_listen("unix:s.sock", tmp_path)
    assert u.kind == "unix" and u.path == str(tmp_path / "s.sock") and u.grpc == f"unix:{tmp_path / 's.sock'}"
    assert parse_listen("[::1]:5", tmp_path).grpc == "[::1]:5"


def test_config_show_from_stdin_and_process_substitution(tmp_path):
    cfg = tmp_path / "s.toml"
    cfg.write_text('[daemon]\nlisten = "127.0.0.1:9999"\n[synthesis]\nworkers = 3\n')
    from_file = snarkd("config", "show", "--json", "--config", cfg, cwd=tmp_path)
    assert from_file.returncode == 0, from_file.stderr
    fp = json.loads(from_file.stdout)["fingerprint"]
    from_stdin = snarkd("config", "show", "--json", "--config", "-", input=cfg.read_text(), cwd=tmp_path)
    assert from_stdin.returncode == 0, from_stdin.stderr
    assert json.loads(from_stdin.stdout)["fingerprint"] == fp
    cmd = f"{shlex.quote(sys.executable)} -m snarkd config show --json --config <(cat {shlex.quote(str(cfg))})"
    sub = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env(), cwd=tmp_path, timeout=60)
    assert sub.returncode == 0, sub.stderr
    out = json.loads(sub.stdout)
    assert out["fingerprint"] == fp and out["source"].startswith("/dev/fd/")
    text = snarkd("config", "show", "--config", cfg, cwd=tmp_path)
    assert f"# fingerprint {fp}" in text.stdout and "workers = 3" in text.stdout


def test_cli_config_error_exit_code(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("[daemon]\nlisten = \"127.0.0.1:9999\"\n\n[synthesis]\nworkers = -1\n")
    r = snarkd("config", "show", "--config", cfg)
    assert r.returncode == 3
    assert f"{cfg}:5: [synthesis] workers = -1" in r.stderr


def test_example_config_is_valid(tmp_path):
    from clirun import SRC

    REPO = SRC.parent
    cfg = Config.load(str(REPO / "examples" / "snarkd.toml"), env={"SNARKD_PARAM_CACHE": str(tmp_path)})
    assert str(cfg.daemon.listen) == "127.0.0.1:9820" and cfg.daemon.drain_timeout == 60.0
    assert cfg.keys.param_cache == str(tmp_path)


def test_lanes_are_validated_up_front_naming_the_lane_and_field(tmp_path):
    """[scheduler.lanes.NAME]: every mistake is an error at load naming the lane, the field and the line."""
    from snarkd.config.lanes import Lane

    good = ('[scheduler.lanes.urgent]\npriority = 10\nshare = 0.4\nmax_queued = 50\ndeadline = "2s"\n'
            '[scheduler.lanes.bulk]\nmax_queued = 5000\n[limits]\nmax_queued_weight = 10000\n')
    cfg = Config.from_text(good, str(tmp_path / "c.toml"), tmp_path, env={})
    assert cfg.scheduler.lanes == {"urgent": Lane("urgent", 10, 0.4, 50.0, 2.0), "bulk": Lane("bulk", max_queued=5000.0)}
    assert cfg.limits.max_queued_weight == 10000.0
    again = Config.from_text(cfg.to_toml(), str(tmp_path / "c.toml"), tmp_path, env={})
    assert again.scheduler.lanes == cfg.scheduler.lanes and again.fingerprint == cfg.fingerprint
    bad = {
        '[scheduler.lanes.urgent]\nshare = 1.5\n': "c.toml:1: [scheduler.lanes] urgent: share: expected a fraction",
        '[scheduler.lanes.a]\nshare = 0.6\n[scheduler.lanes.b]\nshare = 0.7\n':
            "the lanes' shares add up to 1.3: at most 1 (a.share = 0.6, b.share = 0.7)",
        '\n[scheduler.lanes.urgent]\npriorty = 1\n': "c.toml:2: [scheduler.lanes] urgent: priorty: unknown field",
        '[scheduler.lanes.urgent]\npriority = "high"\n': "urgent: priority: expected an integer, got 'high'",
        '[scheduler.lanes.urgent]\ndeadline = "soon"\n': 'urgent: deadline: expected a duration like "60s"',
        '[scheduler.lanes.urgent]\nmax_queued = -1\n': "urgent: max_queued: expected a number >= 0, got -1",
        '[scheduler.lanes."a b"]\n': "[scheduler.lanes] a b: a lane name is 1-32 letters",
        '[limits]\nmax_queued_weight = "lots"\n': "[limits] max_queued_weight = \"lots\": expected a number",
    }
    for text, message in bad.items():
        with pytest.raises(ConfigError) as e:
            Config.from_text(text, str(tmp_path / "c.toml"), tmp_path, env={})
        assert message in str(e.value), (text, str(e.value))
