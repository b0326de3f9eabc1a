"""The daemon's status snapshot: the engine's snapshot plus what only the daemon knows.

Rendered four ways, all from one `snapshot()`: the Status RPC (`status_reply`),
GET /status (its JSON), the Prometheus collector (metrics.py) and `snarkd status`
(lifecycle.format_status, over the Status RPC).
"""

from __future__ import annotations

import json
import os
import resource
import time

from snarkd import __version__
from snarkd.daemon.proto import snarkd_pb2 as pb
from snarkd.engine.residency import key_infos


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


def snapshot(service) -> dict:
    es = service.engine.status()
    rss = es["memory"]["rss"]
    info = service.info
    return {
        "pid": os.getpid(), "version": __version__, "state": service.state,
        "uptime_s": time.monotonic() - info["started"],
        "config_path": info["config_path"], "config_fingerprint": info["fingerprint"],
        "listen": info["listen"], "status_listen": info.get("status_listen", ""),
        "witness_spool": info.get("witness_spool", ""), "spool_token": info.get("spool_token", ""),
        "witness_dirs": info.get("witness_dirs", []),
        "rss_bytes": rss, "peak_rss_bytes": max(rss, peak_rss()),
        "keys": key_infos(service.keys, service.engine.devices),
        "devices": [d["name"] for d in es["devices"]],
        "engine": es,
    }


def key_message(info: dict) -> pb.KeyInfo:
    """A key's info (LoadedKey.info, with "devices" when known) as a KeyInfo."""
    devices = [pb.KeyDevice(**d) for d in info.get("devices", ())]
    return pb.KeyInfo(**{k: v for k, v in info.items() if k != "devices"}, devices=devices)


def status_reply(s: dict) -> pb.StatusReply:
    es = s["engine"]
    jobs, mem = es["jobs"], es["memory"]
    return pb.StatusReply(
        pid=s["pid"], uptime_s=s["uptime_s"], version=s["version"], config_path=s["config_path"],
        config_fingerprint=s["config_fingerprint"], listen=s["listen"], status_listen=s["status_listen"],
        witness_spool=s["witness_spool"], spool_token=s["spool_token"], witness_dirs=s["witness_dirs"],
        keys=[key_message(k) for k in s["keys"]],
        queued=jobs["queued"], in_flight=jobs["running"], completed=jobs["completed"], failed=jobs["failed"],
        cancelled=jobs["cancelled"], rss_bytes=s["rss_bytes"], peak_rss_bytes=s["peak_rss_bytes"],
        devices=s["devices"], workers=es["workers"]["synthesis"]["alive"], state=s["state"],
        engine_json=json.dumps(es), memory_budget_bytes=mem["budget"], memory_used_bytes=mem["used"],
        memory_peak_bytes=mem["peak"], device_busy_s={d["name"]: d["busy_s"] for d in es["devices"]},
    )


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


def prover_json(s: dict) -> dict:
    """The same view of a snapshot, for GET /status with a prove-role token."""
    keep = {"version", "state", "witness_spool", "spool_token", "witness_dirs"}
    out = {k: v for k, v in s.items() if k in keep}
    out["keys"] = [{f: k.get(f) for f in PROVER_KEY_FIELDS} for k in s.get("keys", [])]
    jobs = s.get("engine", {}).get("jobs", {})
    out["jobs"] = {k: jobs.get(k) for k in ("queued", "running", "completed", "failed", "cancelled")}
    return out
