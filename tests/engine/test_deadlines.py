"""Deadlines in the engine: admission by the completion model (engine/eta.py), expiry of queued jobs (never
started) and of running ones (stopped at the next stage boundary, unless [pipeline] finish_past_deadline).
Margins are generous: [debug] synthesis_delay holds a job in synthesis for seconds while a deadline of a
fraction of that passes."""

from __future__ import annotations

import time

import pytest

from snarkd.engine import COMPLETED, Engine, EngineConfig
from snarkd.engine.errors import DeadlineExceeded
from snarkd.engine.eta import ServiceTimes
from snarkd.engine.jobs import EXPIRED
from snarkd.errors import InputError
from snarkd.verifier import verify


def make(circ, **kw) -> Engine:
    cfg = dict(synthesis_workers=1, threads=1, workers_per_device=1, memory_budget="256MiB")
    cfg.update(kw)
    eng = Engine(EngineConfig(**cfg))
    eng.keys.load("k", str(circ.zkey))
    return eng


class Ended:
    def __init__(self):
        self.jobs = []

    def on_partition(self, part):
        pass

    def on_job(self, job):
        self.jobs.append((job.id, job.state))


def test_a_queued_job_past_its_deadline_expires_and_never_starts(chain_bn128, running):
    circ, wtns = chain_bn128
    wtns = wtns.read_bytes()
    eng = running(make(circ, debug_delay_s=3))
    seen = Ended()
    eng.observers.append(seen)
    ahead = eng.submit("k", wtns)  # holds the one synthesis worker for 3 s
    late = eng.submit("k", wtns, deadline_s=0.3)
    assert late.deadline > 0 and late.deadline_wall > time.time() - 1
    assert eng.await_(late.id, 10).state == EXPIRED
    assert late.started == 0 and all(p.t_admitted == 0 for p in late.partitions)  # never admitted
    assert "before it started" in late.error and late.error_kind == "expired"
    assert (late.id, EXPIRED) in seen.jobs
    assert eng.status().jobs.expired == 1
    eng.cancel(ahead.id)


def test_a_running_job_past_its_deadline_is_stopped_at_the_next_stage_boundary(chain_bn128, running):
    circ, wtns = chain_bn128
    wtns = wtns.read_bytes()
    eng = running(make(circ, debug_delay_s=3))
    job = eng.submit("k", wtns, deadline_s=0.5)
    t0 = time.monotonic()
    assert eng.await_(job.id, 10).state == EXPIRED
    assert time.monotonic() - t0 < 2.5  # ended at its deadline, not when synthesis would have
    assert job.started and "while it ran" in job.error
    deadline = time.monotonic() + 10
    while any(not p.exited for p in job.partitions) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(p.exited and p.result is None for p in job.partitions)  # dropped, no proof
    assert eng.status().jobs.expired == 1 and eng.status().jobs.completed == 0


def test_finish_past_deadline_lets_a_running_job_finish(chain_bn128, running):
    circ, wtns = chain_bn128
    wtns = wtns.read_bytes()
    eng = running(make(circ, debug_delay_s=1, finish_past_deadline=True))
    job = eng.submit("k", wtns, deadline_s=0.3)
    assert eng.await_(job.id, 60).state == COMPLETED, job.error
    assert verify(job.key.vk, job.result.public, job.result.proof)


def test_admission_refuses_a_deadline_the_estimate_misses_and_says_why(chain_bn128, running):
    circ, wtns = chain_bn128
    wtns = wtns.read_bytes()
    eng = running(make(circ))
    with pytest.raises(DeadlineExceeded, match="already passed"):
        eng.submit("k", wtns, deadline_s=0)
    with pytest.raises(InputError, match="deadline_s"):
        eng.submit("k", wtns, deadline_s=float("nan"))
    first = eng.submit("k", wtns, deadline_s=120)  # no service time yet: admitted without an estimate
    assert first.eta_s is None
    assert eng.await_(first.id, 120).state == COMPLETED
    st = eng.status().eta
    assert st.samples["k"] == 1 and st.latency_s["k"] >= st.interval_s["k"] > 0
    assert st.stage_workers == {"synthesis": 1, "device": 1, "finalize": 1}
    ahead = [eng.submit("k", witnesses=[wtns] * 4) for _ in range(3)]
    with pytest.raises(DeadlineExceeded, match=r"estimated .*partition\(s\) ahead") as err:
        eng.submit("k", wtns, deadline_s=st.latency_s["k"] / 2)
    assert "'k'" in str(err.value)
    st = eng.status()
    assert st.jobs.deadline_refused == 2 and st.eta.backlog_s > 0
    ok = eng.submit("k", wtns, deadline_s=600)
    assert ok.eta_s is not None and ok.eta_s > st.eta.latency_s["k"]
    for j in [*ahead, ok]:
        assert eng.await_(j.id, 120).state == COMPLETED


def test_the_model_charges_the_busiest_stage_per_partition_ahead():
    class K:
        def __init__(self, id):
            self.id = id

    class P:
        def __init__(self, state, t_admitted=0.0):
            self.state, self.t_admitted, self.exited = state, t_admitted, False

    class J:
        def __init__(self, key, priority, parts, state="QUEUED"):
            self.key, self.priority, self.partitions, self.state = K(key), priority, parts, state
            self.lane_priority = 0

    m = ServiceTimes(lambda: {"synthesis": 2, "device": 1, "finalize": 1})
    m.observe("a", 5.0, {"synthesis": 3.0, "device": 1.0, "finalize": 0.5})  # interval: synthesis 3 s / 2 = 1.5 s
    m.observe("b", 2.0, {"synthesis": 0.2, "device": 1.0, "finalize": 0.1})  # interval: device 1 s / 1 = 1 s
    assert m.interval("a", m.stages()) == pytest.approx(1.5) and m.interval("b", m.stages()) == pytest.approx(1.0)
    now = 100.0
    jobs = [J("a", 0, [P("QUEUED"), P("QUEUED")]),  # 2 x 1.5 s
            J("b", 5, [P("RUNNING", now - 1.5)], "RUNNING"),  # 0.5 s of its latency left (< its interval)
            J("a", 0, [P("QUEUED")], "COMPLETED")]  # ended: not ahead
    est = m.estimate_locked(jobs, "b", 3, 0, now)
    assert est.ahead == 3 and est.wait_s == pytest.approx(3.0 + 0.5)
    assert est.own_s == pytest.approx(2.0 + 2 * 1.0) and est.seconds == pytest.approx(3.5 + 4.0)
    high = m.estimate_locked(jobs, "b", 1, 5, now)  # only the priority-5 job is ahead of it
    assert high.ahead == 1 and high.wait_s == pytest.approx(0.5) and high.seconds == pytest.approx(2.5)
    assert m.estimate_locked(jobs, "new", 1, 0, now).seconds is None  # nothing measured: no estimate
    m.observe("a", 7.0, {"synthesis": 4.0})
    assert m.latency["a"] == pytest.approx(0.7 * 5.0 + 0.3 * 7.0)
    assert m.stage_s["a"]["synthesis"] == pytest.approx(0.7 * 3.0 + 0.3 * 4.0)
