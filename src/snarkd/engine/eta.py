"""When would a job finish: the one completion model, used to admit a job with a deadline and shown in status.

    service time  per key: a moving average (EWMA, ALPHA) of the seconds one partition of the key spends from
                  its admission to its proof, measured on every partition that completes (live, so it follows
                  the load and the device actually used);
    the queue     the partitions ahead of the new job: those of every unfinished job of at least its priority
                  (the heap serves higher priority first, then submission order), queued ones at their key's
                  service time, running ones at what is left of it (never below zero);
    estimate      wait + own = (work ahead) / parallelism + (own service time) * ceil(own partitions / parallelism)
                  where parallelism is how many partitions the engine serves at once (the engine: its device
                  slots, the narrowest stage every partition passes; a cluster front: its ready actors).

A key with no completed partition yet has no service time: its partitions count as zero, and a job of such a
key gets no estimate (it is admitted; only a deadline already past is refused). The estimate is a model, not a
promise: the deadline itself is enforced by expiry (jobtable.JobTable.expire_locked).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from snarkd.engine.jobs import ENDED, QUEUED, RUNNING

ALPHA = 0.3  # weight of the newest measurement in a key's moving average


@dataclass
class EtaStatus:
    """The model's state now (EngineStatus.eta): what a deadline is judged against."""

    parallelism: int
    service_s: dict[str, float] = field(default_factory=dict)  # key id -> seconds per partition (EWMA)
    samples: dict[str, int] = field(default_factory=dict)  # key id -> partitions measured
    backlog_s: float = 0.0  # the wait a new job of priority 0 would have now (work ahead / parallelism)


@dataclass
class Estimate:
    seconds: float | None  # None: its key has no service time yet
    wait_s: float
    own_s: float
    ahead: int  # partitions ahead of it
    parallelism: int

    def explain(self, key_id: str) -> str:
        if self.seconds is None:
            return f"no estimate: key {key_id!r} has no proof measured yet"
        return (f"estimated {self.seconds:.3g}s: {self.ahead} partition(s) ahead ~{self.wait_s:.3g}s at parallelism "
                f"{self.parallelism}, its own ~{self.own_s:.3g}s (key {key_id!r})")


class ServiceTimes:
    """Per-key service times; not thread-safe (the job table's lock guards it)."""

    def __init__(self, parallelism=lambda: 1):
        self.parallelism = parallelism  # () -> int, read at each estimate (a front's actors come and go)
        self.service: dict[str, float] = {}
        self.samples: dict[str, int] = {}

    def observe(self, key_id: str, seconds: float) -> None:
        s = max(0.0, float(seconds))
        old = self.service.get(key_id)
        self.service[key_id] = s if old is None else (1 - ALPHA) * old + ALPHA * s
        self.samples[key_id] = self.samples.get(key_id, 0) + 1

    def _lanes(self) -> int:
        return max(1, int(self.parallelism() or 1))

    def estimate_locked(self, jobs, key_id: str, n_parts: int, priority: int, now: float | None = None) -> Estimate:
        """The estimate for a new job of key_id with n_parts partitions at `priority`, behind `jobs` (the table's
        unfinished and finished jobs: the ended are skipped)."""
        now = time.monotonic() if now is None else now
        lanes = self._lanes()
        ahead, work = 0, 0.0
        for job in jobs:
            if job.state in ENDED or job.priority < priority:
                continue
            s = self.service.get(job.key.id, 0.0)
            for p in job.partitions:
                if p.state == QUEUED and not p.exited:
                    ahead, work = ahead + 1, work + s
                elif p.state == RUNNING and not p.exited:
                    ahead, work = ahead + 1, work + max(0.0, s - (now - p.t_admitted if p.t_admitted else 0.0))
        wait = work / lanes
        own = self.service.get(key_id)
        if own is None:
            return Estimate(None, wait, 0.0, ahead, lanes)
        own_s = own * math.ceil(max(1, n_parts) / lanes)
        return Estimate(wait + own_s, wait, own_s, ahead, lanes)

    def status_locked(self, jobs) -> EtaStatus:
        backlog = self.estimate_locked(jobs, "", 1, 0).wait_s
        return EtaStatus(self._lanes(), dict(self.service), dict(self.samples), backlog)
