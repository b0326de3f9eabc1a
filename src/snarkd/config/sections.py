"""The config's sections as typed classes: `cfg.daemon.listen` is a Listen, `cfg.gpus.stream_bases` a str.

One class per section of SETTINGS (settings.py), one field per setting, the type its Kind's parse returns;
the loader builds them from the validated values, and tests/config/test_settings.py fails when a setting has
no field here (or a field no setting). `EngineConfig` is the engine's share of them (Setting.engine names),
with the defaults, for the engine embedded without a config file.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from pathlib import Path

from snarkd.config.kinds import Context, Listen
from snarkd.config.lanes import Lane
from snarkd.config.settings import ENGINE_SETTINGS


@dataclass(frozen=True)
class DaemonSection:
    listen: Listen
    pid_file: str
    log_file: str
    drain_timeout: float
    log_level: str
    log_format: str
    status_listen: Listen | None
    tls_cert: str | None
    tls_key: str | None
    tls_client_ca: str | None
    token_file: str | None
    control_socket: str
    journal: str  # a path, or "off"
    spool_max: int
    result_retention: float


@dataclass(frozen=True)
class TransportSection:
    witness_spool: str  # "" = off
    witness_dirs: tuple[str, ...]


@dataclass(frozen=True)
class KeysSection:
    param_cache: str
    wasm_cache: str  # a directory, or "off"
    allowed_dirs: tuple[str, ...]
    max_resident: int
    host_budget: int
    device_budget: int
    preload: dict[str, str]


@dataclass(frozen=True)
class SynthesisSection:
    workers: int
    threads: int


@dataclass(frozen=True)
class WitnessSection:
    engine: str  # "auto" | "native" | "wasm"


@dataclass(frozen=True)
class GpusSection:
    devices: tuple[int, ...]
    workers_per_device: int
    msm_tables: str
    memory_budget: int | str  # bytes, or "auto"
    msm_window_bits: int
    cubin_dir: str
    stream_bases: str


@dataclass(frozen=True)
class MemorySection:
    budget: int | str  # bytes, or "auto"


@dataclass(frozen=True)
class PipelineSection:
    queue_depth: int
    finalize_workers: int
    g2_on_device: bool | str  # or "auto"
    self_verify: bool
    finish_past_deadline: bool


@dataclass(frozen=True)
class LimitsSection:
    max_message: int
    max_partitions: int
    max_queued_jobs: int
    max_queued_weight: float
    max_queued_per_client: int
    max_inputs_bytes: int
    max_inputs_depth: int
    wasm_memory: int
    wasm_fuel: int


@dataclass(frozen=True)
class SchedulerSection:
    lanes: dict[str, Lane]  # the configured lanes ("default" is added where they are used: lanes_with_default)
    preempt: bool


@dataclass(frozen=True)
class AggregateSection:
    max_concurrent: int
    threads: int
    backend: str
    srs: str | None
    srs_resident: int


@dataclass(frozen=True)
class ClusterSection:
    address: str
    actors_per_node: int
    actor_cpus: int
    actor_inflight: int
    key_placement: str
    key_cache: str
    witness_budget: int | str  # bytes, or "auto"
    max_attempts: int
    min_actors: int
    ready_timeout: float


@dataclass(frozen=True)
class CpuSection:
    ifma: str  # "auto" | "off" (config/cpu.py)


@dataclass(frozen=True)
class ProveSection:
    backend: str
    auto_cuda_min_domain: int


@dataclass(frozen=True)
class DebugSection:
    synthesis_delay: float


def _default(engine_name: str):
    """The default of the setting that feeds EngineConfig's field `engine_name`, parsed (settings.py)."""
    s = next(s for s in ENGINE_SETTINGS if s.engine == engine_name)
    return s.kind.parse(s.default, Context(Path.cwd(), {}, {}))


@dataclass
class EngineConfig:
    """The engine's settings (the SETTINGS with an `engine` name: the setting each one is, in the comment),
    with the settings' defaults: what an Engine takes embedded without a config file. `from_config` reads
    them from a validated Config."""

    key_max_resident: int = _default("key_max_resident")  # [keys] max_resident
    key_host_budget: int = _default("key_host_budget")  # [keys] host_budget
    key_device_budget: int = _default("key_device_budget")  # [keys] device_budget
    synthesis_workers: int = _default("synthesis_workers")  # [synthesis] workers
    threads: int = _default("threads")  # [synthesis] threads
    witness_engine: str = _default("witness_engine")  # [witness] engine
    devices: tuple[int, ...] = _default("devices")  # [gpus] devices
    workers_per_device: int = _default("workers_per_device")  # [gpus] workers_per_device
    msm_tables: str = _default("msm_tables")  # [gpus] msm_tables
    gpu_memory_budget: int | str = _default("gpu_memory_budget")  # [gpus] memory_budget
    msm_window_bits: int = _default("msm_window_bits")  # [gpus] msm_window_bits
    cubin_dir: str = _default("cubin_dir")  # [gpus] cubin_dir
    stream_bases: str = _default("stream_bases")  # [gpus] stream_bases
    memory_budget: int | str = _default("memory_budget")  # [memory] budget
    queue_depth: int = _default("queue_depth")  # [pipeline] queue_depth
    finalize_workers: int = _default("finalize_workers")  # [pipeline] finalize_workers
    g2_on_device: bool | str = _default("g2_on_device")  # [pipeline] g2_on_device
    self_verify: bool = _default("self_verify")  # [pipeline] self_verify
    finish_past_deadline: bool = _default("finish_past_deadline")  # [pipeline] finish_past_deadline
    max_partitions: int = _default("max_partitions")  # [limits] max_partitions
    max_queued_jobs: int = _default("max_queued_jobs")  # [limits] max_queued_jobs
    max_queued_weight: float = _default("max_queued_weight")  # [limits] max_queued_weight
    max_inputs_bytes: int = _default("max_inputs_bytes")  # [limits] max_inputs_bytes
    max_inputs_depth: int = _default("max_inputs_depth")  # [limits] max_inputs_depth
    wasm_memory: int = _default("wasm_memory")  # [limits] wasm_memory
    wasm_fuel: int = _default("wasm_fuel")  # [limits] wasm_fuel
    lanes: dict = field(default_factory=dict)  # [scheduler] lanes (name -> config.lanes.Lane)
    preempt: bool = _default("preempt")  # [scheduler] preempt
    debug_delay_s: float = _default("debug_delay_s")  # [debug] synthesis_delay

    @classmethod
    def from_config(cls, cfg) -> "EngineConfig":
        return cls(**{s.engine: cfg.values[(s.section, s.key)] for s in ENGINE_SETTINGS})


SECTION_CLASSES = {"daemon": DaemonSection, "transport": TransportSection, "keys": KeysSection,
                   "synthesis": SynthesisSection, "witness": WitnessSection, "gpus": GpusSection,
                   "memory": MemorySection,
                   "pipeline": PipelineSection, "limits": LimitsSection, "scheduler": SchedulerSection, "aggregate": AggregateSection,
                   "cluster": ClusterSection, "cpu": CpuSection,
                   "prove": ProveSection, "debug": DebugSection}


def section_keys(cls) -> list[str]:
    return [f.name for f in fields(cls)]
