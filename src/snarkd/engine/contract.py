"""The engine contract: what the daemon asks of an engine, and the code its two implementations share.

    Engine          engine/engine.py: the pipeline in this process
    ClusterEngine   cluster/front.py: the same calls over engine actors on Ray

The daemon (server.py, service.py, status.py, metrics.py) uses `ProvingEngine` and nothing else of them;
tests/engine/contract.py holds both to it (tests/engine/test_contract.py, tests/cluster/test_cluster_contract.py).
`EngineBase` is the lifecycle and submit code they share; each says how a job's partitions are queued
(`_queue`) and what stopping ends (`_shut_down`).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from snarkd.engine.errors import DeadlineExceeded, InputError, Unavailable
from snarkd.engine.jobs import Job
from snarkd.engine.lanes import weight
from snarkd.engine.limits import check_request
from snarkd.engine.requests import parse_partitions
from snarkd.engine.status import EngineStatus, KeyStatus

log = logging.getLogger("snarkd")


@dataclass
class Stopped:
    cancelled: int  # jobs the drain cancelled
    running_threads: list[str]  # workers still inside a stage (the daemon then exits without waiting)


@runtime_checkable
class ProvingEngine(Protocol):
    keys: object  # its KeyStore: load, unload, get, list, close_all
    observers: list  # objects with on_partition(part) / on_job(job), called under the engine's lock
    accepting: bool  # settable; False: submit raises Unavailable (the daemon's shutdown sets it)
    started: bool
    config: object  # its EngineConfig: the [limits] the daemon applies before submit (a stream's partitions)
    devices: list  # the Backends it proves on in this process (the daemon's aggregator takes their GPUs); a cluster
    #               front: none (its actors' devices are theirs: in status, per actor)

    def start(self) -> "ProvingEngine":
        """Start the workers; keys loaded before are ready for the first job."""

    def submit(self, key_id: str, witness=None, job_id: str = "", *, witnesses=None, inputs=None,
               priority: int = 0, batch_verify: bool = False, deadline_s: float | None = None,
               admit_by_estimate: bool = True, lane: str = "") -> Job:
        """Queue a job in `lane` ("": "default"; InputError naming an unknown one; its deadline when the job
        gives none; Busy when its weight would pass the lane's or [limits] bound, engine/lanes.py): witness / witnesses (.wtns bytes or Witness objects, one per partition) or inputs
        (input.json dicts or texts). batch_verify: its proofs are verified together, as one batch, instead of
        each on its own (the engine; a cluster front's actors verify each partition). deadline_s: seconds from
        now by which the job must have ended: refused (DeadlineExceeded, the estimate in its message) when the
        completion model (engine/eta.py) says it cannot, or unless admit_by_estimate is off (a job re-run after
        a restart), when it is already past; once accepted, it expires (state EXPIRED) when it passes. A bad
        request raises here (InputError, NotFound, TooLarge, Busy, AlreadyExists, Unavailable,
        DeadlineExceeded), before anything is queued."""

    def lane(self, name: str):
        """The lane of that name (config.lanes.Lane; "" = "default"); InputError naming an unknown one."""

    def witness_buffer(self, lane: str):
        """Where a witness of `lane` read by the daemon goes: a function nbytes -> uint8 array (page-locked host
        memory where a lane above priority 0 proves on a GPU in this process: its upload is then one DMA, no
        staging copy), or None (the reader's own array). InputError naming an unknown lane."""

    def jobs(self) -> list[Job]:
        """The jobs it holds now (unfinished, and the last finished ones), in submission order (ListJobs)."""

    def get(self, job_id: str) -> Job:
        """The job (NotFound once it is older than the finished jobs kept)."""

    def await_(self, job_id: str, timeout: float | None = None) -> Job:
        """The job, once it has ended or after timeout seconds."""

    def cancel(self, job_id: str, why: str = "cancelled by request") -> tuple[str, bool]:
        """(the job's state after, whether this call cancelled it)."""

    def status(self) -> EngineStatus:
        """The engine now (engine/status.py): what every status view renders."""

    def key_status(self, lk) -> KeyStatus:
        """A loaded key's status, with the devices its arrays are resident on."""

    def stop(self, drain_timeout: float = 0.0) -> Stopped:
        """Take no new work; let running jobs finish up to drain_timeout; cancel the rest; stop."""

    def force(self) -> None:
        """End a drain now (a second SIGTERM)."""

    def join_workers(self, timeout: float) -> bool:
        """Wait for the workers to end; whether they all did."""

    def all_alive(self) -> bool:
        """Every worker the engine started still runs."""


def check_deadline(deadline_s) -> float | None:
    """A job's deadline in seconds from now (None: none); InputError naming the field when not a number."""
    if deadline_s is None:
        return None
    try:
        d = float(deadline_s)
    except (TypeError, ValueError):
        raise InputError(f"deadline_s: expected seconds from now, got {deadline_s!r}") from None
    if d != d or d in (float("inf"), float("-inf")):
        raise InputError(f"deadline_s: expected a finite number of seconds, got {deadline_s!r}")
    return d


class EngineBase:
    """What Engine and ClusterEngine share. A subclass sets `config` (EngineConfig), `keys`, `book` (a
    JobTable) and `what` (for messages), and implements start, status, key_status and the hooks below."""

    what = "the engine"

    def __init__(self):
        self.observers: list = []
        self._stopping, self._force = threading.Event(), threading.Event()
        self._accepting, self._started = True, False
        self.t_start = time.monotonic()
        self._reaper: threading.Thread | None = None  # expires jobs past their deadline (started by the first)
        self._reaper_lock = threading.Lock()

    # -- hooks ----------------------------------------------------------------------------------

    def _queue(self, job: Job, parts: list, reload_ms: float) -> None:
        """Make the job's partitions from the parsed `parts` and queue them (undoing what it did on failure)."""
        raise NotImplementedError

    def _shut_down(self) -> list[str]:
        """After the drain: stop what runs; the names of the threads still inside a stage."""
        raise NotImplementedError

    def _cancelled(self, running: list) -> None:
        """A cancelled job's items that run elsewhere (the front tells their actors)."""

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def accepting(self) -> bool:
        return self._accepting and not self._stopping.is_set()

    @accepting.setter
    def accepting(self, value: bool) -> None:
        self._accepting = bool(value)

    @property
    def started(self) -> bool:
        return self._started

    def stop(self, drain_timeout: float = 0.0) -> Stopped:
        self._accepting = False
        left = self.book.drain(time.monotonic() + drain_timeout, self._force, self._stopping,
                               f"cancelled: {self.what} shut down before the job finished (drain_timeout "
                               f"{drain_timeout:g}s)")
        return Stopped(left, self._shut_down())

    def force(self) -> None:
        self._force.set()
        with self.book.cv:
            self.book.cv.notify_all()

    # -- jobs -----------------------------------------------------------------------------------

    def submit(self, key_id: str, witness=None, job_id: str = "", *, witnesses=None, inputs=None,
               priority: int = 0, batch_verify: bool = False, deadline_s: float | None = None,
               admit_by_estimate: bool = True, lane: str = "") -> Job:
        now, wall = time.monotonic(), time.time()
        deadline_s = check_deadline(deadline_s)
        if not self.accepting:
            raise Unavailable(f"{self.what} is not accepting new proofs (it is shutting down)")
        lk, reload_ms = self.keys.checkout(key_id)  # reloads a key the key budget evicted
        try:
            check_request(self.config, witness, witnesses, inputs)  # [limits], before anything is parsed
            parts = parse_partitions(lk, witness, witnesses, inputs)
            job = self.book.new_job(lk, job_id, priority, lane)
            job.batch_verify = bool(batch_verify)
            job.weight = weight(lk.key, len(parts))
            if deadline_s is None and self.book.lanes.lane(job.lane).deadline:
                deadline_s = self.book.lanes.lane(job.lane).deadline  # the lane's default
            if deadline_s is not None:
                self._admit_by_deadline(job, len(parts), deadline_s, now, admit_by_estimate)
                job.deadline, job.deadline_wall = now + deadline_s, wall + deadline_s
            self._queue(job, parts, reload_ms)
        except BaseException:
            with self.book.cv:
                self.book.count("rejected")
            self.keys.release(lk)
            raise
        if job.deadline:
            self._watch_deadlines()
        log.debug("job queued id=%s key=%s lane=%s partitions=%d priority=%d weight=%g", job.id, key_id, job.lane,
                  len(parts), job.priority, job.weight)
        return job

    def _admit_by_deadline(self, job: Job, n_parts: int, deadline_s: float, now: float, by_estimate: bool) -> None:
        """DeadlineExceeded when the job cannot end within deadline_s (already past; or, by_estimate, the
        completion model's estimate passes it); its estimate is kept on the job."""
        with self.book.cv:
            est = self.book.eta.estimate_locked(self.book.jobs.values(), job.key.id, n_parts, job.priority, now,
                                                job.lane_priority)
            job.eta_s = est.seconds
            late = deadline_s <= 0 or (by_estimate and est.seconds is not None and est.seconds > deadline_s)
            if late:
                self.book.count("deadline_refused")
                self.book.lanes.use[job.lane].deadline_missed += 1
        if late:
            what = "has already passed" if deadline_s <= 0 else f"is {deadline_s:.3g}s away"
            raise DeadlineExceeded(f"deadline: the job cannot finish in time: its deadline {what}; "
                                   f"{est.explain(job.key.id)}")

    def _watch_deadlines(self) -> None:
        """Start the thread that expires jobs past their deadline (once; it runs until the engine stops)."""
        with self._reaper_lock:
            if self._reaper is None:
                self._reaper = threading.Thread(target=self._expire_loop, name="deadlines", daemon=True)
                self._reaper.start()
        with self.book.cv:
            self.book.cv.notify_all()  # a nearer deadline than the one it waits for

    def _expire_loop(self) -> None:
        while not self._stopping.is_set():
            with self.book.cv:
                running, nxt = self.book.expire_due_locked(time.monotonic())
                if not running:
                    wait = 1.0 if nxt is None else min(1.0, max(0.0, nxt - time.monotonic()) + 0.001)
                    self.book.cv.wait(wait)
            if running:
                self._cancelled(running)

    def lane(self, name: str):
        return self.book.lanes.lane(name)

    def witness_buffer(self, lane: str):
        self.lane(lane)  # an unknown lane is refused before a witness is read
        return None

    def jobs(self) -> list[Job]:
        return self.book.jobs_now()

    def get(self, job_id: str) -> Job:
        return self.book.get(job_id)

    def await_(self, job_id: str, timeout: float | None = None) -> Job:
        return self.book.await_(job_id, timeout)

    def cancel(self, job_id: str, why: str = "cancelled by request") -> tuple[str, bool]:
        state, cancelled, running = self.book.cancel(job_id, why)
        self._cancelled(running)
        return state, cancelled

    def _notify(self, event: str, obj) -> None:
        for o in self.observers:
            try:
                getattr(o, event)(obj)
            except Exception:  # noqa: BLE001 - metrics must never break proving
                log.exception("observer failed")
