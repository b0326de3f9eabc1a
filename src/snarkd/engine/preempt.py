"""Preemption at chunk boundaries: a device stage of a higher lane runs at a yield point of a lower lane's stage.

A backend's device stage calls its `yield_point` (a parameter, None: no yielding) at its boundaries: between its
MSMs (the CPU), before each MSM and between an MSM's phases (a GPU proof with resident bases: after its digit sort
and each accumulation round, gpu/msm.msm_window_sums), and in a streamed pass between two proofs' MSMs of a chunk
and between chunks (gpu/stream.msm_pass).
There the engine looks for device work of a lane whose priority is above every job of the running stage, ready
for this device, in this order:

  - a worker of this device waiting at the gate for a slot with such work (a device with fewer slots than
    workers, as the CPU's one): the running stage lends it its slot and waits until that stage is done;
  - the device queue's head, or the first partition waiting to enter it when it is full (its synthesis worker
    blocked handing it on): the running stage's own thread takes it (with companions of its key, up to the
    backend's batch) and runs its device stage, then hands it on to finalize as any device worker would.

On a GPU with lanes above priority 0, the device also has a lane worker of its own for their work: such a stage
begins at once beside the running ones (begin_alongside), which pause at their next yield point, so its latency
does not include the wait for one (an MSM of a bulk proof: 5-16 ms at 2^20 under load on an H200).

A stage run so is an ordinary device stage of its lane: on a GPU, on the worker's highest-priority stream
(Backend.urgent), beside the at most one chunk of work the paused stage has queued on its own stream (the pass's
host loop waits for each chunk's digit sort). Then the paused stage goes on where it stopped: nothing is redone. It keeps its buffers and its device memory,
so the newcomer must fit beside them (Backend.preempt_blocker); when it does not, preemption is skipped and
counted once per partition by reason ("device_memory", "key_not_resident"), and that work waits its turn. One
preemption at a time per device, and none inside a preempting stage: no two stages can wait on each other. While it
runs, the device's other stages of lower lanes stop at their next yield point, and one that gets a slot waits before
it begins, until it ends (Preemption.holding).
"""

from __future__ import annotations

import contextlib
import threading
import time

SKIP_REASONS = ("device_memory", "key_not_resident")  # why a preemption was skipped (Backend.preempt_blocker)


def lane_level(parts) -> int:
    """The highest lane priority among a stage's partitions: only work of a higher lane preempts it."""
    return max(p.job.lane_priority for p in parts)


class Waiter:
    """A device stage waiting at a gate: its partitions, its lane level, and whether a slot was lent to it."""

    def __init__(self, parts: list):
        self.parts, self.level = parts, lane_level(parts)
        self.lent = False  # it runs on a paused stage's slot (given back at release)
        self.returned = False


class DeviceGate:
    """One device's slots (the backend's max_concurrent, else one per device worker). A stage at a yield point
    may lend its slot to a waiting stage of a higher lane (lend), and waits until that one releases it."""

    def __init__(self, slots: int):
        self._cv = threading.Condition()
        self._free = slots
        self.waiting: list[Waiter] = []  # read without the lock only as a hint (yield points' quick check)

    def acquire(self, parts: list) -> Waiter:
        with self._cv:
            w = Waiter(parts)
            self.waiting.append(w)
            while not w.lent and self._free == 0:
                self._cv.wait()
            self.waiting.remove(w)
            if not w.lent:
                self._free -= 1
            return w

    def release(self, w: Waiter) -> None:
        with self._cv:
            if w.lent:
                w.returned = True  # back to the stage that lent it
            else:
                self._free += 1
            self._cv.notify_all()

    def free_slots(self) -> int:
        with self._cv:
            return self._free

    def best_waiter(self, above: int) -> Waiter | None:
        """The waiting stage of the highest lane above `above` (the first to come among equals), or None."""
        with self._cv:
            best = None
            for w in self.waiting:
                if not w.lent and w.level > above and (best is None or w.level > best.level):
                    best = w
            return best

    def lend(self, w: Waiter) -> bool:
        """Lend the caller's slot to `w` and wait until it is given back; False when `w` no longer waits (it got a
        slot of its own meanwhile)."""
        with self._cv:
            if w.lent or w not in self.waiting:
                return False
            w.lent = True
            self._cv.notify_all()
            while not w.returned:
                self._cv.wait()
        return True


class Preemption:
    """The yield points of one device's stages. `engine` provides the device queue (_device_q), the accounting
    (acct under _lock) and run_nested(d, parts, worker); `gate` is the device's DeviceGate."""

    def __init__(self, engine, d: int, gate: DeviceGate):
        self.engine, self.d, self.gate = engine, d, gate
        self.backend = engine.devices[d]
        self._busy = threading.Lock()  # one preemption at a time on this device (never nested)
        self._hold = threading.Condition()
        # the holds on this device now, as (lane level, since: time.monotonic()) pairs: a new tuple on every change,
        # so a yield point's quick check reads one attribute without the lock
        self._holds: tuple = ()

    @contextlib.contextmanager
    def holding(self, level: int):
        """While a stage of lane `level` runs at a yield point, every other stage of this device below that level
        waits at its next yield point (held): with several device workers the others' kernels otherwise share the
        GPU with the urgent stage's (2^20 on an H200: its kernels 67 ms beside a second bulk stage, 36 alone).
        At yield points only stages that began before it are held: their device memory was reserved when the
        preempting stage was found to fit beside them (preempt_blocker), so it waits on nothing they hold. A stage
        that gets a slot while it runs waits before it begins instead (wait_to_begin), holding no device memory."""
        hold = self._begin_hold(level)
        try:
            yield
        finally:
            self._end_hold(hold)

    def _begin_hold(self, level: int) -> tuple:
        hold = (level, time.monotonic())
        with self._hold:
            self._holds += (hold,)
        return hold

    def _end_hold(self, hold: tuple) -> None:
        with self._hold:
            holds = list(self._holds)
            holds.remove(hold)
            self._holds = tuple(holds)
            self._hold.notify_all()

    def _above(self, level: int, began: float | None = None) -> bool:
        """Whether a hold above `level` runs (one that began after `began`, when given)."""
        return any(h > level and (began is None or began < since) for h, since in self._holds)

    def _wait_while_above(self, level: int, began: float | None, timers: list) -> float:
        if not self._above(level, began):  # without the lock: the common case, nothing held
            return 0.0
        w0 = time.time()
        with self._hold:
            self._hold.wait_for(lambda: not self._above(level, began))
        return self._record(timers, w0, time.time())

    @staticmethod
    def _record(timers: list, w0: float, w1: float) -> float:
        for t in timers:
            t.record("preempted", (w1 - w0) * 1000)
            t.spans.append({"stage": "preempted", "worker": t.worker, "start": w0, "end": w1})
        return w1 - w0

    def wait_to_begin(self, parts: list, timers: list) -> float:
        """A stage that got a slot while a stage of a higher lane holds this device waits before it begins
        (before it reserves device memory or launches anything), so its kernels do not share the GPU with the
        holding stage's. It holds nothing the holding stage needs yet: the wait cannot deadlock, where holding
        it at its first yield point could (its memory reserved after the preempting stage was found to fit).
        Returns the seconds waited, recorded as "preempted"."""
        return self._wait_while_above(lane_level(parts), None, timers)

    def begin_alongside(self, parts: list) -> tuple | None:
        """A higher lane's stage taken by the device's lane worker (Engine._lane_worker) begins at once beside the
        stages running, on the highest-priority stream, and holds the device: they pause at their next yield point
        until end_alongside. One preemption at a time per device (this waits for one at a yield point to end).
        None, and nothing held, when a slot is free (nothing to begin beside: it takes the slot, as any stage) or
        when its work does not fit beside the running stages (Backend.preempt_blocker, counted as skipped): it then
        waits for a slot as any stage does."""
        if self.gate.free_slots():
            return None
        self._busy.acquire()
        if self._blocked(parts):
            self._busy.release()
            return None
        hold = self._begin_hold(lane_level(parts))
        self._counted(len(parts))
        return hold

    def end_alongside(self, hold: tuple) -> None:
        self._end_hold(hold)
        self._busy.release()

    def yield_point(self, parts: list, timers: list) -> "YieldPoint":
        """The yield point for a stage running `parts` (timed on `timers`): a callable that returns the seconds the
        stage was paused (0.0 when it went on at once). Time paused is recorded as the phase "preempted". A stage
        of a lane of priority above 0 (the default lane's), running on a slot of its own (no preemption needed: a slot was free when it
        came), holds the device from its first yield point (its memory reserved by then) until close(): the
        lower stages beside it wait as they would for a preempting stage."""
        return YieldPoint(self, parts, timers)

    def _yield(self, level: int, began: float, timers: list) -> float:
        waited = self._wait_while_above(level, began, timers)
        if waited:
            return waited
        q = self.engine._device_q
        head = q.head(waiting=True)
        if not (head is not None and head.job.lane_priority > level) and \
                not any(w.level > level for w in list(self.gate.waiting)):
            return 0.0  # the common case: nothing of a higher lane waits for a device
        if not self._busy.acquire(blocking=False):
            return 0.0  # another stage of this device is preempted now: this one goes on
        try:
            w0 = time.time()
            if not (self._lend(level) or self._run_queued(level, timers[0].worker)):
                return 0.0
            w1 = time.time()
        finally:
            self._busy.release()
        return self._record(timers, w0, w1)

    def _blocked(self, parts: list) -> bool:
        """Whether the device cannot take these partitions' stage beside the paused one; counts why, once per
        partition."""
        why = self.backend.preempt_blocker(parts[0].job.key.key)
        if why:
            with self.engine._lock:
                for p in parts:
                    if why not in p.preempt_skipped:
                        p.preempt_skipped += (why,)
                        self.engine.acct.count_preempt_skipped(self.d, why)
        return bool(why)

    def _counted(self, n: int) -> None:
        with self.engine._lock:
            self.engine.acct.count_preemption(self.d, n)

    def _lend(self, level: int) -> bool:
        w = self.gate.best_waiter(level)
        if w is None or self._blocked(w.parts):
            return False
        with self.holding(w.level):
            if not self.gate.lend(w):
                return False
        self._counted(len(w.parts))
        return True

    def _run_queued(self, level: int, worker: str) -> bool:
        q = self.engine._device_q
        head = q.head(waiting=True)
        if head is None or head.job.lane_priority <= level or self._blocked([head]):
            return False
        got = q.take_matching(lambda p: p is head, 1, waiting=True)
        if not got:
            return False  # another worker took it
        lk = head.job.key
        limit = self.backend.batch_limit(lk.key) - 1
        got += q.take_matching(lambda p: p.job.key is lk and p.job.lane_priority > level, limit, waiting=True) \
            if limit > 0 else []
        with self.holding(head.job.lane_priority):
            ran = self.engine.run_nested(self.d, got, worker)
        self._counted(ran)
        return ran > 0


class YieldPoint:
    """One stage's yield point (Preemption.yield_point); close() when the stage ends."""

    def __init__(self, prem: Preemption, parts: list, timers: list):
        self.prem, self.timers = prem, timers
        self.level, self.began = lane_level(parts), time.monotonic()
        self.hold = None  # this stage's own hold (a lane above 0), from its first yield point

    def __call__(self) -> float:
        if self.level > 0 and self.hold is None:
            self.hold = self.prem._begin_hold(self.level)
        return self.prem._yield(self.level, self.began, self.timers)

    def close(self) -> None:
        if self.hold is not None:
            self.prem._end_hold(self.hold)
            self.hold = None
