"""`snarkd doctor`: a missing CuPy, a busy port, unreadable keys and a bad config each give a
failing (or warning) line with its fix and the documented exit code; `snarkd start` points at it."""

from __future__ import annotations

import importlib.util
import json
import os
import pickle
import socket
import tempfile
from pathlib import Path

import pytest
from daemon_helpers import snarkd, start_daemon

from snarkd.daemon import doctor

HAVE_CUPY = importlib.util.find_spec("cupy") is not None


def run_doctor(cfg: Path | None = None):
    args = ["doctor", "--json"] + (["--config", str(cfg)] if cfg else [])
    r = snarkd(*args, timeout=300)
    report = json.loads(r.stdout)
    return r, report, {c["name"]: c for c in report["checks"]}


@pytest.mark.slow
def test_report_on_this_machine(setup):
    cfg = setup.write()
    r, report, checks = run_doctor(cfg)
    assert r.returncode == 0 and report["ok"], r.stdout
    assert checks["native"]["level"] == "ok" and "build" in checks["native"]["detail"]
    assert checks["native"]["data"]["cpu_has_adx"] in (True, False)
    from snarkd.native import _core

    ifma = checks["native"]["data"]
    assert ifma["cpu_has_avx512_ifma"] == bool(_core.cpu_has_simd52()) and ifma["uses_avx512_ifma"] == ifma["cpu_has_avx512_ifma"]
    assert ("IFMA 8-lane MSM/NTT in use" if ifma["uses_avx512_ifma"] else "no AVX-512 IFMA") in checks["native"]["detail"]
    assert checks["host"]["data"]["cores"] >= 1 and checks["host"]["data"]["memory_total"] > 0
    assert checks["config"]["data"]["fingerprint"] and checks["config"]["data"]["effective"]["daemon"]["listen"]
    for name in ("listen", "pid_file", "log_file", "param_cache", "wasm_cache"):
        assert checks[name]["level"] == "ok", checks[name]
    text = snarkd("doctor", "--config", cfg)
    assert text.returncode == 0 and text.stdout.rstrip().endswith("0 failure(s)"), text.stdout


def test_ifma_switched_off_is_a_warning_with_its_fix(monkeypatch):
    from snarkd.native import _core

    if not _core.cpu_has_simd52():
        pytest.skip("this CPU has no AVX-512 IFMA: the scalar path is the right one (the report's line is checked above)")
    prev = _core._set_simd52(False)
    try:
        c = doctor.check_native()
        asked = doctor.check_native("off")  # the CLI passes the SNARKD_CPU_IFMA it applied
    finally:
        _core._set_simd52(prev)
    assert c.level == "warn" and "IFMA present but not in use" in c.detail and "rebuild" in c.fix
    assert asked.level == "ok" and asked.detail.endswith("(SNARKD_CPU_IFMA=off)")


@pytest.mark.skipif(HAVE_CUPY, reason="CuPy is installed here: the GPU checks run instead (tests/gpu)")
def test_missing_cupy(setup):
    r, report, checks = run_doctor(setup.write())
    c = checks["cupy"]
    assert c["level"] == "warn" and c["detail"].startswith("no CuPy: GPUs are not used (the daemon proves on the CPU)")
    assert "pip install 'snarkd[gpu]'" in c["fix"] and r.returncode == 0
    # the config asks for a GPU: the daemon would not start, so the doctor fails
    r, report, checks = run_doctor(setup.write(extra="[gpus]\ndevices = [0]\n"))
    assert r.returncode == 4 and not report["ok"]
    assert checks["cupy"]["level"] == "fail" and "[gpus] devices = [0]: the daemon will not start" in checks["cupy"]["detail"]


@pytest.mark.slow
def test_busy_port_names_the_holder_and_a_running_daemon_is_fine(setup, reaper):
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.bind(("127.0.0.1", setup.port))
    holder.listen()
    try:
        cfg = setup.write()
        r, report, checks = run_doctor(cfg)
        assert r.returncode == 4
        c = checks["listen"]
        assert c["level"] == "fail" and f"address {setup.addr} is already in use by pid {os.getpid()}" in c["detail"]
        assert "another [daemon] listen" in c["fix"]
        text = snarkd("doctor", "--config", cfg)
        assert "fail  listen" in text.stdout and "fix: stop that process" in text.stdout and text.returncode == 4
    finally:
        holder.close()
    # the address held by the daemon of this very config: that is not a problem
    pid = start_daemon(cfg, reaper)
    r, report, checks = run_doctor(cfg)
    assert r.returncode == 0 and checks["listen"]["detail"] == f"{setup.addr} is served by the running snarkd (pid {pid})"
    assert checks["pid_file"]["level"] == "ok"
    assert snarkd("stop", "--config", cfg).returncode == 0


def test_keys_it_cannot_read(setup, chain_bn128, tmp_path):
    circ, _ = chain_bn128
    garbage = tmp_path / "garbage.zkey"
    garbage.write_bytes(b"not a zkey at all" * 10)
    truncated = tmp_path / "truncated.zkey"
    truncated.write_bytes(circ.zkey.read_bytes()[:3000])
    cfg = setup.write(preload={"good": circ.zkey, "garbage": garbage, "truncated": truncated})
    r, report, checks = run_doctor(cfg)
    assert r.returncode == 4 and not report["ok"]
    assert checks["key good"]["level"] == "ok" and "bn128, domain 2^4" in checks["key good"]["detail"]
    for name, path in (("garbage", garbage), ("truncated", truncated)):
        c = checks[f"key {name}"]
        assert c["level"] == "fail" and str(path) in c["detail"] and "regenerate the key" in c["fix"], c


def _as_nobody(fn, *args):
    """fn(*args) in a forked child that dropped root for uid/gid 65534 (nobody); its result pickled back.
    (Forked, not exec'd: nobody may not be allowed to read the interpreter. What fn needs is imported.)"""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            os.write(w, pickle.dumps(fn(*args)))
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    return pickle.loads(data)


@pytest.mark.skipif(os.geteuid() != 0, reason="drops root for a non-root check")
def test_a_key_without_read_permission(chain_bn128):
    """As root every file is readable, so the check runs in a child that is uid nobody."""
    circ, _ = chain_bn128
    d = Path(tempfile.mkdtemp(prefix="snarkd-doctor-"))
    try:
        d.chmod(0o755)
        key = d / "k.zkey"
        key.write_bytes(circ.zkey.read_bytes())
        key.chmod(0o000)
        c = _as_nobody(doctor.check_key, "k", str(key))
        assert c.level == "fail" and c.detail == f"{key}: cannot read: Permission denied", c
        assert "readable by the daemon's user (uid 65534)" in c.fix
        key.chmod(0o644)
        assert _as_nobody(doctor.check_key, "k", str(key)).level == "ok"
    finally:
        for p in d.iterdir():
            p.unlink()
        d.rmdir()


def test_bad_config(setup):
    cfg = setup.write(extra="[synthesis]\nworkerz = 3\n")
    cfg.write_text(cfg.read_text().replace("[synthesis]\nworkers = 1\nthreads = 1\n", ""))
    r, report, checks = run_doctor(cfg)
    assert r.returncode == 4
    c = checks["config"]
    assert c["level"] == "fail" and f"{cfg}:" in c["detail"] and "workerz" in c["detail"], c
    assert "did you mean workers?" in c["detail"]
    assert "listen" not in checks  # nothing that depends on the config is guessed at
    assert checks["native"]["level"] == "ok"  # the machine's checks still run


@pytest.mark.slow
def test_start_failure_points_at_doctor(setup, tmp_path):
    bad = tmp_path / "bad.zkey"
    bad.write_bytes(b"garbage" * 50)
    cfg = setup.write(preload={"bad": bad})
    r = snarkd("start", "--config", cfg)
    assert r.returncode == 5, r.stderr
    assert "cannot preload key 'bad'" in r.stderr and f"snarkd doctor --config {cfg}" in r.stderr


def test_self_verify_off_is_a_warning_with_its_fix(tmp_path):
    """Issue 33, finding 7: [pipeline] self_verify = false returns proofs of jobs without batch_verify
    unverified; it stays an operator's choice, and doctor (and the start log) say what it costs."""
    from snarkd.config import Config

    on = Config.from_text("", str(tmp_path / "a.toml"), tmp_path, env={})
    off = Config.from_text("[pipeline]\nself_verify = false\n", str(tmp_path / "b.toml"), tmp_path, env={})
    assert doctor.check_self_verify(on).level == "ok"
    c = doctor.check_self_verify(off)
    assert c.level == "warn" and "unverified" in c.detail and "self_verify = true" in c.fix
