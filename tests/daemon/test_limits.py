"""Bounds ([limits]) and path confinement through a live daemon: each refusal names its limit or
rule, and the daemon keeps serving (and proving correctly) after all of them."""

from __future__ import annotations

import json
import signal

import grpc
import pytest
from daemon_helpers import Reaper, Setup, free_port, serve_foreground, wait_serving

from snarkd.daemon.client import Client, RemoteInputError
from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.verifier import verify

LIMITS = """[limits]
max_partitions = 2
max_message = "256KiB"
max_queued_per_client = 2
max_inputs_bytes = "1KiB"
max_inputs_depth = 4
"""


pytestmark = pytest.mark.slow  # daemons in subprocesses: the slow tier (pytest -m "not slow" leaves it out)


@pytest.fixture(scope="module")
def small(tmp_path_factory, chain_bn128):
    circ, wtns = chain_bn128
    reaper = Reaper()
    s = Setup(tmp_path_factory.mktemp("limits"), free_port())
    outside = s.dir.parent / (s.dir.name + "-outside")
    outside.mkdir()
    (outside / "secret").write_text("root:x:0:0:root:/root:/bin/bash\n")
    (s.dir / "escape.zkey").symlink_to(outside / "secret")
    cfg = s.write(workers=1, preload={"chain": circ.zkey}, extra=LIMITS)
    proc = serve_foreground(cfg, reaper, {"SNARKD_DEBUG_PROVE_DELAY_MS": 1500})
    try:
        wait_serving(s.addr, proc)
        yield s, proc, circ, wtns, outside
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        reaper.collect()


def refused(call, code, *needles):
    with pytest.raises(RemoteInputError) as e:
        call()
    assert e.value.code == code, e.value
    for n in needles:
        assert n in str(e.value), e.value
    return str(e.value)


def test_paths_outside_the_rule_are_refused(small):
    s, proc, circ, wtns, outside = small
    rule = "[keys] param_cache or [keys] allowed_dirs"
    with Client(s.addr, timeout=30) as c:
        for path in ("/etc/shadow", str(outside / "secret"), "../" + outside.name + "/secret", "escape.zkey",
                     str(outside / "no-such-file")):
            msg = refused(lambda: c.load_key("k", path), grpc.StatusCode.PERMISSION_DENIED, rule, "not opened")
            assert "root" not in msg.replace(str(s.dir.parent), "") and "magic" not in msg and "no such" not in msg
        refused(lambda: c.load_key("k", "chain.zkey", wasm=str(outside / "secret")),
                grpc.StatusCode.PERMISSION_DENIED, "wasm path", rule)
        # by-reference witnesses: a NUL byte or an endless name is refused, not an internal error (fuzz finding)
        for bad in ("a\0b", "x" * 5000):
            request = pb.ProveRequest(key_id="chain", witness_paths=[bad])  # as sent (the client would not)
            refused(lambda: c._call(c.stub.Prove, request), grpc.StatusCode.PERMISSION_DENIED, "not a usable path")
        # inside the rule, a missing file is reported as such
        refused(lambda: c.load_key("k", "absent.zkey"), grpc.StatusCode.INVALID_ARGUMENT, "no such file")
        assert c.health() == "SERVING"


def test_bounds_name_their_limit_and_the_daemon_keeps_serving(small, tmp_path):
    s, proc, circ, wtns, outside = small
    data = wtns.read_bytes()
    ex = grpc.StatusCode.RESOURCE_EXHAUSTED
    with Client(s.addr, timeout=60) as c:
        refused(lambda: c.submit("chain", witnesses=[data] * 3), ex, "3 partitions", "[limits] max_partitions (2)")
        refused(lambda: c.submit("chain", inputs=[{"k": "1" * 2000}]), ex, "[limits] max_inputs_bytes (1024)")
        deep = {"k": [[[[["1"]]]]]}
        refused(lambda: c.submit("chain", inputs=[deep]), ex, "nests arrays or objects 6 deep", "[limits] max_inputs_depth (4)")
        with Client(s.addr, timeout=60, transport="inline") as inline:  # in the message, not by reference
            refused(lambda: inline.submit("chain", data + b"\0" * (300 << 10)), ex, "larger than max")
        # per client: two unfinished jobs at most (each synthesis stalls 1.5 s here)
        jobs = [c.submit("chain", data) for _ in range(2)]
        refused(lambda: c.submit("chain", data), ex, "[limits] max_queued_per_client (2)")
        for j in jobs:
            assert c.await_(j).state == "COMPLETED"
        reply = c.prove("chain", data)  # the slots are free again
        assert verify(json.loads(circ.vk.read_text()), reply.public, reply.proof)
        assert c.health() == "SERVING" and proc.poll() is None
