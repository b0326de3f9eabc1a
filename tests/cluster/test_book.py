"""The front's book and router without Ray: priorities, routing, exactly-once endings, retries, the budget."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("ray", reason="the cluster extra is not installed (pip install -e '.[test,cluster]')")

from snarkd.cluster.book import Book, Task  # noqa: E402
from snarkd.cluster.router import DEAD, READY, ActorRecord, choose, returned  # noqa: E402
from snarkd.engine import CANCELLED, COMPLETED, FAILED, Job, Partition, TooLarge, Unavailable  # noqa: E402


class Keys:
    def __init__(self):
        self.released = []

    def release(self, lk, proved=0):
        self.released.append((lk.id, proved))


class Key:
    def __init__(self, key_id="k"):
        self.id = key_id


class Observer:
    def __init__(self):
        self.events = []

    def __call__(self, event, obj):
        self.events.append((event, obj))


def make_job(book, n=1, priority=0, key="k", nbytes=100, seq=[0]) -> tuple[Job, list[Task]]:  # noqa: B006
    seq[0] += 1
    job = Job(f"j{seq[0]}", Key(key), priority=priority)
    job.seq = seq[0]
    job.partitions = [Partition(job, i) for i in range(n)]
    tasks = [Task(p, nbytes=nbytes, units=16) for p in job.partitions]
    book.reserve(nbytes * n, time.monotonic() + 1, threading.Event())
    book.add(job, tasks)
    return job, tasks


def reply(i=0) -> dict:
    return {"proof": {"pi_a": [str(i)]}, "public": ["1"], "timings": {"device": 1.0, "total": 5.0},
            "spans": [{"stage": "device", "worker": "a1@x/cpu/w0", "start": 0.0, "end": 1.0}]}


def actors(*names, cap=2, keys=("k",)) -> list[ActorRecord]:
    return [ActorRecord(n, "node", state=READY, capacity=cap, keys=dict.fromkeys(keys, {})) for n in names]


@pytest.fixture
def book():
    return Book(budget=10_000, max_attempts=3, keys=Keys(), notify=Observer())


def test_priority_then_submission_order_and_keys_do_not_block_each_other(book):
    low, _ = make_job(book, priority=0)
    other, _ = make_job(book, priority=9, key="other")  # no actor holds "other": it waits, others pass it
    high, _ = make_job(book, priority=5)
    low2, _ = make_job(book, priority=0)
    acts = actors("a1", cap=10)
    sent = book.take(lambda t: choose(acts, t.key_id, t.units))
    assert [t.job.id for t, _ in sent] == [high.id, low.id, low2.id]
    assert len(book.pending) == 1 and book.pending[0][-1].job is other
    assert high.state == "RUNNING" and sent[0][0].part.timings["front_queue"] >= 0


def test_router_least_outstanding_work_then_turns_and_capacity():
    a, b, c = actors("a", "b", "c", cap=2)
    c.keys = {}  # does not hold the key
    picks = [choose([a, b, c], "k", 16).name for _ in range(4)]
    assert picks == ["a", "b", "a", "b"] and choose([a, b, c], "k") is None  # full
    returned(b, 16)
    assert choose([a, b, c], "k", 16) is b
    returned(a, 16)
    returned(a, 16)
    b.state = DEAD
    assert choose([a, b, c], "k", 16) is a


def test_first_proof_is_kept_a_second_is_dropped(book):
    job, (t,) = make_job(book)
    (sent,) = book.take(lambda t: choose(actors("a1"), t.key_id))
    assert book.proved(t, 1, reply(1)) is True
    assert job.state == COMPLETED and job.done.is_set() and job.result.proof == {"pi_a": ["1"]}
    assert set(job.result.timings) >= {"device", "front_queue", "actor_call", "total"}
    assert book.proved(t, 1, reply(2)) is False  # the same partition proved twice: dropped
    assert job.result.proof == {"pi_a": ["1"]} and book.counters["duplicates_dropped"] == 1
    assert book.counters["completed"] == 1 and book.counters["partitions_completed"] == 1
    assert book.budget.used == 0 and book.keys.released == [("k", 1)]
    assert [e for e, _ in book.notify.events] == ["on_partition", "on_job"]


def test_lost_task_runs_again_then_fails_after_max_attempts(book):
    job, (t,) = make_job(book)
    acts = actors("a1", "a2", "a3")
    for attempt in (1, 2):
        (task, actor), = book.take(lambda t: choose(acts, t.key_id))
        assert task.attempts == attempt
        assert book.lost(task, attempt, actor.name, "died") is True
        assert not job.done.is_set() and book.counters["retried"] == attempt
        assert book.lost(task, attempt, actor.name, "died") is False  # a stale report: ignored
    (task, actor), = book.take(lambda t: choose(acts, t.key_id))
    assert book.lost(task, 3, actor.name, "died") is False
    assert job.state == FAILED and job.error_kind == "internal" and "lost 3 time(s)" in job.error
    assert book.budget.used == 0 and book.keys.released == [("k", 0)]


def test_late_proof_of_a_lost_attempt_counts_once(book):
    job, (t,) = make_job(book)
    acts = actors("a1", "a2")
    book.take(lambda t: choose(acts, t.key_id))
    book.lost(t, 1, "a1", "unreachable")  # given up for lost, queued again ...
    assert book.proved(t, 1, reply(1)) is True  # ... but its proof arrives after all: kept
    assert book.take(lambda t: choose(acts, t.key_id)) == []  # the queued copy is not sent
    assert job.state == COMPLETED and book.counters["partitions_completed"] == 1


def test_own_failure_fails_the_job_and_only_it(book):
    bad, (tb,) = make_job(book)
    good, (tg,) = make_job(book)
    book.take(lambda t: choose(actors("a1", "a2"), t.key_id))
    book.failed(tb, 1, "input", "witness value w[3] is not canonical")
    book.proved(tg, 1, reply())
    assert bad.state == FAILED and bad.error_kind == "input" and "not canonical" in bad.error
    assert good.state == COMPLETED


def test_multi_partition_job_ends_once_and_cancel_drops_queued_tasks(book):
    job, tasks = make_job(book, n=3)
    acts = actors("a1", cap=1)
    (first, _), = book.take(lambda t: choose(acts, t.key_id))
    state, cancelled, on_actors = book.cancel(job.id, "cancelled by request")
    assert (state, cancelled, on_actors) == (CANCELLED, True, [first])
    assert book.pending == [] and book.budget.used == 100  # the task on an actor still holds its bytes
    assert book.proved(first, 1, reply()) is False  # its proof comes back: dropped, bytes freed
    assert book.budget.used == 0 and job.state == CANCELLED and book.keys.released == [("k", 0)]
    assert book.cancel(job.id, "again")[1] is False


def test_budget_backpressure_and_a_job_that_could_never_fit(book):
    with pytest.raises(TooLarge, match="witness budget"):
        book.reserve(20_000, time.monotonic() + 1, threading.Event())
    book.reserve(9_000, time.monotonic() + 1, threading.Event())
    with pytest.raises(Unavailable, match="budget is full"):
        book.reserve(2_000, time.monotonic() + 0.3, threading.Event())
    got = []
    waiter = threading.Thread(target=lambda: got.append(book.reserve(2_000, time.monotonic() + 10, threading.Event())))
    waiter.start()
    time.sleep(0.3)
    assert not got  # waits while the budget is full ...
    book.unreserve(9_000)
    waiter.join(5)
    assert got == [None] and book.budget.used == 2_000 and book.budget.peak == 9_000 and book.budget.waits == 2


def test_max_queued_jobs_bounds_unfinished_jobs():
    from snarkd.engine import Busy

    book = Book(budget=10_000, max_attempts=3, keys=Keys(), notify=Observer(), max_active=2)
    a, (ta,) = make_job(book)
    make_job(book)
    with pytest.raises(Busy, match="max_queued_jobs"):
        make_job(book)
    book.take(lambda t: choose(actors("a1", cap=5), t.key_id))
    book.proved(ta, 1, reply())
    assert a.state == COMPLETED
    make_job(book)  # room again once one ended
