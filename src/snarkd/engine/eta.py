"""When would a job finish: the one completion model, used to admit a job with a deadline and shown in status.

The engine is a pipeline of stages, each with its workers (the engine: synthesis, the device slots, finalize; a
cluster front: its ready actors). For every partition that completes the model learns, per key, two moving
averages (EWMA, weight ALPHA for the newest):

    latency   seconds from its admission to its proof (what one partition takes through the pipeline, waits
              between stages included);
    stage     seconds of work in each stage (waits excluded).

A key's **interval** is the time the pipeline needs per partition of it once full: its busiest stage's work
divided by that stage's workers (max over stages). A new job of n partitions at priority p is then estimated as

    wait + own = sum over the partitions ahead of it of their key's interval
                 + the key's latency + (n - 1) * its interval

where "ahead" are the partitions of every unfinished job of a higher lane priority, or of the same lane priority
and priority >= p (the heap serves lanes by priority, then jobs by priority, then submission order): queued ones at their interval, running ones at what is left of it (at most the rest of
their latency). A key with no completed partition yet counts as zero, and a job of such a key gets no estimate (it
is admitted; only a deadline already past is refused). The estimate is a model, not a promise: the deadline itself
is enforced by expiry (jobtable.JobTable.expire_locked). It ignores batching on the device (a batch's time is
charged to each of its partitions: conservative) and jobs of higher priority that arrive later.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from snarkd.engine.jobs import ENDED, QUEUED, RUNNING

ALPHA = 0.3  # weight of the newest measurement in a key's moving averages


@dataclass
class EtaStatus:
    """The model's state now (EngineStatus.eta): what a deadline is judged against."""

    stage_workers: dict[str, int] = field(default_factory=dict)  # stage -> workers (what the intervals divide by)
    latency_s: dict[str, float] = field(default_factory=dict)  # key id -> admission to proof, per partition
    interval_s: dict[str, float] = field(default_factory=dict)  # key id -> pipeline time per partition once full
    samples: dict[str, int] = field(default_factory=dict)  # key id -> partitions measured
    backlog_s: float = 0.0  # the wait a new job of priority 0 would have now (the intervals of the work ahead)


@dataclass
class Estimate:
    seconds: float | None  # None: its key has no measurement yet
    wait_s: float
    own_s: float
    ahead: int  # partitions ahead of it

    def explain(self, key_id: str) -> str:
        if self.seconds is None:
            return f"no estimate: key {key_id!r} has no proof measured yet"
        return (f"estimated {self.seconds:.3g}s: {self.ahead} partition(s) ahead ~{self.wait_s:.3g}s, "
                f"its own ~{self.own_s:.3g}s (key {key_id!r})")


def _ewma(old: float | None, new: float) -> float:
    return new if old is None else (1 - ALPHA) * old + ALPHA * new


class ServiceTimes:
    """Per-key latencies and stage times; not thread-safe (the job table's lock guards it)."""

    def __init__(self, stages=dict):
        self.stages = stages  # () -> {stage: workers}, read at each estimate (a front's actors come and go)
        self.latency: dict[str, float] = {}
        self.stage_s: dict[str, dict[str, float]] = {}
        self.samples: dict[str, int] = {}

    def observe(self, key_id: str, latency: float, stage_s: dict[str, float]) -> None:
        """A partition of key_id completed: admission to proof took `latency` seconds, each stage its work."""
        self.latency[key_id] = _ewma(self.latency.get(key_id), max(0.0, float(latency)))
        mine = self.stage_s.setdefault(key_id, {})
        for stage, s in stage_s.items():
            mine[stage] = _ewma(mine.get(stage), max(0.0, float(s)))
        self.samples[key_id] = self.samples.get(key_id, 0) + 1

    def interval(self, key_id: str, workers: dict[str, int]) -> float | None:
        """Seconds of pipeline time per partition of key_id once the pipeline is full (None: not measured)."""
        if key_id not in self.latency:
            return None
        per_stage = [s / max(1, int(workers.get(st, 1) or 1)) for st, s in self.stage_s.get(key_id, {}).items()]
        return max(per_stage) if per_stage else self.latency[key_id]

    def estimate_locked(self, jobs, key_id: str, n_parts: int, priority: int, now: float | None = None,
                        lane_priority: int = 0) -> Estimate:
        """The estimate for a new job of key_id with n_parts partitions at `priority` in a lane of
        `lane_priority`, behind `jobs` (the table's jobs: the ended are skipped; those of a lower lane, or of
        the same lane and a lower priority, are not ahead)."""
        now = time.monotonic() if now is None else now
        workers = self.stages()
        intervals: dict[str, float] = {}
        ahead, wait = 0, 0.0
        for job in jobs:
            if job.state in ENDED or (job.lane_priority, job.priority) < (lane_priority, priority):
                continue
            k = job.key.id
            if k not in intervals:
                intervals[k] = self.interval(k, workers) or 0.0
            for p in job.partitions:
                if p.exited or p.state not in (QUEUED, RUNNING):
                    continue
                cost = intervals[k]
                if p.state == RUNNING and p.t_admitted:
                    cost = min(cost, max(0.0, self.latency.get(k, 0.0) - (now - p.t_admitted)))
                ahead, wait = ahead + 1, wait + cost
        own = self.interval(key_id, workers)
        if own is None:
            return Estimate(None, wait, 0.0, ahead)
        own_s = self.latency[key_id] + (max(1, n_parts) - 1) * own
        return Estimate(wait + own_s, wait, own_s, ahead)

    def status_locked(self, jobs) -> EtaStatus:
        workers = dict(self.stages())
        return EtaStatus(workers, dict(self.latency), {k: self.interval(k, workers) for k in self.latency},
                         dict(self.samples), self.estimate_locked(jobs, "", 1, 0).wait_s)
