"""Tests' choreography of a preemption (engine/preempt.py): a bulk device stage held at its first yield point until
what the test waits for is there (an urgent partition queued, or waiting at the device's gate), so an urgent job
surely arrives during it, without timing anything."""

from __future__ import annotations

import threading
import time

from snarkd.config.lanes import Lane
from snarkd.engine import Engine, EngineConfig, KeyStore

LANES = {"urgent": Lane("urgent", priority=10, share=0.5), "bulk": Lane("bulk", priority=0)}


def lanes_engine(circ, **kw) -> Engine:
    """An engine (not started) with an urgent and a bulk lane (LANES) and circ's key loaded as "k": one synthesis
    worker, one thread, one device worker unless kw says otherwise."""
    keys = KeyStore("/")
    cfg = dict(synthesis_workers=1, threads=1, workers_per_device=1, memory_budget="64MiB", lanes=LANES)
    cfg.update(kw)
    eng = Engine(EngineConfig(**cfg), keys)
    keys.load("k", str(circ.zkey))
    return eng


def hold_first_yield(engine, until, lane: str = "bulk", d: int = 0, timeout: float = 60.0,
                     skip: int = 0) -> threading.Event:
    """Wrap device d's yield points: the first stage of `lane` to reach one (past its first `skip`) sets the returned
    event and waits there until until() holds (at most `timeout` seconds), then calls the engine's yield point;
    every other call goes straight through."""
    prem = engine.preemption[d]
    real = prem.yield_point
    reached = threading.Event()

    def yield_point(parts, timers):
        inner = real(parts, timers)
        if reached.is_set() or parts[0].job.lane != lane:
            return inner
        calls = []

        def held() -> float:
            calls.append(1)
            if len(calls) == skip + 1:
                reached.set()
                end = time.monotonic() + timeout
                while not until() and time.monotonic() < end:
                    time.sleep(0.002)
            return inner()

        held.close = inner.close  # the engine ends the stage's own hold through it
        return held

    prem.yield_point = yield_point
    return reached


def alongside(engine, d: int = 0) -> tuple[threading.Event, threading.Event]:
    """Device d's lane worker (Preemption.begin_alongside) choreographed: `began` is set once a stage of it has
    begun beside the running ones, and that stage's device work waits (60 s at most) until a stage of a lower lane
    is held at one of its yield points (`held`), so the hold is seen however short the stages are. Patches the
    engine's own objects (its Preemption and backend view); returns (began, held)."""
    prem, be = engine.preemption[d], engine.devices[d]
    began, held = threading.Event(), threading.Event()
    real_begin, real_wait = prem.begin_alongside, prem._wait_while_above

    def begin(parts):
        hold = real_begin(parts)
        if hold is not None:
            began.set()
        return hold

    def wait(level, since, timers):
        if prem._above(level, since):
            held.set()
        return real_wait(level, since, timers)

    def gated(real):
        def stage(*args, **kw):
            if began.is_set() and threading.current_thread().name.endswith("/lanes"):
                held.wait(60)
            return real(*args, **kw)
        return stage

    prem.begin_alongside, prem._wait_while_above = begin, wait
    be.device_stage, be.device_stage_batch = gated(be.device_stage), gated(be.device_stage_batch)
    return began, held


def gate_waiter(engine, d: int = 0):
    """until(): a stage of a lane above priority 0 waits for a slot at device d's gate."""
    gate = engine._device_gates[d]
    return lambda: any(w.level > 0 for w in list(gate.waiting))


def queued_head(engine, lane: str = "urgent"):
    """until(): a partition of `lane` is the device queue's next (queued, or first to enter a full queue)."""
    def check() -> bool:
        head = engine._device_q.head(waiting=True)
        return head is not None and head.job.lane == lane
    return check


def span(part, stage: str) -> dict:
    (s,) = [s for s in part.spans if s["stage"] == stage]
    return s
