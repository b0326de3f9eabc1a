"""A job's admission, in one place: the request checked once, then quota → claim → submit → keep → accept,
each step's undo kept on a stack and run in reverse when a later step fails (no nested undo blocks).

    quota    [limits] max_queued_per_client          undo: release the client's count
    claim    the journal reserves the id and spool    undo: release(accepted=False): nothing recorded
    submit   the engine queues the job                undo: cancel it (an ending the journal holds back)
    keep     by-reference witnesses kept beside it    undo: discard the kept files
    accept   the journal commits the request          (the last step: nothing after it can fail)
    commit   release(accepted=True): the claim ends, an ending held back meanwhile is recorded

The service builds one Admission from its collaborators (the engine, the key store, the transport, the journal,
the per-client quota and job ids: fixed for its life) and calls down into it with what only the service knows (the
caller, once it has checked that it serves); admission never calls back into the service. Every way a job comes in
goes through it: a witness bounded by a .wtns of its key (`n_vars`; on the wire before decoding, `inline_precheck`;
a stream's partitions, `assemble`), and the journaled jobs run again after a restart (`rerun`).

The engine tells the daemon of a job's end (ProverService.on_job) after its lock is let go
(engine/jobtable.Deferring), so an undo's cancel may call back into the journal and quota safely.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from dataclasses import dataclass, field

from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.daemon.security import ADMIN, Principal
from snarkd.daemon.transport import Transport, check_inline, read_witness, wire_witness_sizes
from snarkd.engine import AlreadyExists, Busy, NotFound, PermissionDenied, TooLarge
from snarkd.errors import InputError
from snarkd.formats.wtns import wtns_bytes
from snarkd.ids import MAX_ID, check_job_id, new_job_id

log = logging.getLogger("snarkd")


class ClientQuota:
    """Unfinished jobs per client ([limits] max_queued_per_client)."""

    def __init__(self, limit: int):
        self.limit = limit
        self._lock = threading.Lock()
        self._count: dict[str, int] = {}
        self._owner: dict[str, str] = {}  # job id -> client

    def take(self, client: str, job_id: str, force: bool = False) -> None:
        with self._lock:
            n = self._count.get(client, 0)
            if n >= self.limit and not force:
                raise Busy(f"client {client!r} has {n} unfinished job(s), the most [limits] max_queued_per_client "
                           f"({self.limit}) allows; retry when some finish")
            self._count[client] = n + 1
            self._owner[job_id] = client

    def release(self, job_id: str) -> None:
        with self._lock:
            client = self._owner.pop(job_id, None)
            if client is not None:
                n = self._count.get(client, 1) - 1
                if n > 0:
                    self._count[client] = n
                else:
                    self._count.pop(client, None)


def shown(job) -> str:
    """The id a job's client knows it by (a Job or a journal Row): its per-token name, else its id."""
    return job.name or job.id


class JobIds:
    """Per-token job ids. With tokens on, the id a client names ("name") is its token's own: the engine and the
    journal hold the job under `engine_id(token, name)`, a tag of the token's name before it, so another token's
    "j1" is another job, and Submit's ALREADY_EXISTS only ever says that the caller's own id is taken (it used to
    tell one tenant that another's id existed). Replies, ListJobs and errors show the name. An admin token reaches
    another token's job as "TOKEN/NAME" ("/" is in no job id), or by its name alone when one token only has a job
    of that name (ProverService._any_token). Without tokens (one tenant) ids are global as they
    always were: the engine id is the name."""

    def __init__(self, scoped: bool):
        self.scoped = scoped

    def engine_id(self, client: str, name: str) -> str:
        if not self.scoped:
            return name
        tag = "t" + hashlib.sha256(client.encode("utf-8", "surrogateescape")).hexdigest()[:12] + "."
        if len(tag) + len(name) <= MAX_ID:
            return tag + name
        return tag + "h" + hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:40]

    def lookup(self, who: Principal, job_id: str) -> str:
        """The engine id a caller means by job_id: its own job of that name; an admin's "TOKEN/NAME": that token's."""
        if self.scoped and who.may(ADMIN) and "/" in job_id:
            client, _, name = job_id.rpartition("/")
            return self.engine_id(client, name)
        return self.engine_id(who.name, job_id)


def inline_witnesses(request) -> tuple:
    """(witness, [witnesses]) of a ProveRequest, each taken from the message once: protobuf (upb) hands out a new
    copy of a bytes field at every access, 32 MiB for a 2^20 witness (so `request.witness or ...` costs one)."""
    fields = {f.name: v for f, v in request.ListFields() if f.name in ("witness", "witnesses")}
    return fields.get("witness", b""), list(fields.get("witnesses", ()))


def request_deadline(request) -> float | None:
    """A ProveRequest's deadline as seconds from now (None: none); InputError naming the field when it is bad."""
    rel, absolute = request.deadline_s, request.deadline_unix
    for name, v in (("deadline_s", rel), ("deadline_unix", absolute)):
        if v != v or v in (float("inf"), float("-inf")) or v < 0:
            raise InputError(f"{name}: expected a finite number of seconds >= 0 (0: no deadline), got {v!r}")
    if rel and absolute:
        raise InputError("give deadline_s (seconds from now) or deadline_unix (an absolute time), not both")
    if rel:
        return rel
    if absolute:
        return absolute - time.time()
    return None


@dataclass
class Ticket:
    """What a checked request asks for: who, under which ids, in which lane, with which witnesses."""

    request: object  # the ProveRequest
    client: str
    name: str  # the id its client knows it by
    job_id: str  # the engine's (JobIds)
    lane: str
    deadline_s: float | None
    witnesses: list | None = None  # streamed or read by path (else the request's inline ones)
    inline: tuple = ((), ())  # inline_witnesses(request)
    received: list = field(default_factory=list)  # by-reference witnesses read (transport.Received)
    streamed: list | None = None  # what the journal must keep inline (a stream's witnesses)


def lane_of(who, request) -> str:
    """The lane a caller's request runs in: the one it names, else its token's; a prove token bound to a lane
    may not name another (PermissionDenied naming both)."""
    if request.lane and who.lane and request.lane != who.lane and not who.may(ADMIN):
        raise PermissionDenied(f"lane: token {who.name!r} is bound to lane {who.lane!r} and may not use lane "
                               f"{request.lane!r} ([daemon] token_file)")
    return request.lane or who.lane


def journal_copy(request, job, witnesses, kept: list[str]) -> bytes:
    """What the journal keeps to run the job again: the request itself, naming the journal's own copies of
    by-reference witnesses instead of the paths the client gave; streamed witnesses inline; its deadline
    as the absolute time it became at submit (a restart does not move it); its lane as resolved (a
    token's lane too, so a restart keeps it)."""
    keep = pb.ProveRequest()
    keep.CopyFrom(request)
    keep.job_id = shown(job)
    keep.ClearField("deadline_s")
    keep.deadline_unix = job.deadline_wall
    keep.lane = job.lane
    if kept:
        del keep.witness_paths[:]
        keep.witness_paths.extend(kept)
    elif witnesses is not None:
        keep.witnesses.extend(wtns_bytes(w.prime, w.values) for w in witnesses)
    return keep.SerializeToString()


class Admission:
    """Every request's way into the engine and the journal (see the module's docstring), built once by the
    service. `admit()` = `ticket()` (the request's checks) then `run()` (the steps); a failure undoes what was
    done, latest first, and re-raises."""

    def __init__(self, engine, keys, transport: Transport, journal, quota: ClientQuota, ids: JobIds):
        self.engine, self.keys, self.transport = engine, keys, transport
        self.journal, self.quota, self.ids = journal, quota, ids

    def n_vars(self, key_id: str) -> int:
        """Values in a witness of key `key_id` (NotFound when no such key is loaded), which bounds its .wtns."""
        return int(self.keys.get(key_id).meta["n_vars"])

    def inline_precheck(self, data: bytes):
        """The TooLarge refusing a Prove/Submit request whose inline witness no .wtns of its key can be, found
        on the request's wire bytes (transport.wire_witness_sizes) before protobuf decodes and copies them;
        None to decode it (the decoded request is checked again)."""
        head = wire_witness_sizes(data)
        if head is None or not head[1]:
            return None
        try:
            check_inline(head[1], head[0], self.n_vars(head[0]))
        except NotFound:
            return None
        except TooLarge as exc:
            return exc.with_traceback(None)  # its frames hold the request's bytes
        return None

    def assemble(self, chunks) -> tuple:
        """(request, witnesses) of a ProveStream / SubmitStream, each partition bounded by a .wtns of its key."""
        request, witnesses = self.transport.assemble(chunks, self.n_vars, self.engine.config.max_partitions)
        if request.witness or request.witnesses or request.witness_paths or request.inputs_json:
            raise InputError("a witness stream carries its witnesses as chunks only")
        return request, witnesses

    def admit(self, request, who: Principal, witnesses=None):
        """Queue the request's job for caller `who`, journaled first; `witnesses` when they came in a stream."""
        arrived = time.monotonic()
        return self.run(self.ticket(request, who, witnesses, arrived), arrived)

    def ticket(self, request, who: Principal, witnesses=None, arrived: float | None = None) -> Ticket:
        """The request's checks, each made once: key and job ids, the witnesses' one way in (inline, by path or
        streamed), the lane and the deadline (a relative one counts from `arrived`)."""
        if not request.key_id:
            raise InputError("the request names no key id")
        if request.job_id:
            check_job_id(request.job_id)
        name = request.job_id or new_job_id()
        # every check that can refuse comes before the by-reference witnesses are read: once read, a spool file
        # is the daemon's (run() removes it), and a refusal here would leave it behind
        t = Ticket(request, who.name, name, self.ids.engine_id(who.name, name), lane_of(who, request),
                   request_deadline(request), inline=inline_witnesses(request))
        if request.witness_paths:
            if witnesses is not None or any(t.inline):
                raise InputError("give witnesses inline, by path or streamed, not several ways at once")
            t.received = self.transport.read(list(request.witness_paths), request.key_id, self.n_vars(request.key_id),
                                             keep=self.journal is not None,
                                             buffer=self.engine.witness_buffer(t.lane))
            t.witnesses = [r.witness for r in t.received]
        else:
            t.witnesses = t.streamed = witnesses
            if witnesses is None and any(t.inline):
                single, many = t.inline
                check_inline([len(w) for w in ([single] if single else many)], request.key_id,
                             self.n_vars(request.key_id))
        if t.deadline_s is not None and arrived is not None and request.deadline_s:
            t.deadline_s -= time.monotonic() - arrived  # reading the witnesses came out of it
        return t

    def run(self, t: Ticket, arrived: float):
        journal, undo = self.journal, []

        def step(do, undone):
            out = do()
            undo.append(undone)
            return out

        try:
            step(lambda: self.quota.take(t.client, t.job_id), lambda: self.quota.release(t.job_id))
            if journal is not None:  # the id free, the spool with room: else refused before the engine
                nbytes = t.request.ByteSize() + sum(len(r.data) for r in t.received)
                step(lambda: journal.claim(t.job_id, nbytes), lambda: journal.release(t.job_id, accepted=False))
            job = step(lambda: self._submit(t),
                       lambda: self.engine.cancel(t.job_id, "cancelled: the daemon could not journal it"))
            job.admission_ms = (time.monotonic() - arrived) * 1000
            job.name = t.name if t.name != t.job_id else ""
            if journal is not None:  # while the engine works on it; nobody hears of the job before
                kept = step(lambda: journal.keep(job.id, [(r.spooled if not r.linked else None, r.data)
                                                          for r in t.received]),
                            lambda: journal.discard(kept))
                journal.accept(job.id, t.request.key_id, t.client, t.request.priority,
                               journal_copy(t.request, job, t.streamed, kept), name=job.name, lane=job.lane)
                journal.release(job.id, accepted=True)
        except AlreadyExists as exc:  # the caller's own id (JobIds): said with the name it gave
            _rollback(undo)
            raise AlreadyExists(str(exc).replace(repr(t.job_id), repr(t.name))) from None
        except BaseException:
            _rollback(undo)
            raise
        finally:
            for r in t.received:  # read (kept by the journal as a copy, or renamed into it: then gone already)
                if r.spooled is not None:
                    r.spooled.unlink(missing_ok=True)
        job.client, job.named = t.client, bool(t.request.job_id)
        return job

    def _submit(self, t: Ticket, rerun: bool = False):
        """The one call that hands a checked request to the engine (new jobs and journaled ones run again: `rerun`,
        whose deadline is not judged by the estimate again)."""
        r = t.request
        single, many = t.inline
        return self.engine.submit(r.key_id, single or None, t.job_id, witnesses=t.witnesses or many,
                                  inputs=list(r.inputs_json), priority=r.priority, batch_verify=r.batch_verify,
                                  deadline_s=t.deadline_s, admit_by_estimate=not rerun, lane=t.lane)

    def rerun(self, row, req):
        """Submit journaled request `req` (journal row `row`) again after a restart, counted against its client's
        quota whatever the limit (it was admitted once); the job, or the error that keeps it from running."""
        deadline = req.deadline_unix - time.time() if req.deadline_unix else None
        t = Ticket(req, row.client, shown(row), row.id, req.lane, deadline, witnesses=self._rerun_witnesses(req),
                   inline=inline_witnesses(req))
        job = self._submit(t, rerun=True)
        job.client, job.name = row.client, row.name
        self.quota.take(row.client, row.id, force=True)
        return job

    def _rerun_witnesses(self, req):
        """The witnesses of a journaled request: the journal's own files, read (not confined: the daemon wrote
        them), or, from a journal of an older daemon, paths the client named (confined as at submit)."""
        if not req.witness_paths:
            return None
        n_vars = self.n_vars(req.key_id)
        return [read_witness(p, f"journaled witness {p}", req.key_id, n_vars)[0] if self.journal.adopted(p)
                else self.transport.read([p], req.key_id, n_vars)[0].witness for p in req.witness_paths]


def _rollback(undo: list) -> None:
    while undo:
        step = undo.pop()
        try:
            step()
        except Exception:  # noqa: BLE001 - the next undos still run; the first failure is what the client hears
            log.exception("undoing a step of a refused admission failed")
