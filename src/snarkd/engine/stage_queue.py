"""The bounded priority queue between two of the pipeline's stages (engine/stages.py runs the stages; a device
stage's yield point, engine/preempt.py, reads the device queue's head from here without calling back into the
stage that is running it)."""

from __future__ import annotations

import heapq
import itertools
import threading
from typing import Callable

from snarkd.engine.jobs import Partition

POLL = 0.2  # seconds a waiting putter or taker sleeps between looks at the engine's stop flag


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
        self._lock = threading.Lock()
        # Who is woken: the takers (the device workers and a lane worker: a few) on every change, and of the waiting
        # putters only the one whose turn it is, each on a condition of its own. One condition for all had every
        # blocked synthesis worker (16 at j = 32) wake on each take, find it was not its turn and sleep again:
        # GIL turns taken from the device workers launching kernels (2^20 on an H200 at j = 32: 8% more time per
        # proof, bench/results/h200-round12).
        self._takers = threading.Condition(self._lock)
        self._putters: dict = {}  # a waiting putter's key -> its condition (on _lock)

    @property
    def capacity(self) -> int:
        return self.maxsize

    def put(self, part: Partition, stopping: threading.Event) -> bool:
        key = (part.job.rank, part.index, next(self._seq))
        with self._lock:
            heapq.heappush(self._waiting, key)
            self._waiting_parts[key] = part
            turn = self._putters[key] = threading.Condition(self._lock)
            self._takers.notify_all()  # a lane's own worker takes waiting putters' partitions too (get_matching)
            try:
                while not stopping.is_set():
                    if key in self._taken:  # a stage took it while it waited (take_matching(waiting=True))
                        self._taken.discard(key)
                        return True
                    if len(self._items) < self.maxsize and self._waiting[0] == key:
                        heapq.heappop(self._waiting)
                        del self._waiting_parts[key]
                        heapq.heappush(self._items, (*key, part))
                        self._takers.notify_all()
                        self._wake_next_locked()  # room may be left for the next in line
                        return True
                    turn.wait(POLL)
                if key in self._taken:
                    self._taken.discard(key)
                    return True
                self._leave_locked(key)
                return False
            except BaseException:
                self._taken.discard(key)
                self._leave_locked(key)
                raise
            finally:
                del self._putters[key]

    def _wake_next_locked(self) -> None:
        """Wake the waiting putter whose turn it is, when there is room for it."""
        if self._waiting and len(self._items) < self.maxsize:
            self._putters[self._waiting[0]].notify()

    def _leave_locked(self, key) -> None:
        """A waiting putter gives up (the engine stops): its place in line goes."""
        if key in self._waiting:
            self._waiting.remove(key)
            heapq.heapify(self._waiting)
            self._wake_next_locked()
        self._waiting_parts.pop(key, None)

    def get(self, stopping: threading.Event) -> Partition | None:
        with self._lock:
            while not stopping.is_set():
                if self._items:
                    item = heapq.heappop(self._items)
                    self._wake_next_locked()
                    return item[-1]
                self._takers.wait(POLL)
        return None

    def take_matching(self, match: Callable[[Partition], bool], limit: int, waiting: bool = False) -> list[Partition]:
        """Up to `limit` queued partitions for which match(part) holds, highest priority first, taken out now
        (no waiting): companions of a partition that a batched stage runs with it. waiting: partitions whose
        putters wait for room count as queued (taken, their put returns as if they had entered)."""
        if limit <= 0:
            return []
        with self._lock:
            return self._take_matching_locked(match, limit, waiting)

    def get_matching(self, match: Callable[[Partition], bool], stopping: threading.Event) -> Partition | None:
        """The best partition for which match(part) holds, queued or waiting to enter (as take_matching with
        waiting), blocking until there is one; None when the engine stops. A lane's own device worker takes its
        work so (Engine._lane_worker)."""
        with self._lock:
            while not stopping.is_set():
                got = self._take_matching_locked(match, 1, True)
                if got:
                    return got[0]
                self._takers.wait(POLL)
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
                self._putters[key].notify()  # its put is done
        heapq.heapify(self._waiting)
        self._wake_next_locked()
        return [c[1] for c in chosen]

    def head(self, waiting: bool = False) -> Partition | None:
        """The partition that would be taken next (left in the queue), or None; waiting: or that would enter next,
        when it ranks before every queued one (a full queue's waiting putters)."""
        with self._lock:
            best = self._items[0][:-1] if self._items else None
            if waiting and self._waiting and (best is None or self._waiting[0] < best):
                return self._waiting_parts[self._waiting[0]]
            return self._items[0][-1] if self._items else None

    def ahead_of(self, rank: tuple) -> bool:
        """Whether a partition of a better rank (Job.rank) than `rank` waits here."""
        with self._lock:
            return bool(self._items) and self._items[0][0] < rank

    def __len__(self) -> int:
        return len(self._items)
