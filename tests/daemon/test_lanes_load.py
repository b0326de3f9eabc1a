"""Lanes with a real daemon (CPU backend, the chain key): urgent jobs on their lane under bulk load keep their
idle latency (p99 within 1.5x, both measured in this test on this machine), every job that expired never
started, every deadline refusal carries the daemon's estimate; and kill -9 + restart keeps lanes and
deadlines (issue 34's CPU criteria)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from clirun import env
from daemon_helpers import snarkd, start_daemon, wait_gone

from snarkd.bench.report import percentile
from snarkd.daemon.client import Client, RemoteDeadlineExceeded
from snarkd.verifier import verify

pytestmark = pytest.mark.slow  # daemons in subprocesses: the slow tier

# urgent keeps 5 of the 6 pipeline slots (2 synthesis workers, device and finalize queues of 1, the CPU's one
# device slot, 1 finalize worker): bulk has at most one partition in the pipeline
LANES = """
[gpus]
workers_per_device = 1
[scheduler.lanes.urgent]
priority = 10
share = 0.75
[scheduler.lanes.bulk]
priority = 0
"""
SAMPLES = 100  # urgent proofs per phase: p99 interpolates between the slowest two
ROUNDS = 5  # idle and loaded samples taken in turns


def _config(setup, circ, extra=""):
    return setup.write(drain="2s", workers=2, preload={"chain": circ.zkey}, extra=LANES + extra)


# a running job past its deadline finishes (counted as missed): every EXPIRED job is then one that never started
FINISH = "[pipeline]\nfinish_past_deadline = true\n"


def _urgent_latencies(c, data: bytes, vk: dict, n: int, gap: float = 0.0) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        r = c.prove("chain", data, lane="urgent")
        out.append(time.perf_counter() - t0)
        assert verify(vk, r.public, r.proof)
        time.sleep(gap)
    return out


def test_urgent_jobs_keep_their_idle_latency_under_bulk_load(setup, reaper, chain_bn128):
    """Bulk load from another process (`snarkd bench` on the bulk lane, 3 jobs of 2 partitions in flight), paused
    (SIGSTOP) and resumed in turns, so idle and loaded samples alternate and a neighbour's load on a shared CI box
    falls on both alike. Each partition's synthesis is stretched by 100 ms ([debug] synthesis_delay, a sleep): it
    stands in for a bigger key's stage without burning the CI box's two cores, so what is measured is the
    scheduling (with share = 0 instead, bulk holds both synthesis workers and urgent waits up to a stage for one:
    measured p50 1.7x, p99 1.7x idle, and this test fails), not two cores shared by a daemon, a bench and the
    test."""
    circ, wtns = chain_bn128
    vk = json.loads(circ.vk.read_text())
    data = wtns.read_bytes()
    pid = start_daemon(_config(setup, circ), reaper, extra_env={"SNARKD_DEBUG_PROVE_DELAY_MS": 100})
    idle, loaded = [], []
    with Client(setup.addr, timeout=120) as c:
        _urgent_latencies(c, data, vk, 5)  # warm: the key mapped, the completion model measured
        bench = subprocess.Popen([sys.executable, "-m", "snarkd", "bench", "--addr", setup.addr, "--key", "chain",
                                  "--witness", str(wtns), "-c", "100000", "-j", "3", "--partitions", "2",
                                  "--lane", "bulk", "--no-progress"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, env=env())
        reaper.procs.append(bench)
        try:
            before = _lane(c, "bulk")["completed"]
            while _lane(c, "bulk")["completed"] < before + 3:  # the load is on
                assert bench.poll() is None, bench.stderr.read().decode()
                time.sleep(0.05)
            for _ in range(ROUNDS):
                loaded += _urgent_latencies(c, data, vk, SAMPLES // ROUNDS, gap=0.01)
                bench.send_signal(signal.SIGSTOP)  # its calls in flight end; no new ones
                _drained(c)
                idle += _urgent_latencies(c, data, vk, SAMPLES // ROUNDS, gap=0.01)
                bench.send_signal(signal.SIGCONT)
                time.sleep(0.3)
            st = {ln["name"]: ln for ln in c.status()["lanes"]}
        finally:
            bench.send_signal(signal.SIGCONT)
            bench.kill()
            bench.wait(30)
    assert st["bulk"]["reserved_slots"] == 0 and st["urgent"]["reserved_slots"] == 5
    assert st["bulk"]["completed"] >= 3 * ROUNDS and st["bulk"]["deadline_missed"] == 0
    p99_idle, p99_loaded = percentile(idle, 99), percentile(loaded, 99)
    print(f"urgent latency: idle p50 {percentile(idle, 50) * 1e3:.1f} p99 {p99_idle * 1e3:.1f} ms; under bulk load "
          f"p50 {percentile(loaded, 50) * 1e3:.1f} p99 {p99_loaded * 1e3:.1f} ms ({st['bulk']['completed']} bulk jobs)")
    assert p99_loaded <= 1.5 * p99_idle, (sorted(idle), sorted(loaded))
    r = snarkd("stop", "--config", setup.config)
    assert r.returncode == 0 and wait_gone(pid), r.stderr


def _lane(c, name: str) -> dict:
    return {ln["name"]: ln for ln in c.status()["lanes"]}[name]


def _drained(c, timeout: float = 30) -> None:
    """Until no bulk job is queued or running (the paused bench's last calls have ended)."""
    end = time.monotonic() + timeout
    while (lambda b: b["queued"] + b["running"])(_lane(c, "bulk")):
        assert time.monotonic() < end
        time.sleep(0.01)


def test_expired_jobs_never_started_and_refusals_carry_the_estimate(setup, reaper, chain_bn128):
    circ, wtns = chain_bn128
    data = wtns.read_bytes()
    pid = start_daemon(_config(setup, circ, FINISH), reaper, extra_env={"SNARKD_DEBUG_PROVE_DELAY_MS": 300})
    refused, accepted = [], []
    with Client(setup.addr, timeout=120) as c:
        c.prove("chain", data, lane="bulk")  # measured: the model can estimate from here on
        blockers = [c.submit("chain", data, lane="bulk") for _ in range(4)]
        for i in range(12):  # deadlines from "meets it" to "cannot": some refused, some expire in the queue
            try:
                accepted.append(c.submit("chain", data, lane="bulk", deadline=0.35 + 0.15 * i))
            except RemoteDeadlineExceeded as exc:
                refused.append(str(exc))
        for job_id in blockers + accepted:
            c.await_(job_id, timeout=120)
        jobs = {j["job_id"]: j for j in c.list_jobs(lane="bulk")}
        lanes = {ln["name"]: ln for ln in c.status()["lanes"]}
    expired = [jobs[j] for j in accepted if jobs[j]["state"] == "EXPIRED"]
    assert refused and expired, (refused, [jobs[j]["state"] for j in accepted])
    for msg in refused:  # DEADLINE_EXCEEDED with the estimate it was judged by
        assert "cannot finish in time" in msg and "estimated" in msg and "partition(s) ahead" in msg, msg
    for j in expired:  # queued when it expired: never started, nothing proved
        assert "before it started" in j["error"] and j["done"] == 0, j
    assert all(jobs[j]["state"] in ("COMPLETED", "EXPIRED") for j in accepted + blockers)
    assert lanes["bulk"]["expired"] == len(expired)
    assert lanes["bulk"]["deadline_missed"] >= len(expired) + len(refused)
    r = snarkd("stop", "--config", setup.config)
    assert r.returncode == 0 and wait_gone(pid), r.stderr


def test_kill_9_keeps_lanes_and_deadlines(setup, reaper, chain_bn128):
    circ, wtns = chain_bn128
    vk = json.loads(circ.vk.read_text())
    cfg = _config(setup, circ)
    pid = start_daemon(cfg, reaper, extra_env={"SNARKD_DEBUG_PROVE_DELAY_MS": 2000})
    with Client(setup.addr, timeout=60) as c:
        ids = {"blocker": c.submit("chain", wtns.read_bytes(), job_id="blocker", lane="bulk"),
               "urgent": c.submit("chain", wtns.read_bytes(), job_id="urgent", lane="urgent", deadline=300),
               "bulk": c.submit("chain", wtns.read_bytes(), job_id="bulk", lane="bulk", deadline=400)}
        before = {j["job_id"]: j for j in c.list_jobs()}
    os.kill(pid, signal.SIGKILL)
    assert wait_gone(pid, 10)
    pid2 = start_daemon(cfg, reaper)
    with Client(setup.addr, timeout=60) as c:
        for job_id in ids.values():
            r = c.await_(job_id, timeout=120)
            assert r.state == "COMPLETED" and verify(vk, r.reply.public, r.reply.proof), (job_id, r)
        after = {j["job_id"]: j for j in c.list_jobs()}
        assert c.list_jobs(lane="urgent")[0]["job_id"] == "urgent"
    for name in ids:
        assert after[name]["lane"] == before[name]["lane"], name
        assert after[name]["deadline_unix"] == pytest.approx(before[name]["deadline_unix"], abs=0.01), name
    assert [after[n]["lane"] for n in ("blocker", "urgent", "bulk")] == ["bulk", "urgent", "bulk"]
    r = snarkd("status", "--config", cfg)
    assert r.returncode == 0 and "\nlanes:\n" in r.stdout, r.stdout + r.stderr
    assert "  urgent: priority 10, share 0.75 (0/5 reserved slots held), 0 queued, 0 running" in r.stdout, r.stdout
    r = snarkd("jobs", "list", "--lane", "urgent", "--config", cfg)
    assert r.returncode == 0 and "LANE" in r.stdout and "urgent" in r.stdout and "bulk" not in r.stdout, r.stdout
    r = snarkd("stop", "--config", cfg)
    assert r.returncode == 0 and wait_gone(pid2), r.stderr


def test_bench_reports_each_lanes_latency_and_deadline_misses(setup, reaper, chain_bn128):
    from snarkd.bench import format_report, run_bench

    circ, wtns = chain_bn128
    pid = start_daemon(_config(setup, circ), reaper)
    run = run_bench(setup.addr, "chain", witness=str(wtns), count=12, inflight=2, lane="bulk", urgent_lane="urgent",
                    urgent_every=0.05, progress=False, vk=json.loads(circ.vk.read_text()))
    lanes = run["summary"]["lanes"]
    assert set(lanes) == {"bulk", "urgent"} and lanes["bulk"]["jobs"] == lanes["bulk"]["completed"] == 12
    assert lanes["urgent"]["completed"] == lanes["urgent"]["jobs"] >= 1 and run["verified"] == len(run["jobs"])
    lat = lanes["urgent"]["latency_s"]
    assert 0 < lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
    report = format_report(run)
    assert "lane bulk: 12/12 completed, 0 deadline(s) missed; latency p50 " in report and "lane urgent: " in report
    # the urgent jobs from a client process of their own: counted, verified and timed from their arrival the same way
    apart = run_bench(setup.addr, "chain", witness=str(wtns), count=12, inflight=2, lane="bulk", urgent_lane="urgent",
                      urgent_every=0.05, urgent_process=True, progress=False, vk=json.loads(circ.vk.read_text()))
    lanes = apart["summary"]["lanes"]
    assert lanes["bulk"]["completed"] == 12 and lanes["urgent"]["completed"] == lanes["urgent"]["jobs"] >= 1
    urgent = [j for j in apart["jobs"] if j["lane"] == "urgent"]
    assert apart["verified"] == len(apart["jobs"]) and sorted(j["i"] for j in urgent) == list(range(13, 13 + len(urgent)))
    assert all(j["start"] < j["end"] and j["timings"]["total"] > 0 for j in urgent)
    # a deadline it cannot meet (the model has measured the key by now): refused, counted as missed, per lane
    late = run_bench(setup.addr, "chain", witness=str(wtns), count=3, lane="bulk", deadline=1e-4, progress=False)
    assert late["summary"]["lanes"]["bulk"]["deadline_missed"] == late["summary"]["deadline_missed"] == 3
    assert "lane bulk: 0/3 completed, 3 deadline(s) missed; latency no job completed" in format_report(late)
    r = snarkd("stop", "--config", setup.config)
    assert r.returncode == 0 and wait_gone(pid), r.stderr
