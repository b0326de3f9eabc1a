"""Lanes in the engine (engine/lanes.py): the order lanes are served in, a lane's share of the pipeline slots
kept from other lanes, queue bounds in weight units, unknown lanes, a lane's default deadline, and observers
told after the engine's lock is let go."""

from __future__ import annotations

import json
import threading
import time

import pytest
from preemption import LANES, lanes_engine

from snarkd.config.lanes import Lane
from snarkd.engine import Busy
from snarkd.engine.jobs import COMPLETED
from snarkd.engine.lanes import Lanes, weight
from snarkd.errors import InputError
from snarkd.verifier import verify

def test_lanes_are_served_by_lane_priority_before_job_priority(chain_bn128, running):
    circ, wtns = chain_bn128
    eng = lanes_engine(circ)
    order = []

    class Obs:
        def on_partition(self, part):
            order.append(part.job.id)

        def on_job(self, job):
            pass

    eng.observers.append(Obs())
    data = wtns.read_bytes()
    bulk = [eng.submit("k", data, f"bulk{i}", priority=100, lane="bulk") for i in range(3)]
    default = eng.submit("k", data, "plain", priority=50)  # lane "default", priority 0 like bulk
    urgent = [eng.submit("k", data, f"urgent{i}", priority=p, lane="urgent") for i, p in enumerate((0, 1))]
    running(eng)
    vk = json.loads(circ.vk.read_text())
    for j in (*bulk, default, *urgent):
        done = eng.await_(j.id, 120)
        assert done.state == COMPLETED and verify(vk, done.result.public, done.result.proof)
    # the urgent lane first (by its jobs' priority), then lane priority 0 by job priority: bulk's 100 before 50
    assert order == ["urgent1", "urgent0", "bulk0", "bulk1", "bulk2", "plain"], order
    assert [j.lane for j in (bulk[0], default, urgent[0])] == ["bulk", "default", "urgent"]


def test_a_lanes_share_keeps_the_last_slots_and_memory_for_it():
    lanes = Lanes(LANES, slots=4, budget=1000)  # urgent's share 0.5: 2 slots, 500 bytes
    assert lanes.reserved_slots("urgent") == 2 and lanes.reserved_slots("bulk") == 0
    use = lanes.use
    use["bulk"].slots = 2
    assert not lanes.admissible("bulk", 10, 20, in_slots=2)  # a third would take one urgent keeps
    assert not lanes.admissible("default", 10, 20, in_slots=2)
    assert lanes.admissible("urgent", 10, 20, in_slots=2)
    use["urgent"].slots = 2
    assert not lanes.admissible("urgent", 10, 20, in_slots=4)  # every slot taken
    use["bulk"].slots, use["urgent"].slots = 1, 0
    assert lanes.admissible("bulk", 400, 100, in_slots=1)  # 500 of 1000 bytes: what urgent keeps is left
    assert not lanes.admissible("bulk", 401, 100, in_slots=1)
    use["urgent"].bytes = 300  # urgent uses 300 of its 500: it keeps 200 more
    assert lanes.admissible("bulk", 400, 400, in_slots=1) and not lanes.admissible("bulk", 401, 400, in_slots=1)


def test_a_lanes_share_keeps_synthesis_workers_for_it():
    # bulk holding every synthesis worker (synthesizing, or blocked handing on to a full device queue) kept an
    # urgent job waiting for one although its share of the pipeline's slots was free
    lanes = Lanes(LANES, slots=100, synthesis_workers=4)  # urgent's share 0.5: 2 of the 4 workers
    assert lanes.reserved_synthesis("urgent") == 2 and lanes.reserved_synthesis("bulk") == 0
    lanes.use["bulk"].synthesis = 2
    assert not lanes.admissible("bulk", 0, 0, in_slots=2) and lanes.admissible("urgent", 0, 0, in_slots=2)
    lanes.use["urgent"].synthesis = 1  # urgent uses one of its two: it keeps one more
    assert not lanes.admissible("bulk", 0, 0, in_slots=3) and lanes.admissible("urgent", 0, 0, in_slots=3)
    lanes.use["urgent"].synthesis, lanes.use["bulk"].synthesis = 2, 1
    assert lanes.admissible("bulk", 0, 0, in_slots=3)  # urgent's two in use: it keeps none free
    # a share always leaves the other lanes one worker: one worker in all is never kept from bulk
    one = Lanes(LANES, slots=100, synthesis_workers=1)
    assert one.admissible("bulk", 0, 0, in_slots=0)


def test_waiting_putters_enter_a_full_stage_queue_by_rank():
    from types import SimpleNamespace

    from snarkd.engine.stage_queue import StageQueue

    def part(name, rank):
        return SimpleNamespace(name=name, index=0, job=SimpleNamespace(rank=rank))

    q, stop = StageQueue(1), threading.Event()
    assert q.put(part("first", (0, 0, 1)), stop)
    putters = []
    for name, rank in (("bulk-a", (0, 0, 2)), ("bulk-b", (0, 0, 3)), ("urgent", (-10, 0, 4))):
        t = threading.Thread(target=q.put, args=(part(name, rank), stop))
        t.start()
        putters.append(t)
        while len(q._waiting) < len(putters):  # each blocked on the full queue before the next comes
            time.sleep(0.001)
    got = [q.get(stop).name for _ in range(4)]
    for t in putters:
        t.join(5)
    # the urgent partition came last but entered first once there was room
    assert got == ["first", "urgent", "bulk-a", "bulk-b"], got
    assert len(q) == 0 and not q._waiting


def test_a_take_from_a_full_stage_queue_wakes_only_the_putter_whose_turn_it_is():
    """Each waiting putter sleeps on a condition of its own: a get wakes the one to enter next, not all of them
    (a herd of blocked synthesis workers waking on every take cost the device workers GIL turns)."""
    from types import SimpleNamespace

    from snarkd.engine.stage_queue import StageQueue

    q, stop = StageQueue(1), threading.Event()
    assert q.put(SimpleNamespace(name="first", index=0, job=SimpleNamespace(rank=(0, 0, 0))), stop)
    putters = []
    for i in range(1, 9):
        part = SimpleNamespace(name=f"p{i}", index=0, job=SimpleNamespace(rank=(0, 0, i)))
        t = threading.Thread(target=q.put, args=(part, stop))
        t.start()
        putters.append(t)
    while len(q._waiting) < 8:
        time.sleep(0.001)
    woken = []

    class Counted:  # the putters' conditions as the queue reaches them, counting who is woken
        def __init__(self, key, cond):
            self.key, self.cond = key, cond

        def notify(self, n=1):
            woken.append(self.key[0][2])
            self.cond.notify(n)

    with q._lock:
        q._putters.update({k: Counted(k, c) for k, c in q._putters.items()})
    assert q.get(stop).name == "first"
    while len(q._waiting) > 7:
        time.sleep(0.001)
    assert woken == [1] and q.head().name == "p1"  # the next in line alone, and it entered
    stop.set()
    for t in putters:
        t.join(5)


def test_the_scheduler_admits_another_lane_past_a_head_kept_out_by_a_share(chain_bn128):
    circ, wtns = chain_bn128
    eng = lanes_engine(circ, lanes={"urgent": Lane("urgent", priority=0, share=0.5), "bulk": Lane("bulk", priority=5)})
    data = wtns.read_bytes()
    slots = eng.book.lanes.slots  # synthesis 1 + device queue 1 + device slot 1 + finalize queue 1 + finalize 1
    assert slots == 5 and eng.book.lanes.reserved_slots("urgent") == 3
    bulk = [eng.submit("k", data, f"b{i}", lane="bulk") for i in range(3)]
    urgent = eng.submit("k", data, "u", lane="urgent")
    stop = threading.Event()
    taken = [eng.book.admit(stop) for _ in range(3)]
    # bulk's lane priority puts it first, for the 2 slots urgent does not keep; its third would take one of
    # urgent's: urgent goes past it
    assert [p.job for p in taken] == [bulk[0], bulk[1], urgent]
    assert [u.slots for u in (eng.book.lanes.use["bulk"], eng.book.lanes.use["urgent"])] == [2, 1]
    with eng.book.cv:
        eng.book.exit_locked(taken[0])  # leaving the pipeline frees its slot
    taken.append(eng.book.admit(stop))
    assert taken[-1].job is bulk[2]
    for p in taken[1:]:
        with eng.book.cv:
            eng.book.exit_locked(p)
    assert eng.book.lanes.use["bulk"].slots == eng.book.lanes.use["urgent"].slots == 0
    assert eng.budget.used == 0 and eng.book.lanes.use["bulk"].bytes == eng.book.lanes.use["urgent"].bytes == 0


def test_queue_bounds_count_weight_not_jobs(chain_bn128):
    circ, wtns = chain_bn128
    assert weight(type("K", (), {"domain_size": 1 << 24})(), 10) == 2560  # beside a 2^16 proof's 1
    eng = lanes_engine(circ, lanes={"bulk": Lane("bulk", max_queued=1.0)})
    w1 = weight(eng.keys.get("k").key, 1)  # one partition of this key
    assert w1 == eng.keys.get("k").key.domain_size / 65536
    eng = lanes_engine(circ, lanes={"bulk": Lane("bulk", max_queued=4 * w1)}, max_queued_weight=6 * w1)
    data = wtns.read_bytes()
    big = eng.submit("k", witnesses=[data] * 3, job_id="big", lane="bulk")  # 3 units of w1
    assert big.weight == pytest.approx(3 * w1)
    eng.submit("k", data, "one", lane="bulk")  # 4 of 4
    with pytest.raises(Busy) as e:  # a fifth unit passes the lane's bound, whatever the job count
        eng.submit("k", data, "two", lane="bulk")
    assert "lane 'bulk' max_queued" in str(e.value) and "weighs" in str(e.value)
    eng.submit("k", witnesses=[data] * 2, job_id="other")  # lane default: 6 of [limits] max_queued_weight's 6
    with pytest.raises(Busy) as e:
        eng.submit("k", data, "three")
    assert "[limits] max_queued_weight" in str(e.value)
    assert eng.cancel("big")[1]  # its weight leaves with it: room again
    assert eng.submit("k", data, "two", lane="bulk").lane == "bulk"
    st = {ln.name: ln for ln in eng.status().lanes}
    assert st["bulk"].weight == pytest.approx(2 * w1) and st["bulk"].queued == 2 and st["default"].queued == 1


def test_a_job_heavier_than_its_lanes_bound_runs_alone_rather_than_never(chain_bn128, running):
    circ, wtns = chain_bn128
    eng = running(lanes_engine(circ, lanes={"bulk": Lane("bulk", max_queued=1e-6)}))
    job = eng.submit("k", witnesses=[wtns.read_bytes()] * 2, lane="bulk")
    with pytest.raises(Busy):
        eng.submit("k", wtns.read_bytes(), lane="bulk")
    assert eng.await_(job.id, 120).state == COMPLETED


def test_an_unknown_lane_is_refused_naming_it_and_a_lanes_deadline_is_its_jobs_default(chain_bn128):
    circ, wtns = chain_bn128
    eng = lanes_engine(circ, lanes={**LANES, "soon": Lane("soon", deadline=30.0)})
    with pytest.raises(InputError) as e:
        eng.submit("k", wtns.read_bytes(), lane="nope")
    assert "lane: no lane 'nope'" in str(e.value) and "bulk, default, soon, urgent" in str(e.value)
    t0 = time.monotonic()
    job = eng.submit("k", wtns.read_bytes(), lane="soon")
    assert t0 + 29 < job.deadline < time.monotonic() + 30.5 and job.deadline_wall > time.time() + 29
    assert eng.submit("k", wtns.read_bytes(), lane="soon", deadline_s=100).deadline > t0 + 99  # its own wins
    assert eng.submit("k", wtns.read_bytes(), lane="bulk").deadline == 0


def test_observers_are_told_after_the_engines_lock_is_let_go(chain_bn128, running):
    circ, wtns = chain_bn128
    eng = lanes_engine(circ)
    seen = []

    class Obs:
        def tell(self, what, job):
            free = eng.book.cv.acquire(blocking=False)  # not held by this thread (nor by another for long)
            if free:
                eng.book.cv.release()
            seen.append((what, job.id, free, job.done.is_set()))

        def on_partition(self, part):
            self.tell("partition", part.job)

        def on_job(self, job):
            self.tell("job", job)

    eng.observers.append(Obs())
    running(eng)
    done = eng.submit("k", wtns.read_bytes(), "done")
    assert eng.await_(done.id, 120).state == COMPLETED
    gone = eng.submit("k", wtns.read_bytes(), "gone", lane="bulk")
    eng.cancel(gone.id)
    deadline = time.monotonic() + 10
    while len(seen) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert ("partition", "done", True, False) in seen
    # a job's end is told before its waiters wake (a result leaves only once the daemon's journal has it)
    assert ("job", "done", True, False) in seen and ("job", "gone", True, False) in seen


def test_each_engine_plans_its_devices_with_its_own_lanes_urgent_share(monkeypatch):
    """get_backend gives every engine of a process the same backend object; the urgent share of streamed keys'
    plans (CudaBackend.urgent_share) was set on it by each engine, so two engines saw the last one's. Now each
    engine proves with its own view (Backend.with_urgent_share), and the shared object keeps none."""
    from snarkd.config import EngineConfig
    from snarkd.engine import Engine
    from snarkd.prover.cuda import CudaBackend

    shared = CudaBackend.__new__(CudaBackend)  # no GPU here: with_urgent_share needs none (a copy, and a field)
    shared.dev, shared.name, shared.max_concurrent = object(), "cuda:0", 1
    monkeypatch.setattr("snarkd.engine.engine.resolve_devices", lambda config: [shared])

    def engine(preempt: bool = True, **lanes):
        cfg = {n: Lane(n, priority=10 if n.startswith("urgent") else 0, share=s) for n, s in lanes.items()}
        return Engine(EngineConfig(synthesis_workers=1, memory_budget="64MiB", lanes=cfg, preempt=preempt))

    quarter = engine(urgent=0.25, bulk=0.5)  # bulk's share is not an urgent lane's
    half = engine(urgent=0.1, urgent2=0.5)  # the largest share of a lane above priority 0
    unpreempted, plain = engine(preempt=False, urgent=0.5), engine()
    assert [e.devices[0].urgent_share for e in (quarter, half, unpreempted, plain)] == [0.25, 0.5, 0.0, 0.0]
    assert shared.urgent_share == 0.0 and plain.devices[0] is shared and unpreempted.devices[0] is shared
    assert quarter.devices[0].dev is shared.dev and half.devices[0].dev is shared.dev  # one device, one residency


def test_lanes_above_priority_0_get_page_locked_witness_buffers_where_a_gpu_proves(chain_bn128):
    """ProvingEngine.witness_buffer: an unknown lane is refused before anything is read; on the CPU every lane
    reads into the reader's own arrays (None); where a device has a GPU, lanes above priority 0 (and only they)
    read into its page-locked host memory (GpuDevice.host_buffer; tests/gpu/test_gpu_urgent.py uploads from it)."""
    from types import SimpleNamespace

    circ, _ = chain_bn128
    eng = lanes_engine(circ)
    with pytest.raises(InputError, match="no lane 'nope'"):
        eng.witness_buffer("nope")
    assert [eng.witness_buffer(name) for name in ("urgent", "bulk", "")] == [None, None, None]

    def host_buffer(nbytes):
        raise AssertionError("not called here")

    eng.devices = [SimpleNamespace(gpu=None), SimpleNamespace(gpu=SimpleNamespace(host_buffer=host_buffer))]
    assert eng.witness_buffer("urgent") is host_buffer
    assert eng.witness_buffer("bulk") is None and eng.witness_buffer("") is None


def test_a_loaded_keys_first_urgent_witness_buffer_is_made_at_load(chain_bn128, monkeypatch):
    """Where a lane above priority 0 reads witnesses into a buffer of the device's (page-locked memory on a GPU),
    one witness's worth is made when a key loads, so the first urgent job does not wait for it; a preparation
    that fails is logged and the key still loads."""
    from snarkd.formats.wtns import wtns_size

    circ, wtns = chain_bn128
    eng = lanes_engine(circ)
    made = []
    monkeypatch.setattr(eng, "witness_buffer",
                        lambda lane: (lambda n: made.append((lane, n))) if eng.lane(lane).priority > 0 else None)
    eng.keys.load("k2", str(circ.zkey))
    assert made == [("urgent", wtns_size(eng.keys.get("k2").meta["n_vars"]))]
    assert wtns_size(eng.keys.get("k2").meta["n_vars"]) == len(wtns.read_bytes())

    def broken(lane):
        raise RuntimeError("no page-locked memory")

    monkeypatch.setattr(eng, "witness_buffer", broken)
    eng.keys.load("k3", str(circ.zkey))
    assert eng.keys.get("k3").meta["n_vars"] == eng.keys.get("k2").meta["n_vars"]
