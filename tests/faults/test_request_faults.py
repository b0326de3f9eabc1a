"""Hostile requests: oversized inline witnesses (refused before the daemon parses or copies them, naming the
key's bound), streams declaring more partitions than allowed, job ids that would forge log lines or walk paths,
and inputs whose values must never reach the log. Each time: the daemon lives on and proves the next good job."""

from __future__ import annotations

import json
import threading

import grpc
import pytest
from fault_helpers import Daemon, all_valid

from snarkd.daemon.client import RemoteInputError
from snarkd.errors import InputError
from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.daemon.proto import snarkd_pb2_grpc as pb_grpc

GARBAGE = 48 << 20  # per request: 14,000 times the chain key's witness (3,372 bytes)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, chain):
    d = Daemon(tmp_path_factory.mktemp("request-faults"), preload={"chain": chain.zkey}).start()
    try:
        yield d
    finally:
        d.stop()


def _good_job(d, chain, **kw):
    with d.client(transport="inline") as c:
        reply = c.prove("chain", chain.witnesses[0].read_bytes(), **kw)
    assert reply.public == chain.publics[0]
    return reply


def _peak_rss(d) -> int:
    with d.client() as c:
        return c.status()["peak_rss_bytes"]


def test_oversized_inline_witnesses_are_refused_by_the_keys_bound(daemon, chain):
    """Refused from the request's wire bytes, before protobuf decodes (copies) them: the daemon's peak grows by
    gRPC's own receive buffer and the bytes it hands over (2 x each request at most), not by the copies that
    parsing made (3.3 x before: 473 MiB for these 144 MiB)."""
    stub = pb_grpc.ProverStub(grpc.insecure_channel(daemon.addr, options=[("grpc.max_send_message_length", 1 << 30)]))
    before = _peak_rss(daemon)
    errors = []

    def send(i):
        req = pb.ProveRequest(key_id="chain", witnesses=[b"\x07" * GARBAGE]) if i % 2 else \
            pb.ProveRequest(key_id="chain", witness=b"\x07" * GARBAGE)
        try:
            stub.Submit(req, timeout=120)
            errors.append(None)
        except grpc.RpcError as exc:
            errors.append(exc)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    daemon.assert_alive()
    for e in errors:
        assert e is not None and e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, e
        assert "key 'chain'" in e.details() and "witness" in e.details(), e.details()
    grown = _peak_rss(daemon) - before
    assert grown < 2.2 * 3 * GARBAGE, f"the daemon's peak RSS grew by {grown >> 20} MiB"
    assert all_valid(chain.vk, [_good_job(daemon, chain)])


def test_a_stream_declaring_too_many_partitions_is_refused_before_allocating(daemon, chain):
    stub = pb_grpc.ProverStub(grpc.insecure_channel(daemon.addr))
    size = len(chain.witnesses[0].read_bytes())
    first = pb.ProveChunk(request=pb.ProveRequest(key_id="chain"), partition_bytes=[size] * 1_000_000)
    with pytest.raises(grpc.RpcError) as e:
        stub.ProveStream(iter([first]), timeout=60)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "max_partitions" in e.value.details()
    daemon.assert_alive()


HOSTILE_IDS = ["a\nFAKE 2025-01-01 ERROR snarkd[1]: admin token leaked", "nul\0byte", "../../etc/passwd",
               "x" * 200, "spaces are out", "ünïcödé", "-leading-dash", "a\r\nb", "semi;colon", "tab\there"]


def test_hostile_job_ids_are_refused_and_never_reach_the_log(daemon, chain):
    stub = pb_grpc.ProverStub(grpc.insecure_channel(daemon.addr))
    w = chain.witnesses[0].read_bytes()
    for job_id in HOSTILE_IDS:
        for call in (stub.Submit, stub.Prove):
            with pytest.raises(grpc.RpcError) as e:
                call(pb.ProveRequest(key_id="chain", witness=w, job_id=job_id), timeout=60)
            assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT, (job_id, e.value.details())
            assert "job id" in e.value.details() and "letters, digits" in e.value.details()
        for call, req in ((stub.Await, pb.AwaitRequest(job_id=job_id)), (stub.Cancel, pb.CancelRequest(job_id=job_id))):
            with pytest.raises(grpc.RpcError) as e:  # looked up, never found; the reply says so without echoing it
                call(req, timeout=60)
            assert e.value.code() == grpc.StatusCode.NOT_FOUND and "\n" not in e.value.details()
    with daemon.client(transport="inline") as c:
        with pytest.raises(InputError, match="job id"):  # the client refuses them before sending
            c.submit("chain", w, job_id="a\nb")
    reply = _good_job(daemon, chain, job_id="tenant-7.job:0001_ok")
    assert reply.job_id == "tenant-7.job:0001_ok" and all_valid(chain.vk, [reply])
    raw = daemon.dir.joinpath("snarkd.log").read_bytes()
    assert b"\0" not in raw and b"FAKE" not in raw and b"\r" not in raw and b"passwd" not in raw
    assert all(line[:4].isdigit() for line in raw.decode().splitlines()), "every log line is one of the daemon's"
    daemon.assert_alive()


SECRETS = {31337.5: "has a fraction", "1" * 5000: "digits", None: "null", "0x31337q": "not decimal"}


def test_input_values_never_reach_the_log_or_odd_error_texts(daemon, chain):
    with daemon.client() as c:
        for value, reason in SECRETS.items():
            with pytest.raises(RemoteInputError) as e:
                c.prove("chain", inputs=[json.dumps({"k": value, "x": 2})])
            msg = str(e.value)
            assert "input 'k'" in msg and reason in msg, msg
            assert str(value) not in msg, msg
            assert "is Exceeds" not in msg and "NoneType" not in msg and " is a " not in msg, msg
    log = daemon.log()
    assert "31337" not in log and "1" * 50 not in log, [ln for ln in log.splitlines() if "input" in ln]
    assert all_valid(chain.vk, [_good_job(daemon, chain)])
