"""A job's admission, in one place: the request checked once, then quota → claim → submit → keep → accept,
each step's undo kept on a stack and run in reverse when a later step fails (no nested undo blocks).

    quota    [limits] max_queued_per_client          undo: release the client's count
    claim    the journal reserves the id and spool    undo: release(accepted=False): nothing recorded
    submit   the engine queues the job                undo: cancel it (an ending the journal holds back)
    keep     by-reference witnesses kept beside it    undo: discard the kept files
    accept   the journal commits the request          (the last step: nothing after it can fail)
    commit   release(accepted=True): the claim ends, an ending held back meanwhile is recorded

The engine tells the daemon of a job's end (ProverService.on_job) after its lock is let go
(engine/jobtable.Deferring), so an undo's cancel may call back into the journal and quota safely.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

from snarkd.daemon.security import ADMIN
from snarkd.daemon.transport import check_inline
from snarkd.engine import AlreadyExists, PermissionDenied
from snarkd.errors import InputError
from snarkd.ids import check_job_id, new_job_id

log = logging.getLogger("snarkd")


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


def engine_submit(engine, t: Ticket, rerun: bool = False):
    """The one call that hands a checked request to the engine (new jobs and journaled ones run again: `rerun`,
    whose deadline is not judged by the estimate again)."""
    r = t.request
    single, many = t.inline
    return engine.submit(r.key_id, single or None, t.job_id, witnesses=t.witnesses or many,
                         inputs=list(r.inputs_json), priority=r.priority, batch_verify=r.batch_verify,
                         deadline_s=t.deadline_s, admit_by_estimate=not rerun, lane=t.lane)


class Admission:
    """One request's way into the engine and the journal (see the module's docstring). `ticket()` checks the
    request; `run()` takes the steps; a failure undoes what was done, latest first, and re-raises."""

    def __init__(self, service):
        self.s = service
        self._undo: list = []

    def ticket(self, request, witnesses=None, arrived: float | None = None) -> Ticket:
        """The request's checks, each made once: serving, key and job ids, the witnesses' one way in (inline,
        by path or streamed), the lane and the deadline (a relative one counts from `arrived`)."""
        s = self.s
        s._serving()
        if not request.key_id:
            raise InputError("the request names no key id")
        if request.job_id:
            check_job_id(request.job_id)
        who = s.caller()
        name = request.job_id or new_job_id()
        # every check that can refuse comes before the by-reference witnesses are read: once read, a spool file
        # is the daemon's (run() removes it), and a refusal here would leave it behind
        t = Ticket(request, who.name, name, s.ids.engine_id(who.name, name), lane_of(who, request),
                   request_deadline(request), inline=inline_witnesses(request))
        if request.witness_paths:
            if witnesses is not None or any(t.inline):
                raise InputError("give witnesses inline, by path or streamed, not several ways at once")
            t.received = s.transport.read(list(request.witness_paths), request.key_id, s._n_vars(request.key_id),
                                          keep=s.journal is not None, buffer=s.engine.witness_buffer(t.lane))
            t.witnesses = [r.witness for r in t.received]
        else:
            t.witnesses = t.streamed = witnesses
            if witnesses is None and any(t.inline):
                single, many = t.inline
                check_inline([len(w) for w in ([single] if single else many)], request.key_id,
                             s._n_vars(request.key_id))
        if t.deadline_s is not None and arrived is not None and request.deadline_s:
            t.deadline_s -= time.monotonic() - arrived  # reading the witnesses came out of it
        return t

    def run(self, t: Ticket, arrived: float):
        s, journal = self.s, self.s.journal
        try:
            self._step(lambda: s.quota.take(t.client, t.job_id), lambda: s.quota.release(t.job_id))
            if journal is not None:  # the id free, the spool with room: else refused before the engine
                nbytes = t.request.ByteSize() + sum(len(r.data) for r in t.received)
                self._step(lambda: journal.claim(t.job_id, nbytes), lambda: journal.release(t.job_id, accepted=False))
            job = self._step(lambda: engine_submit(s.engine, t),
                             lambda: s.engine.cancel(t.job_id, "cancelled: the daemon could not journal it"))
            job.admission_ms = (time.monotonic() - arrived) * 1000
            job.name = t.name if t.name != t.job_id else ""
            if journal is not None:  # while the engine works on it; nobody hears of the job before
                kept = self._step(lambda: journal.keep(job.id, [(r.spooled if not r.linked else None, r.data)
                                                                for r in t.received]),
                                  lambda: journal.discard(kept))
                journal.accept(job.id, t.request.key_id, t.client, t.request.priority,
                               s.journal_copy(t.request, job, t.streamed, kept), name=job.name, lane=job.lane)
                journal.release(job.id, accepted=True)
        except AlreadyExists as exc:  # the caller's own id (JobIds): said with the name it gave
            self._rollback()
            raise AlreadyExists(str(exc).replace(repr(t.job_id), repr(t.name))) from None
        except BaseException:
            self._rollback()
            raise
        finally:
            for r in t.received:  # read (kept by the journal as a copy, or renamed into it: then gone already)
                if r.spooled is not None:
                    r.spooled.unlink(missing_ok=True)
        job.client, job.named = t.client, bool(t.request.job_id)
        return job

    def _step(self, do, undo):
        out = do()
        self._undo.append(undo)
        return out

    def _rollback(self) -> None:
        while self._undo:
            undo = self._undo.pop()
            try:
                undo()
            except Exception:  # noqa: BLE001 - the next undos still run; the first failure is what the client hears
                log.exception("undoing a step of a refused admission failed")
