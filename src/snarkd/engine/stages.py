"""The pipeline's stages: one worker loop for all (the queue between two stages: engine/stage_queue.py).

A Stage names what it does (`work`), where its partitions come from (`take`) and
where they go next (`hand_on`). `run` is the only worker loop: it times the
stage and its phases, records spans, drops partitions of ended jobs at every
boundary, and turns failures into failed jobs (a bad input is the job's fault;
anything else is logged with its traceback as an internal error).
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable

from snarkd.engine.jobs import Partition, SpanTimer
from snarkd.errors import InputError, SnarkdError

log = logging.getLogger("snarkd")


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


def lower_priority(nice: int) -> None:
    """The calling thread `nice` steps nicer than it is, and with it every native thread it starts later (a new
    thread inherits its creator's niceness): the synthesis workers', so that where they and the stages on a
    proof's critical path want the same cores, those are served first. Linux only: there each thread has a
    niceness of its own (setpriority of its thread id); elsewhere that call would renice the whole process."""
    if nice <= 0 or not sys.platform.startswith("linux"):
        return
    tid = threading.get_native_id()
    try:
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + nice))
    except OSError as exc:  # a sandbox that forbids it: the worker runs at the daemon's priority
        log.warning("could not lower thread %s's priority by %d: %s", threading.current_thread().name, nice, exc)


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
