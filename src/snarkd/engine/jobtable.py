"""The job table that the engine's Scheduler and the cluster front's Book share: the jobs by id, the
pending heap of their work items, the [limits] max_queued_jobs bound, and how a job ends. Everything
runs under one condition variable (`cv`).

A work item is what waits in the heap: a Partition in the engine, a Task (one partition on its way to
an actor) at the front. Subclasses say how a queued item of an ended job leaves (`drop_locked`) and tell the
table when any item has left (`item_left_locked`): the table releases a job's key once it has ended and its last
item has left. Where counters go is handed in (`count`: the engine's Accounting, the front's own Counters), so the
table's own bookkeeping never calls back up into the subclass's module.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
import uuid
from collections import OrderedDict, deque
from typing import Callable

from snarkd.engine.errors import AlreadyExists, Busy, Cancelled, Expired, NotFound
from snarkd.engine.eta import ServiceTimes
from snarkd.engine.jobs import CANCELLED, COMPLETED, ENDED, EXPIRED, QUEUED, RUNNING, Job
from snarkd.engine.lanes import Lanes
from snarkd.ids import check_job_id, is_job_id

log = logging.getLogger("snarkd")
KEEP_FINISHED = 1024  # finished jobs remembered for await_
POLL = 0.2


class Deferring(threading.Condition):
    """The table's lock, which delivers what was noted under it (`later`) once it is let go: observers (the
    daemon's journal, quota and metrics) are never called while the engine's lock is held, so they may take
    their own locks and call the engine back. Delivered in order by the thread letting go, before `with` ends
    (and before a wait(), which lets go too): a job's end is told before its `done` is set."""

    def __init__(self):
        super().__init__(threading.Lock())
        self._later: list = []

    def later(self, fn, *args) -> None:
        """Call fn(*args) once the lock is let go (only under the lock)."""
        self._later.append((fn, args))

    def _deliver(self) -> None:
        while self._later:  # each let-go delivers what was noted before it, outside the lock
            todo, self._later = self._later, []
            self.release()
            try:
                for fn, args in todo:
                    fn(*args)
            finally:
                self.acquire()

    def wait(self, timeout=None):
        if self._later:  # the lock was let go to deliver: a notify meanwhile would be missed, so this returns as
            self._deliver()  # a wake-up (callers loop on their condition, as a spurious one requires anyway)
            return True
        return super().wait(timeout)

    def __exit__(self, *exc):
        self._deliver()
        return super().__exit__(*exc)


def no_such_job(job_id: str) -> NotFound:
    """The one answer for a job id this caller cannot see: unknown, forgotten, or another token's (the daemon
    answers the same for all three, so an id cannot be probed); an id of the wrong format is not echoed."""
    shown = repr(job_id) if is_job_id(job_id) else "(not a well-formed job id)"
    return NotFound(f"no job with id {shown} (finished jobs are kept for the last {KEEP_FINISHED})")


class Counters(dict):
    """Named counts kept beside a job table by an owner with no Accounting (the cluster front's Book)."""

    def count(self, name: str, n: int = 1) -> None:
        self[name] = self.get(name, 0) + n


class JobTable:
    def __init__(self, keys, notify, max_active: int = 1 << 30, count: Callable[[str], None] | None = None):
        self.keys, self.notify = keys, notify
        self.count = count if count is not None else Counters().count  # "submitted" and each end state's name
        self.max_active, self.active = max_active, 0  # jobs accepted and not ended ([limits] max_queued_jobs)
        self.cv = Deferring()
        self.pending: list = []  # heap of (job.rank, index, item)
        self.jobs: OrderedDict[str, Job] = OrderedDict()
        self.ended_ids: deque[str] = deque()  # ids of ended jobs, oldest first
        self._seq = itertools.count(1)
        self.eta = ServiceTimes()  # the completion model (engine/eta.py); the engine sets its stages
        self.finish_past_deadline = False  # [pipeline] finish_past_deadline: a running job past it goes on
        self.self_verify = True  # [pipeline] self_verify: False returns proofs of jobs without batch_verify unverified
        self.unverified: dict[str, int] = {}  # key id -> proofs returned without any verification (issue 33)
        self.deadlined: set[Job] = set()  # unfinished jobs with a deadline (what expire_due_locked looks at)
        self.lanes = Lanes()  # the lanes and what each holds (engine/lanes.py); the engine gives it its config
        self.max_weight, self.weight = 0.0, 0.0  # [limits] max_queued_weight (0: none); unfinished weight now

    # -- what subclasses say ------------------------------------------------------------------

    def drop_locked(self, item) -> None:
        """A queued item of a job that ended leaves (its bytes go back)."""
        raise NotImplementedError

    def forget_locked(self, job_id: str) -> None:
        """A finished job drops out of the table (subclasses forget what they keep beside it)."""
        del self.jobs[job_id]

    def running_locked(self, job: Job) -> list:
        """The job's items that run somewhere else now and should be told it ended (the front's tasks on
        actors); none in the engine, whose workers drop a cancelled job's partitions at their next stage."""
        return []

    def drained_locked(self, left: list[Job]) -> None:
        """After a drain cancelled `left` (their items are not coming back)."""

    # -- the table ----------------------------------------------------------------------------

    def item_left_locked(self, job: Job) -> None:
        """One of the job's items left for good (proved, dropped or given up): its key goes back when it was the
        last and the job has ended."""
        job.items_out -= 1
        self.release_key_if_done_locked(job)

    def release_key_if_done_locked(self, job: Job) -> None:
        """Release the job's key once it has ended and all its items have left."""
        if job.released or job.state not in ENDED or job.items_out > 0:
            return
        job.released = True
        # the key store has its own lock, never taken around ours: no lock-order cycle
        self.keys.release(job.key, proved=job.n_done if job.state == COMPLETED else 0)

    def add_locked(self, job: Job, items: list) -> None:
        """Accept `job` with its items [(index, item)] into the heap, or raise AlreadyExists / Busy."""
        if job.id in self.jobs:
            raise AlreadyExists(f"job id {job.id!r} is already in use")
        if self.active >= self.max_active:
            raise Busy(f"{self.active} jobs are unfinished, the most [limits] max_queued_jobs ({self.max_active}) "
                       f"allows; retry when some finish")
        self.check_weight_locked(job)
        self.active += 1
        self.weight += job.weight
        use = self.lanes.use[job.lane]
        use.weight += job.weight
        use.queued += 1
        self.jobs[job.id] = job
        if job.deadline:
            self.deadlined.add(job)
        self.count("submitted")
        job.items_out += len(items)
        for index, item in items:
            heapq.heappush(self.pending, (job.rank, index, item))
        while len(self.ended_ids) > KEEP_FINISHED:
            self.forget_locked(self.ended_ids.popleft())
        self.cv.notify_all()

    def check_weight_locked(self, job: Job) -> None:
        """Busy naming the bound when the job's weight would pass [limits] max_queued_weight or its lane's
        max_queued (a job heavier than a bound on its own passes only into an empty lane: it could never run
        otherwise)."""
        use = self.lanes.use[job.lane]
        for what, held, bound in (("[limits] max_queued_weight", self.weight, self.max_weight),
                                  (f"lane {job.lane!r} max_queued", use.weight, use.lane.max_queued)):
            if bound and held + job.weight > bound + 1e-9 and held > 0:
                raise Busy(f"the job weighs {job.weight:g} unit(s) ({len(job.partitions) or 1} partition(s) of domain "
                           f"2^{max(0, int(job.key.key.domain_size).bit_length() - 1)}); {held:g} of the {bound:g} "
                           f"{what} allows are queued or running: retry when some finish")

    def new_job(self, lk, job_id: str = "", priority: int = 0, lane: str = "") -> Job:
        """A Job for key lk in `lane` (InputError naming an unknown one): the given id or a fresh one, and its
        place in submission order (seq)."""
        ln = self.lanes.lane(lane)
        job = Job(check_job_id(job_id) if job_id else f"{next(self._seq)}-{uuid.uuid4().hex[:12]}", lk,
                  priority=int(priority), lane=ln.name, lane_priority=ln.priority)
        job.seq = next(self._seq)
        return job

    def start_locked(self, job: Job, now: float) -> None:
        """A queued job's first item starts."""
        job.state, job.started = RUNNING, now
        use = self.lanes.use[job.lane]
        use.queued, use.running = use.queued - 1, use.running + 1

    def get(self, job_id: str) -> Job:
        with self.cv:
            job = self.jobs.get(job_id)
        if job is None:
            raise no_such_job(job_id)
        return job

    def await_(self, job_id: str, timeout: float | None = None) -> Job:
        """The job, once it has ended or after timeout seconds."""
        job = self.get(job_id)
        job.done.wait(timeout)
        return job

    def jobs_now(self) -> list[Job]:
        """The jobs the table holds (unfinished, and the last KEEP_FINISHED finished), in submission order."""
        with self.cv:
            return list(self.jobs.values())

    # -- deadlines (engine/eta.py estimates; expiry is here) ----------------------------------

    def expire_locked(self, job: Job, now: float) -> tuple[bool, list]:
        """End `job` EXPIRED when its deadline has passed: a queued job always (it never starts), a running one
        unless finish_past_deadline (its workers drop it at their next stage boundary). (whether it ended
        now, its items running elsewhere)."""
        if not job.deadline or now < job.deadline or job.state in ENDED:
            return False, []
        if job.state == QUEUED:
            why = "expired: its deadline passed before it started"
        elif self.finish_past_deadline:
            return False, []
        else:
            why = "expired: its deadline passed while it ran; stopped at its next stage boundary"
        over = now - (job.submitted if job.state == QUEUED else job.started)
        running = self.running_locked(job)
        self.end_locked(job, EXPIRED, f"{why} ({over:.3g}s after it was {job.state.lower()})", Expired.kind)
        return True, running

    def expire_due_locked(self, now: float) -> tuple[list, float | None]:
        """Expire every job whose deadline has passed; (their items running elsewhere, the next deadline of a
        job still unfinished, or None)."""
        running, nxt = [], None
        for job in list(self.deadlined):
            ended, items = self.expire_locked(job, now)
            running += items
            if not ended and job.state not in ENDED and job.deadline > now:
                nxt = job.deadline if nxt is None else min(nxt, job.deadline)
        return running, nxt

    def counts(self) -> dict:
        with self.cv:
            return {"queued": sum(j.state == QUEUED for j in self.jobs.values()),
                    "running": sum(j.state == RUNNING for j in self.jobs.values()), "pending": len(self.pending)}

    def active_locked(self) -> bool:
        return any(j.state not in ENDED for j in self.jobs.values())

    def end_locked(self, job: Job, state: str, error: str = "", kind: str = "") -> None:
        """End a job (once): completed, failed, cancelled or expired. Its queued items leave now; running ones
        leave when they next come back."""
        if job.state in ENDED:
            return
        was = job.state
        job.state, job.error, job.error_kind = state, error, kind
        job.finished = time.monotonic()
        self.active -= 1
        self.weight -= job.weight
        use = self.lanes.use[job.lane]
        use.weight -= job.weight
        if was == QUEUED:
            use.queued -= 1
        elif was == RUNNING:
            use.running -= 1
        self.lanes.ended(job, state, job.finished)
        self.deadlined.discard(job)
        self.ended_ids.append(job.id)
        self.count(state.lower())
        if state == COMPLETED and not self.self_verify and not job.batch_verify:
            self.unverified[job.key.id] = self.unverified.get(job.key.id, 0) + len(job.partitions)
        if state != COMPLETED:
            mine = [e for e in self.pending if e[-1].job is job]
            if mine:
                self.pending = [e for e in self.pending if e[-1].job is not job]
                heapq.heapify(self.pending)
                for e in mine:
                    self.drop_locked(e[-1])
        log.info("job %s id=%s key=%s lane=%s partitions=%d priority=%d ms=%.1f%s", state.lower(), job.id,
                 job.key.id, job.lane, len(job.partitions), job.priority, (job.finished - job.submitted) * 1000,
                 f" error={error}" if error else "")
        self.release_key_if_done_locked(job)
        self.cv.later(self.notify, "on_job", job)  # observers first, then its waiters (the journal has it)
        self.cv.later(job.done.set)
        self.cv.notify_all()

    def cancel(self, job_id: str, why: str) -> tuple[str, bool, list]:
        """(the job's state after, whether it was cancelled now, its items running elsewhere)."""
        job = self.get(job_id)
        with self.cv:
            if job.state in ENDED:
                return job.state, False, []
            running = self.running_locked(job)
            self.end_locked(job, CANCELLED, why, Cancelled.kind)
            return job.state, True, running

    def drain(self, deadline: float, force: threading.Event, stopping: threading.Event, why: str) -> int:
        """Wait until no job is active (or the deadline passes, or force is set); cancel what is left
        and set `stopping`. Returns how many jobs were cancelled."""
        with self.cv:
            while self.active_locked() and time.monotonic() < deadline and not force.is_set():
                self.cv.wait(min(POLL, max(0.0, deadline - time.monotonic())))
            left = [j for j in self.jobs.values() if j.state not in ENDED]
            for j in left:
                self.end_locked(j, CANCELLED, why, Cancelled.kind)
            self.drained_locked(left)
            stopping.set()
            self.cv.notify_all()
        return len(left)
