"""One failure, one kind, at each of the three boundaries that translate the error model (src/snarkd/errors.py):
the daemon's gRPC answer (its status code and the `snarkd-error-kind` trailer, read raw and through Client), the
command line's exit code (`snarkd prove --addr`, in a subprocess; and `snarkd prove` without a daemon where
the failure is the CLI's own too), and a cluster front's `actor_error` on what an engine actor raised (the actor
in this process, its ProveError pickled as Ray would)."""

from __future__ import annotations

import pickle

import grpc
import pytest
from daemon_helpers import Setup, foreground_daemon, free_port, snarkd

from snarkd.daemon.client import Client
from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.daemon.proto import snarkd_pb2_grpc as pb_grpc
from snarkd.errors import KIND_TRAILER, KINDS
from snarkd.formats.wtns import parse_wtns, read_wtns, wtns_bytes

pytestmark = pytest.mark.slow  # a daemon in a subprocess: the slow tier


@pytest.fixture(scope="module")
def daemon(tmp_path_factory, chain_bn128):
    circ, wtns = chain_bn128
    s = Setup(tmp_path_factory.mktemp("daemon"), free_port())
    cfg = s.write(workers=1, preload={"chain": circ.zkey})
    with foreground_daemon(s, cfg):
        yield s, circ, wtns


def failures(wtns_path):
    """(name, key id, witness bytes, the kind every boundary must report, whether `snarkd prove` alone sees it)."""
    w = read_wtns(wtns_path)
    vals = w.to_ints()
    bad = list(vals)
    bad[2] = w.prime  # a value that is not canonical
    return [
        ("not canonical", "chain", wtns_bytes(w.prime, bad), "input", True),
        ("one value too many", "chain", wtns_bytes(w.prime, vals + [1]), "input", True),
        ("no such key", "nope", wtns_path.read_bytes(), "not_found", False),
    ]


def grpc_kind(addr, key_id, data) -> tuple[grpc.StatusCode, str]:
    with grpc.insecure_channel(addr) as ch:
        try:
            pb_grpc.ProverStub(ch).Prove(pb.ProveRequest(key_id=key_id, witness=data), timeout=60)
        except grpc.RpcError as exc:
            return exc.code(), dict(exc.trailing_metadata() or ()).get(KIND_TRAILER, "")
    raise AssertionError("the daemon proved a bad request")


def actor_kind(tmp_path, circ, key_id, data) -> str:
    pytest.importorskip("ray", reason="the cluster extra is not installed")
    from snarkd.cluster.actor import EngineActor, ProveError
    from snarkd.cluster.front import actor_error
    from snarkd.cluster.keys import spec_of
    from snarkd.config import EngineConfig
    from snarkd.engine import KeyStore

    lk = KeyStore().load("chain", str(circ.zkey))
    spec = spec_of(lk).plain()
    lk.key.close()
    settings = {**EngineConfig(synthesis_workers=1, threads=1, workers_per_device=1).__dict__, "wasm_cache": "off"}
    actor = EngineActor("a1@test", settings, key_cache=str(tmp_path / "cache"))
    try:
        actor.load_key("chain", spec)
        try:
            witness = parse_wtns(data)
        except Exception as exc:  # noqa: BLE001 - the front parses a witness before an actor sees it
            return actor_error(ProveError.of(exc)).kind
        with pytest.raises(ProveError) as raised:
            actor.prove(key_id, "t.0.1", witness=witness)
        return actor_error(pickle.loads(pickle.dumps(raised.value))).kind
    finally:
        actor.stop(0)


def test_the_same_failure_has_the_same_kind_at_every_boundary(daemon, tmp_path):
    s, circ, wtns = daemon
    for name, key_id, data, kind, local in failures(wtns):
        cls = KINDS[kind]
        code, trailer = grpc_kind(s.addr, key_id, data)
        assert (code.name, trailer) == (cls.grpc_code, kind), name
        with Client(s.addr, timeout=60) as c, pytest.raises(Exception) as raised:
            c.prove(key_id, data)
        assert (raised.value.kind, raised.value.exit_code, raised.value.code) == (kind, cls.exit_code, code), name
        bad = tmp_path / "bad.wtns"
        bad.write_bytes(data)
        out = [tmp_path / "proof.json", tmp_path / "public.json"]
        r = snarkd("prove", "--addr", s.addr, "--key", key_id, bad, *out)
        assert r.returncode == cls.exit_code, (name, r.returncode, r.stderr)
        if local:
            r = snarkd("prove", circ.zkey, bad, *out)
            assert r.returncode == cls.exit_code, (name, r.returncode, r.stderr)
        assert actor_kind(tmp_path, circ, key_id, data) == kind, name
