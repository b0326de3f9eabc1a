"""Prometheus metrics and `/status` JSON over HTTP, beside the gRPC port (`[daemon] status_listen`).

    GET /metrics   Prometheus text (prometheus-client): proofs completed/failed/cancelled/expired, the
                   completion model (deadlines: backlog, per-key latency and interval),
                   phase-duration histograms (per partition, label phase), queue depths,
                   jobs and partitions in flight, per lane (queued, running, weight, slots, expired, deadline
                   misses, a job-latency histogram), memory budget used/peak, device busy seconds,
                   RSS, keys (residency per place, evictions, reloads, the key budget, per key),
                   garbage-collection pauses by generation;
                   on a cluster front also nodes, actors and per-actor series
    GET /status    the daemon's status snapshot (status.py) as JSON

The Metrics RPC returns the same registry's text. Gauges and counters are read
from one status snapshot at scrape time; only the histograms are fed as
partitions complete (the engine calls `on_partition`). Each DaemonMetrics has
its own registry, so several engines can live in one process.
"""

from __future__ import annotations

import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.parser import text_string_to_metric_families

from snarkd.daemon.gcpause import GENERATIONS, PAUSE_BUCKETS
from snarkd.daemon.security import ADMIN, ROLES, Principal
from snarkd.daemon.status import as_json, prover_json
from snarkd.engine.preempt import SKIP_REASONS

log = logging.getLogger("snarkd")

PHASE_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 60, 150, 300, 600)
AGGREGATION_RESULTS = ("completed", "rejected", "busy", "failed")
JOB_COUNTERS = (("snarkd_proofs_completed", "completed", "Jobs completed"),
                ("snarkd_proofs_failed", "failed", "Jobs failed"),
                ("snarkd_proofs_cancelled", "cancelled", "Jobs cancelled"),
                ("snarkd_proofs_expired", "expired", "Jobs whose deadline passed (EXPIRED: never started, or stopped)"),
                ("snarkd_deadline_refused", "deadline_refused", "Submits refused: the completion estimate missed "
                 "their deadline"),
                ("snarkd_proofs_submitted", "submitted", "Jobs accepted"),
                ("snarkd_requests_rejected", "rejected", "Requests refused at submit"),
                ("snarkd_partitions_completed", "partitions_completed", "Partitions proved"),
                ("snarkd_self_verify_failed", "self_verify_failed", "Proofs that failed self-verification (never returned)"))


class DaemonMetrics:
    """A registry with the daemon's metrics (from `snapshot()`); an engine observer for the histograms."""

    def __init__(self, engine, snapshot, registry: CollectorRegistry | None = None):
        self.snapshot = snapshot
        self.registry = registry or CollectorRegistry()
        self.phase = Histogram("snarkd_phase_duration_seconds", "Duration of each proving phase, per partition",
                               ["phase"], buckets=PHASE_BUCKETS, registry=self.registry)
        self.registry.register(_Collector(snapshot))
        self.lane_latency = Histogram("snarkd_lane_job_duration_seconds", "Submit to completion of each completed "
                                      "job, per lane", ["lane"], buckets=PHASE_BUCKETS, registry=self.registry)
        # fed by daemon/gcpause.GcPauses while the daemon runs: a collection stops every Python thread
        self.gc_pause = Histogram("snarkd_gc_pause_seconds", "Each garbage collection's pause of every Python thread, "
                                  "by generation (2: full)", ["generation"], buckets=PAUSE_BUCKETS,
                                  registry=self.registry)
        for g in GENERATIONS:  # each series from the start, 0 until a collection of its generation
            self.gc_pause.labels(g)
        engine.observers.append(self)
        # the Aggregate RPC (daemon/aggregation.py), fed by `on_aggregation`
        self.aggregations = Counter("snarkd_aggregations", "Aggregate calls, by result: completed; rejected (bad "
                                    "input, a proof that does not verify, ...); busy ([aggregate] max_concurrent); "
                                    "failed", ["result"], registry=self.registry)
        for result in AGGREGATION_RESULTS:
            self.aggregations.labels(result)
        self.aggregation_seconds = Histogram("snarkd_aggregation_duration_seconds", "Duration of each aggregation "
                                             "run (SRS load, proof check, aggregate)", buckets=PHASE_BUCKETS,
                                             registry=self.registry)
        self.aggregated_proofs = Counter("snarkd_aggregated_proofs", "Proofs in the aggregates returned",
                                         registry=self.registry)
        self.aggregations_running = Gauge("snarkd_aggregations_running", "Aggregations running now",
                                          registry=self.registry)

    def on_partition(self, part) -> None:
        for k, ms in part.timings.items():
            self.phase.labels(k).observe(ms / 1000.0)

    def on_job(self, job) -> None:
        """A job ended (told after the engine's lock is let go): a completed one's latency, per lane."""
        if job.state == "COMPLETED" and job.finished:
            self.lane_latency.labels(job.lane).observe(job.finished - job.submitted)

    def on_aggregation(self, result: str, seconds: float, n: int) -> None:
        """One Aggregate call's outcome; n = 0: refused before it ran (not timed)."""
        self.aggregations.labels(result).inc()
        if n:
            self.aggregation_seconds.observe(seconds)
        if result == "completed":
            self.aggregated_proofs.inc(n)

    def text(self) -> bytes:
        return generate_latest(self.registry)

    def values(self) -> dict[str, float]:
        """Every sample as "name{label="v"}" -> value (the Metrics RPC's map)."""
        out = {}
        for fam in text_string_to_metric_families(self.text().decode()):
            for s in fam.samples:
                labels = ",".join(f'{k}="{v}"' for k, v in sorted(s.labels.items()))
                out[f"{s.name}{{{labels}}}" if labels else s.name] = float(s.value)
        return out


class _Collector:
    def __init__(self, snapshot):
        self.snapshot = snapshot

    def collect(self):
        s = self.snapshot()  # a status.DaemonStatus
        st = s.engine
        jobs = st.jobs
        for name, key, doc in JOB_COUNTERS:
            yield CounterMetricFamily(name, doc, value=getattr(jobs, key))
        w = CounterMetricFamily("snarkd_witnesses", "Witnesses computed from inputs, by how: native (replayed), "
                                "recorded (natively, after a guard missed), control (natively, the wasm's "
                                "control flow of a value-dependent circuit), wasm (the wasm engine)", labels=["source"])
        for source in ("native", "recorded", "control", "wasm"):
            w.add_metric([source], getattr(jobs, f"witness_{source}"))
        yield w
        u = CounterMetricFamily("snarkd_unverified_proofs", "Proofs returned without any verification, per key "
                                "([pipeline] self_verify = false and the job did not ask for batch_verify)",
                                labels=["key"])
        for key in sorted({k.id for k in s.keys} | set(st.unverified_proofs)):
            u.add_metric([key], st.unverified_proofs.get(key, 0))
        yield u
        yield GaugeMetricFamily("snarkd_self_verify_enabled", "1 when [pipeline] self_verify is on (every proof is "
                                "verified before it is returned)", value=1 if st.config.get("self_verify", True) else 0)
        yield CounterMetricFamily("snarkd_witness_failed", "Native witnesses whose proof failed self-verification "
                                  "(recomputed on the wasm engine)", value=jobs.witness_failed)
        g = GaugeMetricFamily("snarkd_queue_depth", "Partitions waiting, per queue", labels=["queue"])
        for q in ("pending", "device", "finalize"):
            g.add_metric([q], getattr(st.queues, q))
        yield g
        yield GaugeMetricFamily("snarkd_jobs_queued", "Jobs not started", value=jobs.queued)
        yield GaugeMetricFamily("snarkd_in_flight", "Jobs running", value=jobs.running)
        eta = st.eta  # the completion model deadlines are admitted by (engine/eta.py)
        yield GaugeMetricFamily("snarkd_eta_backlog_seconds", "Estimated wait of a new priority-0 job (the intervals "
                                "of the partitions ahead)", value=eta.backlog_s)
        g = GaugeMetricFamily("snarkd_eta_latency_seconds", "Per key: a partition's admission to proof (EWMA)",
                              labels=["key"])
        for k, v in sorted(eta.latency_s.items()):
            g.add_metric([k], v)
        yield g
        g = GaugeMetricFamily("snarkd_eta_interval_seconds", "Per key: pipeline time per partition once full (its "
                              "busiest stage's work over that stage's workers)", labels=["key"])
        for k, v in sorted(eta.interval_s.items()):
            g.add_metric([k], v)
        yield g
        yield from _lane_metrics(st.lanes)
        yield GaugeMetricFamily("snarkd_partitions_in_flight", "Partitions admitted and not finished",
                                value=st.partitions_in_flight)
        mem = st.memory
        yield GaugeMetricFamily("snarkd_memory_budget_bytes", "The memory budget", value=mem.budget)
        yield GaugeMetricFamily("snarkd_memory_budget_used_bytes", "Bytes of the budget reserved now", value=mem.used)
        yield GaugeMetricFamily("snarkd_memory_budget_peak_bytes", "Most bytes of the budget reserved at once",
                                value=mem.peak)
        yield CounterMetricFamily("snarkd_memory_budget_waits", "Times a partition waited for memory", value=mem.waits)
        yield GaugeMetricFamily("snarkd_rss_bytes", "Resident set size", value=s.rss_bytes)
        yield GaugeMetricFamily("snarkd_peak_rss_bytes", "Peak resident set size", value=s.peak_rss_bytes)
        yield GaugeMetricFamily("snarkd_key_bytes", "Bytes of resident (mapped) keys", value=mem.keys)
        yield GaugeMetricFamily("snarkd_keys_loaded", "Keys loaded (resident or evicted)", value=len(s.keys))
        yield from _key_metrics(s.keys, st.keys)
        c = CounterMetricFamily("snarkd_device_busy_seconds",
                                "Seconds each device had a device stage running (lock-busy: host work included)",
                                labels=["device"])
        k = CounterMetricFamily("snarkd_device_kernel_busy_seconds",
                                "Seconds each GPU ran the device stages' kernels (CUDA events)", labels=["device"])
        for d in st.devices:
            c.add_metric([d.name], d.busy_s)
            if d.kernel_busy_s is not None:
                k.add_metric([d.name], d.kernel_busy_s)
        yield c
        yield k
        yield from _preemption_metrics(st.devices)
        w = GaugeMetricFamily("snarkd_workers_alive", "Worker threads alive, per stage", labels=["stage"])
        x = GaugeMetricFamily("snarkd_workers_expected", "Worker threads configured, per stage", labels=["stage"])
        for name, n in st.workers.items():
            w.add_metric([name], n.alive)
            x.add_metric([name], n.expected)
        yield w
        yield x
        yield GaugeMetricFamily("snarkd_uptime_seconds", "Seconds since the daemon started", value=s.uptime_s)
        if st.cluster is not None:
            yield from _cluster_metrics(st.cluster)


LANE_SERIES = ((GaugeMetricFamily, "snarkd_lane_jobs_queued", "Jobs not started, per lane", "queued"),
               (GaugeMetricFamily, "snarkd_lane_jobs_running", "Jobs running, per lane", "running"),
               (GaugeMetricFamily, "snarkd_lane_weight", "Weight units of unfinished jobs, per lane", "weight"),
               (GaugeMetricFamily, "snarkd_lane_max_weight", "A lane's max_queued (weight units; 0: no bound)",
                "max_queued"),
               (GaugeMetricFamily, "snarkd_lane_slots", "Pipeline slots a lane's partitions hold", "slots"),
               (GaugeMetricFamily, "snarkd_lane_reserved_slots", "Pipeline slots a lane's share keeps for it",
                "reserved_slots"),
               (CounterMetricFamily, "snarkd_lane_jobs_completed", "Jobs of a lane completed", "completed"),
               (CounterMetricFamily, "snarkd_lane_expired", "Jobs of a lane whose deadline passed (EXPIRED)",
                "expired"),
               (CounterMetricFamily, "snarkd_lane_deadline_missed", "Jobs of a lane refused for their deadline, "
                "expired, or finished past it", "deadline_missed"))


def _preemption_metrics(devices: list):
    """Per device: device stages run at a lower lane's yield point, and those skipped, by reason (engine/preempt.py)."""
    done = CounterMetricFamily("snarkd_preemptions", "Partitions whose device stage ran at a yield point of a lower "
                               "lane's stage (a chunk or MSM boundary), per device", labels=["device"])
    skipped = CounterMetricFamily("snarkd_preemptions_skipped", "Partitions of a higher lane that could not run at a "
                                  "lower lane's yield point, per device and reason (device_memory: not room beside the "
                                  "paused stage; key_not_resident: its key not on the device); counted once each",
                                  labels=["device", "reason"])
    for d in devices:
        done.add_metric([d.name], d.preemptions)
        for reason in sorted(set(SKIP_REASONS) | set(d.preempt_skipped)):
            skipped.add_metric([d.name, reason], d.preempt_skipped.get(reason, 0))
    yield done
    yield skipped


def _lane_metrics(lanes: list):
    """One series per lane (engine.status.LaneStatus) of each LANE_SERIES."""
    for kind, name, doc, field in LANE_SERIES:
        fam = kind(name, doc, labels=["lane"])
        for lane in lanes:
            fam.add_metric([lane.name], getattr(lane, field))
        yield fam


def _cluster_metrics(cl):
    """A cluster front's series (a cluster.status.ClusterStatus): nodes, actors by state, and per actor
    (labels actor, node)."""
    yield GaugeMetricFamily("snarkd_cluster_nodes_alive", "Ray nodes alive", value=cl.nodes_alive)
    states = GaugeMetricFamily("snarkd_cluster_actors", "Engine actors, per state", labels=["state"])
    for state in ("starting", "loading", "ready", "dead"):
        states.add_metric([state], sum(a.state == state for a in cl.actors))
    yield states
    yield CounterMetricFamily("snarkd_cluster_partitions_retried", "Partitions run again after their actor died",
                              value=cl.front.retried)
    yield CounterMetricFamily("snarkd_cluster_duplicates_dropped", "Second proofs of a partition, dropped",
                              value=cl.front.duplicates_dropped)
    per_actor = (
        (CounterMetricFamily, "snarkd_cluster_actor_partitions_completed", "Partitions proved, per actor", "completed"),
        (CounterMetricFamily, "snarkd_cluster_actor_partitions_failed", "Partitions failed on a live actor", "failed"),
        (CounterMetricFamily, "snarkd_cluster_actor_partitions_lost", "Partitions on an actor when it died", "lost"),
        (GaugeMetricFamily, "snarkd_cluster_actor_outstanding", "Partitions sent to an actor, not back yet",
         "outstanding"),
        (GaugeMetricFamily, "snarkd_cluster_actor_throughput", "Proofs per second over the last minute",
         "throughput"),
        (GaugeMetricFamily, "snarkd_cluster_actor_ready", "1 when the actor takes work", None),
    )
    for kind, name, doc, field in per_actor:
        fam = kind(name, doc, labels=["actor", "node"])
        for a in cl.actors:
            fam.add_metric([a.name, a.node_id[:12]], float(a.state == "ready") if field is None else getattr(a, field))
        yield fam


def _key_metrics(keys: list, kb):
    """The key budget and residency (place: "host" or a device), and one series per key (KeyStatus)."""
    g = GaugeMetricFamily("snarkd_keys_resident", "Keys resident, per place (host map, each GPU)", labels=["place"])
    b = GaugeMetricFamily("snarkd_key_resident_bytes", "Bytes of resident keys, per place", labels=["place"])
    for place, n in kb.resident.items():
        g.add_metric([place], n)
        b.add_metric([place], kb.resident_bytes[place])
    yield g
    yield b
    e = CounterMetricFamily("snarkd_key_evictions", "Keys evicted by the key budget, per place", labels=["place"])
    for place, n in kb.evictions.items():
        e.add_metric([place], n)
    yield e
    yield CounterMetricFamily("snarkd_key_reloads", "Evicted keys reloaded by a job", value=kb.reloads)
    yield GaugeMetricFamily("snarkd_key_budget_max_resident", "[keys] max_resident (0 = no limit)",
                            value=kb.max_resident)
    lim = GaugeMetricFamily("snarkd_key_budget_bytes", "[keys] host_budget / device_budget (0 = off)", labels=["place"])
    lim.add_metric(["host"], kb.host_budget)
    lim.add_metric(["device"], kb.device_budget)
    yield lim
    res = GaugeMetricFamily("snarkd_key_resident", "1 when the key is resident at the place", labels=["key", "place"])
    proofs = CounterMetricFamily("snarkd_key_proofs", "Proofs completed with the key", labels=["key"])
    used = GaugeMetricFamily("snarkd_key_last_used_timestamp_seconds", "Unix time the key was last used (0 = never)",
                             labels=["key"])
    jobs = GaugeMetricFamily("snarkd_key_jobs", "Jobs queued or running on the key", labels=["key"])
    for k in keys:
        res.add_metric([k.id, "host"], 1 if k.resident else 0)
        for d in k.devices:
            res.add_metric([k.id, d.device], 1)
        proofs.add_metric([k.id], k.proofs)
        used.add_metric([k.id], k.last_used)
        jobs.add_metric([k.id], k.jobs)
    yield from (res, proofs, used, jobs)


class StatusServer:
    """HTTP on [daemon] status_listen: /metrics and /status, in a thread of its own.
    ssl_context: serve HTTPS (the daemon's tls_cert; client certificates when tls_client_ca);
    tokens: a security.TokenTable, and then every GET needs "Authorization: Bearer TOKEN"."""

    def __init__(self, snapshot, metrics: DaemonMetrics, listen, ssl_context=None, tokens=None):
        self.snapshot, self.metrics, self.listen = snapshot, metrics, listen
        self.ssl_context, self.tokens = ssl_context, tokens
        self.httpd: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 30  # seconds a client may take to send its request (and its TLS handshake)

            def do_GET(self):  # noqa: N802
                path = self.path.split("?", 1)[0]
                try:
                    who = outer._caller(self.headers.get("Authorization", ""))
                    if who is None:
                        body, ctype, code = b"a bearer token is required ([daemon] token_file)\n", "text/plain", 401
                    elif path == "/metrics":
                        body, ctype, code = outer.metrics.text(), CONTENT_TYPE_LATEST, 200
                    elif path == "/status":  # a prove-role token sees what the Status RPC shows it
                        snap = as_json(outer.snapshot())
                        body = (json.dumps(snap if who.may(ADMIN) else prover_json(snap), indent=1) + "\n").encode()
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
        if self.ssl_context is not None:
            # the handshake in each request's thread, not in the accepting one (a silent client stalls only itself)
            self.httpd.socket = self.ssl_context.wrap_socket(self.httpd.socket, server_side=True,
                                                             do_handshake_on_connect=False)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.2},
                                       name="status-http", daemon=True)
        self.thread.start()

    def _caller(self, header: str) -> Principal | None:
        """Who asks: anyone (with every role) without tokens; else the holder of the bearer token, or None."""
        if self.tokens is None:
            return Principal("http", ROLES[ADMIN])
        scheme, _, token = header.strip().partition(" ")
        return self.tokens.lookup(token.strip()) if scheme.lower() == "bearer" else None

    @property
    def port(self) -> int:
        return self.httpd.server_address[1] if self.httpd else 0

    def stop(self) -> None:
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None
