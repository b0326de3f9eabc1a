"""The daemon process: startup, main loop, shutdown (in the manner of uvicorn's Server).

    startup   log file (run) -> "starting" -> pid file lock -> addresses free? -> tokens, TLS
              -> journal -> engine -> preload keys -> workers -> service (journal re-runs)
              -> /metrics -> gRPC bound (no SO_REUSEPORT) -> heap frozen (gcpause.py) -> health SERVING -> READY=1
              (systemd) -> "ready ..." on the readiness pipe: one method each (startup)
    main loop wait for SIGTERM / SIGINT
    shutdown  STOPPING=1, health NOT_SERVING, refuse new proofs and keys (UNAVAILABLE;
              Await/Status still answer), drain in-flight proofs up to drain_timeout,
              cancel the rest, close the port, remove the pid file, exit 0

Any startup failure is logged (file and stderr), written to the readiness pipe
as "error <cause>" for `snarkd start`, and ends the process with a non-zero code
after undoing what was done (no pid file, no socket, no half-ready daemon).
"""

from __future__ import annotations

import gc
import logging
import os
import signal
import sys
import threading
import time
from concurrent import futures

import grpc
import psutil
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from snarkd import __version__
from snarkd.daemon import sdnotify
from snarkd.daemon.aggregation import Aggregator
from snarkd.config import Config, EngineConfig
from snarkd.daemon.gcpause import GcPauses, freeze
from snarkd.daemon.journal import Journal
from snarkd.daemon.logsetup import flush_logs, redirect_stdio, reopen_logs, setup_logging
from snarkd.daemon.metrics import StatusServer
from snarkd.daemon.netcheck import check_free, unix_in_use
from snarkd.daemon.pidfile import PidFile
from snarkd.daemon.security import (Gate, TokenTable, server_credentials, server_ssl_context,
                                    uses_control_socket)
from snarkd.daemon.service import ProverService, add_prover_service
from snarkd.daemon.transport import Spool, Transport
from snarkd.engine import Engine, KeyStore
from snarkd.engine.contract import ProvingEngine
from snarkd.engine.paths import ClientPaths
from snarkd.errors import EXIT_DAEMON, EXIT_INTERNAL, DaemonError, InputError, SnarkdError, reworded

SERVICE_NAME = "snarkd.v1.Prover"


def grpc_options(max_message: int) -> list:
    return [
        # grpc turns SO_REUSEPORT on by default: two daemons could then share a port silently.
        ("grpc.so_reuseport", 0),
        # [limits] max_message: witnesses of real circuits run to hundreds of MiB
        ("grpc.max_receive_message_length", max_message),
        ("grpc.max_send_message_length", max_message),
    ]


class StartupAborted(Exception):
    pass


def make_engine(cfg: Config, paths: ClientPaths | None = None) -> ProvingEngine:
    """The daemon's engine (not started): a cluster front when [cluster] address is set (Ray is imported
    only then), else one Engine in this process. LoadKey paths are confined by `paths` (the daemon's one rule
    for what clients name, engine/paths.py; built from cfg when not given)."""
    paths = paths or ClientPaths.from_config(cfg)
    if cfg.cluster.address:
        from snarkd.cluster import make

        return make(cfg, paths)[0]
    k = cfg.keys
    return Engine(EngineConfig.from_config(cfg), KeyStore(k.param_cache, k.wasm_cache, rule=paths.keys))


class Server:
    def __init__(self, config: Config, ready_fd: int | None = None, log_to_stderr: bool = True):
        self.config = config
        self.ready_fd = ready_fd
        self.log_to_stderr = log_to_stderr
        self.log: logging.Logger | None = None
        self.should_exit = threading.Event()
        self.reopen_requested = False  # SIGHUP: the main loop reopens the log file
        self.signals = 0
        self.pidfile = PidFile(config.daemon.pid_file)
        self.paths = ClientPaths.from_config(config)  # the one rule for paths clients name: keys and witnesses
        self.keys: KeyStore | None = None  # the engine's (made in startup)
        self.journal: Journal | None = None
        self.engine: ProvingEngine | None = None  # made in startup (after logging: a bad [gpus] must reach the log)
        self.status_http = None  # snarkd.daemon.metrics.StatusServer
        self.gc_pauses: GcPauses | None = None  # each collection's pause into the metrics (startup: heap frozen)
        self.spool = None  # snarkd.daemon.transport.Spool
        self.grpc_server: grpc.Server | None = None
        self.health = health.HealthServicer()
        self.service: ProverService | None = None
        self.started = time.monotonic()
        self._bound_unix = False
        self._control: str | None = None  # the control socket's path while bound

    # ------------------------------------------------------------------ entry point

    def run(self) -> int:
        try:
            d = self.config.daemon
            self.log = setup_logging(d.log_file, d.log_level, self.log_to_stderr, d.log_format)
        except OSError as exc:
            msg = f"cannot open log file {self.config.daemon.log_file}: {exc.strerror}"
            print(f"snarkd: error: {msg}", file=sys.stderr)
            self._tell_parent(f"error {msg}")
            return EXIT_DAEMON
        self.install_signal_handlers()
        try:
            self.startup()
        except StartupAborted:
            self.log.info("stop requested during startup; stopped")
            self._cleanup()
            self._tell_parent("error stopped by a signal during startup")
            return 0
        except Exception as exc:
            if isinstance(exc, SnarkdError):
                msg, code = str(exc), exc.exit_code
            else:
                self.log.exception("startup failed with an internal error")
                msg, code = f"internal error: {exc!r}", EXIT_INTERNAL
            self.log.error("startup failed: %s", msg)
            self._tell_parent(f"error {msg}")
            self._cleanup()
            self.log.error("not started (exit %d)", code)
            flush_logs()
            return code
        self.main_loop()
        return self.shutdown()

    # ------------------------------------------------------------------ startup

    def startup(self) -> None:
        """The steps of the module docstring, each a method; a failure anywhere undoes them all (run)."""
        self._announce()
        self._lock_pid_file()
        control = self._free_addresses()
        tokens, creds = self._credentials()
        self._open_journal()
        self._check_abort()
        self._make_engine()
        self._preload_keys()
        self._start_engine()
        self._make_service(tokens, control)
        self._serve_status(tokens)
        self._serve_grpc(creds, control)
        self._freeze_heap()
        self._check_abort()
        self._ready()

    def _announce(self) -> None:
        cfg = self.config
        self.log.info("snarkd starting version=%s pid=%d python=%s", __version__, os.getpid(), sys.version.split()[0])
        sys.setswitchinterval(cfg.daemon.switch_interval)  # [daemon] switch_interval: the whole process's threads
        self.log.info("configuration loaded source=%s listen=%s fingerprint=%s switch_interval=%gs", cfg.source,
                      cfg.daemon.listen, cfg.fingerprint, sys.getswitchinterval())

    def _lock_pid_file(self) -> None:
        cfg = self.config
        me = psutil.Process()
        meta = {
            "pid": os.getpid(), "create_time": me.create_time(), "cmdline": me.cmdline(),
            "listen": str(cfg.daemon.listen), "fingerprint": cfg.fingerprint, "config": cfg.source,
            "log_file": cfg.daemon.log_file, "version": __version__, "started": time.time(),
        }
        self.pidfile.acquire(meta)
        if self.pidfile.stale_warning:
            self.log.warning("%s", self.pidfile.stale_warning)
        self.log.info("pid file locked path=%s", cfg.daemon.pid_file)

    def _free_addresses(self) -> str | None:
        """The listen address free (a stale unix socket removed); the control socket's path when one is
        used (its length is checked with the config), free too."""
        cfg = self.config
        listen = cfg.daemon.listen
        busy = check_free(listen)
        if busy:
            raise DaemonError(busy)
        if listen.kind == "unix" and unix_in_use(listen.path) is False:
            self.log.warning("removing stale unix socket %s (nothing accepts connections on it)", listen.path)
            os.unlink(listen.path)
        control = cfg.daemon.control_socket if uses_control_socket(cfg) else None
        if control is not None:
            if unix_in_use(control):
                raise DaemonError(f"[daemon] control_socket {control} is in use by another process")
            if os.path.lexists(control):
                os.unlink(control)
        return control

    def _credentials(self):
        """(the token table or None, the gRPC server's TLS credentials or None), read before anything starts."""
        d = self.config.daemon
        tokens = TokenTable.load(d.token_file) if d.token_file is not None else None
        creds = server_credentials(d.tls_cert, d.tls_key, d.tls_client_ca) \
            if d.tls_cert is not None and d.listen.kind == "tcp" else None
        if tokens is not None:
            self.log.info("bearer tokens required: %d token(s) from %s", len(tokens.entries), d.token_file)
        return tokens, creds

    def _open_journal(self) -> None:
        d = self.config.daemon
        if d.journal != "off":
            self.journal = Journal(d.journal, d.spool_max, d.result_retention)
            self.log.info("job journal %s (spool %s, result_retention %gs)", d.journal, self.journal.spool_dir,
                          d.result_retention)

    def _make_engine(self) -> None:
        cfg = self.config
        self.engine = make_engine(cfg, self.paths)
        self.keys = self.engine.keys
        st = self.engine.status()
        self.log.info("memory budget %d bytes (%s) devices=%s", st.memory.budget, cfg.memory.budget,
                      ",".join(d.name for d in st.devices))

    def _preload_keys(self) -> None:
        sdnotify.notify("STATUS=loading keys")
        for key_id, path in self.config.keys.preload.items():
            try:
                self.keys.load(key_id, path, preloaded=True)
            except SnarkdError as exc:
                raise reworded(exc, f"cannot preload key {key_id!r} from {path}: {exc}") from None
            except OSError as exc:
                raise InputError(f"cannot preload key {key_id!r} from {path}: {exc.strerror or exc}") from None
            self._check_abort()

    def _start_engine(self) -> None:
        cfg = self.config
        self.engine.start()
        st = self.engine.status()
        self.log.info("workers started synthesis_workers=%d threads=%s devices=%s workers_per_device=%d "
                      "finalize_workers=%d memory_budget=%d self_verify=%s",
                      cfg.synthesis.workers, cfg.synthesis.threads or "auto", ",".join(d.name for d in st.devices),
                      cfg.gpus.workers_per_device, cfg.pipeline.finalize_workers, st.memory.budget,
                      cfg.pipeline.self_verify)
        if not cfg.pipeline.self_verify:
            from snarkd.daemon.doctor import UNVERIFIED

            self.log.warning("%s; `snarkd doctor` says so too", UNVERIFIED)

    def _make_service(self, tokens, control: str | None) -> None:
        """The witness spool, the gRPC servicer over the engine, and the journal's unfinished jobs again."""
        cfg = self.config
        t = cfg.transport
        if t.witness_spool:
            try:
                self.spool = Spool(t.witness_spool)
            except OSError as exc:
                raise DaemonError(f"cannot make [transport] witness_spool {t.witness_spool}: "
                                  f"{exc.strerror or exc}") from None
            self.log.info("witness spool %s (by-reference witnesses from this host)", t.witness_spool)
        info = {"started": self.started, "config_path": cfg.source, "fingerprint": cfg.fingerprint,
                "listen": str(cfg.daemon.listen), "status_listen": str(cfg.daemon.status_listen or ""),
                "witness_spool": str(self.spool.path) if self.spool else "",
                "spool_token": self.spool.token if self.spool else "", "witness_dirs": list(t.witness_dirs)}
        gate = Gate(tokens, trusted_peer=(lambda peer: peer.startswith("unix:")) if control else None)
        self.service = ProverService(self.engine, self.keys, info, Transport(self.spool, self.paths.witnesses),
                                     gate=gate, journal=self.journal, max_per_client=cfg.limits.max_queued_per_client,
                                     aggregator=Aggregator.from_config(
                                         cfg, self.paths.keys, devices=self.engine.devices))
        if self.journal is not None:
            rec = self.service.recover()
            self.journal.start()
            if rec["rerun"] or rec["failed"] or rec["orphans"] or rec["expired"]:
                self.log.info("journal: %d unfinished job(s) submitted again, %d could not be (failed), %d past "
                              "their deadline (expired), %d orphan spool file(s) removed", rec["rerun"], rec["failed"],
                              rec["expired"], rec["orphans"])

    def _serve_status(self, tokens) -> None:
        """GET /metrics and /status on [daemon] status_listen, when set."""
        d = self.config.daemon
        if d.status_listen is None:
            return
        tls = server_ssl_context(d.tls_cert, d.tls_key, d.tls_client_ca) if d.tls_cert is not None else None
        self.status_http = StatusServer(self.service.snapshot, self.service.metrics, d.status_listen,
                                        ssl_context=tls, tokens=tokens)
        try:
            self.status_http.start()
        except OSError as exc:
            self.status_http = None
            raise DaemonError(f"cannot serve [daemon] status_listen {d.status_listen}: {exc.strerror or exc}") from None
        self.log.info("status endpoint on %s://%s (GET /metrics, /status)%s", "https" if tls else "http",
                      d.status_listen, "; bearer token required" if tokens is not None else "")

    def _serve_grpc(self, creds, control: str | None) -> None:
        """The gRPC server (the prover and health services) bound and started; health NOT_SERVING until ready."""
        cfg, d = self.config, self.config.daemon
        listen = d.listen
        pool = futures.ThreadPoolExecutor(max_workers=max(16, 4 * cfg.synthesis.workers + 8),
                                          thread_name_prefix="grpc")
        server = grpc.server(pool, options=grpc_options(cfg.limits.max_message))
        add_prover_service(self.service, server)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        for name in ("", SERVICE_NAME):
            self.health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
        try:
            port = server.add_secure_port(listen.grpc, creds) if creds else server.add_insecure_port(listen.grpc)
        except RuntimeError as exc:
            port, why = 0, str(exc)
        else:
            why = ""
        if not port:
            busy = check_free(listen)
            raise DaemonError(busy or f"cannot listen on {listen}: {why or 'bind failed'}")
        self._bound_unix = listen.kind == "unix"
        if control is not None:
            self._bind_control(server, control)
        self.grpc_server = server
        server.start()
        self.log.info("listening on %s (%s; SO_REUSEADDR, no SO_REUSEPORT; max message %d MiB)%s", listen,
                      ("TLS, client certificates required" if d.tls_client_ca else "TLS") if creds else "plaintext",
                      cfg.limits.max_message >> 20, f"; control socket {control}" if control else "")

    def _freeze_heap(self) -> None:
        """Every object start-up made kept out of later garbage collections, whose pauses stop every thread
        (gcpause.py); from here on each collection's pause is measured (snarkd_gc_pause_seconds)."""
        t0 = time.perf_counter()
        frozen = freeze()
        self.gc_pauses = GcPauses(self.service.metrics.gc_pause)
        self.gc_pauses.install()
        self.log.info("heap frozen objects=%d in %.0f ms", frozen, (time.perf_counter() - t0) * 1e3)

    def _ready(self) -> None:
        """Every worker alive: health SERVING, READY=1 for systemd, "ready" on the readiness pipe."""
        cfg = self.config
        if not self.engine.all_alive():
            raise DaemonError(f"not all engine workers are running: {self.engine.status().workers}")
        self.service.state = "serving"
        for name in ("", SERVICE_NAME):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        listen = cfg.daemon.listen
        sdnotify.notify(f"READY=1\nSTATUS=serving on {listen}\nMAINPID={os.getpid()}")
        self._tell_parent(f"ready {os.getpid()} {listen} {cfg.fingerprint}")
        self.log.info("ready, serving on %s pid=%d fingerprint=%s keys=%s", listen, os.getpid(), cfg.fingerprint,
                      ",".join(cfg.keys.preload) or "-")
        flush_logs()

    def _bind_control(self, server, path: str) -> None:
        """The control socket: created under umask 077, so only the daemon's user can connect; in a directory
        checked like the pid file's (daemon/private_dir.py)."""
        from snarkd.daemon.private_dir import ensure_parent

        ensure_parent(path)
        old = os.umask(0o077)
        try:
            ok = server.add_insecure_port(f"unix:{path}")
        except RuntimeError:
            ok = 0
        finally:
            os.umask(old)
        if not ok:
            raise DaemonError(f"cannot listen on [daemon] control_socket {path}")
        self._control = path
        os.chmod(path, 0o600)

    def _check_abort(self) -> None:
        if self.should_exit.is_set():
            raise StartupAborted()

    def _tell_parent(self, line: str) -> None:
        """One line on the readiness pipe of `snarkd start`, then close it."""
        if self.ready_fd is None:
            return
        try:
            os.write(self.ready_fd, (line.replace("\n", " ") + "\n").encode())
        except OSError:
            pass
        finally:
            try:
                os.close(self.ready_fd)
            except OSError:
                pass
            self.ready_fd = None

    # ------------------------------------------------------------------ main loop

    def install_signal_handlers(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self.handle_exit)
        signal.signal(signal.SIGHUP, self.handle_hup)

    def handle_exit(self, sig, frame) -> None:
        self.signals += 1
        name = signal.Signals(sig).name
        if self.signals == 1:
            self.log.info("received %s: shutting down", name)
            self.should_exit.set()
        else:
            self.log.warning("received %s again: cancelling in-flight work now", name)
            if self.engine is not None:
                self.engine.force()

    def handle_hup(self, sig, frame) -> None:
        # not here: the signal may have interrupted a log call (and a plain flag takes no lock)
        self.reopen_requested = True

    def reopen_log(self) -> None:
        """logrotate's convention: after the log file was moved, SIGHUP makes the daemon write a new one."""
        paths, errors = reopen_logs()
        for err in errors:
            self.log.error("received SIGHUP: cannot reopen the log file %s; still writing to the old one", err)
        if paths and not self.log_to_stderr:  # daemonized: stdout and stderr (tracebacks, warnings) go there too
            try:
                redirect_stdio(paths[0])
            except OSError as exc:
                self.log.error("received SIGHUP: cannot point stdout/stderr at %s: %s", paths[0], exc.strerror)
        if paths or not errors:
            self.log.info("received SIGHUP: reopened the log file %s (the config is fixed for a daemon's lifetime: "
                          "`snarkd restart` applies a new one)", ", ".join(paths) or "(none: logging to stderr)")

    def main_loop(self) -> None:
        # sleep, not Event.wait: a signal handler that runs while the main thread holds an Event's
        # lock and sets that Event would deadlock; sleeping holds nothing
        while not self.should_exit.is_set():
            if self.reopen_requested:
                self.reopen_requested = False
                self.reopen_log()
            time.sleep(0.1)

    # ------------------------------------------------------------------ shutdown

    def shutdown(self) -> int:
        log, drain = self.log, self.config.daemon.drain_timeout
        sdnotify.notify("STOPPING=1\nSTATUS=draining")
        jobs = self.engine.status().jobs
        log.info("draining: refusing new requests; %d running, %d queued; drain_timeout=%gs",
                 jobs.running, jobs.queued, drain)
        self.health.enter_graceful_shutdown()
        if self.service:
            self.service.state = "draining"
        # New proofs and keys are refused from here on; Await, Status and health still
        # answer during the drain, so clients collect the results of in-flight jobs.
        self.engine.accepting = False
        if self.journal is not None:
            self.journal.stopping = True  # what the drain cancels stays journaled: it runs after a restart
        deadline = time.monotonic() + drain
        result = self.engine.stop(drain)
        if result.cancelled:
            log.warning("drain_timeout (%gs) passed: cancelled %d unfinished job(s)%s", drain, result.cancelled,
                        " (journaled: they run again after the next start)" if self.journal is not None else "")
        else:
            log.info("drained: all in-flight work finished")
        if self.service is not None and not self.service.aggregator.close(max(0.0, deadline - time.monotonic())):
            log.warning("drain_timeout (%gs) passed with %d aggregation(s) running; their callers get no result",
                        drain, self.service.aggregator.running)
        if self.grpc_server is not None:
            # a moment for handlers to send their final replies, then close the port
            self.grpc_server.stop(grace=2).wait(5)
            self.grpc_server = None
        clean = self.engine.join_workers(1.0)
        self._cleanup()
        log.info("stopped (exit 0)")
        flush_logs()
        if not clean:  # a worker is still inside the prover: do not wait for it at interpreter exit
            os._exit(0)
        return 0

    def _cleanup(self) -> None:
        if self.status_http is not None:
            self.status_http.stop()
            self.status_http = None
        if self.grpc_server is not None:
            self.grpc_server.stop(grace=0).wait(5)
            self.grpc_server = None
        if self._bound_unix:
            try:
                os.unlink(self.config.daemon.listen.path)
            except OSError:
                pass
        if self._control is not None:
            try:
                os.unlink(self._control)
            except OSError:
                pass
            self._control = None
        if self.journal is not None:
            self.journal.close()
            self.journal = None
        if self.engine is not None:
            self.engine.accepting = False
        if self.spool is not None:
            self.spool.close()
            self.spool = None
        if self.keys is not None:
            self.keys.close_all()
        if self.gc_pauses is not None:  # a server run inside another program (tests) leaves its collector as found
            self.gc_pauses.remove()
            self.gc_pauses = None
            gc.unfreeze()
        self.pidfile.release()


def serve(config: Config, ready_fd: int | None = None, log_to_stderr: bool = True) -> int:
    os.umask(0o077)  # what the daemon creates is its own: the log, the journal (-wal, -shm), spools, sidecars
    return Server(config, ready_fd, log_to_stderr).run()
