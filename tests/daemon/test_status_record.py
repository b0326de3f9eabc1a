"""The daemon's status on a GPU engine, without a GPU: a CudaBackend whose GpuDevice holds keys (one with its
bases streamed from the host) through the Status RPC, KeyInfo for LoadKey, GET /status and /metrics.

A real daemon on a GPU (tests/gpu/test_gpu_daemon.py) runs where CuPy sees one; this is its CPU twin for the
status path, where `streamed` once reached `pb.KeyDevice(**d)` and every GPU daemon's Status failed.
"""

from __future__ import annotations

import json
import threading
import typing
from dataclasses import fields

import pytest
from google.protobuf.descriptor import FieldDescriptor as F

from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.daemon.service import ProverService
from snarkd.daemon.status import MESSAGES, as_json
from snarkd.engine import Engine, EngineConfig, KeyStore
from snarkd.engine.status import KeyDevice
from snarkd.gpu.device import GpuDevice
from snarkd.gpu.resident import Residency, ResidentKey
from snarkd.prover.cuda import CudaBackend


class Aborted(Exception):
    pass


class Context:
    """What @rpc asks of a gRPC servicer context."""

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    def invocation_metadata(self):
        return ()

    def set_trailing_metadata(self, metadata):  # the error's kind (snarkd/errors.py)
        self.trailer = dict(metadata)

    def abort(self, code, message):
        raise Aborted(f"{code.name}: {message}")


class Clock:
    def seconds(self) -> float:
        return 1.5


def fake_gpu(index: int = 0) -> CudaBackend:
    """A CudaBackend on a GpuDevice made without CuPy: the real residency code over keys put there by hand."""
    dev = GpuDevice.__new__(GpuDevice)
    dev.index, dev.clock, dev._lock, dev._keys, dev._domains = index, Clock(), threading.RLock(), {}, {}
    be = CudaBackend.__new__(CudaBackend)
    be.dev, be.name, be.msm_tables, be.msm_c, be.stream_bases = dev, f"cuda:{index}", "auto", 0, "auto"
    return be


def put_resident(be: CudaBackend, key, nbytes: int, streamed: bool) -> None:
    """The key's arrays on the fake device as ResidentKey keeps them (bases left on the host when streamed)."""
    rk = ResidentKey.__new__(ResidentKey)
    zk = key.zkey
    rk.curve, rk.device_id, rk.nbytes, rk.tables = zk.curve.native, be.dev.index, nbytes, {}
    rk.host = object() if streamed else None  # a streamed key's HostBases (page-locked sections), else none
    rk.host_csr, rk._host_id = None, None
    be.dev._keys[id(zk)] = rk


@pytest.fixture
def gpu_service(monkeypatch, chain_bn128):
    circ, wtns = chain_bn128
    gpus = [fake_gpu(0), fake_gpu(1)]
    monkeypatch.setattr("snarkd.engine.engine.resolve_devices", lambda config: gpus)
    keys = KeyStore("/")
    engine = Engine(EngineConfig(synthesis_workers=1, memory_budget="64MiB"), keys)
    lk = keys.load("chain", str(circ.zkey))
    keys.load("other", str(circ.zkey))
    put_resident(gpus[0], lk.key, 1 << 20, streamed=True)
    put_resident(gpus[1], lk.key, 3 << 20, streamed=False)
    info = {"started": 0.0, "config_path": "<test>", "fingerprint": "f" * 16, "listen": "127.0.0.1:1"}
    service = ProverService(engine, keys, info)
    yield service
    keys.close_all()


def test_status_of_a_gpu_engine_carries_each_devices_residency(gpu_service):
    reply = gpu_service.Status(pb.StatusRequest(), Context())
    keys = {k.id: k for k in reply.keys}
    devices = {d.device: d for d in keys["chain"].devices}
    assert set(devices) == {"cuda:0", "cuda:1"} and not keys["other"].devices
    assert (devices["cuda:0"].bytes, devices["cuda:0"].streamed) == (1 << 20, True)
    assert (devices["cuda:1"].bytes, devices["cuda:1"].streamed, devices["cuda:1"].tables) == (3 << 20, False, False)
    assert list(reply.devices) == ["cuda:0", "cuda:1"] and reply.device_busy_s["cuda:1"] == 0.0
    engine = json.loads(reply.engine_json)
    assert [d["kernel_busy_s"] for d in engine["devices"]] == [1.5, 1.5]
    assert engine["keys"]["resident"] == {"host": 2, "cuda:0": 1, "cuda:1": 1}
    assert engine["keys"]["resident_bytes"]["cuda:1"] == 3 << 20


def test_http_status_and_metrics_show_the_same_residency(gpu_service):
    snap = json.loads(json.dumps(as_json(gpu_service.snapshot())))  # GET /status
    chain = next(k for k in snap["keys"] if k["id"] == "chain")
    assert {d["device"]: d["streamed"] for d in chain["devices"]} == {"cuda:0": True, "cuda:1": False}
    text = gpu_service.metrics.text().decode()
    assert 'snarkd_key_resident{key="chain",place="cuda:0"} 1.0' in text
    assert 'snarkd_key_resident_bytes{place="cuda:1"} 3.145728e+06' in text
    assert 'snarkd_device_kernel_busy_seconds_total{device="cuda:0"} 1.5' in text


def test_load_and_unload_key_replies_on_a_gpu_engine(gpu_service, chain_bn128):
    circ, _ = chain_bn128
    gpu_service.state = "serving"
    loaded = gpu_service.LoadKey(pb.LoadKeyRequest(key_id="third", path=str(circ.zkey)), Context())
    assert loaded.key.id == "third" and loaded.key.curve == "bn128" and loaded.key.resident
    gone = gpu_service.UnloadKey(pb.UnloadKeyRequest(key_id="chain"), Context())
    assert gone.key.id == "chain"



PY_TYPES = {F.TYPE_STRING: str, F.TYPE_BOOL: bool, F.TYPE_DOUBLE: float, F.TYPE_FLOAT: float}


@pytest.mark.parametrize("record", list(MESSAGES), ids=lambda r: r.__name__)
def test_each_record_and_its_message_have_the_same_fields(record):
    """A field on one side only fails here: a record field its message lacks (as `streamed` once was), or a
    message field no record fills. Scalars also agree in type (ints: any integer type of the proto)."""
    message, derived, carried = MESSAGES[record]
    hints = typing.get_type_hints(record)
    ours = {f.name for f in fields(record)} - set(carried)
    theirs = {f.name for f in message.DESCRIPTOR.fields} - set(derived)
    assert ours - theirs == set(), f"{record.__name__} fields missing from the proto's {message.DESCRIPTOR.name}"
    assert theirs - ours == set(), f"{message.DESCRIPTOR.name} fields no {record.__name__} field fills"
    for f in message.DESCRIPTOR.fields:
        if f.name in derived or f.message_type is not None:
            continue
        want = PY_TYPES.get(f.type, int)
        have = hints[f.name]
        if f.is_repeated:
            assert typing.get_origin(have) is list and typing.get_args(have) == (want,), (f.name, have)
        else:
            assert have is want, (record.__name__, f.name, have, want)


def test_a_devices_residency_is_a_key_device_without_its_name():
    assert [f.name for f in fields(KeyDevice)] == ["device"] + [f.name for f in fields(Residency)]
