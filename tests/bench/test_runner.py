"""snarkd bench's runner keeps exactly `inflight` jobs in flight: a client standing in for the daemon counts the
Prove calls it holds at once (the runner's pool once had a worker more than j when no urgent lane ran, so a
j = 1 run kept two jobs in flight: its latency was twice its time per proof, half a device stage in
device_queue)."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import pytest

from snarkd.bench import runner
from snarkd.bench.report import most_in_flight

HOLD_S = 0.03  # each fake Prove call's time: long enough for a surplus worker to overlap it


class CountingClient:
    """Client's surface as the runner uses it; records the most Prove calls held at once, per lane."""

    def __init__(self, *args, **kwargs):
        self.lock = threading.Lock()
        self.now: dict = {}
        self.most: dict = {}
        self.last_transport = "fake"
        CountingClient.last = self

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def status(self) -> dict:
        return {"keys": [{"id": "k"}], "engine_json": "{}"}

    def prove(self, key, *, priority=0, lane="", deadline=None, **kwargs):
        with self.lock:
            self.now[lane] = self.now.get(lane, 0) + 1
            self.most[lane] = max(self.most.get(lane, 0), self.now[lane])
        time.sleep(HOLD_S)
        with self.lock:
            self.now[lane] -= 1
        return SimpleNamespace(job_id="j", timings={"total": HOLD_S * 1e3},
                               partitions=[SimpleNamespace(index=0, timings={}, spans=[], proof={}, public=[])])


@pytest.fixture
def client(monkeypatch):
    monkeypatch.setattr(runner, "Client", CountingClient)
    return CountingClient


@pytest.mark.parametrize("inflight", [1, 3])
def test_runner_keeps_inflight_jobs_at_once(client, inflight):
    run = runner.run_bench("fake:1", "k", witness=b"w", count=4 * inflight, inflight=inflight, progress=False)
    assert client.last.most == {"": inflight}  # the daemon saw j at once, never j + 1
    assert run["summary"]["in_flight_max"] == inflight  # and the report says so from the jobs' own start/end
    if inflight == 1:  # one at a time: each job starts after the one before it answered
        jobs = sorted(run["jobs"], key=lambda j: j["start"])
        assert all(a["end"] <= b["start"] for a, b in zip(jobs, jobs[1:]))


def test_runner_urgent_lane_comes_on_top_of_inflight(client):
    """With an urgent lane the bulk jobs still have j in flight; the urgent ones are extra, on their own thread."""
    run = runner.run_bench("fake:1", "k", witness=b"w", count=8, inflight=2, lane="bulk", urgent_lane="urgent",
                           urgent_every=HOLD_S, progress=False)
    assert client.last.most["bulk"] == 2 and client.last.most.get("urgent", 0) >= 1
    assert run["summary"]["in_flight_max"] == 2
    assert run["summary"]["lanes"]["urgent"]["completed"] >= 1


def test_most_in_flight_counts_overlaps_and_lets_an_end_go_before_a_start_at_a_tie():
    jobs = [{"start": 0.0, "end": 2.0}, {"start": 2.0, "end": 3.0}, {"start": 1.0, "end": 2.5}]
    assert most_in_flight(jobs) == 2
    assert most_in_flight([]) == 0


def test_urgent_arrivals_beyond_the_bound_are_dropped_and_counted_and_latency_counts_from_arrival(client):
    """An urgent job every 5 ms against a 30 ms Prove call and one urgent slot: most arrivals find the slot
    busy; they are dropped and counted instead of queueing in the client without bound, and the ones sent
    never overlap (at most one urgent call held at once)."""
    run = runner.run_bench("fake:1", "k", witness=b"w", count=6, inflight=1, lane="bulk", urgent_lane="urgent",
                           urgent_every=HOLD_S / 6, urgent_outstanding=1, progress=False)
    assert client.last.most["urgent"] == 1
    s = run["summary"]
    assert s["urgent_dropped"] >= 1
    urgent = [j for j in run["jobs"] if j["lane"] == "urgent"]
    assert s["lanes"]["urgent"]["jobs"] == len(urgent) >= 1
    assert all(j["end"] - j["start"] >= HOLD_S * 0.9 for j in urgent)  # each waited a whole call at least
    with pytest.raises(ValueError, match="urgent_outstanding"):
        runner.run_bench("fake:1", "k", witness=b"w", urgent_outstanding=0, progress=False)


class RecordingClient(CountingClient):
    """Records each Prove call's keyword arguments (the statement it sent)."""

    def prove(self, key, *, priority=0, lane="", deadline=None, **kwargs):
        with self.lock:
            self.sent = getattr(self, "sent", []) + [kwargs]
        return super().prove(key, priority=priority, lane=lane, deadline=deadline, **kwargs)


def test_runner_pools_send_each_job_its_own_statement(monkeypatch):
    """A list of inputs (or of witnesses) is a pool: job i sends element i % len (bench/daemon_inputs.py's
    --inputs-dir: every job in flight another RSA signature); one dict or one witness is sent by every job."""
    monkeypatch.setattr(runner, "Client", RecordingClient)
    pool = [{"x": str(i)} for i in range(3)]
    run = runner.run_bench("fake:1", "k", inputs=pool, count=7, inflight=2, progress=False)
    assert run["distinct"] == 3 and run["summary"]["completed"] == 7
    sent = sorted(RecordingClient.last.sent, key=lambda kw: kw["inputs"][0])
    assert [kw["inputs"] for kw in sent] == sorted([[f'{{"x": "{i % 3}"}}'] for i in range(7)])
    run = runner.run_bench("fake:1", "k", witness=["a.wtns", "b.wtns"], count=4, inflight=1, partitions=2,
                           progress=False)
    assert [kw["witness_paths"] for kw in RecordingClient.last.sent] == [["a.wtns"] * 2, ["b.wtns"] * 2] * 2
    run = runner.run_bench("fake:1", "k", inputs={"x": "9"}, count=2, inflight=1, progress=False)
    assert run["distinct"] == 1 and [kw["inputs"] for kw in RecordingClient.last.sent] == [['{"x": "9"}']] * 2
    with pytest.raises(ValueError, match="empty pool"):
        runner.run_bench("fake:1", "k", inputs=[], progress=False)
