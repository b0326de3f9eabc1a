"""start / stop / restart / status with real processes: never silent, never a wrong process."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from daemon_helpers import alive, env, parse_started, port_free, snarkd, status_json, wait_gone


pytestmark = pytest.mark.slow  # daemons in subprocesses: the slow tier (pytest -m "not slow" leaves it out)


def assert_nothing_left(setup, pid=None):
    if pid is not None:
        assert wait_gone(pid, 10), f"daemon pid {pid} still running"
    assert not setup.pid_file.exists(), setup.pid_file.read_text()
    assert port_free(setup.port), f"port {setup.port} still bound"


def test_start_status_restart_stop(setup, reaper):
    cfg = setup.write(drain="5s", workers=1)
    t0 = time.monotonic()
    r = snarkd("start", "--config", cfg)
    assert r.returncode == 0, r.stdout + r.stderr
    s1 = parse_started(r.stdout)
    reaper.pids.append(s1["pid"])
    assert alive(s1["pid"]) and s1["listen"] == setup.addr
    assert time.monotonic() - t0 < 30
    # the pid file names the daemon and records its identity
    lines = setup.pid_file.read_text().splitlines()
    assert int(lines[0]) == s1["pid"] and json.loads(lines[1])["fingerprint"] == s1["fingerprint"]
    # the log has the startup story, in order
    log = setup.log()
    order = ["snarkd starting", "configuration loaded", "pid file locked", "workers started", "listening on", "ready"]
    positions = [log.index(x) for x in order]
    assert positions == sorted(positions), log

    st = status_json(cfg)
    assert st["running"] and st["pid"] == s1["pid"] and st["config_fingerprint"] == s1["fingerprint"]
    assert st["health"] == "SERVING" and st["workers"] == 1 and st["rss_bytes"] > 0
    assert st["peak_rss_bytes"] >= st["rss_bytes"]
    text = snarkd("status", "--config", cfg)
    assert text.returncode == 0 and s1["fingerprint"] in text.stdout and f"pid {s1['pid']}" in text.stdout

    # restart with a changed config: a new process with the new fingerprint
    cfg2 = setup.write(drain="5s", workers=2)
    r = snarkd("restart", "--config", cfg2)
    assert r.returncode == 0, r.stdout + r.stderr
    s2 = parse_started(r.stdout)
    reaper.pids.append(s2["pid"])
    assert s2["pid"] != s1["pid"] and not alive(s1["pid"])
    assert s2["fingerprint"] != s1["fingerprint"]
    st = status_json(cfg2)
    assert st["pid"] == s2["pid"] and st["config_fingerprint"] == s2["fingerprint"] and st["workers"] == 2

    r = snarkd("stop", "--config", cfg2)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"pid {s2['pid']} exited" in r.stdout
    assert_nothing_left(setup, s2["pid"])
    assert "stopped (exit 0)" in setup.log()

    # now status and stop say plainly that nothing runs
    r = snarkd("status", "--config", cfg2)
    assert r.returncode == 5 and "not running" in r.stdout
    r = snarkd("stop", "--config", cfg2)
    assert r.returncode == 0 and "not running" in r.stdout


def test_second_start_fails_fast_naming_holder(setup, reaper, tmp_path):
    cfg = setup.write()
    r = snarkd("start", "--config", cfg)
    assert r.returncode == 0, r.stderr
    pid = parse_started(r.stdout)["pid"]
    reaper.pids.append(pid)

    t0 = time.monotonic()
    again = snarkd("start", "--config", cfg)
    assert again.returncode == 5
    assert time.monotonic() - t0 < 10
    assert f"pid {pid}" in again.stderr and "already running" in again.stderr

    # another config (own pid file) on the same address: the port check names the holder
    other = setup.write(name="other.toml").read_text().replace(str(setup.pid_file), str(tmp_path / "o.pid"))
    (tmp_path / "other.toml").write_text(other)
    r = snarkd("start", "--config", tmp_path / "other.toml")
    assert r.returncode == 5
    assert f"{setup.addr} is already in use by pid {pid}" in r.stderr
    assert not (tmp_path / "o.pid").exists()
    assert alive(pid) and status_json(cfg)["pid"] == pid  # the first daemon is untouched

    assert snarkd("stop", "--config", cfg).returncode == 0
    assert_nothing_left(setup, pid)


def test_port_held_by_unrelated_process(setup, reaper):
    holder = subprocess.Popen([sys.executable, "-c",
                               "import socket,sys,time; s=socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); "
                               "s.listen(); print('up', flush=True); time.sleep(60)", str(setup.port)],
                              stdout=subprocess.PIPE, text=True)
    reaper.procs.append(holder)
    assert holder.stdout.readline().strip() == "up"
    cfg = setup.write()
    r = snarkd("start", "--config", cfg)
    assert r.returncode == 5
    assert f"address {setup.addr} is already in use by pid {holder.pid}" in r.stderr
    assert not setup.pid_file.exists()
    # stop must not touch a process it cannot verify as snarkd
    r = snarkd("stop", "--config", cfg)
    assert r.returncode == 5 and "cannot verify" in r.stderr
    assert holder.poll() is None


def test_kill9_then_start_replaces_stale_pid_file(setup, reaper):
    cfg = setup.write()
    r = snarkd("start", "--config", cfg)
    assert r.returncode == 0, r.stderr
    pid = parse_started(r.stdout)["pid"]
    reaper.pids.append(pid)
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid)
    assert setup.pid_file.exists()  # left behind by the killed daemon

    r = snarkd("start", "--config", cfg)
    assert r.returncode == 0, r.stdout + r.stderr
    new = parse_started(r.stdout)["pid"]
    reaper.pids.append(new)
    assert "stale pid file" in r.stderr and f"pid {pid} is not running" in r.stderr
    assert "WARNING" in setup.log() and "stale pid file" in setup.log()
    assert status_json(cfg)["pid"] == new
    assert snarkd("stop", "--config", cfg).returncode == 0
    assert_nothing_left(setup, new)


def test_stop_never_signals_a_recycled_pid(setup, reaper):
    """A pid file naming a live process that is not our daemon (no lock, other start time)."""
    victim = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    reaper.procs.append(victim)
    cfg = setup.write()
    setup.pid_file.parent.mkdir(parents=True)
    meta = {"pid": victim.pid, "create_time": 1.0, "cmdline": ["python", "-m", "snarkd", "serve"], "listen": setup.addr}
    setup.pid_file.write_text(f"{victim.pid}\n{json.dumps(meta)}\n")
    r = snarkd("stop", "--config", cfg)
    assert r.returncode == 0, r.stderr
    assert "not running" in r.stdout and "stale pid file" in r.stdout and "reused" in r.stdout
    assert victim.poll() is None  # never signalled
    assert not setup.pid_file.exists()


def test_bad_config_fails_with_key_and_line(setup, reaper):
    cfg = setup.write(extra='[gpus]\nworkers_per_device = "two"\n')
    r = snarkd("start", "--config", cfg)
    assert r.returncode == 3
    n = cfg.read_text().splitlines().index('workers_per_device = "two"') + 1
    assert f"{cfg}:{n}: [gpus] workers_per_device" in r.stderr
    assert not setup.pid_file.exists() and port_free(setup.port) and not setup.log_file.exists()


def test_corrupt_preload_key_fails_start_with_reason(setup, reaper, chain_bn128):
    circ, _ = chain_bn128
    bad = setup.dir / "truncated.zkey"
    bad.write_bytes(circ.zkey.read_bytes()[:3000])
    cfg = setup.write(preload={"chain": bad})
    t0 = time.monotonic()
    r = snarkd("start", "--config", cfg)
    assert r.returncode == 5, r.stdout + r.stderr
    assert time.monotonic() - t0 < 30
    assert "snarkd did not start: cannot preload key 'chain'" in r.stderr and str(bad) in r.stderr
    assert "last lines of" in r.stderr and "startup failed" in r.stderr
    assert "startup failed" in setup.log()
    assert not setup.pid_file.exists() and port_free(setup.port)
    # nothing answers: status says so
    assert snarkd("status", "--config", cfg).returncode == 5


def test_stop_escalates_to_sigkill(setup, reaper, chain_bn128):
    from snarkd.daemon.client import Client

    circ, wtns = chain_bn128
    cfg = setup.write(drain="60s", preload={"chain": circ.zkey})
    r = snarkd("start", "--config", cfg, extra_env={"SNARKD_DEBUG_PROVE_DELAY_MS": 30000})
    assert r.returncode == 0, r.stderr
    pid = parse_started(r.stdout)["pid"]
    reaper.pids.append(pid)
    with Client(setup.addr) as c:
        c.submit("chain", wtns.read_bytes())
    r = snarkd("stop", "--config", cfg, "--timeout", "1.5")
    assert r.returncode == 0, r.stderr
    assert "SIGKILL" in r.stdout
    assert_nothing_left(setup, pid)


def test_unix_socket_listen(setup, reaper):
    sock = setup.dir / "s.sock"
    cfg = setup.write(listen=f"unix:{sock}")
    r = snarkd("start", "--config", cfg)
    assert r.returncode == 0, r.stderr
    pid = parse_started(r.stdout)["pid"]
    reaper.pids.append(pid)
    assert status_json(cfg)["listen"] == f"unix:{sock}"
    again = snarkd("start", "--config", cfg)
    assert again.returncode == 5 and f"pid {pid}" in again.stderr
    assert snarkd("stop", "--config", cfg).returncode == 0
    assert wait_gone(pid) and not sock.exists() and not setup.pid_file.exists()
    # a dead socket file left behind does not block the next start
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))
    s.close()
    r = snarkd("start", "--config", cfg)
    assert r.returncode == 0, r.stderr
    reaper.pids.append(parse_started(r.stdout)["pid"])
    assert "stale unix socket" in setup.log()
    assert snarkd("stop", "--config", cfg).returncode == 0


def test_start_from_process_substitution_stop_from_stdin(setup, reaper):
    import shlex

    cfg = setup.write()
    fp = json.loads(snarkd("config", "show", "--json", "--config", cfg).stdout)["fingerprint"]
    cmd = f"{shlex.quote(sys.executable)} -m snarkd start --config <(cat {shlex.quote(str(cfg))})"
    # relative paths (and the default param_cache) of a piped config resolve against the cwd
    r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, env=env(), timeout=120, cwd=setup.dir)
    assert r.returncode == 0, r.stdout + r.stderr
    started = parse_started(r.stdout)
    reaper.pids.append(started["pid"])
    assert started["fingerprint"] == fp
    st = status_json(cfg)
    assert st["config_fingerprint"] == fp and st["config_path"].startswith("/dev/fd/")
    r = snarkd("stop", "--config", "-", input=cfg.read_text(), cwd=setup.dir)
    assert r.returncode == 0, r.stderr
    assert_nothing_left(setup, started["pid"])


def test_readiness_timeout_stops_the_child(setup, reaper):
    import psutil

    cfg = setup.write()
    r = snarkd("start", "--config", cfg, "--timeout", "0.05")
    assert r.returncode == 5
    assert "not ready after 0.05s" in r.stderr and "stopped it" in r.stderr
    left = [p for p in psutil.process_iter(["cmdline"]) if str(cfg) in " ".join(p.info["cmdline"] or [])
            and p.status() != psutil.STATUS_ZOMBIE]
    assert not left, left
    assert not setup.pid_file.exists() and port_free(setup.port)


def test_status_of_another_config_warns_and_daemon_files_are_private(setup, reaper):
    """`snarkd status --config other.toml` reaching a daemon started from snarkd.toml says so; what the daemon
    created (log, journal with -wal and -shm, pid file) is readable by its user only, whatever the caller's umask."""
    import stat

    cfg = setup.write(drain="5s", workers=1)
    r = snarkd("start", "--config", cfg)
    assert r.returncode == 0, r.stdout + r.stderr
    pid = parse_started(r.stdout)["pid"]
    reaper.pids.append(pid)
    other = setup.write(drain="5s", workers=2, name="other.toml")  # the same address, another config
    r = snarkd("status", "--config", other)
    assert r.returncode == 0, r.stderr
    assert f"started from {cfg}" in r.stderr and f"not from {other}" in r.stderr, r.stderr
    assert "WARNING: the daemon answering" in r.stdout
    assert "WARNING" not in snarkd("status", "--config", cfg).stdout
    journal = setup.pid_file.with_suffix(".jobs.db")
    for f in (setup.log_file, journal, journal.with_name(journal.name + "-wal"), journal.with_name(journal.name + "-shm"),
              setup.pid_file):
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, (f, oct(f.stat().st_mode))
    assert snarkd("stop", "--config", cfg).returncode == 0
    assert_nothing_left(setup, pid)
