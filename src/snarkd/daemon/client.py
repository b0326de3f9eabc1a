"""A Python client for a running snarkd daemon.

    from snarkd.daemon.client import Client
    with Client("127.0.0.1:9820", timeout=600) as c:
        reply = c.prove("my_circuit", open("witness.wtns", "rb").read())
        reply.proof, reply.public, reply.timings   # proof.json dict, public.json list, ms per phase

Failures raise SnarkdError subclasses carrying the gRPC code (`.code`):
bad requests (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS) are InputError
(exit 3); an unreachable or shutting-down daemon is DaemonError (exit 5).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.daemon.proto import snarkd_pb2_grpc as pb_grpc
from snarkd.errors import DaemonError, InputError, SnarkdError

MAX_MESSAGE = 512 * 1024 * 1024


class RemoteInputError(InputError):
    """The daemon rejected the request (bad witness, unknown key id, ...)."""

    def __init__(self, message: str, code: grpc.StatusCode):
        super().__init__(message)
        self.code = code


class RemoteDaemonError(DaemonError):
    """The daemon could not be reached, is shutting down, or cancelled the job."""

    def __init__(self, message: str, code: grpc.StatusCode):
        super().__init__(message)
        self.code = code


class RemoteInternalError(SnarkdError):
    def __init__(self, message: str, code: grpc.StatusCode):
        super().__init__(message)
        self.code = code


@dataclass
class PartitionReply:
    index: int
    proof: dict
    public: list
    timings: dict = field(default_factory=dict)  # phase -> ms
    spans: list = field(default_factory=list)  # {"stage", "worker", "start", "end"} (Unix seconds)


@dataclass
class ProveReply:
    job_id: str
    proof: dict
    public: list
    timings: dict = field(default_factory=dict)  # phase -> ms (plus queue_wait, total)
    partitions: list = field(default_factory=list)  # PartitionReply per partition


@dataclass
class AwaitResult:
    state: str  # QUEUED RUNNING COMPLETED FAILED CANCELLED TIMEOUT
    error: str = ""
    reply: ProveReply | None = None


def _reply(m: pb.ProveReply) -> ProveReply:
    parts = [PartitionReply(p.index, json.loads(p.proof_json) if p.proof_json else {},
                            json.loads(p.public_json) if p.public_json else [], dict(p.timings_ms),
                            [{"stage": s.stage, "worker": s.worker, "start": s.start, "end": s.end} for s in p.spans])
             for p in m.partitions]
    return ProveReply(m.job_id, json.loads(m.proof_json) if m.proof_json else {},
                      json.loads(m.public_json) if m.public_json else [], dict(m.timings_ms), parts)


def _request(key_id, witness_bytes, job_id, priority, witnesses, inputs) -> pb.ProveRequest:
    return pb.ProveRequest(key_id=key_id, witness=bytes(witness_bytes or b""), job_id=job_id, priority=int(priority),
                           witnesses=[bytes(w) for w in (witnesses or [])],
                           inputs_json=[x if isinstance(x, str) else json.dumps(x) for x in (inputs or [])])


def to_dict(msg) -> dict:
    """A message as plain Python values (ints stay ints, unlike MessageToDict)."""
    out = {}
    for f in msg.DESCRIPTOR.fields:
        v = getattr(msg, f.name)
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            out[f.name] = dict(v)
        elif f.message_type is not None:
            out[f.name] = [to_dict(x) for x in v] if _repeated(f) else to_dict(v)
        elif f.enum_type is not None:
            out[f.name] = [f.enum_type.values_by_number[x].name for x in v] if _repeated(f) \
                else f.enum_type.values_by_number[v].name
        else:
            out[f.name] = list(v) if _repeated(f) else v
    return out


def _repeated(f) -> bool:
    return getattr(f, "is_repeated", None) if hasattr(f, "is_repeated") else f.label == f.LABEL_REPEATED


def normalize_addr(addr: str) -> str:
    addr = str(addr).strip()
    if addr.startswith(("unix:", "unix-abstract:", "dns:", "ipv4:", "ipv6:")):
        return addr
    if addr.startswith("/"):
        return f"unix:{addr}"
    if ":" not in addr:
        raise InputError(f"daemon address {addr!r} is not HOST:PORT or unix:PATH")
    return addr


class Client:
    def __init__(self, addr: str, timeout: float | None = None):
        self.addr = normalize_addr(addr)
        self.timeout = timeout
        self.channel = grpc.insecure_channel(self.addr, options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE),
            ("grpc.max_send_message_length", MAX_MESSAGE),
        ])
        self.stub = pb_grpc.ProverStub(self.channel)
        self.health_stub = health_pb2_grpc.HealthStub(self.channel)

    # -- plumbing ---------------------------------------------------------------------

    def close(self) -> None:
        self.channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _call(self, method, request, timeout: float | None = None):
        t = timeout if timeout is not None else self.timeout
        try:
            return method(request, timeout=t)
        except grpc.RpcError as exc:
            raise self._convert(exc, t) from None

    def _convert(self, exc: grpc.RpcError, timeout) -> SnarkdError:
        code, details = exc.code(), exc.details() or ""
        if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND,
                    grpc.StatusCode.ALREADY_EXISTS, grpc.StatusCode.FAILED_PRECONDITION):
            return RemoteInputError(details, code)
        if code == grpc.StatusCode.UNAVAILABLE:
            return RemoteDaemonError(f"cannot reach snarkd at {self.addr}: {details}", code)
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return RemoteDaemonError(f"no reply from snarkd at {self.addr} within {timeout:g}s", code)
        if code == grpc.StatusCode.CANCELLED:
            return RemoteDaemonError(f"snarkd at {self.addr}: {details or 'cancelled'}", code)
        if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
            return RemoteInputError(f"snarkd at {self.addr}: {details}", code)
        return RemoteInternalError(f"snarkd at {self.addr}: {code.name}: {details}", code)

    # -- keys ---------------------------------------------------------------------------

    def load_key(self, key_id: str, path: str, timeout: float | None = None, wasm: str = "") -> dict:
        r = self._call(self.stub.LoadKey, pb.LoadKeyRequest(key_id=key_id, path=str(path), wasm_path=str(wasm or "")),
                       timeout)
        return to_dict(r.key)

    def unload_key(self, key_id: str, timeout: float | None = None) -> dict:
        r = self._call(self.stub.UnloadKey, pb.UnloadKeyRequest(key_id=key_id), timeout)
        return to_dict(r.key)

    # -- proofs -------------------------------------------------------------------------

    def prove(self, key_id: str, witness_bytes: bytes | None = None, job_id: str = "", timeout: float | None = None,
              *, priority: int = 0, witnesses: list | None = None, inputs: list | None = None) -> ProveReply:
        """One job: a witness, or several (witnesses=, one partition each), or inputs (dicts or JSON texts)."""
        r = self._call(self.stub.Prove, _request(key_id, witness_bytes, job_id, priority, witnesses, inputs), timeout)
        return _reply(r)

    def submit(self, key_id: str, witness_bytes: bytes | None = None, job_id: str = "", timeout: float | None = None,
               *, priority: int = 0, witnesses: list | None = None, inputs: list | None = None) -> str:
        r = self._call(self.stub.Submit, _request(key_id, witness_bytes, job_id, priority, witnesses, inputs), timeout)
        return r.job_id

    def await_(self, job_id: str, wait_s: float = 0.0, timeout: float | None = None) -> AwaitResult:
        """Wait for a job up to wait_s (0 = until it ends). state TIMEOUT: still going."""
        rpc_timeout = timeout if timeout is not None else (None if wait_s <= 0 else wait_s + 30)
        r = self._call(self.stub.Await, pb.AwaitRequest(job_id=job_id, timeout_s=wait_s), rpc_timeout)
        state = pb.JobState.Name(r.state)
        return AwaitResult(state, r.error, _reply(r.result) if r.HasField("result") else None)

    def cancel(self, job_id: str, timeout: float | None = None) -> tuple[str, bool]:
        r = self._call(self.stub.Cancel, pb.CancelRequest(job_id=job_id), timeout)
        return pb.JobState.Name(r.state), r.cancelled

    # -- introspection ------------------------------------------------------------------

    def status(self, timeout: float | None = None) -> dict:
        r = self._call(self.stub.Status, pb.StatusRequest(), timeout if timeout is not None else 10)
        return to_dict(r)

    def metrics(self, timeout: float | None = None) -> dict:
        r = self._call(self.stub.Metrics, pb.MetricsRequest(), timeout if timeout is not None else 10)
        return {"values": dict(r.values), "text": r.text}

    def health(self, service: str = "", timeout: float | None = None) -> str:
        """"SERVING", "NOT_SERVING", ... (raises RemoteDaemonError when unreachable)."""
        r = self._call(self.health_stub.Check, health_pb2.HealthCheckRequest(service=service),
                       timeout if timeout is not None else 5)
        return health_pb2.HealthCheckResponse.ServingStatus.Name(r.status)

    def wait_serving(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        last: Exception | None = None
        while time.monotonic() < deadline:
            try:
                if self.health(timeout=2) == "SERVING":
                    return
            except SnarkdError as exc:
                last = exc
            time.sleep(0.05)
        raise DaemonError(f"snarkd at {self.addr} not SERVING after {timeout:g}s" + (f": {last}" if last else ""))
