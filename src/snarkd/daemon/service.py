"""The gRPC servicer: request checking and error mapping around the Engine.

Every failure a client can cause becomes a gRPC status with a message that
names what was wrong (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, UNAVAILABLE);
only bugs become INTERNAL. A bad request never takes the daemon down.
"""

from __future__ import annotations

import json
import logging
import time
from functools import wraps

import grpc

from snarkd.daemon.metrics import DaemonMetrics
from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.daemon.proto import snarkd_pb2_grpc as pb_grpc
from snarkd.daemon.status import key_message, snapshot, status_reply
from snarkd.daemon.transport import Transport
from snarkd.engine import (CANCELLED, COMPLETED, FAILED, QUEUED, RUNNING, AlreadyExists, Engine, KeyStore, NotFound,
                           TooLarge, Unavailable)
from snarkd.errors import InputError, PermissionDenied

log = logging.getLogger("snarkd")

STATE = {QUEUED: pb.QUEUED, RUNNING: pb.RUNNING, COMPLETED: pb.COMPLETED, FAILED: pb.FAILED, CANCELLED: pb.CANCELLED}


class Abort(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def rpc(method):
    """Map our exceptions to gRPC statuses; log bugs with their traceback."""

    @wraps(method)
    def wrapper(self, request, context):
        try:
            return method(self, request, context)
        except Abort as exc:
            code, msg = exc.code, str(exc)
        except NotFound as exc:
            code, msg = grpc.StatusCode.NOT_FOUND, str(exc)
        except AlreadyExists as exc:
            code, msg = grpc.StatusCode.ALREADY_EXISTS, str(exc)
        except Unavailable as exc:
            code, msg = grpc.StatusCode.UNAVAILABLE, str(exc)
        except TooLarge as exc:
            code, msg = grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc)
        except PermissionDenied as exc:
            code, msg = grpc.StatusCode.PERMISSION_DENIED, str(exc)
        except InputError as exc:
            code, msg = grpc.StatusCode.INVALID_ARGUMENT, str(exc)
        except Exception as exc:
            log.exception("%s failed", method.__name__)
            code, msg = grpc.StatusCode.INTERNAL, f"internal error in {method.__name__}: {exc!r}"
        if code != grpc.StatusCode.INTERNAL:
            log.info("%s rejected: %s: %s", method.__name__, code.name, msg)
        context.abort(code, msg)

    return wrapper


def key_info(lk) -> pb.KeyInfo:
    return key_message(lk.info())


def prove_reply(job) -> pb.ProveReply:
    parts = []
    for p in job.partitions:
        r = p.result
        parts.append(pb.PartitionResult(
            index=p.index, proof_json=json.dumps(r.proof, indent=1), public_json=json.dumps(list(r.public), indent=1),
            timings_ms={k: float(v) for k, v in p.timings.items()},
            spans=[pb.Span(stage=s["stage"], worker=s["worker"], start=s["start"], end=s["end"]) for s in p.spans]))
    return pb.ProveReply(
        job_id=job.id,
        proof_json=parts[0].proof_json,
        public_json=parts[0].public_json,
        timings_ms={k: float(v) for k, v in job.timings.items()},
        partitions=parts,
    )


class ProverService(pb_grpc.ProverServicer):
    def __init__(self, engine: Engine, keys: KeyStore, info: dict, transport: Transport | None = None):
        self.engine = engine
        self.keys = keys
        self.info = info  # config path, fingerprint, listen, status_listen, started
        self.transport = transport or Transport(None, [])
        self.state = "starting"
        self.metrics = DaemonMetrics(engine, self.snapshot)

    def snapshot(self) -> dict:
        """The daemon's status now (status.py): what Status, /status and /metrics all show."""
        return snapshot(self)

    def _serving(self) -> None:
        if self.state == "starting":
            raise Unavailable("the daemon is starting (loading keys); wait for health SERVING")
        if self.state == "draining":
            raise Unavailable("the daemon is shutting down: it finishes in-flight proofs but takes no new work")

    # -- keys ---------------------------------------------------------------------------

    @rpc
    def LoadKey(self, request, context):
        self._serving()
        if not request.path:
            raise InputError("LoadKey needs a path to a .zkey")
        lk = self.keys.load(request.key_id, request.path, wasm=request.wasm_path)
        return pb.LoadKeyReply(key=key_info(lk))

    @rpc
    def UnloadKey(self, request, context):
        lk = self.keys.unload(request.key_id)
        return pb.UnloadKeyReply(key=key_info(lk))

    # -- proofs -------------------------------------------------------------------------

    def _submit(self, request, witnesses=None):
        """Queue the request's job; `witnesses` when they came another way than the request (a stream)."""
        self._serving()
        if not request.key_id:
            raise InputError("the request names no key id")
        if request.witness_paths:
            if witnesses is not None or request.witness or request.witnesses:
                raise InputError("give witnesses inline, by path or streamed, not several ways at once")
            witnesses = self.transport.map(list(request.witness_paths))
        return self.engine.submit(request.key_id, request.witness or None, request.job_id,
                                  witnesses=witnesses or list(request.witnesses), inputs=list(request.inputs_json),
                                  priority=request.priority)

    def _streamed(self, chunks):
        def n_vars(key_id):
            return self.keys.get(key_id).key.n_vars

        request, witnesses = self.transport.assemble(chunks, n_vars)
        if request.witness or request.witnesses or request.witness_paths or request.inputs_json:
            raise InputError("a witness stream carries its witnesses as chunks only")
        return self._submit(request, witnesses)

    def _result(self, job, context) -> pb.ProveReply:
        """Wait for the job; its reply, or the error its failure maps to."""
        while not job.done.wait(0.25):
            if not context.is_active():  # the client went away or cancelled
                self.engine.cancel(job.id, "cancelled: the client of Prove went away")
                return pb.ProveReply(job_id=job.id)
        if job.state == COMPLETED:
            return prove_reply(job)
        if job.state == FAILED and job.error_kind == "input":
            raise Abort(grpc.StatusCode.INVALID_ARGUMENT, job.error)
        if job.state == CANCELLED:
            raise Abort(grpc.StatusCode.CANCELLED, f"job {job.id}: {job.error}")
        raise Abort(grpc.StatusCode.INTERNAL, f"job {job.id}: {job.error}")

    @rpc
    def Prove(self, request, context):
        return self._result(self._submit(request), context)

    @rpc
    def Submit(self, request, context):
        return pb.SubmitReply(job_id=self._submit(request).id)

    @rpc
    def ProveStream(self, request_iterator, context):
        return self._result(self._streamed(request_iterator), context)

    @rpc
    def SubmitStream(self, request_iterator, context):
        return pb.SubmitReply(job_id=self._streamed(request_iterator).id)

    @rpc
    def Await(self, request, context):
        job = self.engine.get(request.job_id)
        deadline = time.monotonic() + request.timeout_s if request.timeout_s > 0 else None
        while not job.done.is_set():
            left = 0.25 if deadline is None else min(0.25, deadline - time.monotonic())
            if left <= 0 or not context.is_active():
                return pb.AwaitReply(state=pb.TIMEOUT, error=f"job {job.id} is {job.state.lower()}")
            job.done.wait(left)
        reply = pb.AwaitReply(state=STATE[job.state], error=job.error)
        if job.state == COMPLETED:
            reply.result.CopyFrom(prove_reply(job))
        return reply

    @rpc
    def Cancel(self, request, context):
        state, cancelled = self.engine.cancel(request.job_id)
        return pb.CancelReply(state=STATE[state], cancelled=cancelled)

    # -- introspection ------------------------------------------------------------------

    @rpc
    def Status(self, request, context):
        return status_reply(self.snapshot())

    @rpc
    def Metrics(self, request, context):
        return pb.MetricsReply(values=self.metrics.values(), text=self.metrics.text().decode())
