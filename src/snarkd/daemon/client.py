"""A Python client for a running snarkd daemon.

    from snarkd.daemon.client import Client
    with Client("127.0.0.1:9820", timeout=600) as c:
        reply = c.prove("my_circuit", open("witness.wtns", "rb").read())
        reply.proof, reply.public, reply.timings   # proof.json dict, public.json list, ms per phase

Witnesses travel the fastest way the daemon offers (`transport="auto"`), and `client.last_transport`
says which: "path" (a file the daemon may read in place: [transport] witness_dirs), "spool" (same host:
the file goes into the daemon's witness spool, hard-linked when it can be, and is mapped there, never
copied through gRPC), "stream" (chunks of 1 MiB, for big witnesses from another host) or "inline"
(small witnesses in the request itself). Force one with Client(addr, transport=...).

Failures raise SnarkdError subclasses carrying the gRPC code (`.code`):
bad requests (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, PERMISSION_DENIED,
RESOURCE_EXHAUSTED) are InputError (exit 3); an unreachable or shutting-down
daemon, or a refused token, is DaemonError (exit 5); a job the daemon refused because it cannot meet its
`deadline`, or one that expired, is RemoteDeadlineExceeded (exit 6).

A daemon on the network (docs/security.md):

    Client("prover.example:9820", tls_ca="ca.crt", token_file="token",
           tls_cert="client.crt", tls_key="client.key")   # the last two for mutual TLS

`prove` names its job (a random id unless given), so a caller whose connection broke
can fetch the result later with `await_(err.job_id)`. A job id given must keep to
snarkd.ids (letters, digits and _ . : -): checked here before anything is sent.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.daemon.proto import snarkd_pb2_grpc as pb_grpc
from snarkd.daemon.security import AUTH_HEADER, channel_credentials, read_token_file
from snarkd.engine.errors import DeadlineExceeded
from snarkd.errors import KIND_TRAILER, KINDS, DaemonError, InputError, SnarkdError, kind_for_grpc
from snarkd.ids import check_job_id, new_job_id

MAX_MESSAGE = 512 * 1024 * 1024
TRANSPORTS = ("auto", "path", "spool", "stream", "inline")
INLINE_MAX = 1 << 20  # auto: witnesses larger than this (in all) stream when the spool is out of reach
CHUNK = 1 << 20


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
        self.job_id = ""  # set by prove(): the job may go on in the daemon; Await fetches it


class RemoteDeadlineExceeded(DeadlineExceeded):
    """The daemon refused the job because its completion estimate passes the job's deadline (the estimate is in
    the message), or the job expired (its deadline passed). Not the client's own gRPC timeout."""

    def __init__(self, message: str, code: grpc.StatusCode):
        super().__init__(message)
        self.code = code
        self.job_id = ""


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
class AggregateResult:
    json: str  # the aggregate file's text, exactly as `snarkd aggregate` writes it
    n: int
    dev_srs: bool  # made with a development SRS: NOT SECURE FOR PRODUCTION
    timings: dict = field(default_factory=dict)  # ms: srs_load, check, aggregate, total


@dataclass
class AwaitResult:
    state: str  # QUEUED RUNNING COMPLETED FAILED CANCELLED EXPIRED TIMEOUT
    error: str = ""
    reply: ProveReply | None = None


def deadline_fields(deadline) -> dict:
    """A ProveRequest's deadline fields from what a caller gives: None (no deadline), seconds from now (a number
    > 0), or an absolute time (a datetime, or "@UNIX" seconds as the CLI's --deadline takes it)."""
    if deadline is None:
        return {}
    if isinstance(deadline, datetime):
        return {"deadline_unix": deadline.timestamp()}
    text = deadline.strip() if isinstance(deadline, str) else None
    try:
        value = float(text[1:] if text and text.startswith("@") else deadline)
    except (TypeError, ValueError):
        raise InputError(f"deadline: expected seconds from now (e.g. 30) or @UNIX_SECONDS, got {deadline!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"deadline: expected a finite time > 0, got {deadline!r}")
    return {"deadline_unix": value} if text and text.startswith("@") else {"deadline_s": value}


def _reply(m: pb.ProveReply) -> ProveReply:
    parts = [PartitionReply(p.index, json.loads(p.proof_json) if p.proof_json else {},
                            json.loads(p.public_json) if p.public_json else [], dict(p.timings_ms),
                            [{"stage": s.stage, "worker": s.worker, "start": s.start, "end": s.end} for s in p.spans])
             for p in m.partitions]
    return ProveReply(m.job_id, json.loads(m.proof_json) if m.proof_json else {},
                      json.loads(m.public_json) if m.public_json else [], dict(m.timings_ms), parts)


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise InputError(f"{path}: cannot read witness: {exc.strerror}") from None


def _chunks(request: pb.ProveRequest, data: list[bytes]):
    """The ProveChunk messages of a stream: the request and partition sizes, then the bytes."""
    yield pb.ProveChunk(request=request, partition_bytes=[len(d) for d in data])
    for d in data:
        view = memoryview(d)
        for i in range(0, len(view), CHUNK):
            yield pb.ProveChunk(data=view[i : i + CHUNK].tobytes())


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
    """transport: how witnesses travel ("auto", see above); tls_ca: trust this CA for the daemon's
    certificate (TLS; the system's roots when only tls_cert/tls_key are given); tls_cert/tls_key:
    the client's certificate (mutual TLS); token / token_file: the bearer token sent with every
    call; server_name: the name to check the daemon's certificate against, when it differs from
    the address's host."""

    def __init__(self, addr: str, timeout: float | None = None, transport: str = "auto", *,
                 tls_ca: str | None = None, tls_cert: str | None = None, tls_key: str | None = None,
                 token: str | None = None, token_file: str | None = None, server_name: str | None = None,
                 max_message: int = MAX_MESSAGE):
        if transport not in TRANSPORTS:
            raise InputError(f"witness transport {transport!r}: expected one of {', '.join(TRANSPORTS)}")
        self.addr = normalize_addr(addr)
        self.timeout = timeout
        self.transport = transport
        self.last_transport = ""  # how the last prove/submit sent its witnesses
        self._paths: tuple | None = None  # (spool or None, [witness_dirs]) as the daemon reports them
        if token_file:
            token = read_token_file(token_file)
        self.metadata = ((AUTH_HEADER, f"Bearer {token}"),) if token else None
        options = [("grpc.max_receive_message_length", max_message), ("grpc.max_send_message_length", max_message)]
        if tls_ca or tls_cert or tls_key:
            if server_name:
                options.append(("grpc.ssl_target_name_override", server_name))
            self.channel = grpc.secure_channel(self.addr, channel_credentials(tls_ca, tls_cert, tls_key), options)
        else:
            self.channel = grpc.insecure_channel(self.addr, options=options)
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
            return method(request, timeout=t, metadata=self.metadata)
        except grpc.RpcError as exc:
            raise self._convert(exc, t) from None

    def _convert(self, exc: grpc.RpcError, timeout) -> SnarkdError:
        """The daemon's error: its kind (the `snarkd-error-kind` trailer; for a status without one -- the
        transport's, a proxy's, an older daemon's -- the kind its code stands for, kind_for_grpc; our own timeout
        is a daemon error) gives the exit code, from the error model (snarkd/errors.py); the status code picks
        the class callers catch."""
        err = self._by_code(exc, timeout)
        kind = dict(exc.trailing_metadata() or ()).get(KIND_TRAILER) if hasattr(exc, "trailing_metadata") else None
        if kind not in KINDS:
            ours = exc.code() == grpc.StatusCode.DEADLINE_EXCEEDED and type(err) is RemoteDaemonError
            kind = DaemonError.kind if ours else kind_for_grpc(exc.code().name)
        err.kind, err.exit_code = kind, KINDS[kind].exit_code
        return err

    def _by_code(self, exc: grpc.RpcError, timeout) -> SnarkdError:
        code, details = exc.code(), exc.details() or ""
        if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.NOT_FOUND, grpc.StatusCode.ALREADY_EXISTS,
                    grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.PERMISSION_DENIED):
            return RemoteInputError(details, code)
        if code == grpc.StatusCode.UNAUTHENTICATED:
            return RemoteDaemonError(f"snarkd at {self.addr} refused the call: {details}", code)
        if code == grpc.StatusCode.UNAVAILABLE:
            return RemoteDaemonError(f"cannot reach snarkd at {self.addr}: {details}", code)
        if code == grpc.StatusCode.DEADLINE_EXCEEDED and details and details != "Deadline Exceeded":
            return RemoteDeadlineExceeded(f"snarkd at {self.addr}: {details}", code)  # the daemon's, not our timeout
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            return RemoteDaemonError(f"no reply from snarkd at {self.addr} within {timeout:g}s", code)
        if code in (grpc.StatusCode.CANCELLED, grpc.StatusCode.ABORTED):  # ABORTED: a key file changed in the daemon
            return RemoteDaemonError(f"snarkd at {self.addr}: {details or code.name.lower()}", code)
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
              *, priority: int = 0, witnesses: list | None = None, inputs: list | None = None,
              witness_paths: list | None = None, batch_verify: bool = False, deadline=None, lane: str = "") -> ProveReply:
        """One job: a witness (bytes), or several (witnesses=: bytes each; witness_paths=: .wtns files),
        one partition each; or inputs (dicts or JSON texts) for the daemon to compute witnesses from.
        The job gets an id here when none is given: a RemoteDaemonError carries it (.job_id), and the
        daemon keeps the result of a named job whose caller went away, for Await. batch_verify: the daemon
        verifies the job's proofs together, as one batch, instead of each on its own. deadline: seconds from
        now (a number) or an absolute time (a datetime, or deadline_field's "@UNIX"): the daemon refuses the job
        when it estimates it cannot end by then, and expires it when it does not (RemoteDeadlineExceeded).
        lane: the daemon's lane ([scheduler.lanes]) to run in ("": the token's, else "default")."""
        job_id = check_job_id(job_id) if job_id else new_job_id()
        try:
            r = self._job(self.stub.Prove, self.stub.ProveStream, key_id, job_id, priority, timeout, witness_bytes,
                          witnesses, witness_paths, inputs, batch_verify, deadline, lane)
        except (RemoteDaemonError, RemoteDeadlineExceeded) as exc:
            exc.job_id = job_id
            raise
        return _reply(r)

    def submit(self, key_id: str, witness_bytes: bytes | None = None, job_id: str = "", timeout: float | None = None,
               *, priority: int = 0, witnesses: list | None = None, inputs: list | None = None,
               witness_paths: list | None = None, batch_verify: bool = False, deadline=None, lane: str = "") -> str:
        """Queue a job (see prove); its id. deadline and lane as for prove."""
        if job_id:
            check_job_id(job_id)
        r = self._job(self.stub.Submit, self.stub.SubmitStream, key_id, job_id, priority, timeout, witness_bytes,
                      witnesses, witness_paths, inputs, batch_verify, deadline, lane)
        return r.job_id

    # -- the witness transport -------------------------------------------------------------

    def _job(self, unary, stream, key_id, job_id, priority, timeout, witness_bytes, witnesses, paths, inputs,
             batch_verify=False, deadline=None, lane=""):
        head = dict(key_id=key_id, job_id=job_id, priority=int(priority), batch_verify=bool(batch_verify),
                    lane=lane or "", **deadline_fields(deadline))
        if inputs:
            self.last_transport = "inputs"
            return self._call(unary, pb.ProveRequest(**head, inputs_json=[x if isinstance(x, str) else json.dumps(x)
                                                                          for x in inputs]), timeout)
        data = [bytes(witness_bytes)] if witness_bytes is not None else [bytes(w) for w in (witnesses or [])]
        paths = [str(p) for p in (paths or [])]
        if data and paths:
            raise InputError("give witnesses as bytes or as paths, not both")
        way = self._choose(data, paths)
        self.last_transport = way
        if way == "path":
            return self._call(unary, pb.ProveRequest(**head, witness_paths=[os.path.realpath(p) for p in paths]), timeout)
        if way == "spool":
            spooled = [self._spool_one(x) for x in (paths or data)]
            try:
                return self._call(unary, pb.ProveRequest(**head, witness_paths=[str(p) for p in spooled]), timeout)
            finally:  # the daemon removes what it mapped; this is for a request refused before that
                for p in spooled:
                    p.unlink(missing_ok=True)
        data = data or [_read(p) for p in paths]
        if way == "stream":
            return self._call(stream, _chunks(pb.ProveRequest(**head), data), timeout)
        return self._call(unary, pb.ProveRequest(**head, witnesses=data), timeout)

    def _daemon_paths(self) -> tuple:
        """(the spool, if this client shares the daemon's file system and may write there; witness_dirs)."""
        if self._paths is None:
            st = self._call(self.stub.Status, pb.StatusRequest(), 10)
            spool = Path(st.witness_spool) if st.witness_spool else None
            if spool is not None and not ((spool / f".token-{st.spool_token}").exists()
                                          and os.access(spool, os.W_OK | os.X_OK)):
                spool = None  # another host, another container, or another user's daemon
            self._paths = (spool, [Path(d) for d in st.witness_dirs] if spool is not None else [])
        return self._paths

    def _choose(self, data: list[bytes], paths: list[str]) -> str:
        if not data and not paths:
            raise InputError("the request has no witness (give witness bytes, witness_paths or inputs)")
        if self.transport != "auto":
            if self.transport in ("path", "spool") and self._daemon_paths()[0] is None:
                raise InputError(f"transport {self.transport!r}: the daemon at {self.addr} shares no witness spool "
                                 "with this client (another host, or its spool is not writable here)")
            if self.transport == "path" and not paths:
                raise InputError("transport 'path' needs witness_paths")
            return self.transport
        spool, dirs = self._daemon_paths()
        if paths and dirs and all(any(Path(os.path.realpath(p)).is_relative_to(d) for d in dirs) for p in paths):
            return "path"
        if spool is not None:
            return "spool"
        size = sum(map(len, data)) if data else sum(os.path.getsize(p) for p in paths)
        return "stream" if size > INLINE_MAX else "inline"

    def _spool_one(self, src) -> Path:
        """Put one witness (bytes, or a file: hard-linked when on the same file system) into the spool."""
        dst = self._daemon_paths()[0] / f"{uuid.uuid4().hex}.wtns"
        if isinstance(src, str):
            # link(2) does not follow a symbolic link: the spool would get the link itself, which the daemon
            # rightly refuses (it points outside its directories). The file it names goes in instead.
            src = os.path.realpath(src)
            try:
                os.link(src, dst)
                return dst
            except OSError:
                shutil.copyfile(src, dst)
                return dst
        fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            view = memoryview(src)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        return dst

    def await_(self, job_id: str, wait_s: float = 0.0, timeout: float | None = None) -> AwaitResult:
        """Wait for a job up to wait_s (0 = until it ends). state TIMEOUT: still going."""
        rpc_timeout = timeout if timeout is not None else (None if wait_s <= 0 else wait_s + 30)
        r = self._call(self.stub.Await, pb.AwaitRequest(job_id=job_id, timeout_s=wait_s), rpc_timeout)
        state = pb.JobState.Name(r.state)
        return AwaitResult(state, r.error, _reply(r.result) if r.HasField("result") else None)

    def cancel(self, job_id: str, timeout: float | None = None) -> tuple[str, bool]:
        r = self._call(self.stub.Cancel, pb.CancelRequest(job_id=job_id), timeout)
        return pb.JobState.Name(r.state), r.cancelled

    def list_jobs(self, states=(), key_id: str = "", limit: int = 0, timeout: float | None = None,
                  lane: str = "") -> list[dict]:
        """The caller's jobs (an admin token's: everyone's), newest first, as dicts (JobInfo's fields, state by
        name); states: names (QUEUED RUNNING COMPLETED FAILED CANCELLED EXPIRED) to keep, none: all."""
        codes = []
        for st in states:
            try:
                codes.append(pb.JobState.Value(str(st).upper()))
            except ValueError:
                raise InputError(f"state {st!r}: one of QUEUED RUNNING COMPLETED FAILED CANCELLED EXPIRED") from None
        r = self._call(self.stub.ListJobs, pb.ListJobsRequest(states=codes, key_id=key_id, limit=int(limit),
                                                                  lane=lane), timeout)
        return [to_dict(j) for j in r.jobs]

    # -- aggregation --------------------------------------------------------------------

    def aggregate(self, key_id: str, *, job_ids: list | None = None, proofs: list | None = None, srs_path: str = "",
                  timeout: float | None = None) -> AggregateResult:
        """One SnarkPack aggregate of n = 2^k proofs of key `key_id`: those of finished jobs (job_ids: each
        job's partitions in order), or given (proofs: (public, proof) pairs, JSON texts or objects). srs_path:
        an SRS file on the daemon's host (under its key directories); "" = its [aggregate] srs."""
        def text(x) -> str:
            return x if isinstance(x, str) else json.dumps(x)

        request = pb.AggregateRequest(key_id=key_id, srs_path=str(srs_path or ""), job_ids=list(job_ids or []),
                                      proofs=[pb.InlineProof(public_json=text(pub), proof_json=text(proof))
                                              for pub, proof in (proofs or [])])
        r = self._call(self.stub.Aggregate, request, timeout)
        return AggregateResult(r.aggregate_json, r.n, r.dev_srs, dict(r.timings_ms))

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
