"""The front's book: jobs, the one admission queue, the witness budget, and how partitions end.

Everything runs under one condition variable (`cv`). A job's partitions become tasks; a task waits in the
admission queue (highest priority first, then submission order) until the dispatcher sends it to an actor;
it comes back with a proof, a failure of its own, or the news that its actor died. Then:

    proof        the first proof of a task is kept; any later one (a task that ran twice because its
                 actor was wrongly given up for dead) is counted and dropped: one proof per partition
    own failure  the job fails (a bad witness fails its own job only)
    actor died   the task goes back into the queue, up to max_attempts, to run on another actor

A job ends exactly once (completed, failed or cancelled); its `done` event is set then and never again.
The witness bytes of a task count against the budget from submit until the task leaves (done, failed,
dropped); submit waits while the budget is full, so the front never holds more than it.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from dataclasses import dataclass, field

from snarkd.engine import (
    COMPLETED,
    ENDED,
    FAILED,
    QUEUED,
    RUNNING,
    Job,
    Partition,
    TooLarge,
    Unavailable,
)
from snarkd.engine.jobtable import Counters, JobTable
from snarkd.errors import SnarkdError
from snarkd.prover import Proof

log = logging.getLogger("snarkd")
COUNTERS = ("submitted", "rejected", "completed", "failed", "cancelled", "expired", "deadline_refused",
            "partitions_completed",
            "self_verify_failed", "retried", "duplicates_dropped")


@dataclass(eq=False)
class Task:
    """One partition at the front."""

    part: Partition
    witness_ref: object = None  # ObjectRef of its Witness in the object store (None: inputs)
    inputs: dict | None = None
    nbytes: int = 0  # witness bytes it holds against the budget
    units: int = 1  # its work, for routing (the key's domain size)
    attempts: int = 0
    actor: str = ""  # the actor it runs on now ("" = queued)
    lost_on: list = field(default_factory=list)  # actors that died under it
    t_queued: float = 0.0
    t_sent: float = 0.0
    left: bool = False  # done, failed or dropped: its bytes are back

    @property
    def job(self) -> Job:
        return self.part.job

    @property
    def key_id(self) -> str:
        return self.part.job.key.id

    @property
    def name(self) -> str:
        """The job id the actor's engine runs it under (a well-formed one: snarkd.ids; the seq keeps two jobs
        whose long ids share a prefix apart)."""
        return f"{self.job.id[:80]}.{self.job.seq}.{self.part.index}.{self.attempts}"


class WitnessBudget:
    """Bytes of witnesses the front holds; not thread-safe (the book's lock guards it)."""

    def __init__(self, budget: int):
        self.budget, self.used, self.peak, self.waits = int(budget), 0, 0, 0

    def snapshot(self) -> dict:
        return {"budget": self.budget, "used": self.used, "peak": self.peak, "waits": self.waits}


class Book(JobTable):
    def __init__(self, budget: int, max_attempts: int, keys, notify, max_active: int = 1 << 30):
        self.counters = Counters.fromkeys(COUNTERS, 0)
        super().__init__(keys, notify, max_active, count=self.counters.count)
        self.budget = WitnessBudget(budget)
        self.max_attempts = max_attempts
        self.tasks: dict[str, list[Task]] = {}  # job id -> its tasks
        self.phase_ms: dict[str, float] = {}

    def drop_locked(self, task: Task) -> None:
        self._leave(task)

    def forget_locked(self, job_id: str) -> None:
        super().forget_locked(job_id)
        self.tasks.pop(job_id, None)

    # -- admission --------------------------------------------------------------------------

    def reserve(self, nbytes: int, deadline: float, stopping: threading.Event) -> None:
        """Wait until `nbytes` of witnesses fit the budget, then hold them (the caller puts them next)."""
        with self.cv:
            if nbytes > self.budget.budget:
                raise TooLarge(f"the job's witnesses ({nbytes / 2**20:.1f} MiB) exceed the front's whole witness "
                               f"budget ([cluster] witness_budget, {self.budget.budget / 2**20:.1f} MiB)")
            waited = False
            while self.budget.used + nbytes > self.budget.budget:
                if not waited:
                    self.budget.waits += 1
                    waited = True
                left = deadline - time.monotonic()
                if left <= 0 or stopping.is_set():
                    raise Unavailable(f"the front's witness budget is full ({self.budget.used} of "
                                      f"{self.budget.budget} bytes held): try again later")
                self.cv.wait(min(0.2, left))
            self.budget.used += nbytes
            self.budget.peak = max(self.budget.peak, self.budget.used)

    def unreserve(self, nbytes: int) -> None:
        with self.cv:
            self._give_back(nbytes)

    def _give_back(self, nbytes: int) -> None:
        self.budget.used -= nbytes
        assert self.budget.used >= 0, "witness budget released more than reserved"
        self.cv.notify_all()

    def add(self, job: Job, tasks: list[Task]) -> None:
        with self.cv:
            now = time.monotonic()
            for t in tasks:
                t.t_queued = now
            self.add_locked(job, [(t.part.index, t) for t in tasks])
            self.tasks[job.id] = tasks

    # -- dispatch ---------------------------------------------------------------------------

    def take(self, choose, room=lambda: True) -> list[tuple[Task, object]]:
        """Tasks to send now, each with its actor: in priority order, every task for which choose(task)
        names an actor (choose books the actor's capacity); a task whose key has no free actor waits
        without holding up the tasks of other keys behind it. room(): whether any actor has room at all
        (no: nothing to look at)."""
        out = []
        with self.cv:
            keep, full = [], set()  # keys with no free actor in this round
            while self.pending and room():
                entry = heapq.heappop(self.pending)
                task = entry[-1]
                if task.left:  # proved meanwhile by an earlier attempt that was given up for lost
                    continue
                if task.job.deadline and task.job.state == QUEUED:  # past its deadline: never starts (its tasks
                    self.expire_locked(task.job, time.monotonic())      # leave the heap); a running one: the reaper's
                    if task.job.state in ENDED:
                        continue
                actor = None if task.key_id in full else choose(task)
                if actor is None:
                    full.add(task.key_id)
                    keep.append(entry)
                    continue
                task.attempts += 1
                task.actor, task.t_sent = actor.name, time.monotonic()
                task.part.state, task.part.t_admitted = RUNNING, task.t_sent
                task.part.timings["front_queue"] = (task.t_sent - task.t_queued) * 1000
                job = task.job
                if job.state == QUEUED:
                    self.start_locked(job, task.t_sent)
                out.append((task, actor))
            for entry in keep:
                heapq.heappush(self.pending, entry)
        return out

    def current(self, task: Task, attempt: int) -> bool:
        """Whether a reply about `attempt` still concerns the task (not already answered or re-sent)."""
        return not task.left and task.attempts == attempt and task.actor != ""

    # -- endings ----------------------------------------------------------------------------

    def proved(self, task: Task, attempt: int, reply: dict) -> bool:
        """The task's proof came back. True when it is the task's (first) proof; False for a duplicate
        or a proof of a job that ended meanwhile (dropped)."""
        with self.cv:
            if task.part.result is not None:
                self.counters["duplicates_dropped"] += 1
                log.warning("dropped a second proof of %s/%d (attempt %d): one proof per partition",
                            task.job.id, task.part.index, attempt)
                return False
            self._leave(task)
            job = task.job
            if job.state in ENDED:
                return False  # its key went back with its last task
            part = task.part
            t = dict(reply["timings"])
            t.pop("total", None)
            t["front_queue"] = part.timings.get("front_queue", 0.0)
            t["actor_call"] = (time.monotonic() - task.t_sent) * 1000
            self.eta.observe(job.key.id, t["actor_call"] / 1000, {"actor": t["actor_call"] / 1000})  # engine/eta.py
            t["total"] = (time.monotonic() - job.submitted) * 1000
            part.timings, part.spans = t, list(reply["spans"])
            part.result = Proof(reply["proof"], reply["public"], dict(t))
            part.state, part.exited = COMPLETED, True
            job.n_done += 1
            self.counters["partitions_completed"] += 1
            for k, v in t.items():
                self.phase_ms[k] = self.phase_ms.get(k, 0.0) + float(v)
            self.cv.later(self.notify, "on_partition", part)
            if job.n_done == len(job.partitions):
                self.end_locked(job, COMPLETED)  # which releases the key once every task has left
            return True

    def failed(self, task: Task, attempt: int, kind: str, error: str) -> None:
        """The task failed on a live actor for a reason of its own: its job fails."""
        with self.cv:
            if not self.current(task, attempt):
                return
            self._leave(task)
            if "self-verification failed" in error:
                self.counters["self_verify_failed"] += 1
            many = len(task.job.partitions) > 1
            self.end_locked(task.job, FAILED, f"partition {task.part.index}: {error}" if many else error, kind)

    def lost(self, task: Task, attempt: int, actor: str, why: str) -> bool:
        """The task's actor died (or could not take it): back into the queue, or the job fails after
        max_attempts. True when it was re-queued."""
        with self.cv:
            if not self.current(task, attempt):
                return False
            task.actor = ""
            task.lost_on.append(actor)
            job = task.job
            if job.state in ENDED:
                self._leave(task)  # its key goes back with its last task
                return False
            if task.attempts >= self.max_attempts:
                self._leave(task)
                self.end_locked(job, FAILED, f"partition {task.part.index} was lost {task.attempts} time(s), on "
                                             f"{', '.join(task.lost_on)} (last: {why}); [cluster] max_attempts = "
                                             f"{self.max_attempts}", SnarkdError.kind)
                return False
            self.counters["retried"] += 1
            task.t_queued = time.monotonic()
            heapq.heappush(self.pending, (job.rank, task.part.index, task))
            self.cv.notify_all()
            log.warning("partition %s/%d re-queued: %s (attempt %d of %d)", job.id, task.part.index, why,
                        task.attempts, self.max_attempts)
            return True

    def _leave(self, task: Task) -> None:
        if task.left:
            return
        task.left = True
        self.item_left_locked(task.job)
        task.actor = ""
        task.witness_ref = task.inputs = None  # the object store frees the witness with its last reference
        self._give_back(task.nbytes)

    def running_locked(self, job: Job) -> list[Task]:
        return [t for t in self.tasks.get(job.id, []) if t.actor and not t.left]

    def drained_locked(self, left: list[Job]) -> None:
        for j in left:  # their tasks on actors are not coming back: the front is stopping
            for t in self.tasks.get(j.id, []):
                self._leave(t)  # the last one releases the job's key
