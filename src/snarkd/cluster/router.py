"""Where a task goes: among the live actors that hold its key and have room, the one with the least
outstanding work (the sum of its tasks' units: a key's domain size); ties go to the actor that was given
a task longest ago, so equal actors take turns."""

from __future__ import annotations

import itertools
import time
from collections import deque
from dataclasses import dataclass, field

STARTING, LOADING, READY, DEAD = "starting", "loading", "ready", "dead"
THROUGHPUT_WINDOW = 60.0  # seconds of completions behind an actor's proofs/s


@dataclass(eq=False)
class ActorRecord:
    """What the front knows about one engine actor."""

    name: str
    node_id: str
    handle: object = None  # the Ray actor handle
    state: str = STARTING
    capacity: int = 1  # tasks it may hold at once
    keys: dict = field(default_factory=dict)  # key id -> the key's info on the actor (resident)
    key_errors: dict = field(default_factory=dict)  # key id -> why it could not load it
    outstanding: int = 0  # tasks sent, not yet back
    work: int = 0  # their units
    given: int = 0  # tasks ever sent
    last_given: int = 0  # the dispatch number of its latest task (0: none yet)
    completed: int = 0
    failed: int = 0
    lost: int = 0  # tasks that were on it when it died
    info: dict = field(default_factory=dict)  # its ready() answer
    status: dict = field(default_factory=dict)  # its last status() answer
    error: str = ""  # why it died
    created: float = field(default_factory=time.monotonic)
    ready_at: float = 0.0
    done_at: deque = field(default_factory=deque)  # monotonic times of recent completions

    def can_take(self, key_id: str) -> bool:
        return self.state == READY and key_id in self.keys and self.outstanding < self.capacity

    def completed_one(self, now: float) -> None:
        self.completed += 1
        self.done_at.append(now)
        while self.done_at and self.done_at[0] < now - THROUGHPUT_WINDOW:
            self.done_at.popleft()

    def throughput(self, now: float) -> float:
        """Proofs per second over the last minute (or since it became ready, when that is shorter)."""
        while self.done_at and self.done_at[0] < now - THROUGHPUT_WINDOW:
            self.done_at.popleft()
        if not self.ready_at:
            return 0.0
        span = min(THROUGHPUT_WINDOW, now - self.ready_at)
        return len(self.done_at) / span if span > 0 else 0.0


_dispatches = itertools.count(1)


def choose(actors, key_id: str, units: int = 1) -> ActorRecord | None:
    """The actor for one task of `key_id` (None: none can take it now); books it."""
    best = None
    for a in actors:
        if a.can_take(key_id) and (best is None or (a.work, a.last_given) < (best.work, best.last_given)):
            best = a
    if best is not None:
        best.outstanding += 1
        best.work += units
        best.given += 1
        best.last_given = next(_dispatches)
    return best


def returned(actor: ActorRecord, units: int) -> None:
    """A task came back from `actor` (proof, failure or loss): its room is free again."""
    actor.outstanding -= 1
    actor.work -= units
