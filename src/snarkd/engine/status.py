"""The engine's status snapshot: plain data, taken at once, that every status view renders
(the Status RPC, GET /status, the Prometheus collector, `snarkd status`, the bench)."""

from __future__ import annotations

import time
from dataclasses import asdict

import psutil

from snarkd.engine.memory import rss
from snarkd.engine.residency import resident_on


def engine_status(engine) -> dict:
    now = time.monotonic()
    counts = engine.book.counts()
    with engine.book.cv:
        acct = engine.acct
        jobs = {"queued": counts["queued"], "running": counts["running"], **acct.counters}
        busy, mem = acct.busy_seconds(), engine.budget.snapshot()
        in_flight, phase_ms = acct.in_flight, dict(acct.phase_ms)
        device_evictions = dict(engine.residency.evictions)
    up = max(1e-9, now - engine.t_start)
    cpu = psutil.Process().cpu_times()
    return {
        "accepting": engine.accepting, "started": engine.started, "uptime_s": up, "jobs": jobs,
        "queues": {"pending": counts["pending"], **engine.queue_depths()},
        "partitions_in_flight": in_flight,
        "cpu_s": cpu.user + cpu.system,  # the whole process's CPU time (the bench: cores used = d cpu_s / wall)
        "memory": {**mem, "rss": rss(), "keys": engine.keys.resident_bytes()},
        "devices": [{"name": b.name, "busy_s": busy[b.name], "busy_fraction": busy[b.name] / up,
                     "kernel_busy_s": b.kernel_seconds(), "workers": engine.config.workers_per_device}
                    for b in engine.devices],
        "workers": {k: {"expected": n, "alive": engine.alive(k)} for k, n in engine.expected_workers().items()},
        "config": {**{k: v for k, v in asdict(engine.config).items() if k != "debug_delay_s"},
                   "g2_on_device": engine.g2_on_device},  # as resolved ("auto" -> where it runs)
        "phase_ms": phase_ms,
        "keys": key_budget(engine, device_evictions),
    }


def key_budget(engine, device_evictions: dict) -> dict:
    """The key budget and where keys are resident: the host, and each device."""
    c, keys = engine.config, engine.keys
    mapped = [lk for lk in keys.list() if lk.resident]
    resident, nbytes = {"host": len(mapped)}, {"host": sum(lk.nbytes for lk in mapped)}
    for b in engine.devices:
        if b.name != "cpu":  # the CPU device works from the host's map
            there = resident_on(b, keys)
            resident[b.name], nbytes[b.name] = len(there), sum(n for _, n in there)
    return {"max_resident": c.key_max_resident, "host_budget": c.key_host_budget,
            "device_budget": c.key_device_budget, "resident": resident, "resident_bytes": nbytes,
            "evictions": {"host": keys.evictions, **device_evictions}, "reloads": keys.reloads}
