"""The engine's jobs: the job table (engine/jobtable.py, shared with the cluster front), admission
under the memory budget, and how a partition ends. Everything here runs under one condition variable
(`cv`).

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

from snarkd.engine.accounting import Accounting
from snarkd.engine.jobs import COMPLETED, ENDED, FAILED, QUEUED, RUNNING, Job, Partition
from snarkd.engine.jobtable import KEEP_FINISHED, POLL, JobTable

log = logging.getLogger("snarkd")
__all__ = ["KEEP_FINISHED", "Scheduler"]
STAGES = ("synthesis", "device", "finalize")  # the pipeline's stages, timed under their names (stages.Stage)


class Scheduler(JobTable):
    def __init__(self, keys, acct: Accounting, notify, max_active: int = 1 << 30):
        super().__init__(keys, notify, max_active, count=acct.count)
        self.acct, self.budget = acct, acct.budget

    def drop_locked(self, part: Partition) -> None:
        self.exit_locked(part)

    def add(self, job: Job) -> None:
        with self.cv:
            now = time.monotonic()
            for p in job.partitions:
                p.t_ready = now
            self.add_locked(job, [(p.index, p) for p in job.partitions])

    def admit(self, stopping: threading.Event) -> Partition | None:
        """The first pending partition (Job.rank) whose bytes fit the budget and that no other lane's unused
        share keeps out (engine/lanes.py), reserved here. A partition kept out by a share does not hold up
        another lane's work behind it; one that waits for memory does (the budget is everyone's)."""
        with self.cv:
            waited = False
            while not stopping.is_set():
                if self.pending:
                    part = self.pending[0][-1]
                    if part.job.deadline and self.expire_locked(part.job, time.monotonic())[0]:
                        continue  # a job past its deadline never starts: its partitions left the heap
                    if self.budget.fits(part.est.total):
                        entry = self._admissible_locked()
                        if entry is not None:
                            return self._take_locked(entry)
                    elif not waited:
                        self.budget.waits += 1
                        waited = True
                        log.debug("partition %s/%d waits for memory: needs %d, %d of %d in use", part.job.id,
                                  part.index, part.est.total, self.budget.used, self.budget.budget)
                self.cv.wait(POLL)
        return None

    def _admissible_locked(self):
        """The heap's first entry that the lanes admit now (the head, or, when the head's lane is kept out by
        another's share, the first of a lane that is not), else None."""
        lanes, used, slots = self.lanes, self.budget.used, sum(u.slots for u in self.lanes.use.values())
        head = self.pending[0]
        if lanes.admissible(head[-1].job.lane, head[-1].est.total, used, slots):
            return head
        ok = {n for n in lanes.use if n != head[-1].job.lane and lanes.admissible(n, 0, used, slots)}
        best = None
        for e in self.pending:  # O(pending), only while the head is kept out
            p = e[-1]
            if p.job.lane in ok and self.budget.fits(p.est.total) and (best is None or e < best) and \
                    lanes.admissible(p.job.lane, p.est.total, used, slots):
                best = e
        return best

    def _take_locked(self, entry) -> Partition:
        if entry is self.pending[0]:
            heapq.heappop(self.pending)
        else:
            self.pending.remove(entry)
            heapq.heapify(self.pending)
        part = entry[-1]
        self.budget.reserve(part.est.total)
        part.reserved, part.state, part.slot = part.est.total, RUNNING, True
        use = self.lanes.use[part.job.lane]
        use.bytes, use.slots, use.synthesis = use.bytes + part.reserved, use.slots + 1, use.synthesis + 1
        part.in_synthesis = True
        self.acct.in_flight += 1
        now = time.monotonic()
        part.timings["queue_wait"] = (now - part.t_ready) * 1000
        part.t_admitted = now
        if part.job.state == QUEUED:
            self.start_locked(part.job, now)
        return part

    def free_slot_locked(self, part: Partition) -> None:
        """It left the pipeline: its lane's slot is free for the next partition."""
        if part.slot:
            part.slot = False
            self.lanes.use[part.job.lane].slots -= 1
            self.cv.notify_all()

    def left_synthesis(self, part: Partition) -> None:
        """It was handed on to the device queue (or left the pipeline): its lane's synthesis worker is free."""
        with self.cv:
            self.left_synthesis_locked(part)

    def left_synthesis_locked(self, part: Partition) -> None:
        if part.in_synthesis:
            part.in_synthesis = False
            self.lanes.use[part.job.lane].synthesis -= 1
            self.cv.notify_all()

    def dropped(self, part: Partition, stopping: threading.Event) -> bool:
        """True (and the partition leaves the pipeline) when its job has ended or the engine stops."""
        with self.cv:
            if part.job.state in ENDED or stopping.is_set():
                self.exit_locked(part)
                return True
        return False

    def fail(self, part: Partition, error: str, kind: str, where: str = "") -> None:
        """The partition's job fails; where: the partitions at fault when not `part` ("partitions 2, 5")."""
        with self.cv:
            where = where or (f"partition {part.index}" if len(part.job.partitions) > 1 else "")
            self.end_locked(part.job, FAILED, f"{where}: {error}" if where else error, kind)
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
            if part.t_admitted:  # its latency and stage times, for the completion model (engine/eta.py); a device
                # stage's own work, less the time another lane's device work ran inside it (engine/preempt.py)
                work = {s: part.timings[s] / 1000 for s in STAGES if s in part.timings}
                if "device" in work:
                    work["device"] = max(0.0, work["device"] - part.timings.get("preempted", 0.0) / 1000)
                self.eta.observe(job.key.id, time.monotonic() - part.t_admitted, work)
            self.acct.count("partitions_completed")
            self.acct.add_phases(part.timings)
            self.cv.later(self.notify, "on_partition", part)
            if not part.exited:
                part.exited = True
                self.item_left_locked(job)
            self.free_slot_locked(part)
            if part.reserved:
                self.release_locked(part, part.reserved)
            part.sums = part.w = part.synth = None
            if job.n_done == len(job.partitions):
                self.end_locked(job, COMPLETED)  # which releases the key: every partition has left

    def exit_locked(self, part: Partition) -> None:
        """The partition leaves the pipeline: its memory goes back to the budget."""
        if part.exited:
            return
        part.exited = True
        self.free_slot_locked(part)
        self.left_synthesis_locked(part)
        if part.reserved:
            self.budget.release(part.reserved)
            self.lanes.use[part.job.lane].bytes -= part.reserved
            part.reserved = 0
        if part.state == RUNNING:
            self.acct.in_flight -= 1
        part.drop_buffers()
        self.item_left_locked(part.job)
        self.cv.notify_all()

    def release_locked(self, part: Partition, nbytes: int) -> None:
        """Give part of a partition's reservation back (its big buffers died)."""
        nbytes = min(nbytes, part.reserved)
        part.reserved -= nbytes
        self.budget.release(nbytes)
        self.lanes.use[part.job.lane].bytes -= nbytes
        self.cv.notify_all()
