"""Jobs and partitions: what the engine schedules, and what it reports about each."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from snarkd.prover.timing import PhaseTimer

QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED = "QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED"
EXPIRED = "EXPIRED"  # its deadline passed: never started (queued), or stopped at a stage boundary (running)
ENDED = (COMPLETED, FAILED, CANCELLED, EXPIRED)


class SpanTimer(PhaseTimer):
    """A PhaseTimer that also keeps each phase's wall-clock span, for the timeline."""

    def __init__(self, worker: str = "") -> None:
        super().__init__()
        self.worker = worker
        self.spans: list[dict] = []
        # where a stage's work hands its resource back before its bookkeeping ends (the device stage's slot),
        # the wall-clock time it did so: the stage's span ends there, so a stage that waited for that slot
        # never appears to start before the span it waited for ended
        self.let_go: float | None = None

    @contextmanager
    def phase(self, name: str):
        t0 = time.time()
        try:
            with super().phase(name):
                yield
        finally:
            self.spans.append({"stage": name, "worker": self.worker, "start": t0, "end": time.time()})


@dataclass(eq=False)
class Partition:
    job: "Job"
    index: int
    witness: object = None  # snarkd.formats.wtns.Witness (None when the job carries inputs)
    inputs: dict | None = None
    witness_source: str = ""  # how a witness from inputs was made: native, recorded, wasm
    est: object = None  # snarkd.engine.memory.Estimate
    state: str = QUEUED
    reserved: int = 0  # bytes of the memory budget held now
    timings: dict = field(default_factory=dict)  # phase -> ms (names from snarkd.prover.timing.PHASES)
    spans: list = field(default_factory=list)  # {"stage","worker","start","end"} wall-clock seconds
    result: object = None  # snarkd.prover.Proof
    synth: object = None
    sums: object = None
    w: object = None  # witness values, kept for finalize
    exited: bool = False  # left the pipeline (finished or dropped)
    device_taken: bool = False  # a device stage has taken it (batching: not waited for again)
    t_ready: float = 0.0  # monotonic: when it entered its current queue
    t_admitted: float = 0.0  # monotonic: when it was admitted (its service time runs from here: engine/eta.py)
    slot: bool = False  # holds one of its lane's pipeline slots (admission to the end of its device stage)
    in_synthesis: bool = False  # holds a synthesis worker (admission until handed on to the device queue)
    preempt_skipped: tuple = ()  # why it could not run at a lower lane's yield point (each reason counted once)

    def record(self, stage: str, timer: SpanTimer, start: float, end: float) -> None:
        """A stage's phases, its total (ms) and its span (wall-clock seconds)."""
        self.timings.update(timer.ms)
        self.spans.extend(timer.spans)
        self.timings[stage] = (end - start) * 1000
        self.spans.append({"stage": stage, "worker": timer.worker, "start": start, "end": end})

    def drop_buffers(self) -> None:
        self.witness = self.inputs = self.synth = self.sums = self.w = None


@dataclass(eq=False)
class Job:
    id: str
    key: object  # snarkd.engine.keys.LoadedKey
    priority: int = 0
    seq: int = 0
    partitions: list = field(default_factory=list)
    submitted: float = field(default_factory=time.monotonic)
    submitted_wall: float = field(default_factory=time.time)
    state: str = QUEUED
    started: float = 0.0
    finished: float = 0.0
    error: str = ""
    error_kind: str = ""  # the kind of the error it failed with (snarkd/errors.py), "" when it did not
    done: threading.Event = field(default_factory=threading.Event)
    released: bool = False  # key released (all partitions left the pipeline)
    items_out: int = 0  # its work items in the job table not yet left (JobTable.item_left_locked)
    client: str = ""  # who submitted it (the daemon's token name or peer address)
    named: bool = False  # its id came from the client (who can then Await it after losing a Prove call)
    name: str = ""  # the id its client knows it by, when not `id` (the daemon's per-token job ids) ("" = id)
    n_done: int = 0
    admission_ms: float = 0.0  # the daemon's, before the engine had the job: its witnesses taken (0 in process)
    batch_verify: bool = False  # its proofs verified together once all are proved (Engine._batch_verify)
    n_finalized: int = 0  # partitions whose proof is assembled (under the engine's lock): the last batch-verifies
    deadline: float = 0.0  # monotonic: it must have ended by then, else it expires (0: no deadline)
    deadline_wall: float = 0.0  # the same instant as Unix time (what the journal and ListJobs show)
    eta_s: float | None = None  # the completion estimate at admission, seconds from submission (engine/eta.py)
    lane: str = "default"  # its lane (engine/lanes.py)
    lane_priority: int = 0  # its lane's priority: served before the job's own
    weight: float = 0.0  # its estimated device time in units of a 2^16 proof (engine/lanes.weight)

    @property
    def rank(self) -> tuple:
        """Its place in every queue: its lane's priority, then its own, then submission order."""
        return (-self.lane_priority, -self.priority, self.seq)

    @property
    def results(self) -> list:
        """One snarkd.prover.Proof per partition, in order (when COMPLETED)."""
        return [p.result for p in self.partitions]

    @property
    def result(self):
        """The first partition's proof (the whole result of a one-partition job)."""
        return self.partitions[0].result if self.partitions else None

    @property
    def timings(self) -> dict:
        """Job-level ms: each phase summed over partitions, queue_wait to the first start, total."""
        out: dict[str, float] = {}
        for p in self.partitions:
            for k, v in p.timings.items():
                if k not in ("queue_wait", "total"):
                    out[k] = out.get(k, 0.0) + v
        if self.started:
            out["queue_wait"] = (self.started - self.submitted) * 1000
        if self.finished:
            out["total"] = (self.finished - self.submitted) * 1000
        if self.admission_ms:
            out["admission"] = self.admission_ms
        return out

    def info(self) -> dict:
        return {"id": self.id, "key": self.key.id, "priority": self.priority, "state": self.state,
                "partitions": len(self.partitions), "done": self.n_done, "error": self.error,
                "deadline": self.deadline_wall, "lane": self.lane, "weight": self.weight}
