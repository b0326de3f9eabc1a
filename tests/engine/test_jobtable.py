"""The job table the engine's scheduler and the cluster front's book share: ids are unique, the
[limits] bound holds, a job ends once (its queued items leave, its key is released), and exactly the
last KEEP_FINISHED ended jobs stay known while unfinished ones are never forgotten."""

from __future__ import annotations

import itertools

import pytest

from snarkd.engine import jobtable
from snarkd.engine.errors import AlreadyExists, Busy, NotFound
from snarkd.engine.jobs import CANCELLED, COMPLETED, Job


SEQ = itertools.count(1)


class Item:
    def __init__(self, job):
        self.job, self.left = job, False


class Key:
    def __init__(self, job_id):
        self.id = job_id  # a key per job here: what was released names the job


class Keys:
    def __init__(self):
        self.released = []

    def release(self, lk, proved=0):
        self.released.append((lk.id, proved))


class Table(jobtable.JobTable):
    def __init__(self, max_active=1 << 30):
        self.counted, self.events = [], []
        super().__init__(keys=Keys(), notify=lambda event, obj: self.events.append((event, obj.id)), max_active=max_active,
                         count=self.counted.append)

    def drop_locked(self, item):
        item.left = True
        self.item_left_locked(item.job)

    @property
    def released(self):
        return [job_id for job_id, _ in self.keys.released]


def add(t, job_id, n_items=1, priority=0):
    job = Job(job_id, Key(job_id), priority=priority, seq=next(SEQ))  # unique, as the engine's
    items = [Item(job) for _ in range(n_items)]
    with t.cv:
        t.add_locked(job, list(enumerate(items)))
    return job, items


def test_ids_are_unique_and_the_bound_holds():
    t = Table(max_active=2)
    add(t, "a")
    with pytest.raises(AlreadyExists, match="'a' is already in use"):
        add(t, "a")
    b, _ = add(t, "b")
    with pytest.raises(Busy, match="max_queued_jobs"):
        add(t, "c")
    with t.cv:
        t.end_locked(b, COMPLETED)
    add(t, "c")  # room again once one has ended
    assert t.counted == ["submitted", "submitted", "completed", "submitted"] and t.active == 2


def test_a_job_ends_once_and_its_queued_items_leave():
    t = Table()
    keep, kept_items = add(t, "keep", 2)
    gone, gone_items = add(t, "gone", 3, priority=5)
    with t.cv:
        t.end_locked(gone, CANCELLED, "by request", "cancelled")
        t.end_locked(gone, COMPLETED)  # a second ending changes nothing
    assert gone.state == CANCELLED and gone.error == "by request" and gone.done.is_set()
    assert all(i.left for i in gone_items) and not any(i.left for i in kept_items)
    assert [e[-1] for e in sorted(t.pending)] == kept_items
    assert t.released == ["gone"] and t.events == [("on_job", "gone")] and t.counted.count("cancelled") == 1


def test_the_key_goes_back_once_with_the_last_item_to_leave():
    t = Table()
    job, items = add(t, "j", 3)
    with t.cv:
        t.pending = [e for e in t.pending if e[-1] is not items[0]]  # one item out of the queue: running somewhere
        t.end_locked(job, CANCELLED, "by request", "cancelled")  # the two queued ones leave now
        assert t.released == [] and job.items_out == 1  # the running one has not come back yet
        t.item_left_locked(job)
        t.release_key_if_done_locked(job)  # asked again: still once
    assert t.keys.released == [("j", 0)]


def test_exactly_the_last_ended_jobs_are_remembered(monkeypatch):
    monkeypatch.setattr(jobtable, "KEEP_FINISHED", 3)
    t = Table()
    running, _ = add(t, "running")
    for i in range(6):
        job, _ = add(t, f"j{i}")
        with t.cv:
            t.end_locked(job, COMPLETED)
    add(t, "last")  # forgetting happens on admission
    for i in range(3):
        with pytest.raises(NotFound):
            t.get(f"j{i}")
    assert [t.get(f"j{i}").id for i in range(3, 6)] == ["j3", "j4", "j5"]
    assert t.get("running") is running and len(t.jobs) == 5
