"""Preemption at yield points (engine/preempt.py) on the CPU backend, whose device stage yields before each MSM: an
urgent partition that arrives while a bulk device stage runs has its device stage run inside the bulk one's (its
span within the bulk's "preempted" span), on the bulk's thread when it was queued or on its own worker when it waited
at the device's gate; bulk work of the same lane is never run so; a preemption the device cannot take beside the
paused stage is skipped and counted once by reason; every proof verifies. Ordering is read from the partitions'
spans (the timeline), never from wall-clock thresholds."""

from __future__ import annotations

import json
import threading
import time

from preemption import LANES, alongside, gate_waiter, hold_first_yield, lanes_engine, queued_head, span

from snarkd.config.lanes import Lane
from snarkd.engine.jobs import COMPLETED
from snarkd.engine.preempt import DeviceGate
from snarkd.engine.stage_queue import StageQueue
from snarkd.prover.backend import CPU
from snarkd.verifier import verify

def finished(eng, circ, jobs):
    vk = json.loads(circ.vk.read_text())
    for j in jobs:
        done = eng.await_(j.id, 120)
        assert done.state == COMPLETED, done.error
        assert verify(vk, done.result.public, done.result.proof)
    return [j.partitions[0] for j in jobs]


def bulk_then_urgent(eng, circ, wtns, running, until):
    """A bulk job held at its device stage's first yield point until until() holds, an urgent job submitted once
    it is there: both finished and verified; their first partitions."""
    reached = hold_first_yield(eng, until)
    running(eng)
    data = wtns.read_bytes()
    bulk = eng.submit("k", data, "bulk0", lane="bulk")
    assert reached.wait(60)
    urgent = eng.submit("k", data, "urgent", lane="urgent")
    return finished(eng, circ, [bulk, urgent])


def inside(inner: dict, outer: dict) -> bool:
    return outer["start"] <= inner["start"] and inner["end"] <= outer["end"]


def test_a_queued_urgent_stage_runs_at_the_bulk_stages_yield_point(chain_bn128, running):
    circ, wtns = chain_bn128
    eng = lanes_engine(circ)  # one device worker: the urgent partition waits in the device queue
    reached = hold_first_yield(eng, queued_head(eng))
    running(eng)
    data = wtns.read_bytes()
    bulk = eng.submit("k", data, "bulk0", lane="bulk")
    assert reached.wait(60)
    later = eng.submit("k", data, "bulk1", lane="bulk")  # queued too: the same lane never preempts
    end = time.monotonic() + 60
    while eng._device_q.head() is not later.partitions[0]:  # it fills the device queue (capacity 1): the
        assert time.monotonic() < end  # urgent partition then waits to enter, its synthesis worker blocked
        time.sleep(0.002)
    urgent = eng.submit("k", data, "urgent", lane="urgent")
    b, b1, u = finished(eng, circ, [bulk, later, urgent])
    paused, u_dev, b_dev = span(b, "preempted"), span(u, "device"), span(b, "device")
    assert inside(u_dev, paused) and inside(paused, b_dev)  # the urgent device stage ran inside the bulk one's
    assert u_dev["worker"] == b_dev["worker"]  # on the paused stage's thread
    assert b.timings["preempted"] > 0 and "preempted" not in u.timings
    assert span(b1, "device")["start"] >= b_dev["end"]  # the second bulk partition waited its turn
    dev = eng.status().devices[0]
    assert dev.preemptions == 1 and dev.preempt_skipped == {}


def test_an_urgent_stage_waiting_at_the_gate_borrows_the_paused_stages_slot(chain_bn128, running):
    circ, wtns = chain_bn128
    eng = lanes_engine(circ, workers_per_device=2)  # two workers, the CPU's one slot: the idle one takes the urgent partition
    b, u = bulk_then_urgent(eng, circ, wtns, running, gate_waiter(eng))
    paused, u_dev, b_dev = span(b, "preempted"), span(u, "device"), span(b, "device")
    assert inside(u_dev, paused) and inside(paused, b_dev)
    assert u_dev["worker"] != b_dev["worker"]  # on its own worker, with the bulk stage's slot
    assert eng.status().devices[0].preemptions == 1


def test_a_preemption_the_device_cannot_take_is_skipped_and_counted_once(chain_bn128, running, monkeypatch):
    circ, wtns = chain_bn128
    monkeypatch.setattr(CPU, "preempt_blocker", lambda key: "device_memory")
    eng = lanes_engine(circ)
    b, u = bulk_then_urgent(eng, circ, wtns, running, queued_head(eng))
    # it waited for the whole bulk stage, whose later yield points (four more MSMs) did not count it again
    assert span(u, "device")["start"] >= span(b, "device")["end"] and "preempted" not in b.timings
    assert u.preempt_skipped == ("device_memory",)
    dev = eng.status().devices[0]
    assert dev.preemptions == 0 and dev.preempt_skipped == {"device_memory": 1}


def test_a_device_whose_stages_overlap_runs_an_urgent_stage_at_once_on_its_lane_worker(chain_bn128, running,
                                                                                       monkeypatch):
    """A device whose stages run side by side (max_concurrent 0, a GPU's) has a lane worker: with its one slot
    taken by a bulk stage, the urgent partition's device stage begins at once there, and the bulk stage waits at
    its next yield point until that stage ends."""
    circ, wtns = chain_bn128
    monkeypatch.setattr(CPU, "max_concurrent", 0)
    eng = lanes_engine(circ)  # one device worker (one slot), and the lane worker
    assert eng.workers.expected["device"] == 2
    began, _ = alongside(eng)
    b, u = bulk_then_urgent(eng, circ, wtns, running, began.is_set)
    assert "cpu/lanes" in eng.workers.running()  # the lane worker is a thread of its own
    paused, u_dev, b_dev = span(b, "preempted"), span(u, "device"), span(b, "device")
    assert u_dev["worker"].endswith("/lanes") and u.timings["device_wait"] == 0.0
    assert u_dev["start"] <= paused["start"] < u_dev["end"] < b_dev["end"]  # begun at once; the bulk stage held
    assert "preempted" not in u.timings
    assert eng.status().devices[0].preemptions == 1


def test_a_lane_workers_stage_that_does_not_fit_beside_the_running_ones_waits_for_a_slot(chain_bn128, running,
                                                                                        monkeypatch):
    circ, wtns = chain_bn128
    monkeypatch.setattr(CPU, "max_concurrent", 0)
    monkeypatch.setattr(CPU, "preempt_blocker", lambda key: "device_memory")
    eng = lanes_engine(circ)
    b, u = bulk_then_urgent(eng, circ, wtns, running, gate_waiter(eng))
    assert span(u, "device")["worker"].endswith("/lanes")
    assert span(u, "device")["start"] >= span(b, "device")["end"] and "preempted" not in b.timings
    dev = eng.status().devices[0]
    assert dev.preemptions == 0 and dev.preempt_skipped == {"device_memory": 1}


def test_with_preempt_off_a_stage_runs_to_its_end(chain_bn128, running, monkeypatch):
    circ, wtns = chain_bn128
    eng = lanes_engine(circ, preempt=False)
    urgent_queued = queued_head(eng)
    real, entered = CPU.device_stage, threading.Event()

    def first_waits(*args, **kw):  # the bulk stage (the first) goes on once the urgent partition is queued
        assert kw.get("yield_point") is None
        if not entered.is_set():
            entered.set()
            end = time.monotonic() + 60
            while not urgent_queued() and time.monotonic() < end:
                time.sleep(0.002)
        return real(*args, **kw)

    monkeypatch.setattr(CPU, "device_stage", first_waits)
    running(eng)
    data = wtns.read_bytes()
    bulk = eng.submit("k", data, "bulk0", lane="bulk")
    assert entered.wait(60)
    urgent = eng.submit("k", data, "urgent", lane="urgent")
    b, u = finished(eng, circ, [bulk, urgent])
    assert span(u, "device")["start"] >= span(b, "device")["end"] and "preempted" not in b.timings
    assert eng.status().devices[0].preemptions == 0


def test_device_stages_yield_only_where_lanes_of_two_priorities_exist(chain_bn128, running, monkeypatch):
    """One priority level (no lanes, or lanes all of one priority) leaves nothing to preempt with: the device stage
    gets no yield point (no check between an MSM's phases); lanes of two priorities give it one."""
    circ, wtns = chain_bn128
    real, seen = CPU.device_stage, []

    def record(*args, **kw):
        seen.append(kw.get("yield_point"))
        return real(*args, **kw)

    monkeypatch.setattr(CPU, "device_stage", record)
    same = {"a": Lane("a", priority=0, share=0.25), "b": Lane("b", priority=0)}
    for lanes, lane in (({}, ""), (same, "a"), (LANES, "bulk")):
        eng = running(lanes_engine(circ, lanes=lanes))
        finished(eng, circ, [eng.submit("k", wtns.read_bytes(), "one", lane=lane)])
    assert [y is None for y in seen] == [True, True, False]


def test_a_partition_waiting_to_enter_a_full_queue_can_be_taken():
    q, stop = StageQueue(1), threading.Event()
    part = lambda name, level: type("P", (), {"index": 0, "name": name,  # noqa: E731
                                               "job": type("J", (), {"rank": (-level, 0, 0)})()})()
    bulk, urgent = part("bulk", 0), part("urgent", 10)
    assert q.put(bulk, stop)
    entered = []
    t = threading.Thread(target=lambda: entered.append(q.put(urgent, stop)))
    t.start()
    while q.head(waiting=True) is not urgent:
        time.sleep(0.001)
    assert q.head() is bulk  # queued, it is not; it would enter first
    assert q.take_matching(lambda p: p is urgent, 1) == []  # only with waiting=True
    assert q.take_matching(lambda p: p is urgent, 1, waiting=True) == [urgent]
    t.join(10)
    assert entered == [True] and len(q) == 1 and q.get(stop) is bulk and q.head(waiting=True) is None


def test_get_matching_blocks_until_a_matching_partition_is_queued_or_waits_to_enter():
    q, stop = StageQueue(1), threading.Event()
    part = lambda name, level: type("P", (), {"index": 0, "name": name,  # noqa: E731
                                               "job": type("J", (), {"rank": (-level, 0, 0)})()})()
    bulk, urgent = part("bulk", 0), part("urgent", 10)
    got = []
    t = threading.Thread(target=lambda: got.append(q.get_matching(lambda p: p.name == "urgent", stop)))
    t.start()
    assert q.put(bulk, stop)  # not its kind: it stays queued
    entered = []
    u = threading.Thread(target=lambda: entered.append(q.put(urgent, stop)))  # the queue is full: it waits to enter
    u.start()
    t.join(10)
    u.join(10)
    assert got == [urgent] and entered == [True] and len(q) == 1 and q.get(stop) is bulk
    stop.set()
    assert q.get_matching(lambda p: True, stop) is None


def test_the_gate_lends_a_slot_to_a_higher_lane_only_and_gets_it_back():
    gate = DeviceGate(1)
    part = lambda level: type("P", (), {"job": type("J", (), {"lane_priority": level})()})()  # noqa: E731
    held = gate.acquire([part(0)])
    order, got = [], {}

    def waiter(name, level):
        seat = gate.acquire([part(level)])
        got[name] = seat
        order.append((name, seat.lent))
        gate.release(seat)

    t = threading.Thread(target=waiter, args=("urgent", 10))
    t.start()
    while not gate.waiting:
        threading.Event().wait(0.001)
    assert gate.best_waiter(10) is None  # equal lanes do not preempt each other
    w = gate.best_waiter(0)
    assert w is not None and w.level == 10
    assert gate.lend(w)  # returns once the urgent stage gave the slot back
    t.join(10)
    assert order == [("urgent", True)] and not gate.lend(w)  # it no longer waits
    gate.release(held)
    again = gate.acquire([part(0)])  # the slot is free again: the lent one did not leak or double
    assert not again.lent
    gate.release(again)



class Timer:
    """A stage's timer as Preemption records on it (phase "preempted" and its span)."""
    worker = "gpu0-1"

    def __init__(self):
        self.ms, self.spans = {}, []

    def record(self, name, ms):
        self.ms[name] = self.ms.get(name, 0.0) + ms


def _part(level: int):
    return type("P", (), {"job": type("J", (), {"lane_priority": level})()})()


def _preemption(slots: int):
    """A device's Preemption over an empty device queue (holds and yield points alone)."""
    from snarkd.engine.preempt import Preemption

    queue = type("Q", (), {"head": lambda self, waiting=False: None})()
    return Preemption(type("E", (), {"devices": [CPU], "_device_q": queue})(), 0, DeviceGate(slots))


def test_while_a_stage_runs_at_a_yield_point_the_devices_lower_stages_wait_at_theirs():
    """Preemption.holding: with several device workers, a second bulk stage would keep its kernels running beside the
    urgent stage's (on a GPU, sharing its SMs); it stops at its next yield point until the urgent stage ends, and the
    wait is its phase "preempted". Stages of the urgent lane or above go on, and so does a stage begun during the hold."""
    prem, part = _preemption(2), _part

    bulk_t, peer_t = Timer(), Timer()
    bulk, peer = prem.yield_point([part(0)], [bulk_t]), prem.yield_point([part(10)], [peer_t])
    assert bulk() == 0.0 and bulk_t.ms == {}  # nothing held: straight on
    events, paused = [], []
    with prem.holding(10):
        t = threading.Thread(target=lambda: (paused.append(bulk()), events.append("bulk went on")))
        t.start()
        t.join(0.3)
        assert t.is_alive() and peer() == 0.0  # held; the urgent lane's own stages are not
        peer.close()  # (an urgent stage holds the device from its first yield point until it ends)
        late_t = Timer()  # a stage begun during the hold (a slot came free) may hold memory the urgent one needs
        assert prem.yield_point([part(0)], [late_t])() == 0.0 and late_t.ms == {}
        events.append("urgent stage ended")
    t.join(10)
    assert events == ["urgent stage ended", "bulk went on"]
    assert paused[0] > 0 and bulk_t.ms["preempted"] > 0 and bulk_t.spans[0]["stage"] == "preempted"
    assert peer_t.ms == {}


def test_a_lower_stage_that_gets_a_slot_during_a_hold_waits_before_it_begins():
    """Preemption.wait_to_begin: a bulk stage that gets a slot while an urgent stage runs at a yield point would
    otherwise run its kernels beside the urgent stage's; it waits before it begins (before it reserves device
    memory: it holds nothing the urgent stage needs), the wait recorded as "preempted". Stages of the urgent lane
    begin at once, and nothing waits when no hold runs."""
    prem, part = _preemption(2), _part

    idle_t = Timer()
    assert prem.wait_to_begin([part(0)], [idle_t]) == 0.0 and idle_t.ms == {}
    events, waited, late_t, peer_t = [], [], Timer(), Timer()
    with prem.holding(10):
        t = threading.Thread(target=lambda: (waited.append(prem.wait_to_begin([part(0)], [late_t])),
                                             events.append("bulk began")))
        t.start()
        t.join(0.3)
        assert t.is_alive()  # waiting to begin
        assert prem.wait_to_begin([part(10)], [peer_t]) == 0.0 and peer_t.ms == {}  # the urgent lane's own: at once
        events.append("urgent stage ended")
    t.join(10)
    assert events == ["urgent stage ended", "bulk began"]
    assert waited[0] > 0 and late_t.ms["preempted"] > 0 and late_t.spans[0]["stage"] == "preempted"


def test_a_higher_lane_stage_on_a_slot_of_its_own_holds_the_device_from_its_first_yield_point_until_closed():
    """An urgent stage that found a slot free (no preemption) still keeps a bulk stage's kernels off the GPU while it
    runs: from its first yield point (its device memory reserved by then) until close(), older bulk stages wait at
    their yield points and new ones before they begin. Two holds at once end independently; a bulk stage holds no one."""
    prem, part = _preemption(3), _part

    bulk_t = Timer()
    bulk = prem.yield_point([part(0)], [bulk_t])
    other_bulk = prem.yield_point([part(0)], [Timer()])
    assert other_bulk() == 0.0 and bulk() == 0.0  # a bulk stage's own yield point holds no one
    time.sleep(0.002)  # so both urgent stages began after the bulk stage
    u1, u2 = prem.yield_point([part(10)], [Timer()]), prem.yield_point([part(10)], [Timer()])
    assert u1() == 0.0 and u2() == 0.0  # both hold now
    events = []
    t = threading.Thread(target=lambda: (bulk(), events.append("bulk went on")))
    t.start()
    t.join(0.2)
    assert t.is_alive()
    u1.close()
    t.join(0.2)
    assert t.is_alive()  # the second urgent stage still runs
    events.append("urgent stages ended")
    u2.close()
    u2.close()  # closing twice is harmless
    t.join(10)
    assert events == ["urgent stages ended", "bulk went on"] and bulk_t.ms["preempted"] > 0
    assert prem._holds == ()
