"""Joining Ray as the front's driver: [cluster] address decides how.

    "local"            a private Ray instance started by the front on this machine (one node: every GPU
                       of the machine gets an actor; tests and one-machine use)
    "auto"             the cluster that `ray start` joined this machine to
    "HOST:PORT"        the cluster whose head (GCS) is there; this machine runs a Ray node of it
    "ray://HOST:PORT"  Ray Client, from a machine outside the cluster (witnesses then cross twice)

ray.init replaces the process's SIGTERM handler with its own exit; the daemon's handlers (drain on
SIGTERM) are put back, so `snarkd stop` drains a front as it drains a single daemon.
"""

from __future__ import annotations

import logging
import signal
import threading

import ray

from snarkd.errors import DaemonError

log = logging.getLogger("snarkd")
NAMESPACE = "snarkd"


def connect(address: str) -> dict:
    """Join Ray; what the driver sees (address, nodes, resources)."""
    keep = {}
    if threading.current_thread() is threading.main_thread():
        keep = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    kwargs = {"namespace": NAMESPACE}
    if not address.startswith("ray://"):
        kwargs.update(include_dashboard=False, log_to_driver=False)
    try:
        ctx = ray.init(address=None if address == "local" else address, **kwargs)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise DaemonError(f"[cluster] address = {address!r}: cannot join Ray: {exc}") from None
    finally:
        for s, h in keep.items():
            signal.signal(s, h)
    info = {"address": address, "gcs": (getattr(ctx, "address_info", None) or {}).get("gcs_address", ""),
            "node_id": ray.get_runtime_context().get_node_id(), "resources": ray.cluster_resources()}
    log.info("joined Ray address=%s gcs=%s resources=%s", address, info["gcs"] or "-",
             ",".join(f"{k}={v:g}" for k, v in sorted(info["resources"].items()) if k in ("CPU", "GPU")))
    return info


def disconnect() -> None:
    if ray.is_initialized():
        ray.shutdown()
