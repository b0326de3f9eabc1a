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
    assert st.samples["k"] == 1 and st.service_s["k"] > 0 and st.parallelism == 1
    ahead = [eng.submit("k", witnesses=[wtns] * 4) for _ in range(3)]
    with pytest.raises(DeadlineExceeded, match=r"estimated .*partition\(s\) ahead") as err:
        eng.submit("k", wtns, deadline_s=st.service_s["k"] / 2)
    assert "'k'" in str(err.value)
    st = eng.status()
    assert st.jobs.deadline_refused == 2 and st.eta.backlog_s > 0
    ok = eng.submit("k", wtns, deadline_s=600)
    assert ok.eta_s is not None and ok.eta_s > st.eta.service_s["k"]
    for j in [*ahead, ok]:
        assert eng.await_(j.id, 120).state == COMPLETED


def test_the_model_counts_the_work_ahead_by_priority():
    class K:
        def __init__(self, id):
            self.id = id

    class P:
        def __init__(self, state, t_admitted=0.0):
            self.state, self.t_admitted, self.exited = state, t_admitted, False

    class J:
        def __init__(self, key, priority, parts, state="QUEUED"):
            self.key, self.priority, self.partitions, self.state = K(key), priority, parts, state

    m = ServiceTimes(lambda: 2)
    m.observe("a", 2.0)
    m.observe("b", 1.0)
    now = 100.0
    jobs = [J("a", 0, [P("QUEUED"), P("QUEUED")]),  # 4 s of work
            J("b", 5, [P("RUNNING", now - 0.25)], "RUNNING"),  # 0.75 s left
            J("a", 0, [P("QUEUED")], "COMPLETED")]  # ended: not ahead
    est = m.estimate_locked(jobs, "b", 3, 0, now)
    assert est.ahead == 3 and est.wait_s == pytest.approx(4.75 / 2) and est.own_s == pytest.approx(2.0)
    assert est.seconds == pytest.approx(4.75 / 2 + 2.0)
    high = m.estimate_locked(jobs, "b", 1, 5, now)  # only the priority-5 job is ahead of it
    assert high.ahead == 1 and high.wait_s == pytest.approx(0.75 / 2)
    assert m.estimate_locked(jobs, "new", 1, 0, now).seconds is None  # no service time: no estimate
    m.observe("a", 4.0)
    assert m.service["a"] == pytest.approx(0.7 * 2.0 + 0.3 * 4.0)
