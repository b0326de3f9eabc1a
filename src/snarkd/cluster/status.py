"""The front's status snapshot: shaped like the Engine's (engine/status.py), so every view the daemon
has (Status RPC, GET /status, /metrics, `snarkd status`, the bench) renders it unchanged, plus "cluster":

    nodes    every node Ray knows: alive, address, CPUs/GPUs, its actors
    actors   state, node, devices, keys resident (and key errors), outstanding tasks and their capacity,
             completed / failed / lost partitions, proofs per second over the last minute
    keys     key id -> the actors that hold it
    front    the admission queue, retries, duplicate proofs dropped

Actor figures come from the statuses the monitor fetched in the background (at most a second old):
taking a snapshot never waits for an actor.
"""

from __future__ import annotations

import time
from dataclasses import asdict

import psutil

from snarkd.cluster.router import DEAD, READY
from snarkd.engine.memory import rss

ACTOR_SUMS = ("device", "finalize", "capacity")


def _actor(a, now: float) -> dict:
    es = a.status.get("engine", {})
    return {
        "name": a.name, "node_id": a.node_id, "state": a.state, "error": a.error,
        "pid": a.info.get("pid"), "host": a.info.get("host", ""), "gpu_ids": a.info.get("gpu_ids", []),
        "devices": a.info.get("devices", []), "keys": sorted(a.keys), "key_errors": dict(a.key_errors),
        "outstanding": a.outstanding, "capacity": a.capacity, "given": a.given, "completed": a.completed,
        "failed": a.failed, "lost": a.lost, "throughput": round(a.throughput(now), 4),
        "uptime_s": now - a.created, "rss": es.get("memory", {}).get("rss", 0),
        "engine_jobs": es.get("jobs", {}), "queues": es.get("queues", {}),
    }


def _node(n: dict, actors: list) -> dict:
    res = n.get("Resources", {})
    nid = n["NodeID"]
    return {"node_id": nid, "alive": bool(n.get("Alive")), "address": n.get("NodeManagerAddress", ""),
            "hostname": n.get("NodeManagerHostname", ""), "cpus": res.get("CPU", 0), "gpus": res.get("GPU", 0),
            "actors": [a["name"] for a in actors if a["node_id"] == nid and a["state"] != DEAD]}


def _key_budget(front, statuses) -> dict:
    """The front's own key maps (place "host"), and each ready actor's places (ACTOR/host, ACTOR/cuda:0):
    the Engine's key-budget section, so the key metrics show residency per actor too."""
    keys = front.keys
    mapped = [lk for lk in keys.list() if lk.resident]
    out = {"max_resident": front.config.key_max_resident, "host_budget": front.config.key_host_budget,
           "device_budget": front.config.key_device_budget, "resident": {"host": len(mapped)},
           "resident_bytes": {"host": sum(lk.nbytes for lk in mapped)}, "evictions": {"host": keys.evictions},
           "reloads": keys.reloads}
    for a, es in statuses:
        kb = es.get("keys") or {}
        for field in ("resident", "resident_bytes", "evictions"):
            for place, n in (kb.get(field) or {}).items():
                out[field][f"{a.name}/{place}"] = n
        out["reloads"] += kb.get("reloads", 0)
    return out


def front_status(front) -> dict:
    now = time.monotonic()
    counts = front.book.counts()
    m = front.members
    with front.book.cv:
        counters, phase_ms = dict(front.book.counters), dict(front.book.phase_ms)
        mem = front.budget.snapshot()
        records = list(m.actors.values()) if m else []
        actors = [_actor(a, now) for a in records]
        nodes = [_node(n, actors) for n in (m.nodes.values() if m else [])]
        statuses = [(a, a.status.get("engine", {})) for a in records if a.state == READY]
        outstanding = sum(a.outstanding for a in records)
    devices, queues, workers = [], {"pending": counts["pending"], "device": 0, "finalize": 0, "capacity": 0}, {}
    for a, es in statuses:
        for d in es.get("devices", []):
            devices.append({**d, "name": f"{a.name}/{d['name']}"})
        for q in ACTOR_SUMS:
            queues[q] += es.get("queues", {}).get(q, 0)
        for k, w in es.get("workers", {}).items():
            agg = workers.setdefault(k, {"expected": 0, "alive": 0})
            agg["expected"] += w["expected"]
            agg["alive"] += w["alive"]
    workers.setdefault("synthesis", {"expected": 0, "alive": 0})
    workers["front"] = {"expected": len(front._threads), "alive": front.alive()}
    live = [a for a in actors if a["state"] != DEAD]
    workers["actors"] = {"expected": len(live), "alive": sum(a["state"] == READY for a in live)}
    up = max(1e-9, now - front.t_start)
    cpu = psutil.Process().cpu_times()
    key_holders = {lk.id: [a["name"] for a in actors if lk.id in a["keys"] and a["state"] != DEAD]
                   for lk in front.keys.list()}
    return {
        "accepting": front.accepting, "started": front.started, "uptime_s": up,
        "jobs": {"queued": counts["queued"], "running": counts["running"], **counters},
        "queues": queues, "partitions_in_flight": outstanding, "cpu_s": cpu.user + cpu.system,
        "memory": {**mem, "rss": rss(), "keys": front.keys.resident_bytes()},
        "devices": devices, "workers": workers,
        "config": {**{k: v for k, v in asdict(front.config).items() if k != "debug_delay_s"},
                   "cluster": {k: getattr(front.settings, k) for k in front.settings.__dataclass_fields__}},
        "phase_ms": phase_ms,
        "keys": _key_budget(front, statuses),
        "cluster": {
            "address": front.settings.address, "gcs": front.ray_info.get("gcs", ""),
            "nodes": nodes, "actors": actors, "keys": key_holders,
            "nodes_alive": sum(n["alive"] for n in nodes), "actors_ready": sum(a["state"] == READY for a in actors),
            "front": {"pending": counts["pending"], "outstanding": outstanding, "retried": counters["retried"],
                      "duplicates_dropped": counters["duplicates_dropped"]},
        },
    }
