"""The witness transport through a real daemon: inline, streamed, spooled and by path all give proofs snarkjs
accepts; paths are confined; streams are bounded by the key; the daemon keeps serving after every refusal."""

from __future__ import annotations

import json
import os

import grpc
import pytest
from daemon_helpers import Setup, foreground_daemon, free_port

import oracle
from snarkd.daemon.client import Client
from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.daemon.proto import snarkd_pb2_grpc as pb_grpc
from snarkd.errors import InputError


pytestmark = pytest.mark.slow  # daemons in subprocesses: the slow tier (pytest -m "not slow" leaves it out)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, chain_bn128):
    circ, wtns = chain_bn128
    tmp = tmp_path_factory.mktemp("transport")
    allowed = tmp / "witnesses"
    allowed.mkdir()
    s = Setup(tmp, free_port())
    with foreground_daemon(s, s.write(workers=2, preload={"chain": circ.zkey}, witness_dirs=[str(allowed)])) as proc:
        yield s, proc, circ, wtns, allowed
    assert not any(s.spool.glob(".token-*")), "the spool token outlived the daemon"


def snarkjs_ok(circ, tmp, reply) -> bool:
    ok = True
    for i, p in enumerate(reply.partitions):
        (tmp / f"proof{i}.json").write_text(json.dumps(p.proof))
        (tmp / f"public{i}.json").write_text(json.dumps(p.public))
        ok &= oracle.snarkjs_verify(circ.vk, tmp / f"public{i}.json", tmp / f"proof{i}.json")
    return ok


@pytest.mark.parametrize("transport", ["inline", "stream", "spool", "path", "auto"])
def test_every_transport_gives_proofs_snarkjs_accepts(daemon, tmp_path, transport):
    s, proc, circ, wtns, allowed = daemon
    local = allowed / "w.wtns"
    local.write_bytes(wtns.read_bytes())
    with Client(s.addr, timeout=120, transport=transport) as c:
        if transport == "path":
            reply = c.prove("chain", witness_paths=[str(local)] * 2)
        else:
            reply = c.prove("chain", witnesses=[wtns.read_bytes()] * 3)
        # same host, spool writable: auto takes the spool
        assert c.last_transport == ("spool" if transport == "auto" else transport)
    assert snarkjs_ok(circ, tmp_path, reply)
    assert local.exists(), "a witness named in witness_dirs is read in place, never removed"
    assert [f.name for f in s.spool.iterdir() if not f.name.startswith(".token-")] == [], "spooled files consumed"


def test_auto_sends_a_file_in_witness_dirs_by_path(daemon, tmp_path):
    s, proc, circ, wtns, allowed = daemon
    local = allowed / "auto.wtns"
    local.write_bytes(wtns.read_bytes())
    with Client(s.addr, timeout=120) as c:
        reply = c.prove("chain", witness_paths=[str(local)])
        assert c.last_transport == "path"
        other = tmp_path / "elsewhere.wtns"  # outside witness_dirs: hard-linked (or copied) into the spool
        other.write_bytes(wtns.read_bytes())
        reply2 = c.prove("chain", witness_paths=[str(other)])
        assert c.last_transport == "spool" and other.exists()
    assert reply.public == reply2.public and snarkjs_ok(circ, tmp_path, reply2)


def test_a_symlinked_witness_goes_into_the_spool_as_the_file_it_names(daemon, tmp_path):
    """Issue 33, finding 8 (seen with `snarkd bench` on the GPU machine): link(2) does not follow a symbolic
    link, so the spool got the link itself and the daemon refused it as outside its directories, failing
    every job. The client resolves it: the proof comes back, snarkjs accepts it, the link and file stay."""
    s, proc, circ, wtns, allowed = daemon
    real = tmp_path / "real.wtns"
    real.write_bytes(wtns.read_bytes())
    link = tmp_path / "link.wtns"
    link.symlink_to(real)
    with Client(s.addr, timeout=120) as c:
        reply = c.prove("chain", witness_paths=[str(link)])
        assert c.last_transport == "spool"
    assert snarkjs_ok(circ, tmp_path, reply) and link.is_symlink() and real.exists()


def test_paths_outside_the_rule_are_denied_without_saying_more(daemon, tmp_path):
    s, proc, circ, wtns, allowed = daemon
    (allowed / "escape.wtns").symlink_to(wtns)  # inside by name, outside after symlinks
    (tmp_path / "secret.wtns").write_bytes(wtns.read_bytes())
    stub = pb_grpc.ProverStub(grpc.insecure_channel(s.addr))
    messages = []
    for path in ("/etc/passwd", "/no/such/file.wtns", str(tmp_path / "secret.wtns"), str(allowed / "escape.wtns"),
                 str(allowed / ".." / "spool" / ".." / ".." / "x.wtns"), "relative.wtns"):
        with pytest.raises(grpc.RpcError) as e:
            stub.Prove(pb.ProveRequest(key_id="chain", witness_paths=[path]), timeout=30)
        assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED, (path, e.value.details())
        msg = e.value.details()
        assert "witness_dirs" in msg and "no such" not in msg and "magic" not in msg
        messages.append(msg.replace(path, "P"))
    assert len(set(messages)) == 1, "the answer must not depend on whether the file exists"
    os.mkfifo(allowed / "fifo.wtns")  # inside the rule but not a regular file: refused without blocking
    with pytest.raises(grpc.RpcError) as e:
        stub.Prove(pb.ProveRequest(key_id="chain", witness_paths=[str(allowed / "fifo.wtns")]), timeout=30)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "regular file" in e.value.details()
    with pytest.raises(grpc.RpcError) as e:  # inside the rule, a file that is not a witness: a clear input error
        (allowed / "junk.wtns").write_bytes(b"junk")
        stub.Prove(pb.ProveRequest(key_id="chain", witness_paths=[str(allowed / "junk.wtns")]), timeout=30)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "junk.wtns" in e.value.details()
    with Client(s.addr, timeout=120) as c:
        assert c.health() == "SERVING" and c.prove("chain", wtns.read_bytes()).public[1] == "3"


def test_the_spool_takes_only_what_clients_put_there(daemon):
    """Naming the spool's token file (which Status names) or any file not named as clients name theirs is refused
    like a path outside the rule, and removes nothing: the token stays, so clients keep finding the spool."""
    s, proc, circ, wtns, allowed = daemon
    stub = pb_grpc.ProverStub(grpc.insecure_channel(s.addr))
    token = next(s.spool.glob(".token-*"))
    other = s.spool / "not-a-client-name.wtns"
    other.write_bytes(wtns.read_bytes())
    try:
        for path in (token, other, s.spool / "sub" / ("0" * 32 + ".wtns")):
            with pytest.raises(grpc.RpcError) as e:
                stub.Prove(pb.ProveRequest(key_id="chain", witness_paths=[str(path)]), timeout=30)
            assert e.value.code() == grpc.StatusCode.PERMISSION_DENIED and "witness_dirs" in e.value.details()
        assert token.exists() and other.exists()
    finally:
        other.unlink()


def test_by_reference_witnesses_are_bounded_by_the_key_before_they_are_read(daemon):
    s, proc, circ, wtns, allowed = daemon
    big = allowed / "big.wtns"
    with open(big, "wb") as fh:
        fh.truncate(64 << 20)  # sparse: 64 MiB that no .wtns of this key can be
    stub = pb_grpc.ProverStub(grpc.insecure_channel(s.addr))
    with pytest.raises(grpc.RpcError) as e:
        stub.Prove(pb.ProveRequest(key_id="chain", witness_paths=[str(big)]), timeout=30)
    assert e.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "more than a .wtns of key 'chain'" in e.value.details()
    big.unlink()


def _stream(stub, chunks, timeout=30):
    return stub.ProveStream(iter(chunks), timeout=timeout)


def test_streams_are_bounded_and_checked(daemon):
    s, proc, circ, wtns, allowed = daemon
    data = wtns.read_bytes()
    stub = pb_grpc.ProverStub(grpc.insecure_channel(s.addr))
    req = pb.ProveRequest(key_id="chain")
    cases = [
        ([pb.ProveChunk(data=data)], "must start with a message that carries the request"),
        ([pb.ProveChunk(request=req)], "partition_bytes"),
        ([pb.ProveChunk(request=req, partition_bytes=[1 << 40])], "more than a .wtns of key 'chain' can be"),
        ([pb.ProveChunk(request=req, partition_bytes=[10] * 257)], "more than [limits] max_partitions (256)"),
        ([pb.ProveChunk(request=req, partition_bytes=[len(data)], data=data + b"x")], "more bytes than"),
        ([pb.ProveChunk(request=req, partition_bytes=[len(data)], data=data[:100])], "ended early"),
        ([pb.ProveChunk(request=req, partition_bytes=[len(data)]), pb.ProveChunk(request=req)], "request twice"),
        ([pb.ProveChunk(request=pb.ProveRequest(key_id="chain", witness=data), partition_bytes=[len(data)],
                        data=data)], "chunks only"),
        ([pb.ProveChunk(request=pb.ProveRequest(key_id="nope"), partition_bytes=[10])], "no key with id 'nope'"),
    ]
    for chunks, needle in cases:
        with pytest.raises(grpc.RpcError) as e:
            _stream(stub, chunks)
        assert e.value.code() in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
                                  grpc.StatusCode.RESOURCE_EXHAUSTED), needle
        assert needle in e.value.details(), (needle, e.value.details())
    # one good stream in many small chunks: a proof
    chunks = [pb.ProveChunk(request=req, partition_bytes=[len(data)])]
    chunks += [pb.ProveChunk(data=data[i : i + 1000]) for i in range(0, len(data), 1000)]
    reply = _stream(stub, chunks, 120)
    assert json.loads(reply.public_json)[1] == "3"


def test_client_refuses_a_spool_it_does_not_share(daemon):
    s, proc, circ, wtns, allowed = daemon
    with Client(s.addr, timeout=60, transport="spool") as c:
        c._paths = (None, [])  # as seen from another host
        with pytest.raises(Exception, match="shares no witness spool"):
            c.prove("chain", wtns.read_bytes())
    with pytest.raises(InputError, match="expected one of"):
        Client(s.addr, transport="carrier pigeon")
    assert os.path.isdir(s.spool)
