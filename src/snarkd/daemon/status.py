"""The daemon's status record: the engine's (engine/status.py) plus what only the daemon knows, and its one
mapping to the proto.

Rendered four ways, all from one `snapshot()`: the Status RPC (`status_reply`), GET /status (`as_json`),
the Prometheus collector (metrics.py) and `snarkd status` (lifecycle.format_status, over the Status RPC).
Every message is built by `message()`: a proto field is taken from the record's field of the same name
unless the mapping derives it; tests/daemon/test_status_record.py checks each pair in MESSAGES both ways
(a record field no message carries, or a message field no record has, fails it).
"""

from __future__ import annotations

import json
import os
import resource
import time
from dataclasses import asdict, dataclass

from snarkd import __version__
from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.engine.status import EngineStatus, KeyDevice, KeyStatus, LaneStatus


@dataclass
class DaemonStatus:
    pid: int
    version: str
    state: str  # "starting" | "serving" | "draining"
    uptime_s: float
    config_path: str
    config_fingerprint: str
    listen: str
    status_listen: str
    witness_spool: str
    spool_token: str
    witness_dirs: list[str]
    rss_bytes: int
    peak_rss_bytes: int
    keys: list[KeyStatus]
    devices: list[str]
    engine: EngineStatus


def peak_rss() -> int:
    """This process's peak RSS: VmHWM of /proc/self/status (Linux), which starts afresh at exec.
    (ru_maxrss does not: Linux carries it across fork and exec, so a daemon started by a big
    parent -- a test runner with wasmtime loaded -- reported the parent's peak as its own.)"""
    try:
        with open("/proc/self/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def snapshot(service) -> DaemonStatus:
    engine = service.engine
    es = engine.status()
    info = service.info
    return DaemonStatus(
        pid=os.getpid(), version=__version__, state=service.state, uptime_s=time.monotonic() - info["started"],
        config_path=info["config_path"], config_fingerprint=info["fingerprint"], listen=info["listen"],
        status_listen=info.get("status_listen", ""), witness_spool=info.get("witness_spool", ""),
        spool_token=info.get("spool_token", ""), witness_dirs=list(info.get("witness_dirs", [])),
        rss_bytes=es.memory.rss, peak_rss_bytes=max(es.memory.rss, peak_rss()),
        keys=[engine.key_status(lk) for lk in engine.keys.list()], devices=[d.name for d in es.devices], engine=es)


def as_json(record) -> dict:
    """A record as plain data (GET /status, engine_json)."""
    return asdict(record)


# -- the proto -------------------------------------------------------------------------------------

def status_derived(s: DaemonStatus) -> dict:
    """StatusReply's fields that summarize the engine record (the rest carry DaemonStatus's by name)."""
    es = s.engine
    return {"queued": es.jobs.queued, "in_flight": es.jobs.running, "completed": es.jobs.completed,
            "failed": es.jobs.failed, "cancelled": es.jobs.cancelled, "expired": es.jobs.expired,
            "workers": es.workers["synthesis"].alive,
            "engine_json": json.dumps(as_json(es)), "memory_budget_bytes": es.memory.budget,
            "memory_used_bytes": es.memory.used, "memory_peak_bytes": es.memory.peak,
            "device_busy_s": {d.name: d.busy_s for d in es.devices}, "lanes": [message(x) for x in es.lanes]}


# record -> (its message, the message's fields derived from other record fields, record fields carried so)
MESSAGES = {
    KeyDevice: (pb.KeyDevice, (), ()),
    KeyStatus: (pb.KeyInfo, (), ()),
    LaneStatus: (pb.LaneInfo, (), ()),
    DaemonStatus: (pb.StatusReply, ("queued", "in_flight", "completed", "failed", "cancelled", "expired", "workers",
                                    "engine_json", "memory_budget_bytes", "memory_used_bytes", "memory_peak_bytes",
                                    "device_busy_s", "lanes"), ("engine",)),
}


def message(record, **derived):
    """The record's proto message (MESSAGES): each field from the record's field of the same name (records in
    repeated fields as their own messages), the derived ones from `derived`."""
    cls, names, _ = MESSAGES[type(record)]
    if set(derived) != set(names):
        raise ValueError(f"{cls.DESCRIPTOR.name}: derived fields {sorted(derived)}, the mapping says {sorted(names)}")
    kw = dict(derived)
    for f in cls.DESCRIPTOR.fields:
        if f.name not in kw:
            value = getattr(record, f.name)
            kw[f.name] = [message(x) for x in value] if f.message_type is not None else value
    return cls(**kw)


def key_message(ks: KeyStatus) -> pb.KeyInfo:
    return message(ks)


def status_reply(s: DaemonStatus) -> pb.StatusReply:
    return message(s, **status_derived(s))


# What a prove-role caller sees of Status: the daemon's state and version, the keys it may prove with (without
# their paths), the job counts, and what picking a witness transport needs (the spool, its token, witness_dirs).
# Not the pid, the config and its fingerprint, the addresses, the key and wasm paths, memory, devices or the
# engine snapshot (which holds the config): those are an operator's (admin role).
PROVER_CLEARED = ("pid", "config_path", "config_fingerprint", "listen", "status_listen", "rss_bytes", "peak_rss_bytes",
                  "devices", "workers", "engine_json", "memory_budget_bytes", "memory_used_bytes",
                  "memory_peak_bytes", "device_busy_s", "uptime_s")
PROVER_KEY_FIELDS = ("id", "curve", "n_vars", "n_public", "domain_size", "resident", "jobs")


def prover_view(reply: pb.StatusReply) -> pb.StatusReply:
    """The Status reply for a caller with the prove role only (see PROVER_CLEARED)."""
    out = pb.StatusReply()
    out.CopyFrom(reply)
    for name in PROVER_CLEARED:
        out.ClearField(name)
    del out.keys[:]
    out.keys.extend(pb.KeyInfo(**{f: getattr(k, f) for f in PROVER_KEY_FIELDS}) for k in reply.keys)
    return out


# The reply's top-level fields a prover sees: all but the cleared ones (job counts and keys come nested in the
# snapshot: taken below). One list, PROVER_CLEARED, decides for both views.
_PROVER_TOP = {f.name for f in pb.StatusReply.DESCRIPTOR.fields} - set(PROVER_CLEARED)


def prover_json(s: dict) -> dict:
    """The same view of a snapshot, for GET /status with a prove-role token."""
    out = {k: v for k, v in s.items() if k in _PROVER_TOP}
    out["keys"] = [{f: k.get(f) for f in PROVER_KEY_FIELDS} for k in s.get("keys", [])]
    jobs = s.get("engine", {}).get("jobs", {})
    out["jobs"] = {k: jobs.get(k) for k in ("queued", "running", "completed", "failed", "cancelled", "expired")}
    return out
