"""The gRPC service with real daemons: proofs that snarkjs accepts, bad requests, drain, systemd notify."""

from __future__ import annotations

import errno
import json
import signal
import socket
import threading
import time

import grpc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from daemon_helpers import Setup, foreground_daemon, free_port, port_free, serve_foreground, snarkd, wait_serving

import oracle
from snarkd.daemon.client import Client, RemoteDaemonError, RemoteInputError
from snarkd.errors import InputError


pytestmark = pytest.mark.slow  # daemons in subprocesses: the slow tier (pytest -m "not slow" leaves it out)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, chain_bn128):
    """One foreground daemon with the chain key preloaded, shared by the request tests."""
    circ, wtns = chain_bn128
    s = Setup(tmp_path_factory.mktemp("daemon"), free_port())
    cfg = s.write(workers=2, preload={"chain": circ.zkey},
                  extra=f'[keys]\nallowed_dirs = ["{circ.zkey.parent}"]\n')  # LoadKey may name the fixtures
    with foreground_daemon(s, cfg) as proc:
        yield s, proc, circ, wtns


def verify(circ, tmp, proof: dict, public: list) -> bool:
    (tmp / "proof.json").write_text(json.dumps(proof))
    (tmp / "public.json").write_text(json.dumps(public))
    return oracle.snarkjs_verify(circ.vk, tmp / "public.json", tmp / "proof.json")


def test_prove_through_daemon_verifies(daemon, tmp_path):
    s, proc, circ, wtns = daemon
    with Client(s.addr, timeout=120) as c:
        assert c.health() == "SERVING" and c.health("snarkd.v1.Prover") == "SERVING"
        reply = c.prove("chain", wtns.read_bytes())
        assert verify(circ, tmp_path, reply.proof, reply.public)
        assert len(reply.public) == 2 and reply.public[1] == "3"  # [out, k]
        assert reply.timings["total"] > 0 and "queue_wait" in reply.timings
        st = c.status()
        assert st["keys"][0]["id"] == "chain" and st["keys"][0]["bytes"] > 0 and st["keys"][0]["preloaded"]
        assert st["keys"][0]["curve"] == "bn128" and st["completed"] >= 1
    # the CLI: `snarkd prove --addr` writes files snarkjs accepts
    r = snarkd("prove", "--addr", s.addr, "--key", "chain", wtns, tmp_path / "p.json", tmp_path / "pub.json")
    assert r.returncode == 0, r.stderr
    assert oracle.snarkjs_verify(circ.vk, tmp_path / "pub.json", tmp_path / "p.json")


def test_prove_from_inputs_on_the_native_engine_and_its_metrics(daemon, tmp_path):
    """The daemon's default [witness] engine (auto) replays the program built when the key loaded; the
    witnesses are counted by source in /metrics and the Status record."""
    s, proc, circ, wtns = daemon
    with Client(s.addr, timeout=120) as c:
        before = c.metrics()["values"].get('snarkd_witnesses_total{source="native"}', 0.0)
        reply = c.prove("chain", inputs=[{"k": 3, "x": 2}])
        assert verify(circ, tmp_path, reply.proof, reply.public)
        assert reply.public == [str(v) for v in _public_of(wtns, 2)]  # what snarkjs's witness says
        m = c.metrics()["values"]
        assert m['snarkd_witnesses_total{source="native"}'] == before + 1
        assert m['snarkd_witnesses_total{source="wasm"}'] == 0 and m["snarkd_witness_failed_total"] == 0


def test_heap_frozen_at_startup_and_collections_measured(daemon):
    """Start-up's objects are frozen out of garbage collections (a full one stops every thread); the pauses of
    those that still run are in the metrics by generation."""
    s, proc, circ, wtns = daemon
    with Client(s.addr, timeout=120) as c:
        c.prove("chain", wtns.read_bytes())
        m = c.metrics()["values"]
    assert m['snarkd_gc_pause_seconds_count{generation="0"}'] >= 1
    assert m['snarkd_gc_pause_seconds_sum{generation="0"}'] > 0
    assert 'snarkd_gc_pause_seconds_count{generation="2"}' in m
    assert "heap frozen objects=" in s.log()


def _public_of(wtns, n: int) -> list[int]:
    from snarkd.formats.wtns import read_wtns

    w = read_wtns(wtns)
    return [w.value(i) for i in range(1, 1 + n)]


def test_malformed_requests_get_clear_status(daemon, tmp_path):
    from snarkd.formats.wtns import parse_wtns, wtns_bytes

    s, proc, circ, wtns = daemon
    good = wtns.read_bytes()
    w = parse_wtns(good)
    bls_r = 0x73EDA753299D7D483339D80809A1D80553BDA402FFFE5BFEFFFFFFFF00000001
    cases = [
        ("chain", b"garbage witness bytes", grpc.StatusCode.INVALID_ARGUMENT, "witness"),
        ("chain", b"", grpc.StatusCode.INVALID_ARGUMENT, "empty witness"),
        ("chain", good[: len(good) // 2], grpc.StatusCode.INVALID_ARGUMENT, "witness"),
        ("nope", good, grpc.StatusCode.NOT_FOUND, "no key with id 'nope'"),
        ("chain", wtns_bytes(bls_r, [1] * len(w)), grpc.StatusCode.INVALID_ARGUMENT, "field"),
        ("chain", wtns_bytes(w.prime, [1] * (len(w) + 1)), grpc.StatusCode.INVALID_ARGUMENT, "values"),
    ]
    with Client(s.addr, timeout=60) as c:
        for key_id, data, code, needle in cases:
            for call in (c.prove, c.submit):
                with pytest.raises(RemoteInputError) as e:
                    call(key_id, data)
                assert e.value.code == code, (key_id, needle, e.value)
                assert needle in str(e.value)
        with pytest.raises(RemoteInputError) as e:  # inside [keys] param_cache (the config's directory)
            c.load_key("x", "missing.zkey")
        assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT and "no such file" in str(e.value)
        (s.dir / "junk.zkey").write_bytes(b"zkey" + b"\0" * 100)
        with pytest.raises(RemoteInputError) as e:
            c.load_key("junk", str(s.dir / "junk.zkey"))
        assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT and "junk.zkey" in str(e.value)
        with pytest.raises(RemoteInputError) as e:
            c.load_key("chain", str(circ.zkey))
        assert e.value.code == grpc.StatusCode.ALREADY_EXISTS
        with pytest.raises(RemoteInputError) as e:
            c.await_("no-such-job")
        assert e.value.code == grpc.StatusCode.NOT_FOUND
        # still serving, and still proving correctly
        assert c.health() == "SERVING" and proc.poll() is None
        reply = c.prove("chain", good)
        assert verify(circ, tmp_path, reply.proof, reply.public)
        assert c.status()["failed"] == 0


def test_submit_await_cancel_load_unload(daemon, tmp_path):
    s, proc, circ, wtns = daemon
    with Client(s.addr, timeout=60) as c:
        info = c.load_key("second", str(circ.zkey))
        assert info["id"] == "second" and info["bytes"] > 0 and not info["preloaded"]
        ids = [c.submit("second", wtns.read_bytes()) for _ in range(3)]
        assert len(set(ids)) == 3
        results = [c.await_(i) for i in ids]
        assert all(r.state == "COMPLETED" for r in results), results
        assert verify(circ, tmp_path, results[0].reply.proof, results[0].reply.public)
        assert c.cancel(ids[0]) == ("COMPLETED", False)
        assert {k["id"] for k in c.status()["keys"]} == {"chain", "second"}
        m = c.metrics()
        assert m["values"]["snarkd_proofs_completed_total"] >= 3 and "snarkd_keys_loaded 2.0" in m["text"]
        c.unload_key("second")
        with pytest.raises(RemoteInputError) as e:
            c.submit("second", wtns.read_bytes())
        assert e.value.code == grpc.StatusCode.NOT_FOUND


def test_listening_socket_has_no_reuseport(daemon):
    """grpc enables SO_REUSEPORT by default; with it a second socket could share the port."""
    s, *_ = daemon
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    try:
        with pytest.raises(OSError) as e:
            sock.bind(("127.0.0.1", s.port))
        assert e.value.errno == errno.EADDRINUSE
    finally:
        sock.close()


def test_sigterm_during_proof_completes_and_exits_0(tmp_path, reaper, chain_bn128):
    circ, wtns = chain_bn128
    s = Setup(tmp_path, free_port())
    cfg = s.write(drain="30s", preload={"chain": circ.zkey})
    proc = serve_foreground(cfg, reaper, {"SNARKD_DEBUG_PROVE_DELAY_MS": 2500})
    wait_serving(s.addr, proc)
    out = {}

    def client():
        try:
            with Client(s.addr, timeout=60) as c:
                out["reply"] = c.prove("chain", wtns.read_bytes())
        except Exception as exc:  # noqa: BLE001
            out["error"] = exc

    t = threading.Thread(target=client)
    t.start()
    with Client(s.addr) as c:
        deadline = time.monotonic() + 20
        while c.status()["in_flight"] == 0:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    # new work is refused while draining
    with Client(s.addr, timeout=5) as c:
        deadline = time.monotonic() + 10
        while True:
            try:
                if c.health() != "SERVING":
                    break
            except RemoteDaemonError:
                break
            assert time.monotonic() < deadline, "still SERVING after SIGTERM"
            time.sleep(0.02)
        with pytest.raises(RemoteDaemonError):
            c.prove("chain", wtns.read_bytes())
    t.join(60)
    assert proc.wait(30) == 0
    assert "error" not in out, out.get("error")
    assert verify(circ, tmp_path, out["reply"].proof, out["reply"].public)
    assert not s.pid_file.exists() and port_free(s.port)
    log = s.log()
    assert "received SIGTERM" in log and "drained: all in-flight work finished" in log and "stopped (exit 0)" in log


def test_drain_timeout_cancels_and_exits_0(tmp_path, reaper, chain_bn128):
    circ, wtns = chain_bn128
    s = Setup(tmp_path, free_port())
    cfg = s.write(drain="500ms", preload={"chain": circ.zkey})
    proc = serve_foreground(cfg, reaper, {"SNARKD_DEBUG_PROVE_DELAY_MS": 20000})
    wait_serving(s.addr, proc)
    out = {}

    def client():
        try:
            with Client(s.addr, timeout=60) as c:
                out["reply"] = c.prove("chain", wtns.read_bytes())
        except Exception as exc:  # noqa: BLE001
            out["error"] = exc

    t = threading.Thread(target=client)
    t.start()
    with Client(s.addr, timeout=30) as c:
        queued = c.submit("chain", wtns.read_bytes())  # one worker: these wait in the queue
        dropped = c.submit("chain", wtns.read_bytes())
        deadline = time.monotonic() + 20
        while c.status()["in_flight"] == 0:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert c.cancel(dropped) == ("CANCELLED", True)
        assert c.await_(dropped).state == "CANCELLED"
        assert c.await_(queued, wait_s=0.2).state == "TIMEOUT"
        st = c.status()
        assert (st["queued"], st["in_flight"], st["cancelled"]) == (1, 1, 1)
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 0
    assert time.monotonic() - t0 < 10
    t.join(10)
    err = out.get("error")
    # the journal keeps what the drain cancelled: the caller hears it will run after a restart
    # (tests/daemon/test_journal.py restarts and fetches such jobs)
    assert isinstance(err, RemoteDaemonError) and err.code == grpc.StatusCode.UNAVAILABLE, out
    assert "journaled and runs again" in str(err) and err.job_id and err.job_id in str(err)
    assert not s.pid_file.exists() and port_free(s.port)
    assert "drain_timeout (0.5s) passed: cancelled 2 unfinished job(s) (journaled" in s.log(), queued


def test_systemd_notify_ready_and_stopping(tmp_path, reaper):
    s = Setup(tmp_path, free_port())
    sock_path = tmp_path / "notify.sock"
    listen_sock = tmp_path / "d.sock"
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(str(sock_path))
    notify.settimeout(30)
    try:
        cfg = s.write(listen=f"unix:{listen_sock}")
        proc = serve_foreground(cfg, reaper, {"NOTIFY_SOCKET": sock_path})
        msgs = []
        while not any("READY=1" in m for m in msgs):
            msgs.append(notify.recv(4096).decode())
        assert f"MAINPID={proc.pid}" in msgs[-1]
        with Client(f"unix:{listen_sock}") as c:
            assert c.health() == "SERVING"
        proc.send_signal(signal.SIGTERM)
        while not any("STOPPING=1" in m for m in msgs):
            msgs.append(notify.recv(4096).decode())
        assert proc.wait(30) == 0
        assert not listen_sock.exists() and not s.pid_file.exists()
    finally:
        notify.close()


def test_client_unreachable_daemon_is_daemon_error():
    with Client(f"127.0.0.1:{free_port()}", timeout=5) as c:
        with pytest.raises(RemoteDaemonError) as e:
            c.status()
        assert "cannot reach snarkd" in str(e.value) and e.value.exit_code == 5
    with pytest.raises(InputError):
        Client("no-port-here")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 2**256).map(str), st.text(max_size=8)), max_size=20))
def test_public_json_is_json_dumps_with_indent_one(values):
    """The reply's public.json text, made with json's C string encoder, is exactly json.dumps(values, indent=1)."""
    from snarkd.daemon.service import public_json

    assert public_json(values) == json.dumps(values, indent=1)
    assert public_json(tuple(values)) == json.dumps(values, indent=1)
