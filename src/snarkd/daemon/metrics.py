"""Prometheus metrics and `/status` JSON over HTTP, beside the gRPC port (`[daemon] status_listen`).

    GET /metrics   Prometheus text (prometheus-client): proofs completed/failed/cancelled,
                   phase-duration histograms (per partition, label phase), queue depths,
                   jobs and partitions in flight, memory budget used/peak, device busy seconds,
                   RSS, keys
    GET /status    the daemon's status as JSON: version, config fingerprint, state, keys, and
                   the engine's queues, memory, devices and workers

Gauges are read from the engine at scrape time; only the histograms are fed as
partitions complete (the engine calls `on_partition`). Each StatusServer has its
own registry, so several engines can live in one process.
"""

from __future__ import annotations

import json
import logging
import os
import resource
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from snarkd import __version__

log = logging.getLogger("snarkd")

PHASE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60, 150, 300, 600)


class EngineMetrics:
    """A registry with the engine's metrics; an engine observer for the histograms."""

    def __init__(self, engine, keys=None, registry: CollectorRegistry | None = None):
        self.engine = engine
        self.keys = keys if keys is not None else engine.keys
        self.registry = registry or CollectorRegistry()
        self.phase = Histogram("snarkd_phase_duration_seconds", "Duration of each proving phase, per partition",
                               ["phase"], buckets=PHASE_BUCKETS, registry=self.registry)
        self.registry.register(_Collector(self))
        engine.observers.append(self)

    def on_partition(self, part) -> None:
        for k, ms in part.timings.items():
            self.phase.labels(k).observe(ms / 1000.0)

    def on_job(self, job) -> None:
        pass

    def text(self) -> bytes:
        return generate_latest(self.registry)


class _Collector:
    def __init__(self, m: EngineMetrics):
        self.m = m

    def collect(self):
        st = self.m.engine.status()
        jobs = st["jobs"]
        for name, key, doc in (("snarkd_proofs_completed", "completed", "Jobs completed"),
                               ("snarkd_proofs_failed", "failed", "Jobs failed"),
                               ("snarkd_proofs_cancelled", "cancelled", "Jobs cancelled"),
                               ("snarkd_proofs_submitted", "submitted", "Jobs accepted"),
                               ("snarkd_requests_rejected", "rejected", "Requests refused at submit"),
                               ("snarkd_partitions_completed", "partitions_completed", "Partitions proved"),
                               ("snarkd_self_verify_failed", "self_verify_failed",
                                "Proofs that failed self-verification (never returned)")):
            yield CounterMetricFamily(name, doc, value=jobs[key])
        g = GaugeMetricFamily("snarkd_queue_depth", "Partitions waiting, per queue", labels=["queue"])
        for q in ("pending", "device", "finalize"):
            g.add_metric([q], st["queues"][q])
        yield g
        yield GaugeMetricFamily("snarkd_jobs_queued", "Jobs not started", value=jobs["queued"])
        yield GaugeMetricFamily("snarkd_in_flight", "Jobs running", value=jobs["running"])
        yield GaugeMetricFamily("snarkd_partitions_in_flight", "Partitions admitted and not finished",
                                value=st["partitions_in_flight"])
        mem = st["memory"]
        yield GaugeMetricFamily("snarkd_memory_budget_bytes", "The memory budget", value=mem["budget"])
        yield GaugeMetricFamily("snarkd_memory_budget_used_bytes", "Bytes of the budget reserved now",
                                value=mem["used"])
        yield GaugeMetricFamily("snarkd_memory_budget_peak_bytes", "Most bytes of the budget reserved at once",
                                value=mem["peak"])
        yield CounterMetricFamily("snarkd_memory_budget_waits", "Times a partition waited for memory",
                                  value=mem["waits"])
        yield GaugeMetricFamily("snarkd_rss_bytes", "Resident set size", value=mem["rss"])
        yield GaugeMetricFamily("snarkd_peak_rss_bytes", "Peak resident set size",
                                value=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024)
        yield GaugeMetricFamily("snarkd_key_bytes", "Bytes of resident (mapped) keys", value=mem["keys"])
        yield GaugeMetricFamily("snarkd_keys_loaded", "Keys loaded", value=len(self.m.keys.list()))
        c = CounterMetricFamily("snarkd_device_busy_seconds", "Seconds each device was held for device work",
                                labels=["device"])
        for d in st["devices"]:
            c.add_metric([d["name"]], d["busy_s"])
        yield c
        w = GaugeMetricFamily("snarkd_workers_alive", "Worker threads alive, per stage", labels=["stage"])
        for k, v in st["workers"].items():
            w.add_metric([k], v["alive"])
        yield w
        yield GaugeMetricFamily("snarkd_uptime_seconds", "Seconds since the engine started", value=st["uptime_s"])


def status_dict(service) -> dict:
    """The daemon's /status JSON (a ProverService: its engine, keys and info)."""
    es = service.engine.status()
    rss = es["memory"]["rss"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {
        "pid": os.getpid(), "version": __version__, "state": service.state,
        "uptime_s": time.monotonic() - service.info["started"],
        "config_path": service.info["config_path"], "config_fingerprint": service.info["fingerprint"],
        "listen": service.info["listen"], "rss_bytes": rss, "peak_rss_bytes": max(rss, peak),
        "keys": [lk.info() for lk in service.keys.list()],
        "engine": es,
    }


class StatusServer:
    """HTTP on [daemon] status_listen: /metrics and /status, in a thread of its own."""

    def __init__(self, service, listen, metrics: EngineMetrics | None = None):
        self.service = service
        self.listen = listen
        self.metrics = metrics or EngineMetrics(service.engine, service.keys)
        self.httpd: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                path = self.path.split("?", 1)[0]
                try:
                    if path == "/metrics":
                        body, ctype, code = outer.metrics.text(), CONTENT_TYPE_LATEST, 200
                    elif path == "/status":
                        body = (json.dumps(status_dict(outer.service), indent=1) + "\n").encode()
                        ctype, code = "application/json", 200
                    elif path == "/":
                        body, ctype, code = b"snarkd: GET /metrics (Prometheus), GET /status (JSON)\n", "text/plain", 200
                    else:
                        body, ctype, code = b"not found: try /metrics or /status\n", "text/plain", 404
                except Exception as exc:  # noqa: BLE001
                    log.exception("status endpoint failed")
                    body, ctype, code = f"internal error: {exc!r}\n".encode(), "text/plain", 500
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, fmt, *args):
                log.debug("status http: " + fmt, *args)

        self.httpd = ThreadingHTTPServer((self.listen.host, self.listen.port), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                       name="status-http", daemon=True)
        self.thread.start()

    @property
    def port(self) -> int:
        return self.httpd.server_address[1] if self.httpd else 0

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None
