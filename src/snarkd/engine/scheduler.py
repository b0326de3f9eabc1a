"""The jobs' book: the job table, the pending heap, admission under the memory budget, and how a
job or a partition ends. Everything here runs under one condition variable (`cv`).

A partition is admitted (its estimated bytes reserved) when it is the highest-
priority pending one and fits the budget; it gives bytes back as its buffers die
and leaves the pipeline exactly once (`exit_locked`), finished or dropped. A job
ends once (`end_locked`): completed, failed or cancelled; its key is released
when it has ended and all its partitions have left.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections import OrderedDict

from snarkd.engine.accounting import Accounting
from snarkd.engine.errors import AlreadyExists, Busy, NotFound
from snarkd.engine.jobs import CANCELLED, COMPLETED, ENDED, FAILED, QUEUED, RUNNING, Job, Partition

log = logging.getLogger("snarkd")
KEEP_FINISHED = 1024  # finished jobs remembered for await_
POLL = 0.2


class Scheduler:
    def __init__(self, keys, acct: Accounting, notify, max_active: int = 1 << 30):
        self.keys, self.acct, self.budget, self.notify = keys, acct, acct.budget, notify
        self.max_active, self.active = max_active, 0  # jobs accepted and not ended ([limits] max_queued_jobs)
        self.cv = threading.Condition(threading.Lock())
        self.pending: list = []  # heap of (-priority, seq, index, Partition)
        self.jobs: OrderedDict[str, Job] = OrderedDict()

    def add(self, job: Job) -> None:
        with self.cv:
            if job.id in self.jobs:
                raise AlreadyExists(f"job id {job.id!r} is already in use")
            if self.active >= self.max_active:
                raise Busy(f"{self.active} jobs are unfinished, the most [limits] max_queued_jobs ({self.max_active}) "
                           f"allows; retry when some finish")
            self.active += 1
            self.jobs[job.id] = job
            self.acct.count("submitted")
            now = time.monotonic()
            for p in job.partitions:
                p.t_ready = now
                heapq.heappush(self.pending, (-job.priority, job.seq, p.index, p))
            finished = [k for k, j in self.jobs.items() if j.state in ENDED]
            for k in finished[: max(0, len(finished) - KEEP_FINISHED)]:
                del self.jobs[k]
            self.cv.notify_all()

    def get(self, job_id: str) -> Job:
        with self.cv:
            job = self.jobs.get(job_id)
        if job is None:
            raise NotFound(f"no job with id {job_id!r} (finished jobs are kept for the last {KEEP_FINISHED})")
        return job

    def counts(self) -> dict:
        with self.cv:
            return {"queued": sum(j.state == QUEUED for j in self.jobs.values()),
                    "running": sum(j.state == RUNNING for j in self.jobs.values()), "pending": len(self.pending)}

    def active_locked(self) -> bool:
        return any(j.state not in ENDED for j in self.jobs.values())

    def admit(self, stopping: threading.Event) -> Partition | None:
        """The highest-priority pending partition, once its bytes fit the budget (reserved here)."""
        with self.cv:
            waited = False
            while not stopping.is_set():
                if self.pending:
                    part = self.pending[0][3]
                    if self.budget.fits(part.est.total):
                        heapq.heappop(self.pending)
                        self.budget.reserve(part.est.total)
                        part.reserved, part.state = part.est.total, RUNNING
                        self.acct.in_flight += 1
                        now = time.monotonic()
                        part.timings["queue_wait"] = (now - part.t_ready) * 1000
                        if part.job.state == QUEUED:
                            part.job.state, part.job.started = RUNNING, now
                        return part
                    if not waited:
                        self.budget.waits += 1
                        waited = True
                        log.debug("partition %s/%d waits for memory: needs %d, %d of %d in use", part.job.id,
                                  part.index, part.est.total, self.budget.used, self.budget.budget)
                self.cv.wait(POLL)
        return None

    def dropped(self, part: Partition, stopping: threading.Event) -> bool:
        """True (and the partition leaves the pipeline) when its job has ended or the engine stops."""
        with self.cv:
            if part.job.state in ENDED or stopping.is_set():
                self.exit_locked(part)
                return True
        return False

    def fail(self, part: Partition, error: str, kind: str) -> None:
        with self.cv:
            many = len(part.job.partitions) > 1
            self.end_locked(part.job, FAILED, f"partition {part.index}: {error}" if many else error, kind)
            self.exit_locked(part)

    def complete(self, part: Partition) -> None:
        """A partition's proof is done: count it, and complete its job when it was the last."""
        job = part.job
        with self.cv:
            if job.state in ENDED:  # cancelled meanwhile: the result is dropped
                self.exit_locked(part)
                return
            part.state = COMPLETED
            self.acct.in_flight -= 1
            job.n_done += 1
            self.acct.count("partitions_completed")
            self.acct.add_phases(part.timings)
            self.notify("on_partition", part)
            part.exited = True
            if part.reserved:
                self.release_locked(part, part.reserved)
            part.sums = part.w = part.synth = None
            if job.n_done == len(job.partitions):
                self.end_locked(job, COMPLETED)
            self.maybe_release_key_locked(job)

    def end_locked(self, job: Job, state: str, error: str = "", kind: str = "") -> None:
        if job.state in ENDED:
            return
        job.state, job.error, job.error_kind = state, error, kind
        job.finished = time.monotonic()
        self.active -= 1
        self.acct.count(state.lower())
        if state != COMPLETED:  # drop its queued partitions now; running ones leave at their next stage boundary
            mine = [e for e in self.pending if e[3].job is job]
            if mine:
                self.pending = [e for e in self.pending if e[3].job is not job]
                heapq.heapify(self.pending)
                for e in mine:
                    self.exit_locked(e[3])
        job.done.set()
        log.info("job %s id=%s key=%s partitions=%d priority=%d ms=%.1f%s", state.lower(), job.id, job.key.id,
                 len(job.partitions), job.priority, (job.finished - job.submitted) * 1000,
                 f" error={error}" if error else "")
        self.maybe_release_key_locked(job)
        self.notify("on_job", job)
        self.cv.notify_all()

    def exit_locked(self, part: Partition) -> None:
        """The partition leaves the pipeline: its memory goes back to the budget."""
        if part.exited:
            return
        part.exited = True
        if part.reserved:
            self.budget.release(part.reserved)
            part.reserved = 0
        if part.state == RUNNING:
            self.acct.in_flight -= 1
        part.drop_buffers()
        self.maybe_release_key_locked(part.job)
        self.cv.notify_all()

    def maybe_release_key_locked(self, job: Job) -> None:
        if job.released or job.state not in ENDED or not all(p.exited for p in job.partitions):
            return
        job.released = True
        # KeyStore has its own lock, never taken around ours: no lock-order cycle
        self.keys.release(job.key, proved=job.n_done if job.state == COMPLETED else 0)

    def release_locked(self, part: Partition, nbytes: int) -> None:
        """Give part of a partition's reservation back (its big buffers died)."""
        nbytes = min(nbytes, part.reserved)
        part.reserved -= nbytes
        self.budget.release(nbytes)
        self.cv.notify_all()

    def drain(self, deadline: float, force: threading.Event, stopping: threading.Event, why: str) -> int:
        """Wait until no job is active (or the deadline passes, or force is set); cancel what is left
        and set `stopping`. Returns how many jobs were cancelled."""
        with self.cv:
            while self.active_locked() and time.monotonic() < deadline and not force.is_set():
                self.cv.wait(min(POLL, max(0.0, deadline - time.monotonic())))
            left = [j for j in self.jobs.values() if j.state not in ENDED]
            for j in left:
                self.end_locked(j, CANCELLED, why, "cancelled")
            stopping.set()
            self.cv.notify_all()
        return len(left)
