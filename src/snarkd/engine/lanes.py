"""Lanes at run time: which lane a job runs in, what it weighs, and what each lane holds now.

A job's **weight** is its estimated device time in units of one 2^16 proof: each partition weighs its key's
domain size / 2^16 (MSM and NTT work grow about linearly in it), so a 10-partition 2^24 job weighs 2560 beside
a 2^16 proof's 1. Queue bounds ([limits] max_queued_weight, a lane's max_queued) count unfinished weight, not
jobs. Memory is weighed in bytes (engine/memory.py) when a partition is admitted into the pipeline.

A lane's **share** keeps that fraction of the pipeline's slots, of the synthesis workers (at least one) and of
the memory budget for it: another lane may not take the last ones it has not used. A partition holds a slot
from its admission until it leaves the pipeline (the engine's slots are what its stages hold at most: synthesis
workers + device queue + device slots + finalize queue + finalize workers), a synthesis worker from its admission
until it is handed on to the device queue, and its bytes until they are given back. Not thread-safe: the job table's
lock guards it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from snarkd.config.lanes import DEFAULT_LANE, Lane, lanes_with_default
from snarkd.errors import InputError

UNIT_DOMAIN = 1 << 16  # a partition of this domain size weighs 1


def weight(key, n_parts: int) -> float:
    """Weight units of a job of n_parts partitions of `key` (a prover key: its domain_size)."""
    return max(1, int(n_parts)) * max(1, int(key.domain_size)) / UNIT_DOMAIN


@dataclass
class LaneUse:
    lane: Lane
    slots: int = 0  # pipeline slots its partitions hold now
    synthesis: int = 0  # synthesis workers its partitions hold now (synthesizing, or waiting to hand on)
    bytes: int = 0  # memory budget its partitions hold now
    weight: float = 0.0  # of its unfinished jobs
    queued: int = 0  # unfinished jobs not yet running
    running: int = 0
    expired: int = 0  # its jobs that expired (since start)
    deadline_missed: int = 0  # its jobs refused for their deadline, expired, or finished past it
    completed: int = 0


@dataclass
class Lanes:
    """The lanes of one engine (or cluster front) and their use now."""

    config: dict = field(default_factory=dict)  # name -> Lane ([scheduler] lanes)
    slots: int = 1 << 30  # pipeline slots in all (the engine sets them)
    synthesis_workers: int = 1 << 30  # the engine's synthesis workers (the engine sets them)
    budget: int = 0  # bytes of the memory budget (0: reservations of memory off)

    def __post_init__(self):
        self.use = {n: LaneUse(lane) for n, lane in lanes_with_default(_lanes(self.config)).items()}

    def lane(self, name: str) -> Lane:
        """The lane named so ("" = "default"); InputError naming it when there is none."""
        name = name or DEFAULT_LANE
        use = self.use.get(name)
        if use is None:
            raise InputError(f"lane: no lane {name!r} is configured (lanes: {', '.join(sorted(self.use))}; "
                             f"[scheduler.lanes.NAME] in the config)")
        return use.lane

    def reserved_slots(self, name: str) -> int:
        return math.ceil(self.use[name].lane.share * self.slots - 1e-9) if self.slots < 1 << 30 else 0

    def reserved_synthesis(self, name: str) -> int:
        """Synthesis workers kept for the lane: its share of them, at least one where it has a share."""
        share = self.use[name].lane.share
        if not share or self.synthesis_workers >= 1 << 30:
            return 0
        return max(1, math.ceil(share * self.synthesis_workers - 1e-9))

    def _kept_for_others(self, name: str, held, reserved) -> float:
        """What the other lanes' shares still keep free of a resource (their reservation minus their use)."""
        return sum(max(0, reserved(n) - held(u)) for n, u in self.use.items() if n != name)

    def admissible(self, name: str, nbytes: int, used_bytes: int, in_slots: int) -> bool:
        """May a partition of lane `name` needing nbytes be admitted now, with in_slots slots and used_bytes of
        the budget taken in all? Only the other lanes' unused reservations are checked here (the budget itself
        by the caller)."""
        if in_slots + 1 + self._kept_for_others(name, lambda u: u.slots, self.reserved_slots) > self.slots:
            return False
        # the share's slots are of the whole pipeline, so bulk could still hold every synthesis worker (synthesizing,
        # or blocked handing on to a full device queue) and an urgent job would wait for one to come free
        # (what they keep leaves this lane one worker at least: few workers and several shares never starve it)
        in_synthesis = sum(u.synthesis for u in self.use.values())
        kept = min(self._kept_for_others(name, lambda u: u.synthesis, self.reserved_synthesis), self.synthesis_workers - 1)
        if kept and in_synthesis + 1 + kept > self.synthesis_workers:
            return False
        if self.budget:
            kept = self._kept_for_others(name, lambda u: u.bytes, lambda n: int(self.use[n].lane.share * self.budget))
            if used_bytes + nbytes + kept > self.budget:
                return False
        return True

    def ended(self, job, state: str, now: float) -> None:
        """Count a job's end in its lane's deadline counters."""
        use = self.use[job.lane]
        if state == "EXPIRED":
            use.expired += 1
            use.deadline_missed += 1
        elif state == "COMPLETED":
            use.completed += 1
            if job.deadline and now > job.deadline:  # [pipeline] finish_past_deadline
                use.deadline_missed += 1


def priority_levels(config: dict) -> int:
    """How many lane priorities there are (EngineConfig.lanes, with the default lane): with one, no job's device work
    ever preempts another's, so device stages need no yield points (engine/preempt.py)."""
    return len({lane.priority for lane in lanes_with_default(_lanes(config)).values()})


def urgent_share(config: dict) -> float:
    """The largest share of a lane above priority 0 (EngineConfig.lanes): what streamed keys' device plans leave
    free for such a lane's device stage run at a bulk stage's yield point (engine/preempt.py)."""
    return max((lane.share for lane in _lanes(config).values() if lane.priority > 0), default=0.0)


def has_priority_lane(config: dict) -> bool:
    """Whether a lane above priority 0 is configured (EngineConfig.lanes): GPUs then get a lane worker each."""
    return any(lane.priority > 0 for lane in _lanes(config).values())


def _lanes(config: dict) -> dict:
    """Lanes from EngineConfig.lanes: Lane objects, or their fields as dicts (a config that crossed Ray)."""
    return {n: v if isinstance(v, Lane) else Lane(**{**v, "name": n}) for n, v in (config or {}).items()}
