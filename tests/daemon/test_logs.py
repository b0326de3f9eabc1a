"""The daemon's log: JSON lines ([daemon] log_format = "json"), and SIGHUP reopening the file
after it was moved (logrotate's convention, run with examples/snarkd.logrotate's postrotate)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
from daemon_helpers import snarkd, start_daemon

from snarkd.daemon.client import Client

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


pytestmark = pytest.mark.slow  # daemons in subprocesses: the slow tier (pytest -m "not slow" leaves it out)


def wait_for(predicate, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def start(setup, reaper, cfg) -> int:
    return start_daemon(cfg, reaper)


def test_json_log_lines_have_the_text_lines_fields(setup, reaper, chain_bn128):
    circ, _ = chain_bn128
    cfg = setup.write(extra=f'[keys]\nallowed_dirs = ["{circ.zkey.parent}"]\n')  # LoadKey may name it
    cfg.write_text(cfg.read_text().replace("[daemon]\n", '[daemon]\nlog_format = "json"\n'))
    pid = start(setup, reaper, cfg)
    with Client(setup.addr, timeout=30) as c:
        c.load_key("k", str(circ.zkey))
        try:
            c.load_key("k", str(circ.zkey))  # refused: a line at level INFO naming the error
        except Exception:  # noqa: BLE001
            pass
    assert snarkd("stop", "--config", cfg).returncode == 0
    lines = setup.log_file.read_text().splitlines()
    records = [json.loads(line) for line in lines]  # every line is one JSON object
    assert all(set(r) >= {"time", "level", "process", "pid", "message"} for r in records)
    assert all(r["pid"] == pid and r["process"] == "snarkd" for r in records)
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}", r["time"]) for r in records)
    messages = [r["message"] for r in records]
    assert any(m.startswith("ready, serving on") for m in messages)
    assert any(m.startswith("key loaded id=k") for m in messages)
    assert any("already loaded" in m and r["level"] == "INFO" for m, r in zip(messages, records))
    assert messages[-1] == "stopped (exit 0)"


def test_a_message_is_one_line_whatever_it_quotes():
    """Control characters a client sent (a newline in an id or a path) are escaped in the text form: one log
    call, one line, so no line can be forged; a traceback still follows on its own lines."""
    import logging

    from snarkd.daemon.logsetup import Formatter

    rec = logging.LogRecord("snarkd", logging.INFO, __file__, 1, "rejected: %s", ("a\nFAKE ERROR\x00\r\tü",), None)
    line = Formatter().format(rec)
    assert "\n" not in line and "\x00" not in line and "\r" not in line
    assert line.endswith("rejected: a\\nFAKE ERROR\\x00\\r\\tü")


def test_sighup_after_a_move_writes_a_new_log_file(setup, reaper, chain_bn128):
    """logrotate moves the file, then runs the postrotate of examples/snarkd.logrotate (SIGHUP):
    the next lines land in a new file at the configured path, the old one keeps what came before,
    and the daemon's stdout and stderr follow."""
    circ, _ = chain_bn128
    cfg = setup.write(extra=f'[keys]\nallowed_dirs = ["{circ.zkey.parent}"]\n')  # LoadKey may name it
    pid = start(setup, reaper, cfg)
    log, rotated = setup.log_file, setup.log_file.with_name("snarkd.log.1")
    os.rename(log, rotated)
    rotate = (EXAMPLES / "snarkd.logrotate").read_text()
    script = rotate.split("postrotate", 1)[1].split("endscript", 1)[0].replace("/run/snarkd/snarkd.pid",
                                                                               str(setup.pid_file))
    subprocess.run(["sh", "-c", script], check=True, timeout=10)
    assert wait_for(lambda: log.exists() and "reopened the log file" in log.read_text()), "no new log file"
    assert f"reopened the log file {log}" in log.read_text()
    for fd in (1, 2):  # started by `snarkd start`: its stdout and stderr are the log, the new one now
        assert os.readlink(f"/proc/{pid}/fd/{fd}") == str(log)
    with Client(setup.addr, timeout=30) as c:
        c.load_key("after", str(circ.zkey))
    assert wait_for(lambda: "key loaded id=after" in log.read_text())
    old = rotated.read_text()
    assert "ready, serving on" in old and "key loaded id=after" not in old and "reopened" not in old
    assert snarkd("stop", "--config", cfg).returncode == 0
    assert "stopped (exit 0)" in log.read_text()
