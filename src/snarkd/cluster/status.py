"""The front's status record: the Engine's (engine/status.py), so every view the daemon has (Status RPC,
GET /status, /metrics, `snarkd status`, the bench) renders it unchanged, plus `cluster` (ClusterStatus):

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
from dataclasses import dataclass, replace

from snarkd.cluster.router import DEAD, READY
from snarkd.engine.memory import rss
from snarkd.engine.status import (EngineStatus, JobCounts, KeyBudget, Memory, Queues, WorkerCount, cpu_seconds,
                                  lane_statuses)

ACTOR_SUMS = ("device", "finalize", "capacity")


@dataclass
class ActorStatus:
    name: str
    node_id: str
    state: str
    error: str
    pid: int | None
    host: str
    gpu_ids: list[str]
    devices: list[str]
    keys: list[str]
    key_errors: dict[str, str]
    outstanding: int
    capacity: int
    given: int
    completed: int
    failed: int
    lost: int
    throughput: float  # proofs per second over the last minute
    uptime_s: float
    rss: int
    engine_jobs: JobCounts | None
    queues: Queues | None


@dataclass
class NodeStatus:
    node_id: str
    alive: bool
    address: str
    hostname: str
    cpus: float
    gpus: float
    actors: list[str]


@dataclass
class FrontCounts:
    pending: int
    outstanding: int
    retried: int
    duplicates_dropped: int


@dataclass
class ClusterStatus:
    address: str
    gcs: str
    nodes: list[NodeStatus]
    actors: list[ActorStatus]
    keys: dict[str, list[str]]  # key id -> the actors that hold it
    nodes_alive: int
    actors_ready: int
    front: FrontCounts


def _actor(a, now: float) -> ActorStatus:
    es = a.status.get("engine")
    return ActorStatus(
        name=a.name, node_id=a.node_id, state=a.state, error=a.error, pid=a.info.get("pid"),
        host=a.info.get("host", ""), gpu_ids=a.info.get("gpu_ids", []), devices=a.info.get("devices", []),
        keys=sorted(a.keys), key_errors=dict(a.key_errors), outstanding=a.outstanding, capacity=a.capacity,
        given=a.given, completed=a.completed, failed=a.failed, lost=a.lost, throughput=round(a.throughput(now), 4),
        uptime_s=now - a.created, rss=es.memory.rss if es else 0, engine_jobs=es.jobs if es else None,
        queues=es.queues if es else None)


def _node(n: dict, actors: list[ActorStatus]) -> NodeStatus:
    res = n.get("Resources", {})
    nid = n["NodeID"]
    return NodeStatus(nid, bool(n.get("Alive")), n.get("NodeManagerAddress", ""), n.get("NodeManagerHostname", ""),
                      res.get("CPU", 0), res.get("GPU", 0),
                      [a.name for a in actors if a.node_id == nid and a.state != DEAD])


def _key_budget(front, statuses) -> KeyBudget:
    """The front's own key maps (place "host"), and each ready actor's places (ACTOR/host, ACTOR/cuda:0):
    the Engine's key-budget section, so the key metrics show residency per actor too."""
    keys, c = front.keys, front.config
    mapped = [lk for lk in keys.list() if lk.resident]
    out = KeyBudget(c.key_max_resident, c.key_host_budget, c.key_device_budget, {"host": len(mapped)},
                    {"host": sum(lk.nbytes for lk in mapped)}, {"host": keys.evictions}, keys.reloads)
    for a, es in statuses:
        for field in ("resident", "resident_bytes", "evictions"):
            for place, n in getattr(es.keys, field).items():
                getattr(out, field)[f"{a.name}/{place}"] = n
        out.reloads += es.keys.reloads
    return out


def front_key_status(front, lk):
    """A key at the front, with its arrays on each ready actor's devices (from the actors' statuses)."""
    m = front.members
    statuses = [(a.name, a.status.get("keys", [])) for a in (m.ready() if m else [])]  # ready() takes the lock
    return lk.status([replace(d, device=f"{name}/{d.device}")
                      for name, keys in statuses for k in keys if k.id == lk.id for d in k.devices])


def front_status(front) -> EngineStatus:
    now = time.monotonic()
    counts = front.book.counts()
    m = front.members
    with front.book.cv:
        counters, phase_ms = dict(front.book.counters), dict(front.book.phase_ms)
        mem = front.budget.snapshot()
        records = list(m.actors.values()) if m else []
        actors = [_actor(a, now) for a in records]
        nodes = [_node(n, actors) for n in (m.nodes.values() if m else [])]
        statuses = [(a, a.status["engine"]) for a in records if a.state == READY and "engine" in a.status]
        outstanding = sum(a.outstanding for a in records)
        eta = front.book.eta.status_locked(front.book.jobs.values())
        lanes = lane_statuses(front.book.lanes)
    devices, queues, workers = [], Queues(pending=counts["pending"]), {}
    for a, es in statuses:
        devices += [replace(d, name=f"{a.name}/{d.name}") for d in es.devices]
        for q in ACTOR_SUMS:
            setattr(queues, q, getattr(queues, q) + getattr(es.queues, q))
        for k, w in es.workers.items():
            agg = workers.setdefault(k, WorkerCount(0, 0))
            agg.expected += w.expected
            agg.alive += w.alive
    workers.setdefault("synthesis", WorkerCount(0, 0))
    workers["front"] = WorkerCount(len(front._threads), front.alive())
    live = [a for a in actors if a.state != DEAD]
    workers["actors"] = WorkerCount(len(live), sum(a.state == READY for a in live))
    key_holders = {lk.id: [a.name for a in actors if lk.id in a.keys and a.state != DEAD]
                   for lk in front.keys.list()}
    return EngineStatus(
        accepting=front.accepting, started=front.started, uptime_s=max(1e-9, now - front.t_start),
        jobs=JobCounts(queued=counts["queued"], running=counts["running"], **counters),
        queues=queues, partitions_in_flight=outstanding, cpu_s=cpu_seconds(),
        memory=Memory(**mem, rss=rss(), keys=front.keys.resident_bytes()),
        devices=devices, workers=workers,
        config={**front.config.status_view(),
                "cluster": {k: getattr(front.settings, k) for k in front.settings.__dataclass_fields__}},
        phase_ms=phase_ms, keys=_key_budget(front, statuses), eta=eta, lanes=lanes, unverified_proofs=dict(front.book.unverified),
        cluster=ClusterStatus(
            address=front.settings.address, gcs=front.ray_info.get("gcs", ""), nodes=nodes, actors=actors,
            keys=key_holders, nodes_alive=sum(n.alive for n in nodes),
            actors_ready=sum(a.state == READY for a in actors),
            front=FrontCounts(counts["pending"], outstanding, counters["retried"], counters["duplicates_dropped"])))
