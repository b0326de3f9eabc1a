"""The gRPC servicer: request checking and error mapping around the Engine.

Every failure a client can cause becomes a gRPC status with a message that
names what was wrong (INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS, UNAVAILABLE,
RESOURCE_EXHAUSTED naming the limit, UNAUTHENTICATED, PERMISSION_DENIED naming
the rule, DEADLINE_EXCEEDED with the completion estimate or the job's expiry); only
bugs become INTERNAL. A bad request never takes the daemon down.

Each method declares the role it needs (`@rpc` = prove, `@rpc(role=ADMIN)`); the
Gate (security.py) names the caller. With tokens on, a job belongs to the token
that submitted it: another prove token cannot await, cancel or list it (admin can),
and job ids are per token (`JobIds`): two tokens may each name a job "j1", and no
answer tells one token whether an id is another's.
Accepted jobs are journaled (journal.py) before the client hears their id or result.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii
import logging
import os
import threading
import time
from concurrent.futures import CancelledError, wait
from functools import wraps

import grpc
from google.protobuf.message import DecodeError

from snarkd.daemon.admission import Admission, ClientQuota, JobIds, shown
from snarkd.daemon.aggregation import Aggregator, Item
from snarkd.daemon.journal import Journal, Row
from snarkd.daemon.metrics import DaemonMetrics
from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.daemon.proto import snarkd_pb2_grpc as pb_grpc
from snarkd.daemon.security import ADMIN, PROVE, Gate, Principal
from snarkd.daemon.status import DaemonStatus, key_message, prover_view, snapshot, status_reply
from snarkd.daemon.transport import Transport
from snarkd.engine import CANCELLED, COMPLETED, FAILED, QUEUED, RUNNING, Busy, KeyStore, NotFound, Unavailable
from snarkd.engine.contract import ProvingEngine
from snarkd.engine.errors import Cancelled, Expired, KeyChanged, NotReady
from snarkd.engine.jobs import EXPIRED
from snarkd.engine.jobtable import no_such_job
from snarkd.errors import KIND_TRAILER, DaemonError, InputError, SnarkdError, error_class, grpc_code_of, kind_of, rebuild
from snarkd.formats import json_text
from snarkd.ids import KEY_ID_RULE, is_job_id, is_key_id

log = logging.getLogger("snarkd")

STATE = {QUEUED: pb.QUEUED, RUNNING: pb.RUNNING, COMPLETED: pb.COMPLETED, FAILED: pb.FAILED, CANCELLED: pb.CANCELLED,
         EXPIRED: pb.EXPIRED}
STATE_NAME = {v: k for k, v in STATE.items()}
MAX_DETAILS = 2000  # characters of a status message: it travels in an HTTP/2 trailer (limit ~8 KiB)
RESUMES = ("the daemon is shutting down before job {id} finished; the job is journaled and runs again when the "
           "daemon restarts: Await it then")


def rpc(method=None, *, role: str = PROVE):
    """Check the caller's role, then answer our errors with the gRPC status their class carries (snarkd/errors.py)
    and their kind in the `snarkd-error-kind` trailer; anything else is a bug: INTERNAL, logged with its
    traceback. `@rpc` needs the prove role, `@rpc(role=ADMIN)` admin. The caller is `self.caller()` inside."""
    if method is None:
        return lambda m: rpc(m, role=role)

    @wraps(method)
    def wrapper(self, request, context):
        who = None
        try:
            self._calls.who = who = self.gate.principal(context, role)
            if isinstance(request, Malformed):
                raise request.error()
            if not hasattr(request, "DESCRIPTOR"):  # a client stream: an iterator of messages
                request = _checked(request)
            return method(self, request, context)
        except Exception as exc:  # noqa: BLE001 - every error answers with a status; only bugs are INTERNAL
            kind, code = kind_of(exc), grpc.StatusCode[grpc_code_of(exc)]
            msg = str(exc)
            if code == grpc.StatusCode.INTERNAL and not getattr(exc, "rebuilt", False):  # raised here: a bug
                log.exception("%s failed", method.__name__)
                msg = f"internal error in {method.__name__}: {exc!r}"
        finally:
            self._calls.who = None
        if who is None or not who.may(ADMIN):  # a prover learns no host paths (issue 33, finding 6)
            msg = relative_paths(msg, getattr(self.keys, "rule", None))
        if len(msg) > MAX_DETAILS:  # a message echoing a huge field would not fit the trailer: the call would hang
            msg = msg[: MAX_DETAILS - 40] + f"... ({len(msg)} characters, cut)"
        if code != grpc.StatusCode.INTERNAL:
            log.info("%s rejected: %s: %s", method.__name__, code.name, msg)
        context.set_trailing_metadata(((KIND_TRAILER, kind),))
        context.abort(code, msg)

    return wrapper


def relative_paths(msg: str, rule) -> str:
    """msg with the key directories' absolute prefixes taken off (a .wasm or SRS path then reads relative to
    [keys] param_cache or allowed_dirs, as a client names it): what callers without the admin role are told."""
    for root in sorted(getattr(rule, "roots", ()) or (), key=len, reverse=True):
        if root != os.sep:
            msg = msg.replace(root.rstrip(os.sep) + os.sep, "")
    return msg


class Malformed:
    """A request refused from its bytes (by `lenient`): not the message the method takes, or, given `refused`,
    refused before it was decoded (an oversized inline witness). Keeps the error's (kind, message) only, as the
    error model sends it across a boundary: an exception object would keep the request's bytes alive through
    its traceback's frames."""

    def __init__(self, cls, exc: Exception, refused: SnarkdError | None = None):
        self.kind, self.message = refused.wire() if refused is not None else \
            (InputError.kind, f"the request is not a valid {cls.DESCRIPTOR.full_name} message: {exc}")

    def error(self) -> SnarkdError:
        return rebuild(self.kind, self.message, crossed=False)


def lenient(cls, precheck=None):
    """The method's deserializer: undecodable bytes become a Malformed for @rpc; precheck(data) may refuse the
    request from its wire bytes before protobuf decodes (copies) it."""
    def decode(data: bytes):
        try:
            refused = precheck(data) if precheck is not None else None
            if refused is not None:
                return Malformed(cls, refused, refused)
            return cls.FromString(data)
        except Exception as exc:  # noqa: BLE001 - DecodeError, RuntimeWarning-as-error, ...: the client's bytes
            return Malformed(cls, exc)
    return decode


def add_prover_service(servicer, server) -> None:
    """pb_grpc.add_ProverServicer_to_server, but undecodable requests reach @rpc (INVALID_ARGUMENT)
    instead of failing in grpc's deserializer as INTERNAL "Exception deserializing request!"."""

    class Capture:
        def add_generic_rpc_handlers(self, handlers):
            pass

        def add_registered_method_handlers(self, name, handlers):
            self.name, self.handlers = name, handlers

    cap = Capture()
    pb_grpc.add_ProverServicer_to_server(servicer, cap)
    handlers = {}
    for method, h in cap.handlers.items():
        cls = METHOD_REQUESTS.get(method)
        check = servicer.admission.inline_precheck if method in ("Prove", "Submit") else None
        handlers[method] = h._replace(request_deserializer=lenient(cls, check)) if cls is not None else h
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(cap.name, handlers),))
    server.add_registered_method_handlers(cap.name, handlers)


METHOD_REQUESTS = {m.name: getattr(pb, m.input_type.name) for m in pb.DESCRIPTOR.services_by_name["Prover"].methods}


def _checked(messages):
    """A client stream's messages, each decoded (or InputError naming the bad one)."""
    for i, m in enumerate(messages):
        if isinstance(m, Malformed):
            raise InputError(f"message {i} of the stream: {m.message}")
        yield m


def job_info(job, client: str = "") -> pb.JobInfo:
    """A job the engine holds, for ListJobs; client: its submitter, shown to admin callers only."""
    finished = job.submitted_wall + (job.finished - job.submitted) if job.finished else 0.0
    return pb.JobInfo(job_id=shown(job), key_id=job.key.id, state=STATE.get(job.state, 0), priority=job.priority,
                      partitions=len(job.partitions), done=job.n_done, submitted_unix=job.submitted_wall,
                      finished_unix=finished, deadline_unix=job.deadline_wall, error=job.error, client=client,
                      lane=job.lane, weight=job.weight)


def key_info(lk) -> pb.KeyInfo:
    return key_message(lk.status())


def public_json(values: list[str]) -> str:
    """json.dumps(list(values), indent=1) for a list of strings (public.json), with json's C string encoder: an
    indent sends json.dumps to its pure-Python encoder, which for a SHA-256 proof's 256 values held the GIL ~4% of
    the time the daemon's threads held it at j = 32 (bench/results/h200-round14)."""
    values = list(values)
    return "[\n " + ",\n ".join(map(encode_basestring_ascii, values)) + "\n]" if values else "[]"


def prove_reply(job) -> pb.ProveReply:
    parts = []
    for p in job.partitions:
        r = p.result
        parts.append(pb.PartitionResult(
            index=p.index, proof_json=json.dumps(r.proof, indent=1), public_json=public_json(r.public),
            timings_ms={k: float(v) for k, v in p.timings.items()},
            spans=[pb.Span(stage=s["stage"], worker=s["worker"], start=s["start"], end=s["end"]) for s in p.spans]))
    return pb.ProveReply(
        job_id=shown(job),
        proof_json=parts[0].proof_json,
        public_json=parts[0].public_json,
        timings_ms={k: float(v) for k, v in job.timings.items()},
        partitions=parts,
    )


class ProverService(pb_grpc.ProverServicer):
    def __init__(self, engine: ProvingEngine, keys: KeyStore, info: dict, transport: Transport | None = None, *,
                 gate: Gate | None = None, journal: Journal | None = None, max_per_client: int = 1 << 30,
                 aggregator: Aggregator | None = None):
        self.engine = engine
        self.keys = keys
        self.info = info  # config path, fingerprint, listen, status_listen, started
        self.transport = transport or Transport(None, [])
        self.state = "starting"
        self.gate = gate or Gate()
        self.journal = journal
        self.quota = ClientQuota(max_per_client)
        self._calls = threading.local()
        self._user_cancelled: set[str] = set()  # ended by Cancel or a departed Prove client, not by a shutdown
        self.ids = JobIds(scoped=self.gate.tokens is not None)
        self.admission = Admission(engine, keys, self.transport, journal, self.quota, self.ids)
        for _, who in getattr(self.gate.tokens, "entries", ()):  # a token bound to a lane not configured: at start
            if who.lane:
                try:
                    engine.lane(who.lane)
                except InputError as exc:
                    raise DaemonError(f"[daemon] token_file: token {who.name!r}: {exc}") from None
        self.metrics = DaemonMetrics(engine, self.snapshot)
        engine.observers.append(self)
        self.aggregator = aggregator or Aggregator(rule=keys.rule)  # the Aggregate RPC's worker threads
        self.aggregator.observe = self.metrics.on_aggregation
        self.metrics.aggregations_running.set_function(lambda: self.aggregator.running)

    def snapshot(self) -> DaemonStatus:
        """The daemon's status now (status.py): what Status, /status and /metrics all show."""
        return snapshot(self)

    def caller(self) -> Principal:
        """Who made the call being served (set by @rpc on this thread)."""
        return self._calls.who

    def _serving(self) -> None:
        if self.state == "starting":
            raise Unavailable("the daemon is starting (loading keys); wait for health SERVING")
        if self.state == "draining":
            raise Unavailable("the daemon is shutting down: it finishes in-flight proofs but takes no new work")

    # -- engine observer (called once the engine's lock is let go: engine/jobtable.Deferring) -----

    def on_partition(self, part) -> None:
        pass

    def on_job(self, job) -> None:
        self.quota.release(job.id)
        resumes = self._resumes(job)
        self._user_cancelled.discard(job.id)
        if self.journal is None or resumes:
            return  # resumes: stays QUEUED in the journal, re-run after the next start
        result = (lambda: prove_reply(job).SerializeToString()) if job.state == COMPLETED else None
        self.journal.finish(job.id, job.state, job.error, job.error_kind, result)

    def _resumes(self, job) -> bool:
        """A job the shutdown cancelled (drain_timeout): journaled, so it runs again after a restart."""
        return (self.journal is not None and self.journal.stopping and job.state == CANCELLED
                and job.id not in self._user_cancelled)

    # -- keys ---------------------------------------------------------------------------

    @rpc(role=ADMIN)
    def LoadKey(self, request, context):
        self._serving()
        if not request.path:
            raise InputError("LoadKey needs a path to a .zkey")
        if not is_key_id(request.key_id):
            raise InputError(f"key ids may use {KEY_ID_RULE}")
        lk = self.keys.load(request.key_id, request.path, wasm=request.wasm_path)
        return pb.LoadKeyReply(key=key_info(lk))

    @rpc(role=ADMIN)
    def UnloadKey(self, request, context):
        lk = self.keys.unload(request.key_id)
        return pb.UnloadKeyReply(key=key_info(lk))

    # -- proofs -------------------------------------------------------------------------

    def _submit(self, request, witnesses=None):
        """Queue the request's job, journaled first (admission.py); `witnesses` when they came in a stream."""
        self._serving()
        return self.admission.admit(request, self.caller(), witnesses)

    def recover(self) -> dict:
        """Submit again every journaled job that had not finished (at start, before serving)."""
        out = {"rerun": 0, "failed": 0, "orphans": 0, "expired": 0}
        if self.journal is None:
            return out
        out["orphans"] = self.journal.orphans()
        self.journal.purge()
        for row in self.journal.unfinished():
            try:
                req = pb.ProveRequest.FromString(self.journal.request_bytes(row))
                if req.deadline_unix and req.deadline_unix <= time.time():  # never started again
                    self.journal.expire_now(row.id, "expired: its deadline passed while the daemon was down")
                    log.warning("journal: job %s expired while the daemon was down; not re-run", row.id)
                    out["expired"] += 1
                    continue
                self.admission.rerun(row, req)
            except (OSError, DecodeError, SnarkdError) as exc:
                why = f"not re-run after the restart: {exc}"
                if isinstance(exc, NotFound):
                    why += " (keys loaded with LoadKey are not restored: list it in [keys.preload])"
                self.journal.fail_now(row.id, why)
                log.warning("journal: job %s %s", row.id, why)
                out["failed"] += 1
                continue
            self.journal.rerun(row.id)
            out["rerun"] += 1
        return out

    def _owned(self, client: str, job_id: str) -> None:
        """Another token's job is answered as an unknown one (NOT_FOUND): a job id tells nobody else anything."""
        who = self.caller()
        if self.gate.tokens is not None and client and client != who.name and not who.may(ADMIN):
            raise no_such_job(job_id)

    def _find(self, job_id: str):
        """The engine's job, or else the journal's row (a job finished before a restart, or long ago), that the
        caller means by job_id (its own: JobIds; an admin's, else the one job of another token with that id)."""
        who = self.caller()
        real = self.ids.lookup(who, job_id) if is_job_id(job_id.rpartition("/")[2]) else job_id
        found = self._get(real)
        if found is None and real != job_id and is_job_id(job_id):
            old = self._get(job_id)  # journaled before ids were per token: under the id its client gave
            if old is not None and not old.name and (getattr(old, "client", "") == who.name or who.may(ADMIN)):
                found = old
        if found is None:
            admin = self.ids.scoped and who.may(ADMIN)
            if admin and "/" not in job_id and is_job_id(job_id):
                return self._any_token(job_id)
            raise no_such_job(job_id.rpartition("/")[2] if admin else job_id)
        self._owned(getattr(found, "client", ""), job_id)
        return found

    def _get(self, job_id: str):
        """The engine's job of that (engine) id, else the journal's row, else None."""
        try:
            return self.engine.get(job_id)
        except NotFound:
            return self.journal.lookup(job_id) if self.journal is not None and job_id else None

    def _any_token(self, name: str):
        """An admin's job id that is not its own: the job of whichever token named it so (NotFound when none;
        InputError when several did: then TOKEN/NAME says which)."""
        found = {j.id: j for j in self.engine.jobs() if shown(j) == name}
        if self.journal is not None:
            for row in self.journal.named(name):
                found.setdefault(row.id, row)
        if not found:
            raise no_such_job(name)
        if len(found) > 1:
            owners = ", ".join(sorted(getattr(j, "client", "") or "?" for j in found.values()))
            raise InputError(f"job id {name!r} is used by several tokens ({owners}): name one as TOKEN/{name}")
        return next(iter(found.values()))

    def _streamed(self, chunks):
        return self._submit(*self.admission.assemble(chunks))

    def _result(self, job, context) -> pb.ProveReply:
        """Wait for the job; its reply, or the error its failure maps to."""
        while not job.done.wait(0.25):
            if not context.is_active():  # the client went away or cancelled
                if job.named:  # the client named the job, so it can fetch the result with Await: keep going
                    log.info("the client of Prove went away; job %s goes on (Await fetches it)", job.id)
                    return pb.ProveReply(job_id=shown(job))
                self._user_cancelled.add(job.id)
                self.engine.cancel(job.id, "cancelled: the client of Prove went away")
                return pb.ProveReply(job_id=shown(job))
        if job.state == COMPLETED:
            self._durable(job)
            return prove_reply(job)
        raise self._job_error(job)

    def _job_error(self, job) -> SnarkdError:
        """The error a job that ended without a result stands for: its kind rebuilt (snarkd/errors.py). A bad
        input or a changed key (KeyStore.spoiled) is told as the engine said it; other ends name the job."""
        cls = error_class(job.error_kind)
        if job.state == FAILED and issubclass(cls, (InputError, KeyChanged)):
            return rebuild(cls.kind, job.error)
        if self._resumes(job):
            return Unavailable(RESUMES.format(id=shown(job)))
        kind = {EXPIRED: Expired.kind, CANCELLED: Cancelled.kind}.get(job.state, job.error_kind)
        return rebuild(kind, f"job {shown(job)}: {job.error}")

    @rpc
    def Prove(self, request, context):
        return self._result(self._submit(request), context)

    @rpc
    def Submit(self, request, context):
        return pb.SubmitReply(job_id=shown(self._submit(request)))

    @rpc
    def ProveStream(self, request_iterator, context):
        return self._result(self._streamed(request_iterator), context)

    @rpc
    def SubmitStream(self, request_iterator, context):
        return pb.SubmitReply(job_id=shown(self._streamed(request_iterator)))

    @rpc
    def Await(self, request, context):
        job = self._find(request.job_id)
        if isinstance(job, Row):
            return self._row_reply(job)
        deadline = time.monotonic() + request.timeout_s if request.timeout_s > 0 else None
        while not job.done.is_set():
            left = 0.25 if deadline is None else min(0.25, deadline - time.monotonic())
            if left <= 0 or not context.is_active():
                return pb.AwaitReply(state=pb.TIMEOUT, error=f"job {shown(job)} is {job.state.lower()}")
            job.done.wait(left)
        if self._resumes(job):
            raise Unavailable(RESUMES.format(id=shown(job)))
        reply = pb.AwaitReply(state=STATE[job.state], error=job.error)
        if job.state == COMPLETED:
            self._durable(job)
            reply.result.CopyFrom(prove_reply(job))
        return reply

    def _durable(self, job) -> None:
        """A result leaves only once the journal holds it (one result per job, whatever crashes next)."""
        if self.journal is not None and not self.journal.wait_recorded(job.id):
            log.warning("journal: the result of job %s is not recorded after 30s; returned anyway", job.id)

    def _row_reply(self, row: Row) -> pb.AwaitReply:
        if row.state not in STATE:  # journaled but not running: only between a restart and its recovery
            return pb.AwaitReply(state=pb.TIMEOUT, error=f"job {shown(row)} is {row.state.lower()}")
        reply = pb.AwaitReply(state=STATE[row.state], error=row.error)
        if row.state == COMPLETED and row.result:
            reply.result.ParseFromString(row.result)
        return reply

    @rpc
    def Cancel(self, request, context):
        job = self._find(request.job_id)
        if isinstance(job, Row):
            return pb.CancelReply(state=STATE.get(job.state, pb.JOB_STATE_UNSPECIFIED), cancelled=False)
        self._user_cancelled.add(job.id)
        state, cancelled = self.engine.cancel(job.id)
        if not cancelled:
            self._user_cancelled.discard(job.id)
        return pb.CancelReply(state=STATE[state], cancelled=cancelled)

    @rpc
    def ListJobs(self, request, context):
        """The caller's jobs (admin: all), newest first: the engine's, then the journal's finished ones."""
        states = set()
        for i, st in enumerate(request.states):
            if st not in STATE_NAME:
                raise InputError(f"states[{i}]: {pb.JobState.Name(st) if st in pb.JobState.values() else st} is "
                                 f"not a job state a job can be in (one of {', '.join(STATE)})")
            states.add(STATE_NAME[st])
        if request.key_id and not is_key_id(request.key_id):
            raise InputError(f"key_id: key ids may use {KEY_ID_RULE}")
        if request.lane:
            self.engine.lane(request.lane)  # InputError naming an unknown lane
        who = self.caller()
        everyone = self.gate.tokens is None or who.may(ADMIN)
        client = None if everyone else who.name
        out, seen = [], set()
        for job in self.engine.jobs():
            seen.add(job.id)
            owner = getattr(job, "client", "")
            if (client is not None and owner != client) or (states and job.state not in states) or \
                    (request.key_id and job.key.id != request.key_id) or (request.lane and job.lane != request.lane):
                continue
            out.append(job_info(job, owner if everyone else ""))
        if self.journal is not None:
            for row in self.journal.rows(client, request.key_id, sorted(states), request.limit, request.lane):
                if row.id not in seen:
                    out.append(pb.JobInfo(job_id=shown(row), key_id=row.key_id, state=STATE.get(row.state, 0),
                                          priority=row.priority, submitted_unix=row.submitted,
                                          finished_unix=row.finished or 0.0, error=row.error,
                                          client=row.client if everyone else "", lane=row.lane))
        out.sort(key=lambda j: j.submitted_unix, reverse=True)
        return pb.ListJobsReply(jobs=out[:request.limit] if request.limit else out)

    # -- aggregation --------------------------------------------------------------------

    @rpc
    def Aggregate(self, request, context):
        t0 = time.monotonic()
        try:
            self._serving()
            if not request.key_id:
                raise InputError("key_id: the request names no key")
            if request.job_ids and request.proofs:
                raise InputError("give job_ids or proofs, not both")
            if request.job_ids:
                items = self._job_items(request)
                srs = self.aggregator.srs_path(request.srs_path)
            else:  # bounded by the SRS (its header) before any proof is parsed
                srs = self.aggregator.srs_path(request.srs_path)
                self.aggregator.check_size(len(request.proofs), srs)
                items = _inline_items(request.proofs)
            lk, _ = self.keys.checkout(request.key_id)  # reloaded when the key budget evicted it
            try:
                vk = lk.vk
            finally:
                self.keys.release(lk)
            future = self.aggregator.start(request.key_id, vk, items, srs)
        except Exception as exc:  # refused before any work: counted here (the work's outcome is counted by it)
            self.metrics.on_aggregation("busy" if isinstance(exc, Busy) else "rejected", time.monotonic() - t0, 0)
            raise
        while not wait([future], timeout=0.25).done:
            if not context.is_active():  # the client went away: the work finishes, its result is dropped
                return pb.AggregateReply()
        try:
            out = future.result()
        except CancelledError:
            raise Unavailable("the daemon is shutting down: the aggregation did not run") from None
        return pb.AggregateReply(aggregate_json=out.json, n=out.n, dev_srs=out.dev, timings_ms=out.timings)

    def _job_items(self, request) -> list[Item]:
        """The proofs of the named jobs (each COMPLETED, of the request's key, visible to the caller), each
        job's partitions in order. A job named twice is looked up once (its proofs are given twice)."""
        items, seen = [], {}
        for i, job_id in enumerate(request.job_ids):
            if job_id in seen:
                items += seen[job_id]
                continue
            job = self._find(job_id)  # NOT_FOUND for another token's job, as for an unknown one
            what = f"job_ids[{i}]: job {job_id!r}"
            state, key_id = (job.state, job.key_id) if isinstance(job, Row) else (job.state, job.key.id)
            if state in (QUEUED, RUNNING) or state not in STATE:
                raise NotReady(f"{what} is {state.lower()}, not completed: aggregate it once Await returns it")
            if state != COMPLETED:
                raise InputError(f"{what} is {state.lower()} and has no proofs to aggregate"
                                 + (f" ({job.error})" if job.error else ""))
            if key_id != request.key_id:
                raise InputError(f"{what} proved with key {key_id!r}, not key_id {request.key_id!r}")
            if isinstance(job, Row):
                if not job.result:
                    raise InputError(f"{what}: its result is no longer kept ([daemon] result_retention)")
                reply = pb.ProveReply.FromString(job.result)
                parts = [(json.loads(p.public_json), json.loads(p.proof_json)) for p in reply.partitions]
            else:
                parts = [(list(p.result.public), p.result.proof) for p in job.partitions]
            seen[job_id] = [Item(pub, proof, f"job {job_id!r}" + (f" partition {k}" if len(parts) > 1 else ""))
                            for k, (pub, proof) in enumerate(parts)]
            items += seen[job_id]
        return items

    # -- introspection ------------------------------------------------------------------

    @rpc
    def Status(self, request, context):
        reply = status_reply(self.snapshot())
        return reply if self.caller().may(ADMIN) else prover_view(reply)

    @rpc
    def Metrics(self, request, context):
        return pb.MetricsReply(values=self.metrics.values(), text=self.metrics.text().decode())


def _inline_items(proofs) -> list[Item]:
    """AggregateRequest.proofs, parsed (nesting bounded before parsing, as every client JSON is)."""
    items = []
    for i, p in enumerate(proofs):
        name = f"proofs[{i}]"
        proof = json_text.loads(p.proof_json, f"{name}.proof_json", "proof JSON")
        public = json_text.loads(p.public_json, f"{name}.public_json", "public JSON")
        if not isinstance(proof, dict):
            raise InputError(f"{name}.proof_json: expected a JSON object (snarkjs proof.json)")
        if not isinstance(public, list):
            raise InputError(f"{name}.public_json: expected a JSON list (snarkjs public.json)")
        items.append(Item(public, proof, name))
    return items
