"""The engine's status record: typed, taken at once, the one thing every status view renders (the Status RPC
and KeyInfo of LoadKey/UnloadKey, GET /status, the Prometheus collector, `snarkd status`, the bench).

Both engines build it (engine_status here, the cluster front's cluster/status.py); daemon/status.py maps it
to the proto and to JSON, and tests/daemon/test_status_record.py fails when a record and its message
disagree. A field added here reaches every view, or that test says which message lacks it.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import psutil

from snarkd.engine.eta import EtaStatus
from snarkd.engine.memory import rss
from snarkd.engine.residency import resident_on


@dataclass
class KeyDevice:
    """A key's arrays on one device (the proto's KeyDevice): its gpu.resident.Residency, named."""

    device: str  # "cuda:0" (on a cluster front: "ACTOR/cuda:0")
    bytes: int
    tables: bool
    streamed: bool

    @classmethod
    def of(cls, device: str, residency) -> "KeyDevice":
        return cls(device, **asdict(residency))


@dataclass
class KeyStatus:
    """One loaded key (the proto's KeyInfo)."""

    id: str
    path: str
    curve: str
    bytes: int
    n_vars: int
    n_public: int
    domain_size: int
    preloaded: bool
    load_ms: float
    proofs: int
    resident: bool
    last_used: float
    jobs: int
    evictions: int
    reloads: int
    devices: list[KeyDevice] = field(default_factory=list)


@dataclass
class JobCounts:
    queued: int = 0
    running: int = 0
    submitted: int = 0
    rejected: int = 0
    completed: int = 0
    failed: int = 0
    cancelled: int = 0
    expired: int = 0  # jobs whose deadline passed (queued: never started; running: stopped)
    deadline_refused: int = 0  # submits refused because the estimate missed their deadline (also in rejected)
    partitions_completed: int = 0
    self_verify_failed: int = 0
    # witnesses from inputs by how they were made (snarkd.witness.native): replayed, recorded natively after a
    # guard missed, on the wasm engine; and native witnesses whose proof failed self-verification
    witness_native: int = 0
    witness_recorded: int = 0
    witness_control: int = 0  # a value-dependent circuit's request run natively through the wasm's control flow
    witness_wasm: int = 0
    witness_failed: int = 0
    retried: int = 0  # a cluster front's: partitions run again after their actor died
    duplicates_dropped: int = 0  # ... and second proofs of a partition, dropped


@dataclass
class Queues:
    pending: int = 0  # partitions waiting for admission
    device: int = 0
    finalize: int = 0
    capacity: int = 0  # of the device queue


@dataclass
class Memory:
    budget: int  # the memory budget (a cluster front's: its witness budget)
    used: int
    peak: int
    waits: int  # times a partition waited for room
    rss: int
    keys: int  # bytes of keys mapped on the host


@dataclass
class DeviceStatus:
    name: str
    busy_s: float  # seconds it had a device stage running (host work included)
    busy_fraction: float
    kernel_busy_s: float | None  # seconds its kernels ran (None: not measured apart)
    workers: int
    preemptions: int = 0  # partitions whose device stage ran at a lower lane's yield point (engine/preempt.py)
    preempt_skipped: dict[str, int] = field(default_factory=dict)  # partitions that could not, by reason


@dataclass
class WorkerCount:
    expected: int
    alive: int


@dataclass
class KeyBudget:
    """The key budget, and where keys are resident: place "host", each device (a front: "ACTOR/PLACE")."""

    max_resident: int
    host_budget: int
    device_budget: int
    resident: dict[str, int]
    resident_bytes: dict[str, int]
    evictions: dict[str, int]
    reloads: int


@dataclass
class LaneStatus:
    """A lane ([scheduler.lanes.NAME], engine/lanes.py) and what it holds now."""

    name: str
    priority: int
    share: float
    max_queued: float
    deadline_s: float
    queued: int
    running: int
    weight: float
    slots: int
    reserved_slots: int
    expired: int
    deadline_missed: int
    completed: int


def lane_statuses(lanes) -> list[LaneStatus]:
    """Every lane of an engine's (or front's) Lanes, by name (under its table's lock)."""
    return [LaneStatus(n, u.lane.priority, u.lane.share, u.lane.max_queued, u.lane.deadline, u.queued, u.running,
                       u.weight, u.slots, lanes.reserved_slots(n), u.expired, u.deadline_missed, u.completed)
            for n, u in sorted(lanes.use.items())]


@dataclass
class EngineStatus:
    accepting: bool
    started: bool
    uptime_s: float
    jobs: JobCounts
    queues: Queues
    partitions_in_flight: int
    cpu_s: float  # the whole process's CPU time (the bench: cores used = d cpu_s / wall)
    memory: Memory
    devices: list[DeviceStatus]
    workers: dict[str, WorkerCount]
    config: dict  # the engine's settings as resolved
    phase_ms: dict[str, float]  # summed over completed partitions
    keys: KeyBudget
    eta: EtaStatus = field(default_factory=lambda: EtaStatus(1))  # the completion model deadlines are judged by
    cluster: object = None  # a cluster front's cluster.status.ClusterStatus
    lanes: list[LaneStatus] = field(default_factory=list)
    unverified_proofs: dict[str, int] = field(default_factory=dict)  # per key: returned with self_verify = false


def cpu_seconds() -> float:
    cpu = psutil.Process().cpu_times()
    return cpu.user + cpu.system


def engine_status(engine, queues: dict) -> EngineStatus:
    """The engine's status record; `queues`: Engine.queue_depths(), given by the engine (read from its parts, the
    record calls nothing of the engine's own module back)."""
    now = time.monotonic()
    counts = engine.book.counts()
    with engine.book.cv:
        acct = engine.acct
        jobs = JobCounts(queued=counts["queued"], running=counts["running"], **acct.counters)
        busy, mem = acct.busy_seconds(), engine.budget.snapshot()
        in_flight, phase_ms = acct.in_flight, dict(acct.phase_ms)
        device_evictions = dict(engine.residency.evictions)
        eta = engine.book.eta.status_locked(engine.book.jobs.values())
        lanes = lane_statuses(engine.book.lanes)
        unverified = dict(engine.book.unverified)
        preempted = list(acct.preemptions)
        skipped = [dict(x) for x in acct.preempt_skipped]
    up = max(1e-9, now - engine.t_start)
    c = engine.config
    return EngineStatus(
        accepting=engine.accepting, started=engine.started, uptime_s=up, jobs=jobs,
        queues=Queues(pending=counts["pending"], **queues), partitions_in_flight=in_flight,
        cpu_s=cpu_seconds(), memory=Memory(**mem, rss=rss(), keys=engine.keys.resident_bytes()),
        devices=[DeviceStatus(b.name, busy[b.name], busy[b.name] / up, b.kernel_seconds(), c.workers_per_device,
                              preempted[d], skipped[d]) for d, b in enumerate(engine.devices)],
        workers={k: WorkerCount(n, engine.workers.alive(k)) for k, n in engine.workers.expected.items()},
        config={**c.status_view(),
                "g2_on_device": engine.g2_on_device},  # as resolved ("auto" -> where it runs)
        phase_ms=phase_ms, keys=key_budget(engine, device_evictions), eta=eta, lanes=lanes,
        unverified_proofs=unverified)


def key_budget(engine, device_evictions: dict) -> KeyBudget:
    """The key budget and where keys are resident: the host, and each device."""
    c, keys = engine.config, engine.keys
    mapped = [lk for lk in keys.list() if lk.resident]
    resident, nbytes = {"host": len(mapped)}, {"host": sum(lk.nbytes for lk in mapped)}
    for b in engine.devices:
        if b.name != "cpu":  # the CPU device works from the host's map
            there = resident_on(b, keys)
            resident[b.name], nbytes[b.name] = len(there), sum(n for _, n in there)
    return KeyBudget(c.key_max_resident, c.key_host_budget, c.key_device_budget, resident, nbytes,
                     {"host": keys.evictions, **device_evictions}, keys.reloads)


def key_status(lk, devices) -> KeyStatus:
    """A loaded key's status with where it is resident among `devices` (Backends)."""
    key = lk.key  # read once: a host eviction may clear it meanwhile
    there = [] if key is None else [(b.name, b.residency(key)) for b in devices]
    return lk.status([KeyDevice.of(name, r) for name, r in there if r is not None])
