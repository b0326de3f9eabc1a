"""Every setting of snarkd, declared once: section, key, kind, default, environment override, doc.

The validator, the section dataclasses, `EngineConfig`, `snarkd config show`, the
commented example (examples/snarkd.toml) and the settings table in docs/daemon.md are all
derived from SETTINGS; tests/config checks that they agree. To add a setting, add
one line here (and read it where it is used).

`engine` names the EngineConfig field a setting feeds (the embeddable engine takes
those without a config file; `status` whether the engine's status shows it). `derive` computes a default from settings declared
before it (and the environment); `example` is what the example config shows.

The engine's name is the file's key wherever the key alone says what it is (24 of the 34). EngineConfig is one
flat namespace over nine sections, and the same names are public beyond it: the `config` record of the engine's
status (GET /status, `snarkd status --json`), the cluster actors' reports (cluster/actor.py), the benchmarks'
settings and bench/results. So ten keep their section in the name, and must:
  [memory] budget, [gpus] memory_budget  memory_budget, gpu_memory_budget: by their keys both are a memory budget,
                                         and status's "memory_budget" has always been the host's (a GPU's taking
                                         it would change what that field means without a word)
  [keys] max_resident, host_budget, device_budget  key_*: beside the proofs' two budgets, whose budget it is
  [synthesis] workers                    synthesis_workers: beside workers_per_device and finalize_workers
  [synthesis] nice                       synthesis_nice: "nice" alone does not say whose
  [witness] engine                       witness_engine: in the engine's own config "engine" says the engine
  [witness] compiled                     witness_compiled: "compiled" alone does not say what was compiled
  [debug] synthesis_delay                debug_delay_s: seconds (its variable is in milliseconds); never shown
tests/config/test_settings.py holds this list: a new engine setting takes its key, or joins the list with a reason.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from snarkd.config.kinds import (Address, Bool, BoolOrAuto, CachePath, Choice, Context, DirList, DirPath, Devices,
                                 Duration, FilePath, Float, Int, Kind, KeyTable, OptionalDir, RayAddress, ReadFile,
                                 Size, SizeOrOff, Text)
from snarkd.config.cpu import HUGE_PAGES_CHOICES, HUGE_PAGES_ENV, IFMA_CHOICES, IFMA_ENV
from snarkd.config.prove import BACKEND_CHOICES, BACKEND_DEFAULT, BACKEND_ENV
from snarkd.config.witness import COMPILED_CHOICES, COMPILED_DEFAULT, COMPILED_ENV
from snarkd.config.dirs import cache_base, runtime_dir
from snarkd.config.lanes import LaneTable

LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("text", "json")


@dataclass(frozen=True)
class Setting:
    section: str
    key: str
    kind: Kind
    default: object
    doc: str
    env: str = ""  # environment variable that overrides the file
    engine: str = ""  # EngineConfig field
    derive: object = None  # (Context) -> default, when the default depends on other settings
    default_doc: str = ""  # how a derived default reads in the docs
    example: object = None  # the example config's value (None: the default; "#": shown commented out)
    status: bool = True  # an engine setting shown in the engine's status (`snarkd status`, GET /status)

    @property
    def name(self) -> str:
        return f"{self.section}.{self.key}"

    def default_value(self, ctx: Context):
        """The effective default: derived from the settings before it (and ctx's environment), else parsed."""
        return self.derive(ctx) if self.derive is not None else self.kind.parse(self.default, ctx)


def _listen_slug(ctx: Context) -> str:
    listen = ctx.values[("daemon", "listen")]
    if listen.kind == "unix":
        return "unix-" + hashlib.sha256(listen.path.encode()).hexdigest()[:8]
    return re.sub(r"[^A-Za-z0-9.]+", "_", f"{listen.host}_{listen.port}").strip("_")


def _beside_pid_file(suffix: str):
    return lambda c: str(Path(c.values[("daemon", "pid_file")]).with_suffix(suffix))


def _wasm_cache(ctx: Context) -> str:
    return str(cache_base(ctx.env) / "wasm")


def default_runtime_dir() -> Path:
    """runtime_dir of this process's environment (daemon/private_dir.py checks it strictly)."""
    return runtime_dir(os.environ)


S = Setting
SETTINGS: tuple[Setting, ...] = (
    # -- the daemon process --------------------------------------------------------------------
    S("daemon", "listen", Address(), "127.0.0.1:9820", "gRPC address: HOST:PORT, [IPv6]:PORT or unix:PATH"),
    S("daemon", "pid_file", FilePath(), None, "pid file, locked while the daemon runs",
      derive=lambda c: str(runtime_dir(c.env) / f"snarkd-{_listen_slug(c)}.pid"),
      default_doc="$XDG_RUNTIME_DIR/snarkd/snarkd-ADDRESS.pid (else /tmp/snarkd-UID/…)",
      example="/run/snarkd/snarkd.pid"),
    S("daemon", "log_file", FilePath(), None, "log file, opened before anything else",
      derive=lambda c: str(runtime_dir(c.env) / f"snarkd-{_listen_slug(c)}.log"),
      default_doc="beside the pid file, .log", example="/var/log/snarkd/snarkd.log"),
    S("daemon", "drain_timeout", Duration(), 60.0, "on SIGTERM: finish in-flight proofs this long, then cancel"),
    S("daemon", "switch_interval", Duration(positive=True), "0.5ms",
      "how long a daemon thread waiting to run Python waits for the one running it (sys.setswitchinterval; "
      "Python's own is 5ms): an urgent job's device stage gets to launch its kernels between the bulk jobs' "
      "Python work sooner (docs/daemon.md, lanes)"),
    S("daemon", "log_level", Choice(*LOG_LEVELS), "info", "debug | info | warning | error"),
    S("daemon", "log_format", Choice(*LOG_FORMATS), "text",
      "text lines, or one JSON object per line with the same fields (time, level, pid, message)"),
    S("daemon", "status_listen", Address(tcp_only=True, optional=True), "",
      "HTTP address of GET /metrics (Prometheus) and GET /status (JSON); empty = off",
      example="#127.0.0.1:9821"),
    # -- who may talk to the daemon (docs/security.md) -------------------------------------------
    S("daemon", "tls_cert", ReadFile(), "", "PEM certificate (chain) served on listen and status_listen; required "
      "for any address but loopback or a unix socket", example="#/etc/snarkd/tls/server.crt"),
    S("daemon", "tls_key", ReadFile(), "", "PEM private key of tls_cert (readable by the daemon's user only)",
      example="#/etc/snarkd/tls/server.key"),
    S("daemon", "tls_client_ca", ReadFile(), "", "PEM CA certificates: clients must show a certificate they signed "
      "(mutual TLS); \"\" = no client certificates", example="#/etc/snarkd/tls/clients-ca.crt"),
    S("daemon", "token_file", ReadFile(), "", "bearer tokens, one \"NAME ROLE TOKEN [lane=LANE]\" a line, ROLE prove "
      "or admin, LANE the lane its jobs run in (readable by the daemon's user only); \"\" = none: every caller may "
      "do everything",
      example="#/etc/snarkd/tokens"),
    S("daemon", "control_socket", FilePath(), None, "unix socket (mode 0600) for snarkd start/status on this host "
      "when listen uses TLS or tokens", derive=_beside_pid_file(".ctl"), default_doc="beside the pid file, .ctl",
      example="#/run/snarkd/snarkd.ctl"),
    # -- jobs that survive a crash ---------------------------------------------------------------
    S("daemon", "journal", FilePath(off=True), None, "SQLite journal of accepted jobs: re-run after a crash, "
      "results kept for result_retention; \"off\" = in memory only", derive=_beside_pid_file(".jobs.db"),
      default_doc="beside the pid file, .jobs.db", example="/var/lib/snarkd/jobs.db"),
    S("daemon", "spool_max", Size(auto=False), "4GiB", "bytes of inline witnesses and inputs kept beside the "
      "journal for unfinished jobs (a job that would pass it is refused: RESOURCE_EXHAUSTED, busy while others "
      "hold it, too large when its own bytes pass it)"),
    S("daemon", "result_retention", Duration(), 3600.0, "finished jobs stay fetchable with Await this long"),
    S("transport", "witness_spool", OptionalDir(), None,
      "by-reference witnesses: the daemon's own 0700 directory where same-host clients put .wtns files "
      "(consumed once mapped); \"\" = off",
      derive=lambda c: str(runtime_dir(c.env) / f"witness-{_listen_slug(c)}"),
      default_doc="beside the pid file: witness-ADDRESS/"),
    S("transport", "witness_dirs", DirList(), [],
      "directories whose .wtns files clients may name by path (read in place, never removed)"),
    # -- keys ----------------------------------------------------------------------------------
    S("keys", "param_cache", DirPath(), None, "directory that relative key paths resolve against",
      env="SNARKD_PARAM_CACHE", derive=lambda c: str(c.base), default_doc="the config file's directory",
      example="/var/lib/snarkd"),
    S("keys", "wasm_cache", CachePath(), None, "compiled circuit .wasm modules are kept here (\"off\": never)",
      env="SNARKD_WASM_CACHE", derive=_wasm_cache, default_doc="$XDG_CACHE_HOME/snarkd/wasm", engine="wasm_cache",
      status=False),
    S("keys", "allowed_dirs", DirList(), [], "more directories that LoadKey and wasm paths may name, besides "
      "param_cache (checked after resolving symlinks)"),
    S("keys", "max_resident", Int(0, zero="no limit"), 0,
      "keys resident at once, on the host and on each GPU: past it the least recently used idle key is evicted "
      "(and reloaded from its path by its next job)", engine="key_max_resident"),
    S("keys", "host_budget", SizeOrOff(), "off", "bytes of keys mapped on the host (an evicted key frees its share)",
      engine="key_host_budget"),
    S("keys", "device_budget", SizeOrOff(), "off",
      "bytes of key arrays resident on each GPU (bases, CSR, window tables)", engine="key_device_budget"),
    S("keys", "preload", KeyTable(relative_to=("keys", "param_cache")), {},
      "key id = \"path.zkey\": loaded before the daemon reports ready"),
    # -- the engine ----------------------------------------------------------------------------
    S("synthesis", "workers", Int(1), 2, "proofs in synthesis at once (witness calculation and checks)",
      engine="synthesis_workers"),
    S("synthesis", "threads", Int(0, zero="all cores"), 0, "native threads per stage call", engine="threads"),
    S("synthesis", "nice", Int(0, 19), 0,
      "scheduling niceness added to the synthesis workers and their native threads (witnesses from inputs, "
      "checks): where they and the device or finalize stages want the same cores, the stages on a proof's "
      "critical path are served first; 0 = the daemon's own (Linux; elsewhere ignored)", engine="synthesis_nice"),
    S("witness", "engine", Choice("auto", "native", "wasm"), "auto",
      "how witnesses are computed from inputs: native = a program recorded from the circuit's .wasm and replayed "
      "(built at key load, kept beside the .wasm as .wprog; a key whose circuit cannot be native fails to load); "
      "wasm = the .wasm on wasmtime; auto = native where it can be built, else wasm", env="SNARKD_WITNESS_ENGINE",
      engine="witness_engine"),
    S("witness", "compiled", Choice(*COMPILED_CHOICES), COMPILED_DEFAULT,
      "the native engine's compiled witness library (CIRCUIT.wasm.wso, built by `snarkd witness --compile` or "
      "`snarkd prepare --compile-witness`): auto = value-dependent requests run it where one is kept for the "
      ".wasm; off = never (the interpreter's control-flow run), in the CLI and in the daemon's synthesis workers",
      env=COMPILED_ENV, engine="witness_compiled"),
    S("gpus", "devices", Devices(), [], "GPUs to prove on; [] = every GPU CuPy sees, else the CPU",
      engine="devices"),
    S("gpus", "workers_per_device", Int(1), 2, "device workers per device (they share its lock)",
      engine="workers_per_device"),
    S("gpus", "msm_tables", Choice("auto", "on", "off"), "auto",
      "MSM window tables per resident key (~16x the bases): auto = set by set, G2 first, while they fit", env="SNARKD_GPU_MSM_TABLES",
      engine="msm_tables"),
    S("gpus", "memory_budget", Size(), "auto", "device memory per GPU; auto = free memory minus max(1 GiB, 5%)",
      env="SNARKD_GPU_BUDGET", engine="gpu_memory_budget"),
    S("gpus", "msm_window_bits", Int(0, 24, zero="chosen by size"), 0, "MSM window width c (benchmarking)",
      env="SNARKD_GPU_MSM_C", engine="msm_window_bits"),
    S("gpus", "cubin_dir", Text(), "", "folder of one's own kernels-CURVE-smCC-HASH.cubin builds (\"\" = the kernels "
      "the package ships for the GPU, else an NVRTC compile)", env="SNARKD_GPU_CUBIN_DIR", engine="cubin_dir"),
    S("gpus", "stream_bases", Choice("auto", "on", "off"), "auto",
      "keep a key's bases on the host (page-locked) and stream them through the device once per batch of proofs: "
      "auto = when they do not fit beside one proof's work, on = always, off = never (see \"Keys larger than the "
      "GPU\")", env="SNARKD_GPU_STREAM_BASES",
      engine="stream_bases"),
    S("memory", "budget", Size(), "auto", "host memory for proofs in flight; auto = 75% of available at start",
      engine="memory_budget"),
    S("pipeline", "queue_depth", Int(0, zero="one slot per device worker"), 0,
      "capacity of the device and finalize queues", engine="queue_depth"),
    S("pipeline", "finalize_workers", Int(1), 1, "G2 MSM (when on the CPU), blinding, assembly, self-verification",
      engine="finalize_workers"),
    S("pipeline", "g2_on_device", BoolOrAuto(), "auto",
      "G2 MSM in the device stage (true) or on the CPU in finalize (false); auto = on the device when every "
      "device is a GPU", engine="g2_on_device"),
    S("pipeline", "self_verify", Bool(), True, "verify every proof before returning it (~ms)", engine="self_verify"),
    S("pipeline", "finish_past_deadline", Bool(), False, "a job still running when its deadline passes: finish it "
      "anyway (true) or stop it at its next stage boundary, EXPIRED (false); a queued one never starts",
      engine="finish_past_deadline"),
    # -- bounds on what one request or client may ask for ----------------------------------------
    S("limits", "max_message", Size(auto=False), "512MiB", "largest gRPC message received or sent"),
    S("limits", "max_partitions", Int(1), 256, "partitions (witnesses or inputs) in one job",
      engine="max_partitions"),
    S("limits", "max_queued_jobs", Int(1), 1024, "jobs accepted and not yet finished, in all",
      engine="max_queued_jobs"),
    S("limits", "max_queued_weight", Float(0, zero="no bound"), 0.0,
      "weight units of unfinished work in all: a partition weighs its key's domain size / 2^16 (a 2^16 proof is 1, "
      "a 10-partition 2^24 job 2560); a job that would pass it is refused (RESOURCE_EXHAUSTED)",
      engine="max_queued_weight"),
    S("limits", "max_queued_per_client", Int(1), 256, "of those, per client (its token's name when tokens are on, "
      "else its address)"),
    S("limits", "max_inputs_bytes", Size(auto=False), "16MiB", "one partition's inputs JSON text",
      engine="max_inputs_bytes"),
    S("limits", "max_inputs_depth", Int(1), 64, "nesting depth of an inputs JSON value (brackets counted before "
      "parsing)", engine="max_inputs_depth"),
    S("limits", "wasm_memory", Size(auto=False), "4GiB", "linear memory of one witness calculation",
      engine="wasm_memory"),
    S("limits", "wasm_fuel", Int(0, zero="unlimited"), 0, "wasm instructions (fuel) one witness calculation may "
      "spend (10^12: minutes); counting instruments the circuit's code, and circuits come from the key "
      "directories, so off by default", engine="wasm_fuel"),
    # -- lanes: reserved capacity, an order between kinds of work, their bounds and deadlines ------
    S("scheduler", "lanes", LaneTable(), {},
      "named lanes, each a table [scheduler.lanes.NAME]: priority (served first), share (of the pipeline slots "
      "and memory budget, kept for it), max_queued (weight units), deadline (its jobs' default); lane \"default\" "
      "always exists", engine="lanes"),
    S("scheduler", "preempt", Bool(), True, "a device stage yields at its chunk and MSM boundaries to device work of "
      "a higher lane that fits beside it (false: a stage runs to its end; with lanes of one priority there are no yield "
      "points)", engine="preempt"),
    # -- the Aggregate RPC: SnarkPack aggregates of proofs the daemon made or was given ------------
    S("aggregate", "max_concurrent", Int(1), 1,
      "Aggregate calls running at once (each is CPU-heavy: seconds to a minute on the aggregate threads); one more "
      "is refused (RESOURCE_EXHAUSTED) naming this setting"),
    S("aggregate", "threads", Int(0, zero="all cores"), 0, "native threads of one aggregation"),
    S("aggregate", "backend", Choice("cpu", "cuda", "auto"), "auto",
      "where an aggregation's Miller loops (75% of its CPU work) run: auto = the first GPU this daemon proves on "
      "([gpus] devices), else the CPU; cuda = that GPU, and the daemon does not start without one; cpu = never a GPU"),
    S("aggregate", "srs", ReadFile(), "", "aggregation SRS (`snarkd aggregation-srs`) of Aggregate calls that name "
      "none (the operator's: not confined); \"\" = none: a call names one under [keys] param_cache or allowed_dirs",
      example="#/var/lib/snarkd/agg.srs"),
    S("aggregate", "srs_resident", Int(1), 2, "aggregation SRS files kept mapped and checked, the most recently "
      "used, so repeated calls do not read one again"),
    # -- the cluster front (snarkd.cluster): engines as Ray actors on many machines -------------
    S("cluster", "address", RayAddress(), "",
      "Ray cluster to prove on (the daemon becomes its front): \"\" = off, one daemon; \"local\" = a private Ray "
      "on this machine; \"auto\" = the cluster `ray start` joined this machine to; \"HOST:PORT\" = its head; "
      "\"ray://HOST:PORT\" = Ray Client", env="SNARKD_CLUSTER_ADDRESS"),
    S("cluster", "actors_per_node", Int(0, zero="one per GPU, one on a node without GPUs"), 0,
      "engine actors on each node (each runs an engine on one GPU, or on the node's CPUs)"),
    S("cluster", "actor_cpus", Int(0), 1, "CPUs each engine actor reserves from Ray (a node with fewer gets none)"),
    S("cluster", "actor_inflight", Int(0, zero="2 per synthesis and device worker"), 0,
      "partitions the front sends one actor at once (the rest wait at the front, by priority)"),
    S("cluster", "key_placement", Choice("auto", "path", "ship"), "auto",
      "how keys reach actors, once: path = the same file path on every node; ship = through Ray's object store; "
      "auto = the path where that node has the same key, else ship"),
    S("cluster", "key_cache", Text(), "",
      "directory on each node where shipped keys are written (\"\" = the node's temp dir/snarkd-keys-UID)"),
    S("cluster", "witness_budget", Size(), "auto",
      "witness bytes the front holds (queued and in the object store); auto = a quarter of available memory"),
    S("cluster", "max_attempts", Int(1), 3,
      "tries of a partition on actors that die under it before its job fails"),
    S("cluster", "min_actors", Int(0), 1, "engine actors with every preloaded key resident before the front is ready"),
    S("cluster", "ready_timeout", Duration(), 600.0,
      "how long start waits for min_actors, and LoadKey for the actors to load a key"),
    # -- the native core's CPU kernels ---------------------------------------------------------
    S("cpu", "ifma", Choice(*IFMA_CHOICES), "auto",
      "AVX-512 IFMA 8-lane kernels (MSM buckets, NTT, native witnesses): auto = where the CPU has them; off = "
      "never, the 4-limb BMI2/ADX path of CPUs without AVX-512 (same proofs; for measuring that path on a CPU with "
      "IFMA). snarkd prove reads the environment variable only; a cluster's engine actors apply the front's",
      env=IFMA_ENV, engine="ifma"),
    S("cpu", "huge_pages", Choice(*HUGE_PAGES_CHOICES), "auto",
      "a proof's large native buffers (2-16 MiB) advised MADV_HUGEPAGE: one page fault per 2 MiB where THP is "
      "\"madvise\"; off = 4 KiB pages (a host whose THP defrag would compact memory inside a fault). snarkd prove "
      "reads the environment variable only; a cluster's engine actors apply the front's", env=HUGE_PAGES_ENV,
      engine="huge_pages"),
    # -- one-shot proving and tests --------------------------------------------------------------
    S("prove", "backend", Choice(*BACKEND_CHOICES), BACKEND_DEFAULT,
      "default --backend of one-shot `snarkd prove` (the daemon uses [gpus])", env=BACKEND_ENV),
    S("prove", "auto_cuda_min_domain", Int(1), 1 << 21,
      "--backend auto takes the GPU from this domain size up; below, one proof is faster on the CPU (the GPU "
      "path pays ~0.7 s of CuPy import and CUDA start-up per process; measured on an H200 host with 16 cores: "
      "even at 2^20, GPU 1.5x faster at 2^21)"),
    S("debug", "synthesis_delay", Duration(env_unit=0.001), 0.0,
      "testing only: stall each partition's synthesis this long (environment: milliseconds)",
      env="SNARKD_DEBUG_PROVE_DELAY_MS", engine="debug_delay_s", example="#", status=False),
)

SECTIONS: tuple[str, ...] = tuple(dict.fromkeys(s.section for s in SETTINGS))
BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
ENGINE_SETTINGS: tuple[Setting, ...] = tuple(s for s in SETTINGS if s.engine)


def declared(name: str):
    """A setting's declared default, parsed (no config file, no environment): the default of a library
    parameter that takes the setting, e.g. `threads: int = declared("aggregate.threads")`. Not for a default
    derived from other settings (those have one only in a Config)."""
    s = BY_NAME[name]
    if s.derive is not None:
        raise ValueError(f"{name}: its default is derived from other settings; read it from a Config")
    return s.kind.parse(s.default, Context(Path("."), {}, {}))
