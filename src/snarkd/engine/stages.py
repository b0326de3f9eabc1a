"""The pipeline's stages: one bounded priority queue between two stages, and one worker loop for all.

A Stage names what it does (`work`), where its partitions come from (`take`) and
where they go next (`hand_on`). `run` is the only worker loop: it times the
stage and its phases, records spans, drops partitions of ended jobs at every
boundary, and turns failures into failed jobs (a bad input is the job's fault;
anything else is logged with its traceback as an internal error).
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable

from snarkd.engine.jobs import Partition, SpanTimer
from snarkd.errors import InputError, SnarkdError

log = logging.getLogger("snarkd")
POLL = 0.2


class StageQueue:
    """A bounded priority queue between two stages (Job.rank: lane priority, then job priority, then submission
    order). Putters waiting for room are let in by rank too, not in the order the room woke them: a full device
    queue with a dozen bulk partitions waiting to enter (their synthesis workers blocked) otherwise keeps an
    urgent partition out for as many device stages (bench/daemon_gpu.py --urgent-every: urgent p50 7.5x its idle
    latency at 2^20, j = 32)."""

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._items: list = []  # heap of (rank, index, seq, partition)
        self._waiting: list = []  # heap of the waiting putters' (rank, index, seq)
        self._waiting_parts: dict = {}  # their partitions, by key (a yield point may take one: take_matching)
        self._taken: set = set()  # keys of waiting putters' partitions taken before they entered (their put is done)
        self._seq = itertools.count()
        self._cv = threading.Condition()

    @property
    def capacity(self) -> int:
        return self.maxsize

    def put(self, part: Partition, stopping: threading.Event) -> bool:
        key = (part.job.rank, part.index, next(self._seq))
        with self._cv:
            heapq.heappush(self._waiting, key)
            self._waiting_parts[key] = part
            self._cv.notify_all()  # a lane's own worker takes waiting putters' partitions too (get_matching)
            try:
                while not stopping.is_set():
                    if key in self._taken:  # a stage took it while it waited (take_matching(waiting=True))
                        self._taken.discard(key)
                        return True
                    if len(self._items) < self.maxsize and self._waiting[0] == key:
                        heapq.heappop(self._waiting)
                        del self._waiting_parts[key]
                        heapq.heappush(self._items, (*key, part))
                        self._cv.notify_all()
                        return True
                    self._cv.wait(POLL)
                if key in self._taken:
                    self._taken.discard(key)
                    return True
                self._leave_locked(key)
                return False
            except BaseException:
                self._taken.discard(key)
                self._leave_locked(key)
                raise

    def _leave_locked(self, key) -> None:
        """A waiting putter gives up (the engine stops): its place in line goes."""
        if key in self._waiting:
            self._waiting.remove(key)
            heapq.heapify(self._waiting)
            self._cv.notify_all()
        self._waiting_parts.pop(key, None)

    def get(self, stopping: threading.Event) -> Partition | None:
        with self._cv:
            while not stopping.is_set():
                if self._items:
                    item = heapq.heappop(self._items)
                    self._cv.notify_all()
                    return item[-1]
                self._cv.wait(POLL)
        return None

    def take_matching(self, match: Callable[[Partition], bool], limit: int, waiting: bool = False) -> list[Partition]:
        """Up to `limit` queued partitions for which match(part) holds, highest priority first, taken out now
        (no waiting): companions of a partition that a batched stage runs with it. waiting: partitions whose
        putters wait for room count as queued (taken, their put returns as if they had entered)."""
        if limit <= 0:
            return []
        with self._cv:
            return self._take_matching_locked(match, limit, waiting)

    def get_matching(self, match: Callable[[Partition], bool], stopping: threading.Event) -> Partition | None:
        """The best partition for which match(part) holds, queued or waiting to enter (as take_matching with
        waiting), blocking until there is one; None when the engine stops. A lane's own device worker takes its
        work so (Engine._lane_worker)."""
        with self._cv:
            while not stopping.is_set():
                got = self._take_matching_locked(match, 1, True)
                if got:
                    return got[0]
                self._cv.wait(POLL)
        return None

    def _take_matching_locked(self, match, limit: int, waiting: bool) -> list[Partition]:
        pool = [(it[:-1], it[-1], True) for it in self._items]
        if waiting:
            pool += [(k, p, False) for k, p in self._waiting_parts.items()]
        chosen = sorted((c for c in pool if match(c[1])), key=lambda c: c[0])[:limit]
        if not chosen:
            return []
        queued = {c[0] for c in chosen if c[2]}
        if queued:
            self._items[:] = [it for it in self._items if it[:-1] not in queued]
            heapq.heapify(self._items)
        for key, _, was_queued in chosen:
            if not was_queued:
                self._waiting.remove(key)
                del self._waiting_parts[key]
                self._taken.add(key)
        heapq.heapify(self._waiting)
        self._cv.notify_all()
        return [c[1] for c in chosen]

    def head(self, waiting: bool = False) -> Partition | None:
        """The partition that would be taken next (left in the queue), or None; waiting: or that would enter next,
        when it ranks before every queued one (a full queue's waiting putters)."""
        with self._cv:
            best = self._items[0][:-1] if self._items else None
            if waiting and self._waiting and (best is None or self._waiting[0] < best):
                return self._waiting_parts[self._waiting[0]]
            return self._items[0][-1] if self._items else None

    def ahead_of(self, rank: tuple) -> bool:
        """Whether a partition of a better rank (Job.rank) than `rank` waits here."""
        with self._cv:
            return bool(self._items) and self._items[0][0] < rank

    def __len__(self) -> int:
        return len(self._items)


class PartitionsFailed(InputError):
    """A bad input that one partition's stage found in others (a job's batch verification runs in the finalize
    of its last partition): `where` names the partitions at fault in the job's error ("" = the one at hand)."""

    def __init__(self, message: str, where: str = ""):
        super().__init__(message)
        self.where = where


class StageFailed(SnarkdError):
    """A stage's own verdict on a partition (a key whose file changed while the job read it): the job fails
    (Engine.fail says why), without a traceback in the log."""


@dataclass
class Stage:
    name: str  # "synthesis" | "device" | "finalize": also the phase its total is timed under
    take: Callable[[], Partition | None]  # blocks; None when the engine stops
    work: Callable[[Partition, SpanTimer], None]
    hand_on: Callable[[Partition], None]
    queue_phase: str = ""  # the phase that times the wait in this stage's input queue
    wait_phase: str = ""  # a phase inside `work` that waits (not counted in the stage's total)
    # a batched stage: gather(part) -> more partitions to run with it; work_batch(parts, timers) runs them
    gather: Callable[[Partition], list] | None = None
    work_batch: Callable[[list, list], None] | None = None


def run(stage: Stage, worker: str, engine) -> None:
    """One worker of `stage` until the engine stops. `engine` provides dropped(part) and fail(part, msg, kind).
    A batched stage runs the partition it took with the companions gather() finds; a failure fails them all."""
    while True:
        part = stage.take()
        if part is None:
            return
        if stage.queue_phase:
            part.timings[stage.queue_phase] = (time.monotonic() - part.t_ready) * 1000
        if engine.dropped(part):
            continue
        batch = [part]
        if stage.gather is not None:
            for p in stage.gather(part):
                if stage.queue_phase:
                    p.timings[stage.queue_phase] = (time.monotonic() - p.t_ready) * 1000
                if not engine.dropped(p):
                    batch.append(p)
        run_batch(stage, batch, worker, engine)


def run_batch(stage: Stage, batch: list, worker: str, engine) -> None:
    """The stage's work on a batch taken from its queue (the worker loop's, or a device stage run at another's
    yield point: engine/preempt.py): timed, recorded, handed on; a failure fails the batch's jobs."""
    part = batch[0]
    timers = [SpanTimer(worker) for _ in batch]
    start = time.time()
    try:
        if stage.work_batch is not None:
            stage.work_batch(batch, timers)
        else:
            stage.work(part, timers[0])
    except Exception as exc:  # noqa: BLE001 - the jobs fail with the error's kind, the worker lives on
        if isinstance(exc, StageFailed) or (isinstance(exc, SnarkdError) and exc.kind != SnarkdError.kind):
            error, kind, where = str(exc), exc.kind, getattr(exc, "where", "")
        else:  # a bug
            log.exception("job %s partition %d: %s stage failed", part.job.id, part.index, stage.name)
            error, kind, where = f"internal error in the {stage.name} stage: {exc!r}", SnarkdError.kind, ""
        for p in batch:
            engine.fail(p, error, kind, where)
        return
    end = time.time()
    for p, timer in zip(batch, timers):
        waited = timer.ms.get(stage.wait_phase, 0.0) / 1000 if stage.wait_phase else 0.0
        p.record(stage.name, timer, start + waited, timer.let_go or end)
        p.t_ready = time.monotonic()
        stage.hand_on(p)


class Workers:
    """The engine's worker threads, by stage: each runs one Stage until the engine stops."""

    def __init__(self, expected: dict[str, int]):
        self.expected = expected  # stage name -> how many workers it should have
        self._threads: dict[str, list[threading.Thread]] = {k: [] for k in expected}

    def spawn(self, stage: Stage, name: str, engine, setup=None) -> None:
        def main():
            if setup is not None:
                setup()  # e.g. pin the thread to its GPU for its whole life
            run(stage, name, engine)

        t = threading.Thread(target=main, name=name, daemon=True)
        t.start()
        self._threads[stage.name].append(t)

    def alive(self, kind: str | None = None) -> int:
        return sum(t.is_alive() for k in ([kind] if kind else list(self._threads)) for t in self._threads[k])

    def all_alive(self) -> bool:
        return all(self.alive(k) == n for k, n in self.expected.items())

    def running(self) -> list[str]:
        return [t.name for ts in self._threads.values() for t in ts if t.is_alive()]

    def join(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        for t in (t for ts in self._threads.values() for t in ts):
            t.join(max(0.0, deadline - time.monotonic()))
        return self.alive() == 0
